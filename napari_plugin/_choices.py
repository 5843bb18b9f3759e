"""Which layers the widget picks by itself, and what it tells the user to do next.

Plain functions over napari layers (only their ``data``, ``rgb``, ``scale``, ``visible``,
``blending``, ``name`` and ``metadata``), so that the widget opens ready on a sample or a
freshly opened image: the image layer and a Labels layer of its shape are chosen when
there is one obvious choice, and the status line always names the next useful action.
"""
from __future__ import annotations

import numpy as np

from ._session import has_voxel_size

#: Key of ``layer.metadata`` that marks the widget's output layers.
OUTPUT_KEY = "jungleseg_output"
#: Name endings of output layers (also those of an earlier session, saved and reopened).
OUTPUT_SUFFIXES = (" segmentation", " uncertainty", " probabilities")
#: A Labels layer with more of its pixels painted than this is a result or a ground
#: truth, not scribbles.
MAX_PAINTED_SHARE = 0.2
#: The most values a last axis holds to be read as channels (:func:`channels_last`).
MAX_CHANNELS = 8


def is_output(layer) -> bool:
    """Whether ``layer`` is one of the widget's result layers."""
    return bool(layer.metadata.get(OUTPUT_KEY)) or layer.name.endswith(OUTPUT_SUFFIXES)


def inputs(layers, layer_type) -> list:
    """The layers of ``layer_type`` that are not outputs of the widget."""
    return [layer for layer in layers if isinstance(layer, layer_type) and not is_output(layer)]


def is_channel_set(images: list) -> bool:
    """Whether several grey image layers are one image's channels: napari's
    ``channel_axis`` split, which gives each channel a layer of the same shape and scale,
    the first drawn as usual and the others added over it (blended additively)."""
    if len(images) < 2:
        return False
    first = images[0]
    return all(
        not layer.rgb and (layer is first or layer.blending == "additive")
        and np.shape(layer.data) == np.shape(first.data)
        and np.allclose(layer.scale, first.scale) for layer in images)


def pick_image(images: list) -> tuple[object | None, list]:
    """The obvious image layer and further channel layers among ``images`` (input layers):
    the only one, or the first of a channel set (:func:`is_channel_set`); else none."""
    if len(images) == 1:
        return images[0], []
    if is_channel_set(images):
        return images[0], images[1:]
    return None, []


def painted_share(layer) -> float:
    """The share of a Labels layer's pixels that are painted (not 0)."""
    data = np.asarray(layer.data)
    return np.count_nonzero(data) / max(data.size, 1)


def pick_scribbles(labels: list, shape: tuple, scale: tuple):
    """The obvious scribbles layer for an input of spatial ``shape`` and ``scale``: of the
    Labels layers of that shape and scale, the only one; else the only visible one; else
    the only sparsely painted one (a ground truth or a result is dense); else none."""
    fits = [layer for layer in labels if tuple(np.shape(layer.data)) == tuple(shape)
            and np.allclose(layer.scale, scale)]
    for keep in (lambda layer: True, lambda layer: layer.visible,
                 lambda layer: painted_share(layer) <= MAX_PAINTED_SHARE):
        fits = [layer for layer in fits if keep(layer)]
        if len(fits) <= 1:
            return fits[0] if fits else None
    return None


def looks_like_volume(layer, n_spatial: int) -> bool:
    """Whether an input of ``n_spatial`` spatial axes is best segmented in 3-D: it has
    three of them and a voxel size set (a scale other than 1 on its last three axes), as a
    microscope's z-stack does; a plain stack of 2-D frames has scale 1."""
    return n_spatial == 3 and has_voxel_size(layer.scale)


def channels_last(layer) -> bool:
    """Whether an image layer most likely holds channels on its last axis: a few values
    (at most :data:`MAX_CHANNELS`) there, under a plane many times larger, and napari did
    not read it as RGB. napari draws such a layer as planes of W x channels."""
    shape = np.shape(layer.data)
    return (not layer.rgb and len(shape) >= 3 and shape[-1] <= MAX_CHANNELS
            and min(shape[-3:-1]) >= 4 * shape[-1])


def painted_classes(scribbles) -> np.ndarray:
    """The label values painted on a Labels layer (0, unpainted, left out)."""
    data = np.asarray(scribbles.data)
    return np.unique(data[data != 0])


def next_action(n_images: int, image, scribbles, trained: bool) -> str:
    """The next useful thing to do, in plain words, given the number of image layers, the
    chosen image and scribbles layers (or None) and whether a model was trained on them."""
    if image is None:
        if n_images == 0:
            return ("Open an image (File > Open), or try a sample: File > Open Sample > "
                    "jungleseg.")
        return "Choose the image to segment in 'image' above."
    if channels_last(image):
        shape = np.shape(image.data)
        return (f"'{image.name}' has its {shape[-1]} channels last: open Advanced, set "
                f"'channel axis' to {len(shape) - 1} and press 'Split channels into layers'.")
    if scribbles is None:
        return ("Press 'New' next to 'scribbles' to add a layer to paint on, then paint a "
                "few strokes of each class.")
    classes = painted_classes(scribbles)
    if classes.size == 0:
        return (f"Paint a few strokes of each class on '{scribbles.name}' (brush tool; "
                "label 1, 2, ... for each class), then press Train.")
    if classes.size == 1:
        return (f"Only label {int(classes[0])} is painted: paint strokes of another class "
                "too, then press Train.")
    if trained:
        return ("Paint strokes where the segmentation is wrong, then train again (or tick "
                "'live update').")
    return f"Ready: {classes.size} classes painted. Press 'Train and segment'."
