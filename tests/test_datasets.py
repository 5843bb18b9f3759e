"""Tests of the data set loaders and the synthetic face generator."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from jungleseg.datasets import faces, fasseg, stanford, uci
from jungleseg.datasets._paths import ENV_VAR, data_root

# --- data folder resolution -------------------------------------------------------------------


def test_data_root_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert data_root() == tmp_path.resolve()
    assert data_root(tmp_path / ".") == tmp_path.resolve()


def test_data_root_default_is_relative_to_cwd(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    assert data_root() == (tmp_path / "shared" / "data").resolve()


def test_data_root_missing_names_folder_and_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere"
    monkeypatch.setenv(ENV_VAR, str(missing))
    with pytest.raises(FileNotFoundError, match=ENV_VAR) as error:
        data_root()
    assert str(missing) in str(error.value)


# --- Stanford Background ----------------------------------------------------------------------


def test_stanford_real_data(data_root: Path) -> None:
    ids = stanford.stanford_ids(data_root)
    assert len(ids) == 572
    samples = stanford.load_stanford(data_root, ids[:5])
    assert [s[0] for s in samples] == ids[:5]
    allowed = set(range(len(stanford.CLASS_NAMES))) | {stanford.VOID}
    for _, image, labels in samples:
        assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
        assert labels.dtype == np.uint8 and labels.shape == image.shape[:2]
        assert set(np.unique(labels).tolist()) <= allowed


def test_stanford_regions_txt_layout(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    expected = {}
    for image_id, (height, width) in {"0001": (4, 6), "0002": (5, 3)}.items():
        rgb = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
        cv2.imwrite(str(tmp_path / "images" / f"{image_id}.jpg"), rgb[..., ::-1])
        regions = rng.integers(-1, 8, (height, width))
        regions[0, 0] = -1
        np.savetxt(tmp_path / "labels" / f"{image_id}.regions.txt", regions, fmt="%d")
        expected[image_id] = np.where(regions < 0, 255, regions)
    samples = stanford.load_stanford(tmp_path)
    assert [s[0] for s in samples] == ["0001", "0002"]
    for image_id, image, labels in samples:
        assert image.shape == expected[image_id].shape + (3,)
        assert labels.dtype == np.uint8
        np.testing.assert_array_equal(labels, expected[image_id])
    assert samples[0][2][0, 0] == stanford.VOID


def test_stanford_regions_shape_mismatch(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "x.jpg"), np.zeros((4, 4, 3), np.uint8))
    np.savetxt(tmp_path / "labels" / "x.regions.txt", np.zeros((3, 4)), fmt="%d")
    with pytest.raises(ValueError, match="do not match"):
        stanford.load_stanford(tmp_path)


def test_stanford_missing_images_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no images/ folder"):
        stanford.load_stanford(tmp_path)


def test_kfold_splits() -> None:
    ids = [f"{i:03d}" for i in range(23)]
    splits = stanford.kfold_splits(ids, k=5, seed=0)
    assert len(splits) == 5
    assert sorted(len(test) for _, test in splits) == [4, 4, 5, 5, 5]
    tested = [i for _, test in splits for i in test]
    assert sorted(tested) == ids
    for train, test in splits:
        assert not set(train) & set(test)
        assert sorted(train + test) == ids
    assert stanford.kfold_splits(ids, k=5, seed=0) == splits
    assert stanford.kfold_splits(ids, k=5, seed=1) != splits
    with pytest.raises(ValueError):
        stanford.kfold_splits(ids, k=1)
    with pytest.raises(ValueError):
        stanford.kfold_splits(["a", "a", "b"], k=2)


# --- FASSEG -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "split", "count"), [("V2", "train", 20), ("V2", "test", 50), ("V3", "train", 182)]
)
def test_fasseg_real_data(data_root: Path, version: str, split: str, count: int) -> None:
    samples = fasseg.load_fasseg(data_root, version, split)
    assert len(samples) == count
    assert len({name for name, _, _ in samples}) == count
    for _, image, labels in samples:
        assert image.dtype == np.uint8 and image.shape[2] == 3
        assert labels.dtype == np.uint8 and labels.shape == image.shape[:2]
        assert labels.max() < len(fasseg.CLASS_NAMES)


def test_fasseg_paper_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_load(root: object, version: str, split: str) -> list[tuple[str, None, None]]:
        return [(f"{version}-{split}-{i}", None, None) for i in range(2)]

    monkeypatch.setattr(fasseg, "load_fasseg", fake_load)
    train, test = fasseg.paper_protocol("unused")
    assert [name for name, _, _ in train] == [
        "V2/V2-train-0",
        "V2/V2-train-1",
        "V3/V3-train-0",
        "V3/V3-train-1",
    ]
    assert [name for name, _, _ in test] == ["V2/V2-test-0", "V2/V2-test-1"]


def test_fasseg_colour_map_snaps_to_index_map(data_root: Path) -> None:
    folder = data_root / "fasseg" / "V2" / "Train_Labels"
    colour = cv2.cvtColor(cv2.imread(str(folder / "1.png")), cv2.COLOR_BGR2RGB)
    index = cv2.imread(str(folder / "1.idx.png"), cv2.IMREAD_UNCHANGED)
    np.testing.assert_array_equal(fasseg.colour_to_index(colour), index)


def test_fasseg_colour_maps_and_folder_case(tmp_path: Path) -> None:
    rgb_dir = tmp_path / "fasseg" / "V2" / "test_rgb"
    label_dir = tmp_path / "fasseg" / "V2" / "TEST_LABELS"
    rgb_dir.mkdir(parents=True)
    label_dir.mkdir(parents=True)
    classes = np.arange(12, dtype=np.uint8).reshape(3, 4) % 6
    colour = fasseg.CLASS_COLOURS[classes].astype(np.int16) + 9  # off-palette: snapped
    for name in ("10", "2"):
        cv2.imwrite(str(rgb_dir / f"{name}.png"), np.zeros((3, 4, 3), np.uint8))
        cv2.imwrite(str(label_dir / f"{name}.bmp"), np.clip(colour, 0, 255)[..., ::-1])
    samples = fasseg.load_fasseg(tmp_path, "V2", "test")
    assert [name for name, _, _ in samples] == ["2", "10"]
    np.testing.assert_array_equal(samples[0][2], classes)


def test_fasseg_bad_arguments(data_root: Path) -> None:
    with pytest.raises(ValueError, match="no split"):
        fasseg.load_fasseg(data_root, "V3", "test")
    with pytest.raises(ValueError, match="unknown"):
        fasseg.load_fasseg(data_root, "V4")


# --- synthetic faces --------------------------------------------------------------------------


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
    path = faces.faces_contact_sheet(*twenty_faces, tmp_path / "sheet.png", n=2)
    assert cv2.imread(str(path)) is not None


# --- libsvm / UCI -----------------------------------------------------------------------------


def test_load_libsvm_small(tmp_path: Path) -> None:
    path = tmp_path / "small.libsvm"
    path.write_text(
        "# a comment line\n1 1:0.5 3:2\n\n-1 2:1.5   # trailing comment\n3\n   \n1 4:-1e-3\n"
    )
    X, y = uci.load_libsvm(path)
    expected = np.array(
        [[0.5, 0, 2, 0], [0, 1.5, 0, 0], [0, 0, 0, 0], [0, 0, 0, -1e-3]], dtype=np.float32
    )
    np.testing.assert_array_equal(X, expected)
    assert X.dtype == np.float32
    assert y.dtype == np.int64 and y.tolist() == [1, -1, 3, 1]
    X_wide, _ = uci.load_libsvm(path, n_features=6)
    assert X_wide.shape == (4, 6)


def test_load_libsvm_float_labels(tmp_path: Path) -> None:
    path = tmp_path / "regression.libsvm"
    path.write_text("0.5 1:1\n2 2:1\n")
    _, y = uci.load_libsvm(path)
    assert y.dtype == np.float64 and y.tolist() == [0.5, 2.0]


@pytest.mark.parametrize(
    "bad_line",
    ["1 2:x", "1 0:3", "1 -2:3", "1 2", "1 2:3:4 5", "1 2.5:1", "x 1:1", "1 :1", "1 7:1"],
)
def test_load_libsvm_malformed_line_names_line(tmp_path: Path, bad_line: str) -> None:
    path = tmp_path / "bad.libsvm"
    path.write_text(f"1 1:1\n\n{bad_line}\n2 2:2\n")
    with pytest.raises(ValueError, match=r"bad\.libsvm, line 3: "):
        uci.load_libsvm(path, n_features=5)


def test_uci_letter_and_pendigits(data_root: Path) -> None:
    X, y = uci.load_uci("letter", data_root)
    assert X.shape == (20000, 16) and X.dtype == np.float32
    assert len(np.unique(y)) == 26
    X, y = uci.load_uci("pendigits", data_root)
    assert X.shape == (10992, 16)
    assert sorted(np.unique(y).tolist()) == list(range(10))


def test_uci_pools_train_and_test(data_root: Path) -> None:
    spec = uci.UCI_SETS["dna"]
    X, y = uci.load_uci("dna", data_root)
    assert X.shape == (spec.n_samples, spec.n_features)
    assert len(np.unique(y)) == spec.n_classes


def test_paper_splits() -> None:
    splits = uci.paper_splits(11, repeats=5, seed=0)
    assert len(splits) == 5
    for train, test in splits:
        assert len(train) == 5 and len(test) == 6
        assert sorted(np.concatenate([train, test]).tolist()) == list(range(11))
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(splits, uci.paper_splits(11, 5, seed=0)))
    assert not np.array_equal(splits[0][0], splits[1][0])
    np.testing.assert_array_equal(uci.paper_splits(11, repeats=2)[1][0], splits[1][0])
