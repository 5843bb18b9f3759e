"""Tests for the simulated user scribbles."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from scipy import ndimage

from jungleseg.datasets.microscopy import render_cells
from jungleseg.datasets.scribbles import paint_scribbles


@pytest.fixture(scope="module")
def truth() -> np.ndarray:
    return render_cells(1, seed=0, size=(512, 512))[1][0]


@pytest.mark.parametrize("width", [1, 3, 6])
def test_painted_labels_agree_with_truth(truth: np.ndarray, width: int) -> None:
    for seed in range(4):
        scribbles = paint_scribbles(truth, 0.02, seed=seed, width=width)
        assert scribbles.shape == truth.shape and scribbles.dtype == truth.dtype
        painted = scribbles != 0
        assert painted.any()
        np.testing.assert_array_equal(scribbles[painted], truth[painted])


@pytest.mark.parametrize("fraction", [0.002, 0.01, 0.05])
def test_fraction_respected(truth: np.ndarray, fraction: float) -> None:
    for seed in range(3):
        share = np.count_nonzero(paint_scribbles(truth, fraction, seed=seed)) / truth.size
        assert 0.5 * fraction <= share <= fraction  # the budget holds one dab per class


def test_every_class_painted(truth: np.ndarray) -> None:
    scribbles = paint_scribbles(truth, 0.01, seed=0)
    assert set(np.unique(scribbles).tolist()) == {0, 1, 2, 3, 4}
    per_class = np.bincount(scribbles.ravel(), minlength=5)[1:]
    assert per_class.min() > 0.1 * per_class.max()  # shared about equally


def test_tiny_fraction_still_paints_every_class(truth: np.ndarray) -> None:
    fraction = 1e-5  # budget of 2 pixels, less than one dab of a width-3 brush per class
    scribbles = paint_scribbles(truth, fraction, seed=0, width=3)
    assert set(np.unique(scribbles).tolist()) == {0, 1, 2, 3, 4}
    dab = 5 * 5  # (width + 2) ** 2, the documented bound of one dab
    assert np.count_nonzero(scribbles) <= int(fraction * truth.size) + 4 * dab


def test_strokes_stay_clear_of_boundaries(truth: np.ndarray) -> None:
    scribbles = paint_scribbles(truth, 0.02, seed=1)
    for label in (1, 2, 3, 4):
        distance = ndimage.distance_transform_edt(truth == label)
        assert distance[scribbles == label].min() >= 2


def test_strokes_are_strokes_not_specks(truth: np.ndarray) -> None:
    scribbles = paint_scribbles(truth, 0.01, seed=2, width=3)
    count, _, stats, _ = cv2.connectedComponentsWithStats((scribbles != 0).astype(np.uint8))
    sizes = stats[1:, cv2.CC_STAT_AREA]
    assert count - 1 >= 4  # at least one stroke per class
    assert np.median(sizes) >= 20
    extents = np.maximum(stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT])
    assert np.median(extents) >= 10  # elongated: longer than the 5-pixel-wide brush


def test_deterministic(truth: np.ndarray) -> None:
    first = paint_scribbles(truth, 0.01, seed=7)
    np.testing.assert_array_equal(paint_scribbles(truth, 0.01, seed=7), first)
    assert not np.array_equal(paint_scribbles(truth, 0.01, seed=8), first)


def test_any_integer_dtype_and_ignored_values() -> None:
    truth = np.full((120, 160), 7, np.int32)
    truth[:, 80:] = 300
    truth[40:80, 20:60] = 255  # void, not painted
    truth[:5] = 0  # unlabelled, not painted
    scribbles = paint_scribbles(truth, 0.05, seed=0, ignore=(0, 255))
    assert scribbles.dtype == np.int32 and scribbles.shape == truth.shape
    assert set(np.unique(scribbles).tolist()) == {0, 7, 300}
    painted = scribbles != 0
    np.testing.assert_array_equal(scribbles[painted], truth[painted])
    assert np.count_nonzero(scribbles) <= 0.05 * truth.size


def test_nothing_to_paint() -> None:
    truth = np.zeros((30, 40), np.uint8)
    np.testing.assert_array_equal(paint_scribbles(truth), truth)


@pytest.mark.parametrize(
    ("truth", "kwargs", "message"),
    [
        (np.ones((4, 8, 8), np.uint8), {}, "2-D"),
        (np.ones(64, np.uint8), {}, "2-D"),
        (np.ones((8, 8), np.uint8), {"fraction": 0.0}, "fraction"),
        (np.ones((8, 8), np.uint8), {"fraction": 1.0}, "fraction"),
        (np.ones((8, 8), np.uint8), {"fraction": -0.1}, "fraction"),
        (np.ones((8, 8), np.uint8), {"fraction": float("nan")}, "fraction"),
        (np.ones((8, 8), np.uint8), {"width": 0}, "width"),
        (np.ones((8, 8), np.uint8), {"width": 2.5}, "width"),
        (np.arange(64, dtype=np.uint8).reshape(8, 8), {"ignore": ()}, "value 0"),
    ],
)
def test_bad_input(truth: np.ndarray, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        paint_scribbles(truth, **kwargs)
