"""Which image arrays training and segmentation accept, and how their values are read.

The rule (``docs/model-format.md``, "Input values"), applied at every entry point (the
Python API, the command line, the napari widget):

- pixel values must be real numbers: boolean, complex and object arrays are refused, and
  so are NaN and infinite values (depth images: see :func:`depth_in_metres`);
- integer images are read as fractions of their type's range: ``uint8`` values of 255,
  ``uint16`` values of 65535; other integer types must hold values 0..255 and are read as
  8-bit (cast them to ``uint16`` for 16-bit values);
- RGB images in floating point must lie in [0, 1] (8-bit values stored as floats are
  refused, not clipped);
- grey and multichannel models keep the *units* of their training images (``uint8``,
  ``uint16`` or ``float``) and the range of values they saw, in the model's metadata
  (``input_values``). An image in other units is converted into the model's: an 8-bit
  picture given as floats in [0, 1] to a model trained on ``uint8`` images is multiplied
  by 255 and rounded to whole levels, so the same picture gives the same labels whatever
  its type. A floating-point image whose values, so converted, reach beyond the training
  range by more than that range's width (and more than one full unit scale) is refused:
  its values are not on the scale the model was trained on.
"""
from __future__ import annotations

import numpy as np

from ..features import ColourFeatures, DepthFeatures, FeatureFamily

#: Full-scale value of each unit: integer images are read as fractions of it.
UNIT_SCALE = {"uint8": 255.0, "uint16": 65535.0, "float": 1.0}


def value_units(image: np.ndarray, name: str = "image") -> str:
    """The units of an image's values (a key of :data:`UNIT_SCALE`), or ValueError for
    arrays that do not hold real pixel values."""
    kind = image.dtype.kind
    if kind == "c":
        raise ValueError(f"{name} has complex values ({image.dtype}): pixel values must be "
                         "real numbers")
    if kind == "b":
        raise ValueError(f"{name} is boolean: give pixel values as uint8, uint16 or float")
    if kind not in "uif":
        raise ValueError(f"{name} has dtype {image.dtype}: expected integer or "
                         "floating-point pixel values")
    if image.dtype == np.uint8:
        return "uint8"
    if image.dtype == np.uint16:
        return "uint16"
    if kind == "f":
        return "float"
    if image.size and (image.min() < 0 or image.max() > 255):
        raise ValueError(f"{name} is {image.dtype} with values {image.min()}..{image.max()}; "
                         "integer images other than uint8 and uint16 must hold 8-bit values "
                         "0..255 (cast 16-bit values to uint16)")
    return "uint8"


def _finite(image: np.ndarray, name: str) -> None:
    if image.dtype.kind == "f" and not np.isfinite(image).all():
        bad = int(np.count_nonzero(~np.isfinite(image)))
        raise ValueError(f"{name} has {bad} NaN or infinite values of {image.size}: pixel "
                         "values must be finite")


def _in_units(image: np.ndarray, units: str, target: str) -> np.ndarray:
    """``image`` (values in ``units``) expressed in ``target`` units; rounded to whole
    levels when the target is an integer type."""
    if units == target:
        return image.astype(np.uint8) if units == "uint8" and image.dtype != np.uint8 else image
    values = image.astype(np.float32) * np.float32(UNIT_SCALE[target] / UNIT_SCALE[units])
    return np.rint(values, out=values) if target != "float" else values


def checked_image(image, family: FeatureFamily, values: dict | None = None,
                  name: str = "image") -> np.ndarray:
    """``image`` as the model reads it (module docstring), or ValueError naming the
    problem.

    Parameters
    ----------
    image : array
        One image as :meth:`JungleSegmenter.fit` takes them.
    family : FeatureFamily
        The model's features: RGB, grey or multichannel colour features, or depth.
    values : dict, optional
        The model's ``input_values`` metadata (units and training range); None for models
        written before it was recorded (then only the checks that need no record apply).
    name : str
        How error messages name the image.

    Examples
    --------
    >>> from jungleseg import ColourFeatures
    >>> grey = ColourFeatures(input="grey")
    >>> checked_image(np.array([[0.0, 1.0]]), grey, {"units": "uint8", "range": [0, 255]})
    array([[  0., 255.]], dtype=float32)
    """
    image = np.asarray(image)
    units = value_units(image, name)
    _finite(image, name)
    if isinstance(family, DepthFeatures) or not isinstance(family, ColourFeatures):
        return image  # depth: depth_in_metres reads the units and checks the values
    if family.input == "rgb":
        if units == "float" and image.size and (image.min() < 0 or image.max() > 1):
            raise ValueError(f"{name}: floating-point RGB values must lie in [0, 1], got "
                             f"{image.min():.4g}..{image.max():.4g} (divide 8-bit values by "
                             "255, or pass uint8)")
        return _in_units(image, units, units)
    if not values:
        return _in_units(image, units, units)
    target = values["units"]
    converted = _in_units(image, units, target)
    if units == "float" and converted.size:
        low, high = values["range"]
        slack = max(high - low, UNIT_SCALE[target])
        found = (float(converted.min()), float(converted.max()))
        if found[0] < low - slack or found[1] > high + slack:
            raise ValueError(
                f"{name}: floating-point values {image.min():.4g}..{image.max():.4g} read as "
                f"{found[0]:.4g}..{found[1]:.4g} in the model's units ({target}), far outside "
                f"the training range {low:.4g}..{high:.4g}: floats are read as fractions "
                "(0..1) of the model's full scale; rescale the image")
    return converted


def training_values(images: list, family: FeatureFamily) -> tuple[list, dict | None]:
    """Training images checked and in one unit (the first image's), and the record of
    units and value range that :func:`checked_image` reads at segmentation (None for
    depth features)."""
    if not isinstance(family, ColourFeatures):
        return [checked_image(im, family, name=f"image {i}") for i, im in enumerate(images)], None
    arrays = [np.asarray(im) for im in images]
    units = value_units(arrays[0], "image 0")
    record = {"units": units, "range": [0.0, 0.0]}
    checked = []
    for i, image in enumerate(arrays):
        image = checked_image(image, family, None, f"image {i}")
        if family.input != "rgb":
            image = _in_units(image, value_units(image, f"image {i}"), units)
        checked.append(image)
    low = min(float(im.min()) for im in checked)
    high = max(float(im.max()) for im in checked)
    record["range"] = [low, high]
    return checked, record
