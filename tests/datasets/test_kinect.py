"""Tests for the synthetic Kinect body-part renderer."""

import json

import numpy as np
import pytest

from jungleseg.cli._classes import read_class_file
from jungleseg.datasets import kinect
from jungleseg.datasets.kinect import (
    BACKGROUND,
    CLASS_COLOURS,
    CLASS_NAMES,
    MIRROR_LABEL,
    N_CLASSES,
    VOID,
    contact_sheet,
    load_frames,
    render_frame,
    render_frames,
    save_frames,
)

SIZE = (120, 160)


@pytest.fixture(scope="module")
def frames():
    return render_frames(100, seed=0, size=SIZE)


def test_label_tables():
    assert N_CLASSES == 32 == len(CLASS_NAMES)
    assert CLASS_NAMES[BACKGROUND] == "background"
    assert CLASS_COLOURS.shape == (32, 3) and CLASS_COLOURS.dtype == np.uint8
    assert len({tuple(c) for c in CLASS_COLOURS}) == 32
    assert MIRROR_LABEL.shape == (256,) and MIRROR_LABEL.dtype == np.uint8
    np.testing.assert_array_equal(MIRROR_LABEL[MIRROR_LABEL], np.arange(256))
    for label in (BACKGROUND, CLASS_NAMES.index("neck"), VOID):
        assert MIRROR_LABEL[label] == label
    for i, name in enumerate(CLASS_NAMES):
        if name.startswith("left_"):
            assert CLASS_NAMES[MIRROR_LABEL[i]] == "right_" + name[5:]


def test_all_parts_occur(frames):
    _, labels = frames
    present = set(np.unique(labels).tolist())
    assert set(range(1, 32)) <= present
    assert present <= set(range(32)) | {VOID}


def test_depth_label_consistency(frames):
    depth, labels = frames
    assert depth.shape == labels.shape == (100, *SIZE)
    assert depth.dtype == np.float32 and labels.dtype == np.uint8
    part = (labels >= 1) & (labels <= 31)
    assert np.all(depth[part] > 0)
    assert np.all(np.isin(labels[depth == 0], [BACKGROUND, VOID]))
    body = depth[depth > 0]
    assert body.min() > 0.5 and body.max() < 6.0
    np.testing.assert_allclose(body * 1000, np.round(body * 1000), atol=1e-3)  # 1 mm steps
    # Some invalid pixels and some frames cropped by the image border.
    assert np.any(labels == VOID)
    touches_border = ((depth[:, [0, -1], :] > 0).any(axis=(1, 2))
                      | (depth[:, :, [0, -1]] > 0).any(axis=(1, 2)))
    assert 0 < touches_border.sum() < 60


def _centroid(labels, prefix):
    """Mean (row, column) of all parts whose name starts with ``prefix``."""
    ids = [i for i, name in enumerate(CLASS_NAMES) if name.startswith(prefix)]
    return np.nonzero(np.isin(labels, ids))[0].mean(), np.nonzero(np.isin(labels, ids))[1].mean()


def test_left_is_the_persons_left():
    scenes = kinect._scene._sample_scenes(0, np.arange(1))
    scenes["angles"][:] = kinect._scene._CANONICAL_POSES[0]  # standing
    scenes["mirror"][:] = False
    size = (240, 320)
    depth = np.empty((1, *size), np.float32)
    labels = np.empty((1, *size), np.uint8)
    for yaw, left_on_image_right in ((np.pi, True), (0.0, False)):  # facing / back to the camera
        scenes["yaw"][:] = yaw
        kinect._render._render_scenes(scenes, size, depth, labels)
        assert (_centroid(labels[0], "left_")[1]
                > _centroid(labels[0], "right_")[1]) == left_on_image_right
        assert (_centroid(labels[0], "left_upper_head")[0] < 120
                < _centroid(labels[0], "left_foot")[0])


def test_deterministic_by_seed(monkeypatch):
    depth, labels = render_frames(6, seed=7, size=SIZE)
    depth2, labels2 = render_frames(6, seed=7, size=SIZE)
    np.testing.assert_array_equal(depth, depth2)
    np.testing.assert_array_equal(labels, labels2)
    alone_depth, alone_labels = render_frame(7, 4, size=SIZE)
    np.testing.assert_array_equal(alone_depth, depth[4])
    np.testing.assert_array_equal(alone_labels, labels[4])
    monkeypatch.setattr(kinect._render, "_CHUNK", 4)  # frames split over kernel calls
    depth3, labels3 = render_frames(6, seed=7, size=SIZE)
    np.testing.assert_array_equal(depth3, depth)
    np.testing.assert_array_equal(labels3, labels)
    other, _ = render_frames(1, seed=8, size=SIZE)
    assert not np.array_equal(other[0], depth[0])


def test_full_resolution_matches_scene():
    small, _ = render_frame(3, 1)
    large, large_labels = render_frame(3, 1, size=(480, 640))
    assert large.shape == large_labels.shape == (480, 640)
    assert 3.6 < (large > 0).sum() / (small > 0).sum() < 4.4


@pytest.mark.parametrize("units", ["mm", "100um"])
def test_save_load_round_trip(tmp_path, frames, units):
    depth, labels = frames[0][:3], frames[1][:3]
    save_frames(tmp_path, depth, labels, units=units, seed=0)
    assert (tmp_path / "depth" / "000002.png").exists()
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["count"] == 3 and meta["units"] == units and meta["seed"] == 0
    assert (meta["class_names"] == CLASS_NAMES
            and meta["intrinsics"]["fx"] == pytest.approx(142.8, abs=0.1))
    classes = read_class_file(tmp_path / "classes.yaml")  # names and colours by value
    assert [classes[i]["name"] for i in range(len(CLASS_NAMES))] == CLASS_NAMES
    assert classes[1]["colour"] == CLASS_COLOURS[1].tolist()
    depth2, labels2 = load_frames(tmp_path)
    assert depth2.dtype == np.float32
    np.testing.assert_array_equal(labels2, labels)
    np.testing.assert_allclose(depth2, depth, atol=1e-3)
    np.testing.assert_array_equal(depth2 == 0, depth == 0)


def test_save_rejects_bad_units(tmp_path, frames):
    with pytest.raises(ValueError):
        save_frames(tmp_path, frames[0][:1], frames[1][:1], units="cm")


def test_contact_sheet(tmp_path, frames):
    path = tmp_path / "sheet.png"
    contact_sheet(*frames, path, n=3)
    assert path.stat().st_size > 1000
