"""Image filters that make channels and smooth probabilities: box means, integral
images, gradient magnitude, oriented edges and Hessian eigenvalues (OpenCV), on plain
float32 arrays."""
from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from .._workers import bands, thread_map
from ._bank import COLUMN_BAND, SLICE_BAND, separable


def integral_planes(planes: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill ``out`` (C, H + 1, W + 1) with the sums of each (H, W) plane over rows < r
    and columns < c: float64 sums of float planes; sums of integer codes in ``out``'s
    unsigned type, wrapping around (exact modulo 2^32 or 2^64, so a box's sum, the
    wrapped difference of four entries, is exact while it fits the type)."""
    if out.dtype == np.float64:
        for ch in range(planes.shape[0]):
            out[ch] = cv2.integral(planes[ch], sdepth=cv2.CV_64F)
        return out
    out[:, 0] = 0
    out[:, :, 0] = 0
    for ch in range(planes.shape[0]):
        np.cumsum(planes[ch], axis=0, dtype=out.dtype, out=out[ch, 1:, 1:])
        np.cumsum(out[ch, 1:, 1:], axis=1, out=out[ch, 1:, 1:])
    return out


def box_mean(values: np.ndarray, half: int, mask: np.ndarray | None = None,
             out: np.ndarray | None = None) -> np.ndarray:
    """Mean of (H, W) or (H, W, C) float32 ``values`` over the ``(2 half + 1)`` square box
    around every pixel, over the pixels of the box inside the image (as the box kinds clip
    boxes) and, where ``mask`` is given, inside the mask (at least one pixel counted).

    Used for box-mean channels and for smoothing class probabilities. OpenCV filters at
    most 512 channels (``CV_CN_MAX``) at once.
    """
    h, w = values.shape[:2]
    size = (2 * half + 1, 2 * half + 1)
    out = cv2.boxFilter(values, cv2.CV_32F, size, dst=out, normalize=False,
                        borderType=cv2.BORDER_CONSTANT).reshape(values.shape)
    if mask is None:  # in-image counts are separable
        count_rows, count_cols = _inside(h, half)[:, None], _inside(w, half)[None, :]
        if out.ndim == 3:
            count_rows, count_cols = count_rows[:, :, None], count_cols[:, :, None]
        out /= count_rows  # two float32 divisions: NumPy's vector loop beats any fused one
        out /= count_cols
        return out
    count = cv2.boxFilter((mask > 0).astype(np.float32), cv2.CV_32F, size, normalize=False,
                          borderType=cv2.BORDER_CONSTANT)
    count = np.maximum(count, 1)
    out /= count if out.ndim == 2 else count[:, :, None]
    return out


@lru_cache(maxsize=64)
def _inside(n: int, half: int) -> np.ndarray:
    """How many of the indices i - half .. i + half lie in 0 .. n - 1, for each i (kept,
    read-only: the images of a folder ask for the same few)."""
    i = np.arange(n)
    inside = (np.minimum(i + half, n - 1) - np.maximum(i - half, 0) + 1).astype(np.float32)
    inside.flags.writeable = False
    return inside


def gradient_magnitude(image: np.ndarray, out: np.ndarray) -> None:
    """Sobel gradient magnitude of ``image`` into ``out``.

    With NumPy, whose square, sum and root round the same whatever the alignment:
    ``cv2.magnitude`` rounds the last bit differently when ``out`` is not 32-byte
    aligned, as planes of a store often are."""
    gx = cv2.Sobel(image, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.Sobel(image, cv2.CV_32F, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gx *= gx
    gy *= gy
    gx += gy
    np.sqrt(gx, out=out)


def oriented_edges(image: np.ndarray, out: np.ndarray) -> None:
    """Absolute horizontal, then vertical, Sobel derivatives of ``image`` into the two
    planes of ``out``: edge strength by direction, without the sign that only says which
    side is brighter."""
    for plane, (dx, dy) in zip(out, ((1, 0), (0, 1))):
        np.abs(cv2.Sobel(image, cv2.CV_32F, dx, dy, ksize=3, borderType=cv2.BORDER_REPLICATE),
               out=plane)


def hessian_eigenvalues(image: np.ndarray, out: np.ndarray) -> None:
    """The Hessian's eigenvalues (3x3 Sobel second derivatives), larger first, into the two
    planes of ``out``."""
    def d(dx, dy):
        return cv2.Sobel(image, cv2.CV_32F, dx, dy, ksize=3, borderType=cv2.BORDER_REPLICATE)

    dxx, dyy, dxy = d(2, 0), d(0, 2), d(1, 1)
    mean = 0.5 * (dxx + dyy)
    spread = np.sqrt(0.25 * (dxx - dyy) ** 2 + dxy ** 2)
    np.add(mean, spread, out=out[0])
    np.subtract(mean, spread, out=out[1])


def gaussian_kernel(sigma: float) -> np.ndarray:
    """The normalised 1-D Gaussian of ``sigma`` samples, radius ``int(4 sigma + 0.5)`` (as
    :func:`scipy.ndimage.gaussian_filter` truncates it), float32."""
    radius = int(4 * sigma + 0.5)
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    kernel = np.exp(-0.5 * (x / sigma) ** 2) if sigma > 0 else (x == 0).astype(np.float64)
    return (kernel / kernel.sum()).astype(np.float32)


def gaussian_volume(volume: np.ndarray, sigmas: tuple[float, float, float], out: np.ndarray
                    ) -> None:
    """Separable Gaussian of a (D, H, W) float32 ``volume`` with per-axis ``sigmas`` (in
    voxels), borders repeating the edge voxels, into ``out`` (may be a strided view).

    The z pass filters the columns of the (D, H W) matrix, the in-plane pass each slice,
    both with OpenCV's separable filter: the same values as
    ``scipy.ndimage.gaussian_filter(volume, sigmas, mode='nearest')`` to rounding.
    """
    separable(volume, [gaussian_kernel(s) for s in sigmas], out)


def gradient_magnitude_volume(volume: np.ndarray, spacing: tuple[float, float, float],
                              out: np.ndarray) -> None:
    """Length of the gradient of a (D, H, W) float32 ``volume`` in physical units: central
    differences ``(v[i + 1] - v[i - 1]) / (2 spacing)`` along each axis, the edge voxel
    repeated at the borders, into ``out``; slice by slice, so that the temporaries stay
    in cache."""
    sz, sy, sx = (float(s) for s in spacing)
    depth = volume.shape[0]

    def slices(zs: slice) -> None:
        for z in range(*zs.indices(depth)):
            plane = volume[z]
            gx = cv2.Sobel(plane, cv2.CV_32F, 1, 0, ksize=1, scale=0.5 / sx,
                           borderType=cv2.BORDER_REPLICATE)
            gy = cv2.Sobel(plane, cv2.CV_32F, 0, 1, ksize=1, scale=0.5 / sy,
                           borderType=cv2.BORDER_REPLICATE)
            gz = volume[min(z + 1, depth - 1)] - volume[max(z - 1, 0)]
            gz *= np.float32(0.5 / sz)
            gx *= gx
            gy *= gy
            gz *= gz
            gx += gy
            gx += gz
            np.sqrt(gx, out=out[z])
    thread_map(slices, bands(depth, SLICE_BAND))


def box_mean_volume(volume: np.ndarray, halves: tuple[int, int, int], out: np.ndarray) -> None:
    """Mean of a (D, H, W) float32 ``volume`` over the ``(2 hz + 1, 2 hy + 1, 2 hx + 1)``
    box around every voxel, over the voxels of the box inside the volume (as
    :func:`box_mean` clips boxes), into ``out``: box sums along z, then in each slice."""
    hz, hy, hx = (int(h) for h in halves)
    depth, h, w = volume.shape
    columns = np.ascontiguousarray(volume).reshape(depth, -1)
    across = np.empty(columns.shape, np.float32)

    def along_z(band: slice) -> None:
        cv2.boxFilter(columns[:, band], cv2.CV_32F, (1, 2 * hz + 1), dst=across[:, band],
                      normalize=False, borderType=cv2.BORDER_CONSTANT)
    thread_map(along_z, bands(columns.shape[1], COLUMN_BAND))
    across /= _inside(depth, hz)[:, None]
    counts = _inside(h, hy)[:, None] * _inside(w, hx)[None, :]

    def in_plane(zs: slice) -> None:
        for z in range(*zs.indices(depth)):
            cv2.boxFilter(across[z].reshape(h, w), cv2.CV_32F, (2 * hx + 1, 2 * hy + 1),
                          dst=out[z], normalize=False, borderType=cv2.BORDER_CONSTANT)
            out[z] /= counts
    thread_map(in_plane, bands(depth, SLICE_BAND))
