"""The synthetic face generator and its files."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from jungleseg.datasets import faces


@pytest.fixture(scope="module")
def twenty_faces() -> tuple[np.ndarray, np.ndarray]:
    return faces.render_faces(20, seed=0, size=(240, 320))


def test_faces_shapes_and_classes(twenty_faces: tuple[np.ndarray, np.ndarray]) -> None:
    images, labels = twenty_faces
    assert images.shape == (20, 240, 320, 3) and images.dtype == np.uint8
    assert labels.shape == (20, 240, 320) and labels.dtype == np.uint8
    assert set(np.unique(labels).tolist()) == set(range(len(faces.CLASS_NAMES)))
    assert faces.CLASS_COLOURS.shape == (len(faces.CLASS_NAMES), 3)


def test_faces_deterministic(twenty_faces: tuple[np.ndarray, np.ndarray]) -> None:
    images, labels = faces.render_faces(3, seed=0, size=(240, 320))
    np.testing.assert_array_equal(images, twenty_faces[0][:3])
    np.testing.assert_array_equal(labels, twenty_faces[1][:3])
    other, _ = faces.render_faces(3, seed=1, size=(240, 320))
    assert not np.array_equal(other, images)


def test_faces_frame_alone_equals_frame_in_batch(
    twenty_faces: tuple[np.ndarray, np.ndarray],
) -> None:
    rng = np.random.default_rng(np.random.SeedSequence([0, 17]))
    image, labels = faces.render_face(rng)
    np.testing.assert_array_equal(image, twenty_faces[0][17])
    np.testing.assert_array_equal(labels, twenty_faces[1][17])


def test_faces_save_load_round_trip(
    tmp_path: Path, twenty_faces: tuple[np.ndarray, np.ndarray]
) -> None:
    images, labels = twenty_faces[0][:4], twenty_faces[1][:4]
    faces.save_faces(tmp_path, images, labels, meta={"seed": 0})
    assert (tmp_path / "images" / "000000.png").is_file()
    assert (tmp_path / "labels" / "000003.png").is_file()
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["count"] == 4 and meta["seed"] == 0
    assert meta["class_names"] == list(faces.CLASS_NAMES)
    loaded_images, loaded_labels = faces.load_faces(tmp_path)
    np.testing.assert_array_equal(loaded_images, images)
    np.testing.assert_array_equal(loaded_labels, labels)


def test_faces_contact_sheet(tmp_path: Path, twenty_faces: tuple[np.ndarray, np.ndarray]) -> None:
    path = faces.contact_sheet(*twenty_faces, tmp_path / "sheet.png", n=2)
    assert cv2.imread(str(path)) is not None
