"""Synthetic 3-D cell volumes: anisotropic fluorescence-like stacks of nuclei and membranes.

:func:`render_cell_volume` draws a tissue of ellipsoidal cells on a jittered grid, in
physical units (micrometres) sampled at a voxel spacing that is coarser along z than in
the plane, as confocal stacks are. The classes (:data:`CLASS_NAMES`, labels 1..3; 0 is
never used, the napari plugin keeps it for unpainted voxels):

1. background: the dark space between cells and the dim, finely textured cytoplasm;
2. membrane: a bright shell of fixed physical thickness around every cell;
3. nucleus: an ellipsoid inside each cell, medium bright with coarse mottling.

The label volume is exact; the image is then blurred by an anisotropic point-spread
function (wider along z) and gets Poisson-like and read noise. With ``thin=True`` the
structures are thin in z: each cell's membrane is a pair of flat plates one slice thick,
above and below its nucleus, of the nucleus' outline and, once blurred, as bright and
mottled as it. A slice through a plate shows a bright disc just like a slice through the
nucleus; only the slices above and below tell them apart. With ``channels=True`` the volume
is a 3-channel stain (nuclear, membrane, cytoplasm), channels last.

Volume ``seed`` is drawn from ``numpy.random.default_rng(seed)``.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ..features._filters import gaussian_volume
from .scribbles import paint_scribbles

#: The three classes, for labels 1..3 (label 0 means "unlabelled" and does not occur).
CLASS_NAMES: tuple[str, ...] = ("background", "membrane", "nucleus")
BACKGROUND, MEMBRANE, NUCLEUS = range(1, len(CLASS_NAMES) + 1)
#: Voxel size (z, y, x) in micrometres that the sample data and benchmarks use.
SPACING = (0.3, 0.1, 0.1)

_CELL = 6.0  # grid step between cell centres, micrometres (in-plane; z too unless thin)
_THIN_CELL_Z = 4.0  # grid step along z of cells with plate membranes
_THIN_NUCLEUS_Z = 0.8  # half-height of their nuclei, micrometres
_PLATE_GAP = 1.4  # distance along z from a nucleus' centre to its membrane plates
_MEMBRANE = 0.3  # membrane thickness, micrometres
_PSF = (0.25, 0.08, 0.08)  # point-spread function sigma (z, y, x), micrometres


def _cells(rng: np.random.Generator, extent: np.ndarray, thin: bool) -> list[tuple]:
    """(centre, radii, nucleus centre, nucleus radii) of every cell, micrometres (z, y, x)."""
    step = np.array([_THIN_CELL_Z if thin else _CELL, _CELL, _CELL])
    counts = np.maximum(1, np.round(extent / step).astype(int))
    step = extent / counts
    cells = []
    for index in itertools.product(*(range(n) for n in counts)):
        room = step / 2 - _MEMBRANE  # half a grid step, less the membrane: no overlaps
        radii = room * rng.uniform(0.7, 0.95, 3)
        centre = (np.array(index) + 0.5) * step + rng.uniform(-1, 1, 3) * (room - radii)
        nucleus_radii = radii * rng.uniform(0.45, 0.6, 3)
        if thin:  # plates at +-_PLATE_GAP from the nucleus' centre, inside the grid step
            nucleus_radii[0] = _THIN_NUCLEUS_Z
            radii[0] = _PLATE_GAP + _MEMBRANE
            centre[0] = (index[0] + 0.5) * step[0]
        shift = rng.uniform(-1, 1, 3) * (radii - nucleus_radii - _MEMBRANE) * 0.5
        cells.append((centre, radii, centre + shift, nucleus_radii))
    return cells


def _ellipsoid(grid: Sequence[np.ndarray], centre: np.ndarray, radii: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Normalised radius q (1 on the surface) and approximate distance to the surface,
    in micrometres, of the points of ``grid`` (z, y, x arrays, micrometres)."""
    parts = [(g - c) / r for g, c, r in zip(grid, centre, radii)]
    q = np.sqrt(sum(p * p for p in parts))
    slope = np.sqrt(sum((p / r) ** 2 for p, r in zip(parts, radii))) / np.maximum(q, 1e-6)
    return q, (q - 1) / np.maximum(slope, 1e-6)


def _labels(shape: tuple[int, int, int], spacing: np.ndarray, cells: list[tuple],
            thin: bool) -> np.ndarray:
    labels = np.full(shape, BACKGROUND, np.uint8)
    for centre, radii, nucleus_centre, nucleus_radii in cells:
        low = np.maximum(np.floor((centre - radii - _MEMBRANE) / spacing).astype(int), 0)
        high = np.minimum(np.ceil((centre + radii + _MEMBRANE) / spacing).astype(int) + 1,
                          shape)
        if np.any(high <= low):
            continue
        grid = np.meshgrid(*((np.arange(a, b) + 0.5) * s
                             for a, b, s in zip(low, high, spacing)), indexing="ij")
        box = labels[tuple(slice(a, b) for a, b in zip(low, high))]
        if thin:  # plates of the nucleus' outline above and below it
            outline, _ = _ellipsoid(grid[1:], nucleus_centre[1:], nucleus_radii[1:])
            height = np.abs(np.abs(grid[0] - nucleus_centre[0]) - _PLATE_GAP)
            box[(outline < 1) & (height < _MEMBRANE / 2)] = MEMBRANE
        else:
            _, distance = _ellipsoid(grid, centre, radii)
            box[np.abs(distance) < _MEMBRANE / 2] = MEMBRANE
        q, _ = _ellipsoid(grid, nucleus_centre, nucleus_radii)
        box[q < 1] = NUCLEUS
    return labels


