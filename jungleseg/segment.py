"""Segment whole images with a trained (or loaded) jungle."""
from __future__ import annotations

import numpy as np

from .features import DepthFeatures, ImageStore, box_mean
from .model import Jungle


def segment(jungle: Jungle, image, tile: int | None = None,
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
    """
    smoothing = _checked_smoothing(jungle, smoothing)
    if tile is not None:
        return _segment_tiled(jungle, image, int(tile), smoothing)
    return _segment_window(jungle, image, None, smoothing)


def _checked_smoothing(jungle: Jungle, smoothing) -> int:
    if smoothing is None:
        smoothing = jungle.params.get("smoothing", 0)
    if isinstance(smoothing, bool) or not isinstance(smoothing, (int, np.integer)) \
            or smoothing < 0:
        raise ValueError(f"smoothing must be an integer >= 0, got {smoothing!r}")
    return int(smoothing)


def smooth_probabilities(proba: np.ndarray, half: int, mask=None) -> np.ndarray:
    """Each class's probability averaged over the ``(2 half + 1)`` square box around every
    pixel, over the box's pixels that are inside the image (and inside ``mask``, where
    given; pixels outside it stay zero)."""
    out = box_mean(np.ascontiguousarray(proba, np.float32), half, mask)
    if mask is not None:
        out[mask == 0] = 0
    return out


def guided_smoothing(proba: np.ndarray, guide: np.ndarray, half: int, eps: float,
                     mask=None) -> np.ndarray:
    """Each class's probability smoothed by a guided filter (He, Sun and Tang, "Guided
    Image Filtering", TPAMI 2013) steered by the (H, W) ``guide``: within every
    ``(2 half + 1)`` box the output is a linear function of the guide fitted to the
    probabilities, with ridge penalty ``eps`` (in squared guide units).

    Where the guide is flat it averages like :func:`smooth_probabilities`; across an edge
    of the guide the probabilities change with it, so class boundaries settle on image
    edges instead of wherever the jungle's thresholds happened to place them (sparse
    scribbles never show where between two regions the boundary lies). Boxes are
    clipped to the image and ``mask`` as in :func:`smooth_probabilities`. The filter is
    linear in the probabilities and keeps a constant, so the last class is one minus the
    others (inside ``mask``); the result is clipped to [0, 1], as the fit can overshoot
    near strong edges.
    """
    guide = np.ascontiguousarray(guide, np.float32)
    inside = None if mask is None else (mask > 0)
    if inside is not None:  # box_mean sums every pixel: zero those outside the mask
        guide = np.where(inside, guide, np.float32(0))
    out = np.empty(proba.shape, np.float32)
    mean_guide = box_mean(guide, half, mask)
    denominator = box_mean(guide * guide, half, mask)
    denominator -= mean_guide * mean_guide  # the guide's variance in the box
    denominator += np.float32(eps)
    rest = np.ones(guide.shape, np.float32)
    for c in range(proba.shape[2] - 1):  # plane by plane: 2-3x faster than (H, W, C) arrays
        plane = np.ascontiguousarray(proba[:, :, c], np.float32)
        mean_plane = box_mean(plane, half, mask)
        slope = box_mean(guide * plane, half, mask)
        slope -= mean_guide * mean_plane
        slope /= denominator
        mean_plane -= slope * mean_guide  # now the intercept
        if inside is not None:
            slope[~inside] = 0
            mean_plane[~inside] = 0
        smoothed = box_mean(slope, half, mask)
        smoothed *= guide
        smoothed += box_mean(mean_plane, half, mask)
        out[:, :, c] = smoothed
        rest -= smoothed
    out[:, :, -1] = rest
    np.clip(out, 0, 1, out=out)
    if mask is not None:
        out[mask == 0] = 0
    return out


def segment_prepared(jungle: Jungle, store: ImageStore, image: int = 0,
                     smoothing: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`segment` of image ``image`` of a store the jungle's features prepared
    (``jungle.family.prepare(images, pad=...)``), e.g. the one it was trained on. With
    ``pad`` at least ``jungle.point_reach``, probes are read without clamping (faster)."""
    if store.n_channels != jungle.family.n_channels:
        raise ValueError(f"the store has {store.n_channels} channels; the model reads "
                         f"{jungle.family.n_channels}")
    if not 0 <= image < store.n_images:
        raise ValueError(f"image {image} is not in the store (0 to {store.n_images - 1})")
    return _labelled(jungle, store, image, _checked_smoothing(jungle, smoothing))


def _segment_window(jungle: Jungle, image, window, smoothing: int = 0
                    ) -> tuple[np.ndarray, np.ndarray]:
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
    # probabilities within ``reach`` of a tile are averaged into it (a guided filter
    # averages box averages)
    reach = smoothing * (2 if smoothing and jungle.params.get("guided_eps") else 1)
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
