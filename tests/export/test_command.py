"""``jungleseg export`` (:mod:`jungleseg.export._command`) and the export lines of
``jungleseg info``."""
from __future__ import annotations

import re

import pytest

from jungleseg import JungleClassifier, save_model
from jungleseg.cli import main
from jungleseg.export import footprint

from .conftest import NEEDS_GCC


@pytest.fixture(scope="module")
def saved(rows, tmp_path_factory):
    X, y = rows
    clf = JungleClassifier(n_estimators=2, max_width=8, random_state=0).fit(X, y)
    path = tmp_path_factory.mktemp("command") / "m.h5"
    save_model(clf.jungle_, path)
    return clf, path


@NEEDS_GCC
def test_command_line_export_and_info(saved, tmp_path, capsys):
    clf, model = saved
    assert main(["export", str(model), "--format", "c", "--out",
                 str(tmp_path / "c"), "--variant", "quantised", "--name", "tiny"]) == 0
    out = capsys.readouterr().out
    assert "tiny.c" in out and "bytes of flash" in out
    assert (tmp_path / "c" / "tiny.h").exists()
    assert main(["info", str(model)]) == 0
    tables = footprint(clf, "quantised")["tables"]
    assert f"quantised {tables} bytes of tables" in capsys.readouterr().out


@NEEDS_GCC
def test_export_prints_the_footprint_and_the_compiled_size(saved, tmp_path, capsys):
    clf, model = saved
    assert main(["export", str(model), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jungle.c", "jungle.h"]
    sizes = footprint(clf, "float")
    assert (f"flash: {sizes['tables']} bytes of tables; the call needs {sizes['ram']} bytes"
            in out)
    measured = re.search(r"compiled with -Os: (\d+) bytes of flash", out)
    # the compiled object holds the tables and the runtime's code
    assert measured and int(measured.group(1)) > sizes["tables"]


@NEEDS_GCC
def test_inline_style_from_the_command_line(saved, tmp_path, capsys):
    _, model = saved
    for style in ("tables", "inline"):
        assert main(["export", str(model), "--out", str(tmp_path / style), "--style",
                     style]) == 0
    capsys.readouterr()
    text = (tmp_path / "inline" / "jungle.c").read_text()
    assert "goto l" in text and "jungle_nodes" not in text
    assert "jungle_nodes" in (tmp_path / "tables" / "jungle.c").read_text()
