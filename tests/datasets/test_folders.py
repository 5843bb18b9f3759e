"""A user's own folders: pairing by name, the readable types (PNG, 16-bit PNG, TIFF, JPEG,
NPY, zarr, TIFF stacks), and the command line trained, evaluated and segmenting on them;
every error path gives one line and exit code 1."""
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile
import zarr
from PIL import Image

from jungleseg import VolumeFeatures, load_model
from jungleseg.datasets.faces import render_faces
from jungleseg.datasets.folders import (
    load_folders,
    looks_like_instances,
    paired_files,
    user_folders,
)
from jungleseg.imageio import read_image, read_labels
from tests.cli.test_commands import FAST, one_line_error, run

REPO = Path(__file__).resolve().parents[2]


def save_png(path: Path, array: np.ndarray) -> None:
    Image.fromarray(array).save(path)


@pytest.fixture(scope="module")
def user_data(tmp_path_factory) -> Path:
    """images/ and labels/ of six faces in every 2-D format, paired by name."""
    root = tmp_path_factory.mktemp("user")
    (root / "images").mkdir()
    (root / "labels").mkdir()
    images, labels = render_faces(6, seed=1, size=(48, 64))
    for i, (image, label) in enumerate(zip(images, labels)):
        name = f"face{i}"
        kind = i % 4
        if kind == 0:
            save_png(root / "images" / f"{name}.png", image)
        elif kind == 1:
            tifffile.imwrite(root / "images" / f"{name}.tif", image)
        elif kind == 2:
            np.save(root / "images" / f"{name}.npy", image)
        else:
            z = zarr.open_array(str(root / "images" / f"{name}.zarr"), mode="w",
                                shape=image.shape, chunks=(16, 16, 3), dtype=image.dtype)
            z[...] = image
        if i % 2:
            np.save(root / "labels" / f"{name}.npy", label.astype(np.int32))
        else:
            cv2.imwrite(str(root / "labels" / f"{name}.png"), label.astype(np.uint16))
    return root


