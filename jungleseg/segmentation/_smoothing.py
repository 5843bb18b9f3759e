"""Smoothing of class probabilities before labelling: plain box averages, or edge-aware
averages with a guided filter."""
from __future__ import annotations

import numpy as np

from .._validation import Integral, Interval, Real
from .._workers import thread_map
from ..features import box_mean

#: The model parameters that say how probabilities are smoothed.
SMOOTHING_CONSTRAINTS = {
    "smoothing": [Interval(Integral, 0, 65535, closed="both")],
    "guided_eps": [Interval(Real, 0, np.inf, closed="neither"), None],
}


def smoothing_reach(smoothing: int, guided_eps: float | None) -> int:
    """How far from a pixel smoothing reads probabilities: a guided filter averages box
    averages, so it reaches twice the box half-size."""
    return smoothing * (2 if smoothing and guided_eps else 1)


def smooth_probabilities(proba: np.ndarray, half: int, mask: np.ndarray | None = None
                         ) -> np.ndarray:
    """Each class's probability averaged over the ``(2 half + 1)`` square box around every
    pixel, over the box's pixels that are inside the image (and inside ``mask``, where
    given; pixels outside it stay zero)."""
    out = box_mean(np.ascontiguousarray(proba, np.float32), half, mask)
    if mask is not None:
        out[mask == 0] = 0
    return out


def guided_smoothing(proba: np.ndarray, guide: np.ndarray, half: int, eps: float,
                     mask: np.ndarray | None = None) -> np.ndarray:
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

    def boxed(values: np.ndarray) -> np.ndarray:
        return box_mean(values, half, mask)

    out = np.empty(proba.shape, np.float32)
    # box means in independent pairs, each pair on two threads (thread_map)
    mean_guide, denominator = thread_map(boxed, [guide, guide * guide])
    denominator -= mean_guide * mean_guide  # the guide's variance in the box
    denominator += np.float32(eps)
    rest = np.ones(guide.shape, np.float32)
    for c in range(proba.shape[2] - 1):  # plane by plane: faster than (H, W, C) arrays
        plane = np.ascontiguousarray(proba[:, :, c], np.float32)
        mean_plane, slope = thread_map(boxed, [plane, guide * plane])
        slope -= mean_guide * mean_plane
        slope /= denominator
        mean_plane -= slope * mean_guide  # now the intercept
        if inside is not None:
            slope[~inside] = 0
            mean_plane[~inside] = 0
        smoothed, intercept = thread_map(boxed, [slope, mean_plane])
        smoothed *= guide
        smoothed += intercept
        out[:, :, c] = smoothed
        rest -= smoothed
    out[:, :, -1] = rest
    np.clip(out, 0, 1, out=out)
    if mask is not None:
        out[mask == 0] = 0
    return out
