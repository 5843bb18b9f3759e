"""Stanford Background loaders: both label layouts, errors, k-fold splits."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from jungleseg.datasets import stanford


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
