"""Class names and colours: ``--classes``, ``classes.yaml``/``classes.txt`` beside the
labels, a palette PNG's palette, or tab20; each reaches ``info`` and the palette of the
label PNGs that ``segment`` writes."""
import json

import numpy as np
import pytest
from PIL import Image

from jungleseg.cli._classes import (
    class_names_and_colours,
    palette_colours,
    parse_items,
    read_class_file,
    tab20_colours,
)
from jungleseg.imageio import write_labels

from .test_commands import one_line_error, run
from .test_workflows import TINY, own_folders


def test_parse_items():
    assert parse_items(["0:sky", "2:road:128,64,128"]) == {
        0: {"name": "sky"}, 2: {"name": "road", "colour": [128, 64, 128]}}
    for bad in ("sky", "x:sky", "1:sky:#12", "1:sky:300,0,0", "1:"):
        with pytest.raises(ValueError, match="--classes"):
            parse_items([bad])


def test_class_files(tmp_path):
    (tmp_path / "classes.yaml").write_text(
        '0: sky\n1: {name: tree, colour: "#228b22"}\n2: {name: road, colour: [1, 2, 3]}\n')
    assert read_class_file(tmp_path / "classes.yaml") == {
        0: {"name": "sky"}, 1: {"name": "tree", "colour": [34, 139, 34]},
        2: {"name": "road", "colour": [1, 2, 3]}}
    (tmp_path / "classes.txt").write_text(
        "# value name colour\n0 sky #4682b4\n1 big tree\n\n2 road 128,64,128  # tarmac\n")
    assert read_class_file(tmp_path / "classes.txt") == {
        0: {"name": "sky", "colour": [70, 130, 180]}, 1: {"name": "big tree"},
        2: {"name": "road", "colour": [128, 64, 128]}}
    (tmp_path / "bad.yaml").write_text("- sky\n- tree\n")
    with pytest.raises(ValueError, match="bad.yaml: expected a mapping"):
        read_class_file(tmp_path / "bad.yaml")
    (tmp_path / "bad.txt").write_text("0 sky\nonlyname\n")
    with pytest.raises(ValueError, match="bad.txt, line 2"):
        read_class_file(tmp_path / "bad.txt")


def test_tab20_colours_are_distinct_and_never_white():
    colours = tab20_colours(20)
    assert len({tuple(c) for c in colours}) == 20
    assert [255, 255, 255] not in colours and colours[0] == [31, 119, 180]


def test_sources_in_order(tmp_path):
    labels = tmp_path / "labels"
    labels.mkdir()
    write_labels(labels / "a.png", np.array([[0, 1], [2, 3]]), {1: [9, 9, 9], 3: [7, 7, 7]})
    assert palette_colours([labels / "a.png"])[3] == [7, 7, 7]
    (tmp_path / "classes.txt").write_text("1 tree #00ff00\n2 road\n")
    names, colours = class_names_and_colours([0, 1, 2, 3], ["2:lane:#ff0000"], labels,
                                             [labels / "a.png"])
    assert names == {0: "0", 1: "tree", 2: "lane", 3: "3"}
    assert colours[1] == [0, 255, 0] and colours[2] == [255, 0, 0] and colours[3] == [7, 7, 7]
    assert colours[0] not in ([255, 255, 255], [0, 255, 0], [255, 0, 0])  # the palette's 0


def shown(model, image, tmp_path):
    """(info's classes as JSON, info's text, the palette of the PNG segment writes)."""
    info = json.loads(run("info", model, "--json").stdout)
    text = run("info", model).stdout
    run("segment", model, image, "--out", tmp_path / "seg.png")
    palette = np.array(Image.open(tmp_path / "seg.png").getpalette()[:768]).reshape(-1, 3)
    return info, text, palette


@pytest.mark.parametrize("source", ["option", "yaml", "txt", "palette", "none"])
def test_each_source_reaches_info_and_the_png_palette(source, tmp_path):
    palette = {0: [10, 20, 30], 1: [200, 150, 120], 2: [90, 60, 30]}
    data = own_folders(tmp_path / "mine", n=4,
                       palette=palette if source == "palette" else "grey")
    extra = []
    if source == "option":
        extra = ["--classes", "0:backdrop:#000080", "1:skin:#ffcc99", "2:hair"]
    elif source == "yaml":
        (data / "classes.yaml").write_text('0: backdrop\n1: {name: skin, colour: "#ffcc99"}\n')
    elif source == "txt":
        (data / "labels" / "classes.txt").write_text("0 backdrop #000080\n1 skin #ffcc99\n")
    model = tmp_path / "m.h5"
    run("train", "stanford", "--data", data, "--out", model, *TINY, *extra)
    info, text, png = shown(model, data / "images" / "img0.png", tmp_path)
    colours = info["metadata"]["class_colours"]
    for value, colour in colours.items():
        assert png[int(value)].tolist() == colour  # the PNG shows the model's colours
        assert colour != [255, 255, 255]
    assert len({tuple(c) for c in colours.values()}) == len(colours)
    if source == "palette":
        assert colours["1"] == [200, 150, 120] and info["classes"]["1"] == "1"
    elif source == "none":
        assert colours["0"] == [31, 119, 180] and info["classes"]["0"] == "0"
    else:
        assert info["classes"]["0"] == "backdrop" and info["classes"]["1"] == "skin"
        assert colours["1"] == [255, 204, 153]
        assert "backdrop" in text and "#ffcc99" in text
    if source == "option":
        assert info["classes"]["2"] == "hair" and colours["0"] == [0, 0, 128]


def test_classes_for_a_benchmark_are_refused(tmp_path):
    line = one_line_error(run("train", "faces", "--out", tmp_path / "m.h5", "--classes",
                              "0:x", ok=False))
    assert "--classes" in line


def test_a_generated_folder_names_its_classes(tmp_path):
    """``generate`` writes classes.yaml beside labels/, so a model trained on the folder as
    one's own images and labels knows the classes by name and colour."""
    from jungleseg.datasets.faces import CLASS_COLOURS, CLASS_NAMES

    data = tmp_path / "faces"
    run("generate", "faces", "--n", 3, "--size", "48x64", "--out", data)
    assert read_class_file(data / "classes.yaml") == {
        i: {"name": name, "colour": CLASS_COLOURS[i].tolist()}
        for i, name in enumerate(CLASS_NAMES)}
    model = tmp_path / "m.h5"
    run("train", "faces", "--images", data / "images", "--labels", data / "labels",
        "--out", model, *TINY)
    info = json.loads(run("info", model, "--json").stdout)
    assert info["classes"]["1"] == "skin" and info["classes"]["2"] == "hair"
    assert info["metadata"]["class_colours"]["2"] == CLASS_COLOURS[2].tolist()


def test_classes_no_label_holds_are_named_in_a_warning(tmp_path):
    """A typo in ``--classes`` (a value the labels do not hold) is said, not dropped in
    silence."""
    data = own_folders(tmp_path / "mine", n=4, palette="grey")
    said = run("train", "stanford", "--data", data, "--out", tmp_path / "m.h5", *TINY,
               "--classes", "1:skin", "9:hair", quiet=False)
    assert "--classes names 9, which no label image holds (they hold 0, 1, 2, " in said.stderr
    said = run("train", "stanford", "--data", data, "--out", tmp_path / "m.h5", *TINY,
               "--classes", "1:skin", "2:hair", quiet=False)
    assert "--classes names" not in said.stderr
