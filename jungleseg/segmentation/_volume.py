"""Segment 3-D volumes with a volume model: whole, in 3-D tiles with the probes' margin,
or from a store already prepared; probabilities averaged over a box of equal physical
size along every axis."""
from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from ..features import ImageStore, VolumeFeatures
from ..features._filters import box_mean_volume
from ..jungle import Jungle
from ..jungle._model import checked_jungle

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
    return jungle.classes[jungle.label_indices(proba, axis=3)], proba


def segment_volume(jungle: Jungle, volume, tile: int | tuple[int, int, int] | None = None,
                   smoothing: int = 0, out: tuple | None = None,
                   stop: Callable[[], bool] | None = None
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """Labels (D, H, W) and probabilities (D, H, W, n_classes) of one volume.

    With ``tile`` (voxels along z, y and x, or one size for all three), the volume is
    segmented tile by tile, each with a margin of the features' reach
    (:meth:`VolumeFeatures.margin`) plus the smoothing box around it, so that only one
    tile's channels are in memory and the result equals the whole volume's; ``volume`` may
    then be any array that supports slicing (a memory map, a zarr or dask array). ``out``
    = (labels, probabilities or None): arrays to write into (zarr arrays too), returned.
    ``stop``, if given, is asked before each tile: once it says True, no further tile is
    begun and None is returned.
    """
    jungle = checked_jungle(jungle, "segment_volume")
    family = jungle.family
    shape = tuple(int(n) for n in np.shape(volume)[:3])
    if np.ndim(volume) < 3:
        family.prepare([np.asarray(volume)])  # raises, naming the shape
    if tile is None and out is None:
        return labelled_volume(jungle, family.prepare([np.asarray(volume)]), 0, smoothing)
    sizes = shape if tile is None else (int(tile),) * 3 if np.ndim(tile) == 0 \
        else tuple(int(t) for t in tile)
    if len(sizes) != 3 or min(sizes) < 1:
        raise ValueError(f"tile must be one size or three (z, y, x), each >= 1, got {tile}")
    labels, proba = out or (np.empty(shape, jungle.classes.dtype),
                            np.empty(shape + (jungle.n_classes,), np.float32))
    margin = volume_margin(jungle, smoothing)
    for inner in tiles(shape, sizes):
        if stop is not None and stop():
            return None
        outer = tuple((max(a - m, 0), min(b + m, n))
                      for (a, b), m, n in zip(inner, margin, shape))
        window = np.asarray(volume[tuple(slice(a, b) for a, b in outer)])
        lab, pr = volume_part(jungle, window, outer, inner, smoothing)
        target = tuple(slice(a, b) for a, b in inner)
        labels[target] = lab
        if proba is not None:
            proba[target] = pr
    return labels, proba


def volume_margin(jungle: Jungle, smoothing: int) -> tuple[int, int, int]:
    """Voxels of context (z, y, x) around a tile for its result to equal the whole
    volume's: the features' margin plus the smoothing box."""
    halves = smoothing_halves(jungle.family, smoothing)
    return tuple(m + h for m, h in zip(jungle.family.margin(), halves))


def volume_part(jungle: Jungle, window: np.ndarray, outer: Box, inner: Box, smoothing: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Labels and probabilities of the voxels ``inner`` of a volume from the ``window``
    of it at ``outer`` (both in volume coordinates): equal to the whole volume's there
    when the window holds :func:`volume_margin` around the tile. Only the inner slices,
    and those the smoothing box reads, are traversed."""
    halves = smoothing_halves(jungle.family, smoothing)
    (z0, z1), (zo, zs) = inner[0], outer[0]
    first, stop = max(z0 - halves[0], zo), min(z1 + halves[0], zs)
    lab, pr = labelled_volume(jungle, jungle.family.prepare([window]), 0, smoothing,
                              np.arange(first - zo, stop - zo))
    keep = (slice(z0 - first, z1 - first),
            *(slice(a - o, b - o) for (a, b), (o, _) in zip(inner[1:], outer[1:])))
    return lab[keep], pr[keep]


def tiles(shape: tuple[int, int, int], sizes: tuple[int, int, int]) -> list[Box]:
    """The tiles of ``sizes`` voxels that cover a volume of ``shape``, in z, y, x order."""
    ranges = [[(a, min(a + s, n)) for a in range(0, n, s)] for n, s in zip(shape, sizes)]
    return list(itertools.product(*ranges))
