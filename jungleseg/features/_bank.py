"""ilastik's filter bank as channels: Gaussian smoothing, Laplacian of Gaussian, Gaussian
gradient magnitude, difference of Gaussians, structure-tensor eigenvalues and Hessian-of-
Gaussian eigenvalues, at chosen scales, on 2-D images and 3-D volumes.

Scales are Gaussian sigmas in the units of the voxel ``spacing`` (pixels when the spacing is
one), so an anisotropic stack is filtered with ``scale / spacing`` voxels along each axis and
derivatives are taken per unit of the spacing, as ilastik does with a volume's resolution.
Definitions follow ilastik's pixel classification:

- ``gaussian``: the Gaussian of sigma ``s``;
- ``log``: the Laplacian of that Gaussian (the Hessian's trace);
- ``gradient``: the length of the gradient of that Gaussian;
- ``dog``: the Gaussian of ``s`` minus the Gaussian of ``0.66 s``;
- ``structure``: the eigenvalues of the structure tensor, gradients at ``s`` (inner scale)
  and their products smoothed at ``s / 2`` (outer scale), larger first;
- ``hessian``: the eigenvalues of the Hessian of the Gaussian of ``s``, larger first.

Every filter is a separable Gaussian (derivative) with scipy's taps (``truncate=4``,
``mode='nearest'``: the edge voxel repeated), run with OpenCV's separable filter, which gives
:func:`scipy.ndimage.gaussian_filter`'s values to rounding several times faster.
Eigenvalues come in closed form (2-D) or by Smith's trigonometric formula (3-D), in float64.
A volume's passes and eigenvalues run on threads, in bands of slices or columns.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from .._workers import bands, thread_map

#: The filters, in the order their channels are written at each scale.
FILTERS = ("gaussian", "log", "gradient", "dog", "structure", "hessian")
#: The ratio of the second Gaussian of a difference of Gaussians to the first (ilastik's).
DOG_RATIO = 0.66
#: The structure tensor's outer scale as a share of its inner scale (ilastik's).
OUTER_RATIO = 0.5
#: A volume's filters run on threads in bands of this many slices (in-plane passes and
#: eigenvalues) or columns of the (D, H W) matrix (passes along z).
SLICE_BAND = 4
COLUMN_BAND = 16384


def n_planes(filters: Sequence[str], ndim: int) -> int:
    """Channels one scale of ``filters`` makes on ``ndim``-D input: one per filter, ``ndim``
    eigenvalues for the tensors."""
    return sum(ndim if f in ("structure", "hessian") else 1 for f in filters)


def check_filters(filters: Sequence[str]) -> tuple[str, ...]:
    """``filters`` in :data:`FILTERS` order, or a ValueError naming an unknown one."""
    unknown = [f for f in filters if f not in FILTERS]
    if unknown:
        raise ValueError(f"unknown filter {unknown[0]!r}; choose from {', '.join(FILTERS)}")
    return tuple(f for f in FILTERS if f in filters)


def kernel_radius(sigma: float) -> int:
    """Half-width of the Gaussian taps of ``sigma`` voxels (scipy's ``truncate=4``)."""
    return int(4 * sigma + 0.5)


def bank_reach(filters: Sequence[str], scales: Sequence[float],
               spacing: Sequence[float]) -> tuple[int, ...]:
    """How far, in voxels per axis, the bank reads around a voxel: the widest kernel, or
    for the structure tensor its inner plus outer kernel."""
    reach = [0] * len(spacing)
    for s in scales:
        for axis, step in enumerate(spacing):
            r = kernel_radius(s / step)
            if "structure" in filters:
                r += kernel_radius(OUTER_RATIO * s / step)
            reach[axis] = max(reach[axis], r)
    return tuple(reach) if filters else tuple(0 for _ in spacing)


def gaussian_taps(sigma: float, order: int = 0) -> np.ndarray:
    """The 1-D Gaussian (``order`` 0) or its first or second derivative, sampled as
    :func:`scipy.ndimage.gaussian_filter1d` samples it, as float32 correlation taps."""
    radius = kernel_radius(sigma)
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    if sigma <= 0:
        phi = (x == 0).astype(np.float64)
        return phi.astype(np.float32) if order == 0 else np.zeros_like(phi, np.float32)
    phi = np.exp(-0.5 * (x / sigma) ** 2)
    phi /= phi.sum()
    if order == 1:
        phi = -x / sigma ** 2 * phi
    elif order == 2:
        phi = (x ** 2 / sigma ** 4 - 1 / sigma ** 2) * phi
    return phi[::-1].astype(np.float32)  # scipy convolves; OpenCV correlates


def separable(image: np.ndarray, taps: Sequence[np.ndarray], out: np.ndarray) -> np.ndarray:
    """``image`` (H, W) or (D, H, W) float32 filtered by ``taps`` per axis (correlation,
    the edge voxel repeated), into ``out``: for volumes the z pass over the columns of the
    (D, H W) matrix, then each slice in-plane."""
    if image.ndim == 2:
        ty, tx = taps
        return cv2.sepFilter2D(image, cv2.CV_32F, tx, ty, dst=out,
                               borderType=cv2.BORDER_REPLICATE)
    tz, ty, tx = taps
    depth = image.shape[0]
    if len(tz) == 1 and tz[0] == 1:
        across = image
    else:
        columns = np.ascontiguousarray(image).reshape(depth, -1)
        across = np.empty(columns.shape, np.float32)

        def along_z(band: slice) -> None:  # columns are independent: any band split
            cv2.sepFilter2D(columns[:, band], cv2.CV_32F, np.ones(1, np.float32), tz,
                            dst=across[:, band], borderType=cv2.BORDER_REPLICATE)
        thread_map(along_z, bands(columns.shape[1], COLUMN_BAND))
        across = across.reshape(image.shape)

    def in_plane(slices: slice) -> None:
        for z in range(*slices.indices(depth)):
            cv2.sepFilter2D(across[z], cv2.CV_32F, tx, ty, dst=out[z],
                            borderType=cv2.BORDER_REPLICATE)
    thread_map(in_plane, bands(depth, SLICE_BAND))
    return out


def derivative(image: np.ndarray, sigmas: Sequence[float], orders: Sequence[int],
               spacing: Sequence[float]) -> np.ndarray:
    """The Gaussian of per-axis ``sigmas`` (voxels) of ``image``, differentiated
    ``orders[axis]`` times along each axis, per unit of ``spacing``."""
    taps = [gaussian_taps(s, o) for s, o in zip(sigmas, orders)]
    out = separable(image, taps, np.empty(image.shape, np.float32))
    scale = np.prod([float(step) ** -o for step, o in zip(spacing, orders)])
    if scale != 1:
        out *= np.float32(scale)
    return out


def symmetric_eigenvalues(tensor: dict, ndim: int, out: np.ndarray) -> None:
    """Eigenvalues, larger first, of the symmetric tensor field ``tensor[(i, j)]`` (i <= j)
    into the ``ndim`` planes of ``out``; in float64, slice by slice for volumes."""
    if ndim == 2:
        a, b, c = (tensor[k].astype(np.float64) for k in ((0, 0), (0, 1), (1, 1)))
        mean = 0.5 * (a + c)
        spread = np.sqrt(0.25 * (a - c) ** 2 + b ** 2)
        out[0] = mean + spread
        out[1] = mean - spread
        return
    def slices(zs: slice) -> None:
        for z in range(*zs.indices(out.shape[1])):
            a, b, c, d, e, f = (tensor[k][z].astype(np.float64) for k in
                                ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)))
            out[:, z] = _eigenvalues3(a, b, c, d, e, f)
    thread_map(slices, bands(out.shape[1], SLICE_BAND))


