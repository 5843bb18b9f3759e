"""Segment whole images with a trained (or loaded) jungle."""
from __future__ import annotations

import numpy as np

from .features import DepthFeatures
from .model import Jungle


def segment(jungle: Jungle, image, tile: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Labels (H, W) and class probabilities (H, W, n_classes) float32 of one image.

    With depth features only foreground pixels (depth > 0) are classified; the others
    get the model's ``background`` label and zero probabilities. With ``tile``, the image
    is processed in tiles of that size plus a margin of the largest probe reach, so only
    one tile's channels are in memory at a time; ``image`` may then be any array that
    supports slicing (a memory map, a zarr or dask array); the result is the same.
    """
    if tile is not None:
        return _segment_tiled(jungle, image, int(tile))
    return _segment_window(jungle, image, None)


def _segment_window(jungle: Jungle, image, window) -> tuple[np.ndarray, np.ndarray]:
    family = jungle.family
    channels = family.channels(np.asarray(image), window=window)
    depth = isinstance(family, DepthFeatures)
    mask = (channels[:, :, 0] > 0).astype(np.uint8) if depth else None
    proba = jungle.predict_image(family.pack([channels]), 0, mask)
    labels = jungle.classes[np.argmax(proba, axis=2)]
    if depth:
        labels = np.where(mask > 0, labels, jungle.params.get("background", 0))
    return labels, proba


def _segment_tiled(jungle: Jungle, image, tile: int) -> tuple[np.ndarray, np.ndarray]:
    if tile < 1:
        raise ValueError(f"tile must be >= 1, got {tile}")
    family = jungle.family
    h, w = image.shape[:2]
    labels = np.empty((h, w), jungle.classes.dtype)
    proba = np.empty((h, w, jungle.n_classes), np.float32)
    for r0 in range(0, h, tile):
        for c0 in range(0, w, tile):
            margin = family.margin(image[r0:r0 + tile, c0:c0 + tile])
            top, left = max(r0 - margin, 0), max(c0 - margin, 0)
            bottom, right = min(r0 + tile + margin, h), min(c0 + tile + margin, w)
            lab, pr = _segment_window(jungle, image[top:bottom, left:right], (top, left, h, w))
            inner = (slice(r0 - top, r0 - top + min(tile, h - r0)),
                     slice(c0 - left, c0 - left + min(tile, w - c0)))
            labels[r0:r0 + tile, c0:c0 + tile] = lab[inner]
            proba[r0:r0 + tile, c0:c0 + tile] = pr[inner]
    return labels, proba
