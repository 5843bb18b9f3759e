"""Image filters that make channels and smooth probabilities: box means, integral
images, gradient magnitude and Hessian eigenvalues (OpenCV), on plain float32 arrays."""
from __future__ import annotations

import cv2
import numpy as np


def integral_planes(planes: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill ``out`` (C, H + 1, W + 1) float64 with the sums of each (H, W) plane over rows
    < r and columns < c."""
    for ch in range(planes.shape[0]):
        out[ch] = cv2.integral(planes[ch], sdepth=cv2.CV_64F)
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
        out /= count_rows
        out /= count_cols
        return out
    count = cv2.boxFilter((mask > 0).astype(np.float32), cv2.CV_32F, size, normalize=False,
                          borderType=cv2.BORDER_CONSTANT)
    count = np.maximum(count, 1)
    out /= count if out.ndim == 2 else count[:, :, None]
    return out


def _inside(n: int, half: int) -> np.ndarray:
    """How many of the indices i - half .. i + half lie in 0 .. n - 1, for each i."""
    i = np.arange(n)
    return (np.minimum(i + half, n - 1) - np.maximum(i - half, 0) + 1).astype(np.float32)


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