def copy_data(user_data: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(user_data, tmp_path / "data")
    return tmp_path / "data"


def test_pairs_by_name_in_every_format(user_data):
    pairs = paired_files(user_data / "images", user_data / "labels")
    assert [p.name.split(".")[0] for p, _ in pairs] == [f"face{i}" for i in range(6)]
    assert all(p.stem.split(".")[0] == q.stem for p, q in pairs)
    split = load_folders(user_data / "images", user_data / "labels")
    _, truth = render_faces(6, seed=1, size=(48, 64))
    assert all(np.array_equal(a, b) for a, b in zip(split.labels, truth))
    assert all(im.shape == (48, 64, 3) for im in split.images)


def test_sixteen_bit_labels_and_jpeg_images(tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    image = np.random.default_rng(0).integers(0, 255, (20, 30, 3), dtype=np.uint8)
    Image.fromarray(image).save(tmp_path / "images" / "a.jpg", quality=95)
    labels = np.zeros((20, 30), np.uint16)
    labels[5:] = 1000
    cv2.imwrite(str(tmp_path / "labels" / "a.png"), labels)
    split = load_folders(tmp_path / "images", tmp_path / "labels")
    assert split.images[0].shape == (20, 30, 3)
    assert np.array_equal(read_labels(tmp_path / "labels" / "a.png"), labels)


def test_hidden_and_system_files_are_passed_over(user_data, tmp_path):
    """What file managers leave in a folder (macOS' .DS_Store, Windows' Thumbs.db and
    desktop.ini) is not data: the folders pair as without it."""
    data = copy_data(user_data, tmp_path)
    pairs = paired_files(data / "images", data / "labels")
    for folder in ("images", "labels"):
        for name in (".DS_Store", "Thumbs.db", "desktop.ini"):
            (data / folder / name).write_bytes(b"\0")
    assert paired_files(data / "images", data / "labels") == pairs


def test_instance_masks_are_told_apart_from_classes():
    """Object ids (each value one blob of one image, as StarDist or Cellpose write them)
    against class maps: many classes that recur across images or regions, or few ids."""
    rng = np.random.default_rng(0)
    ids = np.kron(rng.permutation(30).reshape(5, 6), np.ones((4, 4), np.uint16))
    assert looks_like_instances([ids], ignore=(0,))
    assert looks_like_instances([np.stack([ids, ids])], ignore=(0,))  # a 3-D object per id
    assert looks_like_instances([ids, ids + 100], ignore=(0,))  # ids of their own per image
    assert not looks_like_instances([ids, ids], ignore=(0,))  # values recur: classes
    assert not looks_like_instances([ids % 12], ignore=(0,))  # 11 values: too few to say
    stripes = np.tile(np.repeat(np.arange(20, dtype=np.uint16), 2), (4, 3))
    assert not looks_like_instances([stripes])  # each class in three regions


def test_training_on_an_instance_mask_warns(user_data, tmp_path):
    data = copy_data(user_data, tmp_path)
    for label in (data / "labels").iterdir():
        label.unlink()
    for image in (data / "images").iterdir():
        height, width = read_image(image).shape[:2]
        blocks = np.arange(1, 33, dtype=np.uint16).reshape(4, 8) + 40 * int(image.stem[-1])
        ids = np.zeros((height, width), np.uint16)
        ids[:height // 4 * 4, :width // 8 * 8] = np.kron(blocks, np.ones((height // 4,
                                                                           width // 8), np.uint16))
        cv2.imwrite(str(data / "labels" / f"{image.stem}.png"), ids)
    done = run("train", "configs/faces.yaml", "--data", data, "--out", tmp_path / "m.h5",
               *FAST, "--n", "2")
    assert "warning: the labels hold 64 values, each one region of one image: they look " \
        "like object ids" in done.stderr


def test_user_folders_of_the_command_line(user_data):
    assert user_folders(data=user_data) == (user_data / "images", user_data / "labels")
    assert user_folders(data=user_data / "images") is None
    with pytest.raises(ValueError, match="go together"):
        user_folders(images=user_data / "images")


def test_train_evaluate_segment_on_user_folders(user_data, tmp_path):
    model = tmp_path / "m.h5"
    run("train", "configs/faces.yaml", "--images", user_data / "images", "--labels",
        user_data / "labels", "--out", model, *FAST)
    jungle = load_model(model)
    assert jungle.metadata["n_training_images"] == 6
    proc = run("evaluate", model, "--data", user_data, "--json", tmp_path / "s.json",
               quiet=False)
    assert "mean Jaccard" in proc.stdout
    run("segment", model, user_data / "images", "--out", tmp_path / "seg")
    written = sorted(p.name for p in (tmp_path / "seg").iterdir())
    assert written == [f"face{i}.png" for i in range(6)]


@pytest.mark.parametrize("damage, message", [
    (lambda d: (d / "labels" / "face3.npy").unlink(), "face3.zarr: no label file named face3"),
    (lambda d: np.save(d / "labels" / "face0.npy", np.zeros((4, 4), np.uint8))
     or (d / "labels" / "face0.png").unlink(), "face0.npy: labels of size 4x4"),
    (lambda d: np.save(d / "labels" / "extra.npy", np.zeros((4, 4), np.uint8)),
     "extra.npy: no image named extra"),
    (lambda d: (d / "images" / "notes.txt").write_text("x"), "notes.txt: not an image file;"),
    (lambda d: (d / "labels" / "notes.txt").write_text("x"), "notes.txt: not a label file;"),
])
def test_train_errors_name_the_file(user_data, tmp_path, damage, message):
    data = copy_data(user_data, tmp_path)
    damage(data)
    line = one_line_error(run("train", "configs/faces.yaml", "--data", data, "--out",
                              tmp_path / "m.h5", *FAST, ok=False))
    assert message in line


def test_empty_folder_is_an_error(tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    line = one_line_error(run("train", "configs/faces.yaml", "--images", tmp_path / "images",
                              "--labels", tmp_path / "labels", "--out", tmp_path / "m.h5",
                              ok=False))
    assert "no image files" in line and str(tmp_path / "images") in line


def test_a_label_the_model_never_saw_is_scored(user_data, tmp_path):
    model = tmp_path / "m.h5"
    run("train", "configs/faces.yaml", "--data", user_data, "--out", model, *FAST)
    data = copy_data(user_data, tmp_path)
    label = np.load(data / "labels" / "face1.npy")
    label[0, 0] = 77
    np.save(data / "labels" / "face1.npy", label)
    proc = run("evaluate", model, "--data", data, "--json", tmp_path / "s.json")
    assert "class 77 (77) of the test labels was never seen in training" in proc.stderr
    assert json.loads((tmp_path / "s.json").read_text())["per_class_jaccard"]["77"] == 0


def test_volumes_from_folders_to_multipage_tiff(tmp_path):
    from jungleseg.datasets.cells3d import paint_slices, render_cell_volume

    volume, truth = render_cell_volume(shape=(12, 40, 40), seed=0)
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    tifffile.imwrite(tmp_path / "images" / "cells.tif", volume)
    np.save(tmp_path / "images" / "more.npy", volume[:, ::-1].copy())
    painted = paint_slices(truth, [3, 8], fraction=0.1)
    tifffile.imwrite(tmp_path / "labels" / "cells.tif", painted)
    np.save(tmp_path / "labels" / "more.npy", painted[:, ::-1].copy())
    model = tmp_path / "v.h5"
    run("train", "configs/volume.yaml", "--data", tmp_path, "--out", model,
        "--set", "jungle.max_depth=5", "--set", "sampling.samples_per_image=500")
    assert isinstance(load_model(model).family, VolumeFeatures)
    run("segment", model, tmp_path / "images" / "cells.tif", "--out", tmp_path / "seg",
        "--tile", "16")
    labels = tifffile.imread(tmp_path / "seg" / "cells.tif")
    assert labels.shape == volume.shape[:3]
    assert set(np.unique(labels)) <= set(int(c) for c in load_model(model).classes)


def test_stacks_of_slices_with_a_two_dimensional_preset(tmp_path):
    """The `microscopy` preset trains on the painted slices of a z-stack and segments a
    stack slice by slice into a multipage TIFF, each slice as that slice alone."""
    from jungleseg import segment
    from jungleseg.datasets.cells3d import paint_slices, render_cell_volume

    volume, truth = render_cell_volume(shape=(10, 48, 48), seed=0)
    for part in ("images", "labels"):
        (tmp_path / part).mkdir()
    tifffile.imwrite(tmp_path / "images" / "cells.tif", volume)
    tifffile.imwrite(tmp_path / "labels" / "cells.tif", paint_slices(truth, [2, 7],
                                                                     fraction=0.1))
    model = tmp_path / "m.h5"
    run("train", "microscopy", "--data", tmp_path, "--out", model,
        "--set", "jungle.n_estimators=2", "jungle.max_depth=5")
    assert load_model(model).metadata["n_training_images"] == 2  # the painted slices
    run("segment", model, tmp_path / "images" / "cells.tif", "--out", tmp_path / "seg")
    assert sorted(p.name for p in (tmp_path / "seg").iterdir()) == ["cells.tif"]
    labels = tifffile.imread(tmp_path / "seg" / "cells.tif")
    jungle = load_model(model)
    for z in (0, 5, 9):
        np.testing.assert_array_equal(labels[z], segment(jungle, volume[z],
                                                         probabilities=False)[0])
    proc = run("evaluate", model, "--data", tmp_path, "--json", tmp_path / "s.json",
               quiet=False)
    assert "mean Jaccard" in proc.stdout
