"""``jungleseg segment``: where labels go (one file or a folder, by the one ``--out`` rule)
and how a failing file is named."""
from pathlib import Path

import pytest

from jungleseg.cli._segment import label_targets, naming


def test_label_targets(tmp_path):
    files = [Path("a.png"), Path("b.jpg")]
    pairs = label_targets(files, tmp_path / "new" / "out", ".png")
    assert pairs == [(files[0], tmp_path / "new/out/a.png"), (files[1], tmp_path / "new/out/b.png")]
    assert (tmp_path / "new" / "out").is_dir()  # created
    assert label_targets(files[:1], tmp_path / "one" / "x.png", ".png")[0][1] == \
        tmp_path / "one" / "x.png"
    with pytest.raises(ValueError, match="names one label file"):
        label_targets(files, tmp_path / "x.png", ".png")
    with pytest.raises(ValueError, match="labels are written as PNG"):
        label_targets(files[:1], tmp_path / "x.jpg", ".png")
    with pytest.raises(ValueError, match=r"a.png and a.jpg would both be segmented to "
                                         r".*dup.a\.png; rename one"):
        label_targets([Path("a.png"), Path("a.jpg")], tmp_path / "dup", ".png")
    assert not (tmp_path / "dup").exists()  # refused before anything is made


def test_naming_puts_the_file_first():
    assert naming(Path("a.png"), ValueError("image: bad\nmore")) == "a.png: bad"
    assert naming(Path("a.png"), ValueError("a.png: truncated")) == "a.png: truncated"
    worker = ValueError(f"{Path('a.png').resolve()}: truncated")  # tasks get absolute paths
    assert naming(Path("a.png"), worker) == "a.png: truncated"


def test_the_speed_figure_leaves_out_compiling(trained, monkeypatch):
    """The Mpx/s of a first run does not count the kernels' compilation, and says how
    long that took; a warm run says nothing of it."""
    import contextlib

    from jungleseg import _jit

    from .test_commands import run

    folder, data, model = trained
    image = sorted((data / "images").iterdir())[0]
    for _ in range(2):  # the first may compile (a fresh kernel cache), the second not
        done = run("segment", model, image, "--out", folder / "warm.png", quiet=False)
        warm = done.stdout + done.stderr
    assert "Mpx/s)" in warm and "compiling kernels took" not in warm
    assert "segmented 1 image (" in warm  # one image, not '1 images'

    @contextlib.contextmanager
    def slow_compile():  # as if the kernels took 30 s to compile during the run
        class Timer:
            seconds = 30.0
        yield Timer()

    monkeypatch.setattr(_jit, "compile_timer", slow_compile)
    done = run("segment", model, image, "--out", folder / "cold.png", quiet=False)
    line = done.stdout + done.stderr
    assert "Mpx/s; compiling kernels took 30.0 s more, first run only)" in line, line