def _texture(rng: np.random.Generator, shape, spacing: np.ndarray, sigma: float
             ) -> np.ndarray:
    """Zero-mean, unit-std noise smoothed over ``sigma`` micrometres."""
    field = rng.standard_normal(shape, dtype=np.float32)
    out = np.empty_like(field)
    gaussian_volume(field, tuple(sigma / s for s in spacing), out)
    out -= out.mean()
    out /= max(float(out.std()), 1e-6)
    return out


def render_cell_volume(shape: tuple[int, int, int] = (64, 256, 256),
                       spacing: tuple[float, float, float] = SPACING, seed: int = 0,
                       thin: bool = False, channels: bool = False
                       ) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic cell volume and its labels.

    Parameters
    ----------
    shape : (D, H, W) voxels.
    spacing : voxel size (z, y, x) in micrometres.
    seed : random seed.
    thin : flat cells whose nuclei look like their membranes within a slice (see the
        module docstring).
    channels : three stains (nuclear, membrane, cytoplasm) instead of one grey volume.

    Returns
    -------
    volume : float32 (D, H, W), or (D, H, W, 3) with ``channels``, about 0 to 1.
    labels : uint8 (D, H, W), values :data:`BACKGROUND`, :data:`MEMBRANE`, :data:`NUCLEUS`.

    Examples
    --------
    >>> volume, labels = render_cell_volume((16, 64, 64), seed=1)
    >>> volume.shape, sorted(set(labels.ravel().tolist()))
    ((16, 64, 64), [1, 2, 3])
    """
    shape = tuple(int(n) for n in shape)
    spacing_arr = np.asarray(spacing, np.float64)
    rng = np.random.default_rng(seed)
    cells = _cells(rng, np.array(shape) * spacing_arr, thin)
    labels = _labels(shape, spacing_arr, cells, thin)
    inside = np.zeros(shape, bool)
    for centre, radii, _, _ in cells:  # cytoplasm: inside a cell, not membrane or nucleus
        low = np.maximum(np.floor((centre - radii) / spacing_arr).astype(int), 0)
        high = np.minimum(np.ceil((centre + radii) / spacing_arr).astype(int) + 1, shape)
        grid = np.meshgrid(*((np.arange(a, b) + 0.5) * s
                             for a, b, s in zip(low, high, spacing_arr)), indexing="ij")
        q, _ = _ellipsoid(grid, centre, radii)
        inside[tuple(slice(a, b) for a, b in zip(low, high))] |= q < 1
    cytoplasm = inside & (labels == BACKGROUND)
    fine = _texture(rng, shape, spacing_arr, 0.15)
    coarse = _texture(rng, shape, spacing_arr, 0.4)
    nucleus_level = 0.85 if thin else 0.55
    stains = {
        "nuclear": np.where(labels == NUCLEUS, nucleus_level + 0.15 * coarse, 0.05),
        # one-slice plates lose a third of their peak to the z blur: drawn brighter, they
        # look as bright as the nuclei in the image
        "membrane": np.where(labels == MEMBRANE, 1.3 + 0.2 * coarse if thin else 0.85, 0.05),
        "cytoplasm": np.where(cytoplasm, 0.3 + 0.06 * fine, 0.05),
    }
    if channels:
        planes = [stains[name] for name in ("nuclear", "membrane", "cytoplasm")]
    else:
        grey = np.maximum(np.maximum(stains["nuclear"], stains["membrane"]),
                          stains["cytoplasm"])
        planes = [grey]
    out = []
    for plane in planes:
        plane = plane.astype(np.float32)
        blurred = np.empty_like(plane)
        gaussian_volume(plane, tuple(p / s for p, s in zip(_PSF, spacing_arr)), blurred)
        noise = rng.standard_normal(shape, dtype=np.float32)
        noise *= np.sqrt(0.004 * np.maximum(blurred, 0) + 0.0025)  # shot and read noise
        blurred += noise
        out.append(blurred)
    volume = np.stack(out, axis=3) if channels else out[0]
    return volume, labels


def paint_slices(truth: np.ndarray, slices: Sequence[int], fraction: float = 0.01,
                 seed: int = 0) -> np.ndarray:
    """Scribbles (D, H, W) as a user paints them on a few slices of a volume: the strokes
    of :func:`~jungleseg.datasets.scribbles.paint_scribbles` on each slice in ``slices``,
    0 elsewhere."""
    paint = np.zeros(truth.shape, np.uint8)
    for k, z in enumerate(slices):
        paint[z] = paint_scribbles(truth[z], fraction=fraction, seed=seed + k)
    return paint
