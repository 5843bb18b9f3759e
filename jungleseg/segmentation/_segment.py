"""Segment whole images, tiles of large images, or images of a prepared store with a
trained (or loaded) jungle."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import Integral, Interval, check_params
from ..features import ColourFeatures, DepthFeatures, ImageStore
from ..jungle import Jungle
from ._input import checked_image
from ._smoothing import (
    SMOOTHING_CONSTRAINTS,
    guided_smoothing,
    smooth_probabilities,
    smoothing_reach,
)
from ._volume import labelled_volume, segment_volume

#: The model parameters segmentation reads (checked when a model file is loaded).
SEGMENTATION_CONSTRAINTS = {
    **SMOOTHING_CONSTRAINTS,
    "background": [Interval(Integral, 0, 65535, closed="both")],
}


def segment(jungle: Jungle, image: ArrayLike, tile: int | None = None,
            smoothing: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Labels (H, W) and class probabilities (H, W, n_classes) float32 of one image.

    With depth features only foreground pixels (depth > 0) are classified; the others
    get the model's ``background`` label and zero probabilities. With ``tile``, the image
    is processed in tiles of that size plus a margin of the largest probe reach, so only
    one tile's channels are in memory at a time; ``image`` may then be any array that
    supports slicing (a memory map, a zarr or dask array); the result is the same.
    ``smoothing`` (default: the model's own, see :class:`~jungleseg.JungleSegmenter`) is
    the half-size of the box over which probabilities are averaged before labelling; a
    model trained with ``guided_eps`` averages them edge-aware (:func:`guided_smoothing`).

    A volume model (:class:`~jungleseg.VolumeFeatures`) segments (D, H, W[, C]) volumes:
    labels (D, H, W), probabilities (D, H, W, n_classes), ``tile`` in voxels (one size or
    z, y, x; see :func:`segment_volume`). A 2-D model refuses a volume, and a volume model
    a 2-D image, with a ValueError saying so.
    """
    smoothing = _checked_smoothing(jungle, smoothing)
    if jungle.family.spatial_ndim == 3:
        return segment_volume(jungle, image, tile, smoothing)
    _check_planar(jungle, np.shape(image))
    if tile is not None:
        return _segment_tiled(jungle, image, int(tile), smoothing)
    return _segment_window(jungle, image, None, smoothing)


def _check_planar(jungle: Jungle, shape: tuple) -> None:
    """Raise ValueError if a 2-D model is given more axes than its images have."""
    family = jungle.family
    axes = 3 if isinstance(family, ColourFeatures) and family.input != "grey" else 2
    grey_channel = axes == 2 and len(shape) == 3 and shape[2] == 1
    if len(shape) > axes and not grey_channel:
        layout = "(H, W)" if axes == 2 else "(H, W, C)"
        raise ValueError(f"this 2-D model reads {layout} images; got an array of shape "
                         f"{tuple(shape)}: segment a volume slice by slice, or train a "
                         "volume model (VolumeFeatures)")


def _checked_smoothing(jungle: Jungle, smoothing) -> int:
    if smoothing is None:
        smoothing = jungle.params.get("smoothing", 0)
    check_params(SEGMENTATION_CONSTRAINTS, {"smoothing": smoothing}, "segment")
    return int(smoothing)


def segment_prepared(jungle: Jungle, store: ImageStore, image: int = 0,
                     smoothing: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`segment` of image ``image`` of a store the jungle's features prepared
    (``jungle.family.prepare(images, pad=...)``), e.g. the one it was trained on. With
    ``pad`` at least ``jungle.point_reach``, probes are read without clamping (faster)."""
    jungle.family.check_store(store)
    if store.n_channels != jungle.family.n_store_channels:
        raise ValueError(f"the store has {store.n_channels} channels; the model reads "
                         f"{jungle.family.n_store_channels}")
    if not 0 <= image < store.n_images:
        raise ValueError(f"image {image} is not in the store (0 to {store.n_images - 1})")
    if store.ndim == 3:
        return labelled_volume(jungle, store, image, _checked_smoothing(jungle, smoothing))
    return _labelled(jungle, store, image, _checked_smoothing(jungle, smoothing))


def _segment_window(jungle: Jungle, image, window, smoothing: int = 0
                    ) -> tuple[np.ndarray, np.ndarray]:
    image = checked_image(image, jungle.family, jungle.metadata.get("input_values"))
    store = jungle.family.prepare([image], pad=jungle.point_reach or 0, window=window)
    return _labelled(jungle, store, 0, smoothing)


def _labelled(jungle: Jungle, store: ImageStore, image: int, smoothing: int
              ) -> tuple[np.ndarray, np.ndarray]:
    depth = isinstance(jungle.family, DepthFeatures)
    mask = None
    if depth:  # foreground: depth (channel 0) > 0
        mask = (store.planes(image)[0] > 0).astype(np.uint8)
    proba = jungle.predict_image(store, image, mask)
    eps = jungle.params.get("guided_eps")
    if smoothing and eps:
        centre, scale = jungle.metadata["guide"]  # channel 0 over the training pixels
        guide = (store.planes(image)[0] - np.float32(centre)) / np.float32(scale)
        proba = guided_smoothing(proba, guide, smoothing, eps, mask)
    elif smoothing:
        proba = smooth_probabilities(proba, smoothing, mask)
    labels = jungle.classes[np.argmax(proba, axis=2)]
    if depth:
        labels = np.where(mask > 0, labels, jungle.params.get("background", 0))
    return labels, proba


def _segment_tiled(jungle: Jungle, image, tile: int, smoothing: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    if tile < 1:
        raise ValueError(f"tile must be >= 1, got {tile}")
    family = jungle.family
    h, w = image.shape[:2]
    labels = np.empty((h, w), jungle.classes.dtype)
    proba = np.empty((h, w, jungle.n_classes), np.float32)
    reach = smoothing_reach(smoothing, jungle.params.get("guided_eps"))  # averaged into a tile
    for r0 in range(0, h, tile):
        for c0 in range(0, w, tile):
            ring = (slice(max(r0 - reach, 0), r0 + tile + reach),
                    slice(max(c0 - reach, 0), c0 + tile + reach))
            margin = family.margin(image[ring]) + reach
            top, left = max(r0 - margin, 0), max(c0 - margin, 0)
            bottom, right = min(r0 + tile + margin, h), min(c0 + tile + margin, w)
            lab, pr = _segment_window(jungle, image[top:bottom, left:right], (top, left, h, w),
                                      smoothing)
            inner = (slice(r0 - top, r0 - top + min(tile, h - r0)),
                     slice(c0 - left, c0 - left + min(tile, w - c0)))
            labels[r0:r0 + tile, c0:c0 + tile] = lab[inner]
            proba[r0:r0 + tile, c0:c0 + tile] = pr[inner]
    return labels, proba
