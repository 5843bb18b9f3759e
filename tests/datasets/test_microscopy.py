"""Tests for the synthetic microscopy renderer, whose classes differ by texture."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from jungleseg.datasets.microscopy import (
    BACKGROUND,
    CLASS_NAMES,
    CYTOPLASM,
    FIBRES,
    NUCLEUS,
    render_cell_frame,
    render_cells,
)

SIZE = (512, 512)


@pytest.fixture(scope="module")
def frames() -> tuple[np.ndarray, np.ndarray]:
    return render_cells(3, seed=0, size=SIZE)


def _interior(labels: np.ndarray, label: int, radius: int = 3) -> np.ndarray:
    """Pixels of a class at least ``radius`` pixels from the other classes."""
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    return cv2.erode((labels == label).astype(np.uint8), disc).astype(bool)


def test_class_names_and_labels() -> None:
    assert CLASS_NAMES == ("background", "cytoplasm", "nucleus", "fibres")
    assert (BACKGROUND, CYTOPLASM, NUCLEUS, FIBRES) == (1, 2, 3, 4)


def test_shapes_dtypes_and_ranges(frames: tuple[np.ndarray, np.ndarray]) -> None:
    images, labels = frames
    assert images.shape == labels.shape == (3, *SIZE)
    assert images.dtype == np.float32 and labels.dtype == np.uint8
    assert np.isfinite(images).all()
    assert images.min() >= 0 and images.max() <= 1
    assert images.std() > 0.05  # not a blank image
    assert set(np.unique(labels).tolist()) == {1, 2, 3, 4}  # never 0 ("unlabelled")


def test_non_square_size() -> None:
    images, labels = render_cells(2, seed=3, size=(96, 160))
    assert images.shape == labels.shape == (2, 96, 160)
    assert set(np.unique(labels).tolist()) <= {1, 2, 3, 4}


def test_all_classes_with_reasonable_shares(frames: tuple[np.ndarray, np.ndarray]) -> None:
    bounds = {
        BACKGROUND: (0.25, 0.7),
        CYTOPLASM: (0.1, 0.4),
        NUCLEUS: (0.02, 0.15),
        FIBRES: (0.08, 0.45),
    }
    for labels in frames[1]:
        shares = np.bincount(labels.ravel(), minlength=5) / labels.size
        assert shares[0] == 0
        for label, (low, high) in bounds.items():
            assert low < shares[label] < high, (CLASS_NAMES[label - 1], shares[label])


def test_nuclei_lie_inside_cells(frames: tuple[np.ndarray, np.ndarray]) -> None:
    for labels in frames[1]:
        nuclei = (labels == NUCLEUS).astype(np.uint8)
        rim = cv2.dilate(nuclei, np.ones((3, 3), np.uint8)).astype(bool) & ~nuclei.astype(bool)
        outside = np.isin(labels[rim], (BACKGROUND, FIBRES))
        assert outside.mean() < 0.01


def test_intensity_alone_does_not_separate_classes(
    frames: tuple[np.ndarray, np.ndarray],
) -> None:
    for image, labels in zip(*frames, strict=True):
        means = {k: float(image[labels == k].mean()) for k in (1, 2, 3, 4)}
        assert abs(means[CYTOPLASM] - means[NUCLEUS]) < 0.05
        assert abs(means[FIBRES] - means[CYTOPLASM]) < 0.1
        assert means[BACKGROUND] < means[CYTOPLASM] - 0.15  # dark background
        # best possible classifier that sees only the intensity of a pixel: the majority
        # class of each of 64 intensity bins (scored on the very pixels it was fitted to)
        bins = np.minimum((image * 64).astype(np.int64), 63)
        counts = np.bincount((bins * 5 + labels).ravel(), minlength=64 * 5).reshape(64, 5)
        assert counts.max(axis=1).sum() / labels.size < 0.8


def test_classes_differ_in_texture(frames: tuple[np.ndarray, np.ndarray]) -> None:
    for image, labels in zip(*frames, strict=True):
        smooth = cv2.GaussianBlur(image, (0, 0), 1.5)
        fine = image - smooth
        gx = cv2.Sobel(smooth, cv2.CV_32F, 1, 0)
        gy = cv2.Sobel(smooth, cv2.CV_32F, 0, 1)
        jxx, jyy, jxy = (cv2.GaussianBlur(g, (0, 0), 4) for g in (gx * gx, gy * gy, gx * gy))
        coherence = np.sqrt((jxx - jyy) ** 2 + 4 * jxy**2) / (jxx + jyy + 1e-9)
        coarseness, orientedness = {}, {}
        for label in (CYTOPLASM, NUCLEUS, FIBRES):
            inside = _interior(labels, label)
            coarseness[label] = smooth[inside].std() / fine[inside].std()
            orientedness[label] = np.median(coherence[inside])
        assert coarseness[NUCLEUS] > 1.5 * coarseness[CYTOPLASM]  # speckles vs fine grain
        assert orientedness[FIBRES] > 0.6
        assert orientedness[FIBRES] > orientedness[CYTOPLASM] + 0.3


def test_frame_does_not_depend_on_batch(frames: tuple[np.ndarray, np.ndarray]) -> None:
    image, labels = render_cells(1, seed=0, size=SIZE)
    np.testing.assert_array_equal(image[0], frames[0][0])
    np.testing.assert_array_equal(labels[0], frames[1][0])
    rng = np.random.default_rng(np.random.SeedSequence([0, 2]))
    image, labels = render_cell_frame(rng, SIZE)
    np.testing.assert_array_equal(image, frames[0][2])
    np.testing.assert_array_equal(labels, frames[1][2])
    other_images, other_labels = render_cells(1, seed=1, size=SIZE)
    assert not np.array_equal(other_labels[0], frames[1][0])
    assert not np.array_equal(other_images[0], frames[0][0])


def test_1024_frame_keeps_every_class(frames: tuple[np.ndarray, np.ndarray]) -> None:
    images, labels = render_cells(1, seed=5, size=(1024, 1024))
    assert images.shape == labels.shape == (1, 1024, 1024)
    shares = np.bincount(labels.ravel(), minlength=5)[1:] / labels.size
    assert (shares > 0.02).all()  # cell count scales with the area: still dozens of cells
