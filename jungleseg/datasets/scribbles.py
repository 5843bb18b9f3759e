"""Simulated user scribbles: sparse training labels painted from a full ground truth.

In the napari plugin a user does not label every pixel; they paint a few short brush strokes
of each class in a Labels layer and train on those. Benchmarks of that workflow need the same
kind of sparse labels, reproducibly: :func:`paint_scribbles` takes a dense label map and paints
short random polyline strokes inside the regions of every class, kept clear of class
boundaries where the regions are large enough (users paint the middle of objects), until a
given share of the image is painted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import cv2
import numpy as np

_CLEARANCE = 2  # pixels kept free between a stroke and the other classes, where possible
_MAX_FAILURES = 30  # consecutive strokes that add nothing before a class is considered full
_TRIES = 6  # directions tried for each segment before the stroke ends early


def _dab(width: int) -> np.ndarray:
    """Footprint of a zero-length ``cv2.line`` of thickness ``width``, cropped to its box."""
    side = 2 * width + 5
    canvas = np.zeros((side, side), np.uint8)
    centre = side // 2
    cv2.line(canvas, (centre, centre), (centre, centre), 1, width)
    rows, cols = np.nonzero(canvas)
    return canvas[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]


def _erode(mask: np.ndarray, radius: int) -> np.ndarray:
    """``mask`` eroded by a disc of ``radius`` pixels, or ``mask`` itself if that empties it."""
    if radius < 1:
        return mask
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    eroded = cv2.erode(mask, disc)
    return eroded if eroded.any() else mask


def _walk(
    rng: np.random.Generator, core: np.ndarray, start: tuple[int, int], segment: float
) -> np.ndarray:
    """Vertices (m, 2) as (x, y) of a random polyline of 2 to 4 segments with ends in ``core``.

    Each segment turns a little from the previous one; a segment whose end would leave
    ``core`` is retried in other directions, and the stroke ends early if none fits.
    """
    height, width = core.shape
    row, col = start
    points = [np.array([col, row], dtype=np.float64)]
    direction = rng.uniform(0, 2 * math.pi)
    for _ in range(rng.integers(2, 5)):
        for attempt in range(_TRIES):
            turn = direction + rng.normal(0, 0.6 * (attempt + 1))
            end = points[-1] + segment * rng.uniform(0.5, 1.5) * np.array(
                [math.cos(turn), math.sin(turn)]
            )
            x, y = np.round(end).astype(int)
            if 0 <= y < height and 0 <= x < width and core[y, x]:
                points.append(end)
                direction = turn
                break
        else:
            break
    return np.array(points)


def _truncate(points: np.ndarray, length: float) -> np.ndarray:
    """The first ``length`` pixels (arc length) of a polyline; its start alone if ``length < 1``."""
    if length < 1:
        return points[:1]
    steps = np.linalg.norm(np.diff(points, axis=0), axis=1)
    ends = np.cumsum(steps)
    last = int(np.searchsorted(ends, length))
    if last >= len(steps):
        return points
    before = ends[last] - steps[last]
    t = (length - before) / steps[last]
    end = points[last] + t * (points[last + 1] - points[last])
    return np.vstack([points[: last + 1], end])


def _stroke(
    points: np.ndarray, allowed: np.ndarray, out: np.ndarray, width: int, pad: int
) -> tuple[tuple[slice, slice], np.ndarray]:
    """Window around a stroke and the mask of the pixels it newly paints there.

    The stroke is drawn with ``cv2.line`` in a small window only, then masked to ``allowed``
    pixels that are not painted yet.
    """
    height, image_width = allowed.shape
    xy = np.round(points).astype(int)
    x0, y0 = np.maximum(xy.min(axis=0) - pad, 0)
    x1, y1 = np.minimum(xy.max(axis=0) + pad + 1, (image_width, height))
    window = (slice(y0, y1), slice(x0, x1))
    canvas = np.zeros((y1 - y0, x1 - x0), np.uint8)
    local = xy - (x0, y0)
    pairs = np.stack([local[:-1], local[1:]], axis=1) if len(local) > 1 else local[None, [0, 0]]
    for p, q in pairs:  # a single point is drawn as a dab
        cv2.line(canvas, (int(p[0]), int(p[1])), (int(q[0]), int(q[1])), 1, width)
    new = canvas.astype(bool) & allowed[window].astype(bool) & (out[window] == 0)
    return window, new


def _paint_class(
    out: np.ndarray,
    value: np.generic,
    allowed: np.ndarray,
    core: np.ndarray,
    budget: int,
    rng: np.random.Generator,
    width: int,
    dab: int,
) -> int:
    """Paint strokes of one class into ``out``; return the number of pixels painted.

    Strokes start in ``core`` and are masked to ``allowed``. A stroke that would exceed the
    budget is shortened; the first stroke is kept even if a single dab exceeds the budget,
    so that every class gets at least one stroke.
    """
    starts = np.flatnonzero(core)
    segment = max(2.0 * width, 0.04 * min(out.shape))
    pad = width + 1
    painted = failures = 0
    while failures < _MAX_FAILURES and (painted == 0 or budget - painted >= dab):
        start = divmod(int(starts[rng.integers(len(starts))]), out.shape[1])
        points = _walk(rng, core, start, segment)
        window, new = _stroke(points, allowed, out, width, pad)
        count = int(new.sum())
        limit = budget - painted
        while count > limit and len(points) > 1:
            length = np.linalg.norm(np.diff(points, axis=0), axis=1).sum()
            points = _truncate(points, 0.8 * length * max(limit, 0) / count)
            window, new = _stroke(points, allowed, out, width, pad)
            count = int(new.sum())
        if count > limit and painted > 0:
            break  # even a single dab would exceed the budget
        if count == 0:
            failures += 1
            continue
        failures = 0
        out[window][new] = value
        painted += count
    return painted


def paint_scribbles(
    truth: np.ndarray,
    fraction: float = 0.01,
    seed: int = 0,
    width: int = 3,
    ignore: Iterable[int] = (0,),
) -> np.ndarray:
    """Imitate a user painting sparse brush strokes of every class in a napari Labels layer.

    Every class value in ``truth`` (except those in ``ignore``) receives short random strokes:
    polylines of 2 to 4 segments, each about 4 % of the shorter image side long (at least
    ``2 * width``), drawn with ``cv2.line`` and masked to the pixels of that class, so painted
    values always agree with ``truth``. Strokes start and bend inside the class region eroded
    by the brush radius plus two pixels, and are masked to the region eroded by two pixels;
    a class too thin for an erosion is painted without it.

    The budget of ``floor(fraction * truth.size)`` pixels is shared equally between the
    classes, smallest region first, so that what a small class cannot hold passes to larger
    ones. The painted total never exceeds the budget, with one exception: every class gets at
    least one stroke, if need be a single dab of the brush (one ``cv2.line`` point, at most
    ``(width + 2) ** 2`` pixels), even when its share is smaller than that. So at most
    ``budget + n_classes * dab`` pixels are painted, and at most ``budget`` whenever the budget
    holds one dab per class. Fewer pixels are painted only when the classes are too small to
    hold their shares, or by less than one dab per class.

    Parameters
    ----------
    truth : numpy.ndarray
        Dense (H, W) label map of any integer dtype.
    fraction : float, default 0.01
        Share of the image to paint, in (0, 1).
    seed : int, default 0
        Seed of the strokes; the same seed, ``truth`` and arguments give the same result.
    width : int, default 3
        Brush thickness passed to ``cv2.line``. OpenCV draws round-capped lines a little
        wider than the thickness: ``2 * ceil(width / 2) + 1`` pixels across for ``width >= 2``
        (5 for the default 3).
    ignore : iterable of int, default (0,)
        Class values that are not painted (e.g. unlabelled or void pixels).

    Returns
    -------
    numpy.ndarray
        Array of the shape and dtype of ``truth``: the class value on painted pixels and 0
        elsewhere.

    Raises
    ------
    ValueError
        If ``truth`` is not 2-D, ``fraction`` is not in (0, 1), ``width`` is not a positive
        integer, or a class to paint has the value 0 (which marks unpainted pixels).
    """
    truth = np.asarray(truth)
    if truth.ndim != 2:
        raise ValueError(f"truth must be a 2-D (H, W) label map, got shape {truth.shape}")
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    if isinstance(width, bool) or int(width) != width or width < 1:
        raise ValueError(f"width must be a positive integer, got {width}")
    width = int(width)
    values = np.unique(truth)
    classes = values[np.isin(values, list(ignore), invert=True)]
    if np.any(classes == 0):
        raise ValueError("value 0 marks unpainted pixels and cannot be painted; add 0 to ignore")
    out = np.zeros_like(truth)
    footprint = _dab(width)
    radius = (footprint.shape[0] - 1) // 2
    allowed = [_erode((truth == c).astype(np.uint8), _CLEARANCE) for c in classes]
    core = [_erode(region, radius) for region in allowed]
    order = np.argsort([int(np.count_nonzero(region)) for region in allowed], kind="stable")
    rng = np.random.default_rng(seed)
    remaining = int(fraction * truth.size)
    for left, k in zip(range(len(classes), 0, -1), order, strict=True):
        budget = max(remaining, 0) // left
        remaining -= _paint_class(
            out, classes[k], allowed[k], core[k], budget, rng, width, int(footprint.sum())
        )
    return out
