"""Which image arrays training and segmentation accept, and how their values are read.

The rule (``docs/guide/model-files.md``, "Input values"), applied at every entry point (the
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
  its type. For a model trained on integer images a floating-point image must lie in
  [0, 1]; for one trained on floats, its values must not reach beyond the training range
  by more than that range's width (or 1, if larger): otherwise they are not on the scale
  the model was trained on, and the image is refused.
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
        raise ValueError(f"{name}: complex values ({image.dtype}): pixel values must be "
                         "real numbers")
    if kind == "b":
        raise ValueError(f"{name}: boolean values; give pixel values as uint8, uint16 or float")
    if kind not in "uif":
        raise ValueError(f"{name}: dtype {image.dtype}; expected integer or "
                         "floating-point pixel values")
    if image.dtype == np.uint8:
        return "uint8"
    if image.dtype == np.uint16:
        return "uint16"
    if kind == "f":
        return "float"
    if image.size and (image.min() < 0 or image.max() > 255):
        raise ValueError(f"{name}: {image.dtype} values {image.min()}..{image.max()}; "
                         "integer images other than uint8 and uint16 must hold 8-bit values "
                         "0..255 (cast 16-bit values to uint16)")
    return "uint8"


def _finite(image: np.ndarray, name: str) -> None:
    if image.dtype.kind == "f" and not np.isfinite(image).all():
        bad = int(np.count_nonzero(~np.isfinite(image)))
        raise ValueError(f"{name}: {bad} NaN or infinite values of {image.size}; pixel "
                         "values must be finite")


def _in_units(image: np.ndarray, units: str, target: str) -> np.ndarray:
    """``image`` (values in ``units``) expressed in ``target`` units; rounded to whole
    levels when the target is an integer type."""
    if units == target:
        return image.astype(np.uint8) if units == "uint8" and image.dtype != np.uint8 else image
    values = image.astype(np.float32) * np.float32(UNIT_SCALE[target] / UNIT_SCALE[units])
    if target == "float":
        return values
    return np.rint(values, out=values).astype(target)  # in range: inputs were checked


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
    array([[  0, 255]], dtype=uint8)
    """
    image = np.asarray(image)
    units = value_units(image, name)
    _finite(image, name)
    if isinstance(family, DepthFeatures) and image.ndim != 2:
        raise ValueError(f"{name}: a depth image must be 2-D (H, W), got shape {image.shape}")
    if isinstance(family, DepthFeatures) or not isinstance(family, ColourFeatures):
        return image  # depth: depth_in_metres reads the units and checks the values
    target = units if family.input == "rgb" or not values else values["units"]
    if units == "float" and image.size and (family.input == "rgb" or target != "float"):
        if image.min() < 0 or image.max() > 1:
            what = ("RGB values must lie in [0, 1]" if family.input == "rgb" else
                    f"values must lie in [0, 1] for a model trained on {target} images")
            raise ValueError(f"{name}: floating-point {what} (fractions of full scale), got "
                             f"{image.min():.4g}..{image.max():.4g}; divide 8-bit values by "
                             "255, or pass uint8")
    elif units == "float" and target == "float" and values and image.size:
        low, high = values["range"]
        slack = max(high - low, 1.0)
        if image.min() < low - slack or image.max() > high + slack:
            raise ValueError(f"{name}: values {image.min():.4g}..{image.max():.4g} lie far "
                             f"outside the training range {low:.4g}..{high:.4g}: not on the "
                             "scale the model was trained on; rescale the image")
    return _in_units(image, units, target)


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
