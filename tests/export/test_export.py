"""The C export's public API (:mod:`jungleseg.export`): what :func:`export_c` writes and
returns, :func:`footprint`, and the models it refuses."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from jungleseg import ColourFeatures, JungleClassifier, JungleSegmenter, VolumeFeatures
from jungleseg.export import ExportError, export_c, footprint
from jungleseg.export._packing import pack_layout


def test_export_writes_header_and_source_and_reports_the_footprint(rows, tmp_path):
    X, y = rows
    clf = JungleClassifier(n_estimators=2, max_width=4, max_depth=5, random_state=0).fit(X, y)
    info = export_c(clf, tmp_path / "out", name="tiny", variant="quantised")
    assert sorted(Path(f).name for f in info["files"]) == ["tiny.c", "tiny.h"]
    assert (info["kind"], info["variant"], info["notes"]) == ("tabular", "quantised", [])
    sizes = footprint(clf, "quantised")
    assert (info["tables"], info["ram"]) == (sizes["tables"], sizes["ram"])
    # 4 classes of uint16 sums, the row's 5 int16 codes, and 4 words of walk per DAG
    assert sizes["ram"] == 4 * 2 + 5 * 2 + 2 * 16
    assert sizes["tables"] == pack_layout(clf.jungle_, "quantised").table_bytes()
    assert footprint(clf, "float")["ram"] == 4 * 4 + 2 * 16
    # leaf rows, and the row's 5 32-bit keys
    assert footprint(clf, "float", style="inline")["ram"] == 4 * 4 + 2 * 4 + 5 * 4
    assert not list((tmp_path / "out").glob(".*"))  # no temporary files left behind


def test_uncovered_models_are_refused_in_one_line(rows, tmp_path):
    X, y = rows
    jungle = JungleClassifier(n_estimators=1, max_width=4, random_state=0).fit(X, y).jungle_
    volume = dataclasses.replace(jungle, family=VolumeFeatures())
    with pytest.raises(ExportError, match="^volume features are not exported") as err:
        export_c(volume, tmp_path)
    assert "\n" not in str(err.value)
    soft = dataclasses.replace(jungle, params={**jungle.params, "soft": 1.0})
    with pytest.raises(ExportError, match="soft routing"):
        export_c(soft, tmp_path)
    with pytest.raises(ExportError, match="not a C identifier"):
        export_c(jungle, tmp_path, name="1bad")
    with pytest.raises(ExportError, match="^name 'a{42}' has 42 characters; at most 41, so"):
        export_c(jungle, tmp_path, name="a" * 42)
    with pytest.raises(ExportError, match="unknown variant"):
        export_c(jungle, tmp_path, variant="double")
    with pytest.raises(ExportError, match="unknown style"):
        export_c(jungle, tmp_path, style="unrolled")
    with pytest.raises(ExportError, match="cannot export a str"):
        export_c("model.h5", tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(ExportError, match="file: is a file; the C sources go in a folder"):
        export_c(jungle, tmp_path / "file")


def test_image_models_without_split_nodes_are_refused(colour_images, tmp_path):
    images, truths = colour_images
    stump = JungleSegmenter(ColourFeatures(max_offset=3), n_estimators=2, max_depth=0,
                            samples_per_image=50, random_state=0).fit(images, truths)
    with pytest.raises(ExportError, match="^an image model without split nodes is not "
                                          "exported: every DAG is one leaf"):
        export_c(stump, tmp_path)


def test_inline_style_is_for_tabular_models(kinect, tmp_path):
    with pytest.raises(ExportError, match="style 'inline' covers tabular models, not depth"):
        export_c(kinect[0], tmp_path, style="inline")


def test_smoothing_is_declared_not_exported(kinect, tmp_path):
    jungle = kinect[0].jungle_
    smoothed = dataclasses.replace(jungle, params={**jungle.params, "smoothing": 3})
    info = export_c(smoothed, tmp_path / "smoothed")
    assert any("probability smoothing is not exported" in note for note in info["notes"])
    text = (tmp_path / "smoothed" / "jungle.c").read_text()
    assert "NOT EXPORTED: probability smoothing" in text and "7x7 boxes" in text
    plain = dataclasses.replace(jungle, params={**jungle.params, "smoothing": 0})
    info = export_c(plain, tmp_path / "plain")
    assert info["notes"] == []
    assert "does not smooth" in (tmp_path / "plain" / "jungle.c").read_text()