def _eigenvalues3(a, b, c, d, e, f) -> np.ndarray:
    """Eigenvalues (larger first) of [[a, b, c], [b, d, e], [c, e, f]] per element, by
    Smith's formula (Comm. ACM 4(4), 1961): exact for symmetric matrices, an order of
    magnitude faster than batched LAPACK calls."""
    q = (a + d + f) / 3
    off = b * b + c * c + e * e
    p = np.sqrt(((a - q) ** 2 + (d - q) ** 2 + (f - q) ** 2 + 2 * off) / 6)
    safe = np.where(p > 0, p, 1)
    a1, d1, f1 = (a - q) / safe, (d - q) / safe, (f - q) / safe
    b1, c1, e1 = b / safe, c / safe, e / safe
    det = a1 * (d1 * f1 - e1 * e1) - b1 * (b1 * f1 - e1 * c1) + c1 * (b1 * e1 - d1 * c1)
    phi = np.arccos(np.clip(det / 2, -1, 1)) / 3
    largest = q + 2 * p * np.cos(phi)
    smallest = q + 2 * p * np.cos(phi + 2 * math.pi / 3)
    return np.stack([largest, 3 * q - largest - smallest, smallest])


def filter_bank(image: np.ndarray, filters: Sequence[str], scales: Sequence[float],
                spacing: Sequence[float], out: np.ndarray) -> None:
    """The bank of a (H, W) or (D, H, W) ``image`` into ``out`` (n_planes x len(scales),
    *image.shape): scale by scale, the filters in :data:`FILTERS` order.

    Examples
    --------
    >>> image = np.zeros((5, 6), np.float32); image[2, 3] = 1
    >>> out = np.empty((n_planes(["gaussian", "hessian"], 2), 5, 6), np.float32)
    >>> filter_bank(image, ["hessian", "gaussian"], [1.0], (1.0, 1.0), out)
    >>> bool(out[2, 2, 3] <= out[1, 2, 3] < 0)   # both curvatures negative on a bright dot
    True
    """
    filters = check_filters(filters)
    ndim = image.ndim
    image = np.ascontiguousarray(image, np.float32)
    per_scale = n_planes(filters, ndim)
    axes = range(ndim)
    for k, s in enumerate(scales):
        sigmas = [s / step for step in spacing]
        planes = out[k * per_scale:(k + 1) * per_scale]
        at = 0
        second = {}
        if "log" in filters or "hessian" in filters:
            for i in axes:
                for j in axes[i:]:
                    orders = [(a == i) + (a == j) for a in axes]
                    second[i, j] = derivative(image, sigmas, orders, spacing)
        first = []
        if "gradient" in filters or "structure" in filters:
            first = [derivative(image, sigmas, [int(a == i) for a in axes], spacing)
                     for i in axes]
        if "gaussian" in filters or "dog" in filters:
            smooth = derivative(image, sigmas, [0] * ndim, spacing)
        if "gaussian" in filters:
            planes[at] = smooth
            at += 1
        if "log" in filters:
            np.copyto(planes[at], second[0, 0])
            for i in axes[1:]:
                planes[at] += second[i, i]
            at += 1
        if "gradient" in filters:
            total = first[0] * first[0]
            for g in first[1:]:
                total += g * g
            np.sqrt(total, out=planes[at])
            at += 1
        if "dog" in filters:
            narrow = derivative(image, [DOG_RATIO * x for x in sigmas], [0] * ndim, spacing)
            np.subtract(smooth, narrow, out=planes[at])
            at += 1
        if "structure" in filters:
            outer = [gaussian_taps(OUTER_RATIO * x) for x in sigmas]
            tensor = {(i, j): separable(first[i] * first[j], outer,
                                        np.empty(image.shape, np.float32))
                      for i in axes for j in axes[i:]}
            symmetric_eigenvalues(tensor, ndim, planes[at:at + ndim])
            at += ndim
        if "hessian" in filters:
            symmetric_eigenvalues(second, ndim, planes[at:at + ndim])
