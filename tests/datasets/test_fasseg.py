"""FASSEG loaders: the real folders, colour maps, the paper's protocol."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from jungleseg.datasets import fasseg


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
    def fake_load(root: object, version: str, split: str, on_error: object = None
                  ) -> list[tuple[str, None, None]]:
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
