"""Segment 3-D volumes with a volume model: whole, in 3-D tiles with the probes' margin,
or from a store already prepared; probabilities averaged over a box of equal physical
size along every axis."""
from __future__ import annotations

import itertools

import numpy as np

from ..features import ImageStore, VolumeFeatures
from ..features._filters import box_mean_volume
from ..jungle import Jungle

#: (first, stop) of a tile along z, y and x.
Box = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]


def smoothing_halves(family: VolumeFeatures, smoothing: int) -> tuple[int, int, int]:
    """The box half-sizes (z, y, x) in voxels of smoothing ``smoothing``, a half-size in
    in-plane voxels (along y): the same physical length along every axis."""
    if not smoothing:
        return (0, 0, 0)
    length = smoothing * family.spacing[1]
    return tuple(max(0, int(np.floor(length / s + 0.5))) for s in family.spacing)


def labelled_volume(jungle: Jungle, store: ImageStore, image: int = 0, smoothing: int = 0,
                    slices: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Labels (d, H, W) and probabilities (d, H, W, n_classes) of slices ``slices``
    (default: all) of one volume of a store the jungle's features prepared. Smoothing
    averages over slices of the volume that ``slices`` may not include: a caller that
    wants the whole volume's result on a part passes the part with enough slices around
    it (see :func:`segment_volume`)."""
    proba = jungle.predict_volume(store, image, slices)
    halves = smoothing_halves(jungle.family, smoothing)
    if any(halves):
        for c in range(proba.shape[3]):  # class by class: contiguous volumes for the filter
            plane = np.ascontiguousarray(proba[..., c])
            box_mean_volume(plane, halves, plane)
            proba[..., c] = plane
    return jungle.classes[np.argmax(proba, axis=3)], proba


def segment_volume(jungle: Jungle, volume, tile: int | tuple[int, int, int] | None = None,
                   smoothing: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Labels (D, H, W) and probabilities (D, H, W, n_classes) of one volume.

    With ``tile`` (voxels along z, y and x, or one size for all three), the volume is
    segmented tile by tile, each with a margin of the features' reach
    (:meth:`VolumeFeatures.margin`) plus the smoothing box around it, so that only one
    tile's channels are in memory and the result equals the whole volume's; ``volume`` may
    then be any array that supports slicing (a memory map, a zarr or dask array).
    """
    family = jungle.family
    shape = tuple(int(n) for n in np.shape(volume)[:3])
    if np.ndim(volume) < 3:
        family.prepare([np.asarray(volume)])  # raises, naming the shape
    if tile is None:
        return labelled_volume(jungle, family.prepare([np.asarray(volume)]), 0, smoothing)
    sizes = (int(tile),) * 3 if np.ndim(tile) == 0 else tuple(int(t) for t in tile)
    if len(sizes) != 3 or min(sizes) < 1:
        raise ValueError(f"tile must be one size or three (z, y, x), each >= 1, got {tile}")
    labels = np.empty(shape, jungle.classes.dtype)
    proba = np.empty(shape + (jungle.n_classes,), np.float32)
    halves = smoothing_halves(family, smoothing)
    margin = tuple(m + h for m, h in zip(family.margin(), halves))
    for inner in tiles(shape, sizes):
        outer = tuple((max(a - m, 0), min(b + m, n))
                      for (a, b), m, n in zip(inner, margin, shape))
        window = np.asarray(volume[tuple(slice(a, b) for a, b in outer)])
        (z0, z1), (zo, zs) = inner[0], outer[0]
        # traverse the inner slices and those the smoothing box reads
        first, stop = max(z0 - halves[0], zo), min(z1 + halves[0], zs)
        lab, pr = labelled_volume(jungle, family.prepare([window]), 0, smoothing,
                                  np.arange(first - zo, stop - zo))
        keep = (slice(z0 - first, z1 - first),
                *(slice(a - o, b - o) for (a, b), (o, _) in zip(inner[1:], outer[1:])))
        target = tuple(slice(a, b) for a, b in inner)
        labels[target] = lab[keep]
        proba[target] = pr[keep]
    return labels, proba


def tiles(shape: tuple[int, int, int], sizes: tuple[int, int, int]) -> list[Box]:
    """The tiles of ``sizes`` voxels that cover a volume of ``shape``, in z, y, x order."""
    ranges = [[(a, min(a + s, n)) for a in range(0, n, s)] for n, s in zip(shape, sizes)]
    return list(itertools.product(*ranges))
