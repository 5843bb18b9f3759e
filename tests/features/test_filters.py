"""Image filters against plain NumPy references: box means (clipped to the image and a
mask), integral images, gradient magnitude."""
import numpy as np
import pytest
from scipy import ndimage as ndi

from jungleseg.features._filters import box_mean, gradient_magnitude, integral_planes


def reference_box_mean(values, half, mask=None):
    h, w = values.shape[:2]
    inside = np.ones((h, w), bool) if mask is None else mask > 0
    out = np.zeros(values.shape, np.float64)
    for r in range(h):
        for c in range(w):
            box = (slice(max(r - half, 0), r + half + 1), slice(max(c - half, 0), c + half + 1))
            keep = inside[box]
            if keep.any():
                out[r, c] = values[box][keep].mean(axis=0)
            else:  # no masked pixel in the box: the sum over none, divided by one
                out[r, c] = 0
    return out


@pytest.mark.parametrize("shape, half", [((7, 9), 1), ((6, 11, 3), 2), ((5, 5), 4)])
def test_box_mean_clips_boxes_to_the_image(shape, half):
    values = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    np.testing.assert_allclose(box_mean(values, half), reference_box_mean(values, half),
                               atol=1e-5)


def test_box_mean_counts_only_pixels_inside_the_mask():
    rng = np.random.default_rng(1)
    values = rng.normal(size=(12, 10, 2)).astype(np.float32)
    mask = (rng.random((12, 10)) < 0.6).astype(np.uint8)
    masked = np.where(mask[:, :, None] > 0, values, 0).astype(np.float32)
    np.testing.assert_allclose(box_mean(masked, 2, mask), reference_box_mean(values, 2, mask),
                               atol=1e-5)


def test_integral_planes_are_cumulative_sums():
    planes = np.random.default_rng(2).random((2, 5, 6)).astype(np.float32)
    out = integral_planes(planes, np.empty((2, 6, 7)))
    expected = np.zeros((2, 6, 7))
    expected[:, 1:, 1:] = planes.astype(np.float64).cumsum(1).cumsum(2)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_gradient_magnitude_is_the_sobel_norm_with_replicated_borders():
    image = np.random.default_rng(3).random((9, 13)).astype(np.float32)
    out = np.empty_like(image)
    gradient_magnitude(image, out=out)
    gx = ndi.sobel(image.astype(np.float64), axis=1, mode="nearest")
    gy = ndi.sobel(image.astype(np.float64), axis=0, mode="nearest")
    np.testing.assert_allclose(out, np.hypot(gx, gy), atol=1e-5)
