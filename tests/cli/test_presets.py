"""Presets by name from any folder, ``jungleseg presets``, and each preset's first line
saying what it is for."""
from pathlib import Path

import cv2
import pytest

from jungleseg.cli._presets import config_path, preset_description, preset_table
from jungleseg.config import preset_paths

from .test_commands import REPO, one_line_error, run
from .test_workflows import TINY, own_folders


def test_every_preset_says_what_it_is_for():
    for name, path in preset_paths().items():
        first = path.read_text().splitlines()[0]
        assert first.startswith("# ") and len(first) <= 100, name
        assert len(preset_description(path)) > 30, name


def test_presets_command_lists_them_all():
    out = run("presets").stdout
    for name, path in preset_paths().items():
        assert f"  {name} " in out and preset_description(path) in out
    assert preset_table() in out


def test_train_list_presets_prints_the_same_table_without_other_arguments():
    listed = run("train", "--list-presets")
    assert listed.returncode == 0
    assert listed.stdout == run("presets").stdout


def test_names_and_paths_find_a_preset(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # outside the repository
    shipped = preset_paths()["stanford"]
    for name in ("stanford", "stanford.yaml", "configs/stanford.yaml"):
        assert config_path(name) == shipped
    own = tmp_path / "mine.yaml"
    own.write_text(shipped.read_text())
    assert config_path(str(own)) == own
    with pytest.raises(ValueError, match="no such preset or config file"):
        config_path("elsewhere/stanford.yaml")


def test_train_by_name_outside_the_repository(tmp_path):
    data = own_folders(tmp_path / "mine", n=3)
    run("train", "stanford", "--data", data, "--out", tmp_path / "m.h5", *TINY,
        cwd=tmp_path)
    assert (tmp_path / "m.h5").is_file()
    assert Path(REPO) not in tmp_path.parents


def test_colour_pictures_with_a_grey_preset_get_a_hint(tmp_path):
    data = own_folders(tmp_path / "mine", n=2)
    line = one_line_error(run("train", "napari", "--data", data, "--out", tmp_path / "m.h5",
                              *TINY, ok=False))
    assert "--set features.input=rgb" in line
    run("train", "napari", "--data", data, "--out", tmp_path / "m.h5", *TINY,
        "features.input=rgb")


def test_images_of_two_stains_get_a_hint_that_trains(tmp_path):
    """Two channels are neither grey nor RGB: the hint names settings that do train."""
    import numpy as np

    data = own_folders(tmp_path / "mine", n=2)
    for image in sorted((data / "images").iterdir()):
        picture = cv2.imread(str(image))
        image.unlink()
        np.save(image.with_suffix(".npy"), picture[..., :2])
    line = one_line_error(run("train", "microscopy", "--data", data, "--out",
                              tmp_path / "m.h5", *TINY, ok=False))
    hint = "train the napari preset with --set "
    assert "this one has 2 channels; for images of 2 channels " + hint in line
    settings = line.split(hint)[1].split()
    assert settings == ["features.input=channels", "features.n_channels=2",
                        "features.gradient=false"]
    run("train", "napari", "--data", data, "--out", tmp_path / "m.h5", *TINY, *settings)


def test_a_grey_picture_among_colour_photos_gets_its_own_hint(tmp_path):
    """One grey JPEG in a folder of colour photos: convert it, not the preset (whose
    features.input=grey would refuse every other photo)."""
    data = own_folders(tmp_path / "mine", n=3)
    grey = cv2.imread(str(data / "images" / "img2.png"), cv2.IMREAD_GRAYSCALE)
    (data / "images" / "img2.png").unlink()
    cv2.imwrite(str(data / "images" / "img2.jpg"), grey)
    line = one_line_error(run("train", "stanford", "--data", data, "--out",
                              tmp_path / "m.h5", *TINY, ok=False))
    assert "img2.jpg: the model reads RGB images; this one is grey; the images before it are "\
        "RGB: save this one as RGB too" in line and "features.input" not in line


def test_a_preset_name_wins_over_a_data_folder_of_that_name(tmp_path, monkeypatch):
    """``jungleseg generate faces --out faces`` then ``jungleseg train faces``: the preset."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "faces").mkdir()
    (tmp_path / "photos").mkdir()
    assert config_path("faces") == preset_paths()["faces"]
    with pytest.raises(ValueError, match="is a folder"):
        config_path("photos")
