"""Shared image-set I/O: numbered PNG pairs with meta.json, colourised labels, contact
sheets."""
import cv2
import numpy as np
import pytest

from jungleseg.datasets._imageset import (
    colourise,
    contact_sheet,
    load_image_set,
    read_each,
    save_image_set,
)


@pytest.mark.parametrize("images", [
    np.random.default_rng(0).integers(0, 256, (3, 8, 10, 3)).astype(np.uint8),  # RGB
    np.random.default_rng(1).integers(0, 65536, (2, 5, 7)).astype(np.uint16),  # depth
])
def test_save_and_load_round_trip_bit_for_bit(tmp_path, images):
    labels = np.random.default_rng(2).integers(0, 9, images.shape[:3]).astype(np.uint8)
    save_image_set(tmp_path, images, labels, {"seed": 4}, image_dir="pictures")
    loaded, loaded_labels, meta = load_image_set(tmp_path, image_dir="pictures")
    np.testing.assert_array_equal(np.array(loaded), images)
    np.testing.assert_array_equal(np.array(loaded_labels), labels)
    assert meta == {"count": len(images), "size": list(images.shape[1:3]), "seed": 4}


def test_shape_mismatch_and_missing_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="expected images"):
        save_image_set(tmp_path, np.zeros((2, 4, 4), np.uint8), np.zeros((2, 4, 5), np.uint8), {})
    save_image_set(tmp_path, np.zeros((2, 4, 4), np.uint8), np.zeros((2, 4, 4), np.uint8), {})
    (tmp_path / "labels" / "000001.png").unlink()
    with pytest.raises(OSError, match="000001.png"):
        load_image_set(tmp_path)


def test_colourise_uses_the_table_and_marks_other_values():
    colours = np.array([[1, 2, 3], [4, 5, 6]], np.uint8)
    out = colourise(np.array([[0, 1], [7, 255]]), colours, other=(9, 9, 9))
    np.testing.assert_array_equal(out, [[[1, 2, 3], [4, 5, 6]], [[9, 9, 9], [9, 9, 9]]])


def test_contact_sheet_draws_every_panel(tmp_path):
    red = np.zeros((20, 30, 3), np.uint8)
    red[..., 0] = 255
    path = contact_sheet([[(red, "a"), (red, "b")]] * 3, tmp_path / "sheet.png", per_row=2,
                         legend=(["one"], [[255, 0, 0]]))
    sheet = cv2.imread(str(path))
    assert sheet is not None and (sheet[..., 2] > 200).mean() > 0.05  # red panels drawn
    with pytest.raises(ValueError, match="at least one"):
        contact_sheet([], tmp_path / "empty.png")


def test_an_unreadable_pair_is_reported_and_left_out_when_asked(tmp_path):
    images = np.random.default_rng(3).integers(0, 256, (3, 6, 8, 3)).astype(np.uint8)
    labels = np.zeros((3, 6, 8), np.uint8)
    save_image_set(tmp_path, images, labels, {})
    bad = tmp_path / "images" / "000001.png"
    bad.write_bytes(bad.read_bytes()[:-20])  # the end chunk is cut off
    with pytest.raises(ValueError, match="000001.png.*truncated"):
        load_image_set(tmp_path)
    told = []
    loaded, loaded_labels, _ = load_image_set(tmp_path, on_error=told.append)
    assert len(told) == 1 and "000001.png" in str(told[0])
    np.testing.assert_array_equal(np.array(loaded), images[[0, 2]])
    assert len(loaded_labels) == 2


def test_read_each_raises_only_without_a_handler():
    def read(x):
        if x == 2:
            raise OSError(f"file {x} is gone")
        return x * 10

    assert read_each(range(4), read, lambda error: None) == [0, 10, 30]
    with pytest.raises(OSError, match="file 2"):
        read_each(range(4), read)


def test_write_class_file_is_read_back(tmp_path):
    from jungleseg.cli._classes import read_class_file
    from jungleseg.datasets._imageset import write_class_file

    path = write_class_file(tmp_path / "classes.yaml", ['a "quoted" name', "b"],
                            np.array([[1, 2, 3], [255, 0, 16]], np.uint8))
    assert read_class_file(path) == {0: {"name": 'a "quoted" name', "colour": [1, 2, 3]},
                                     1: {"name": "b", "colour": [255, 0, 16]}}
    assert read_class_file(write_class_file(tmp_path / "c.yaml", ["x"])) == {0: {"name": "x"}}
