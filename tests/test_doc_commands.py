"""Every shell command of the README and the docs runs: each ```bash block of README.md and
docs/**/*.md, in order, in a sandbox that holds the files the pages talk about, at a tiny
size.

A block preceded by the line ``<!-- not run in CI: <reason> -->`` is not run (and must give
a reason). The others run with ``bash -e`` in a fresh folder per page, where:

- ``configs/`` is the repository's presets and ``../shared/data`` (and ``$JUNGLESEG_DATA``)
  the real data;
- ``photos/`` (two photos), ``photo.jpg``, ``my/images`` and ``my/labels`` (palette PNG
  labels), ``my/test-images`` and ``my/test-labels``, ``my-data/`` (``images/`` and
  ``labels/``), ``my-stacks/`` (volumes in ``images/`` and painted ``labels/``),
  ``stack.tif`` and ``huge.zarr`` exist;
- ``jungleseg`` is the real command line with options that make the work tiny: ``train``
  gets ``--n 4`` and one small DAG (``--set`` of depth, width, candidates, samples),
  ``evaluate`` ``--n 3``, ``generate`` at most 4 images of 60x80. Nothing else changes:
  the blocks' own options, files and checks all run.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
SKIP_MARK = re.compile(r"<!-- not run in CI: (.+?) -->")

#: The ``jungleseg`` of the sandbox: the real command line, made tiny.
TINY_JUNGLESEG = r'''
import sys
from jungleseg.cli import main

TRAIN = ["--set", "jungle.n_estimators=1", "jungle.max_depth=5", "jungle.max_width=16",
         "jungle.n_candidate_features=10", "sampling.samples_per_image=200",
         "sampling.images_per_dag=null"]


def option(argv, name, value):
    """argv with option ``name`` capped at ``value`` (added when missing)."""
    if name in argv:
        i = argv.index(name) + 1
        argv[i] = str(min(int(argv[i]), value))
        return argv
    return argv + [name, str(value)]


argv = sys.argv[1:]
command = argv[0] if argv else ""
if command == "train":
    argv = option(argv, "--n", 4) + TRAIN
elif command == "evaluate":
    argv = option(argv, "--n", 3)
elif command == "generate":
    argv = [a for a in option(argv, "--n", 4)]
    if "--size" in argv:
        argv[argv.index("--size") + 1] = "60x80"
    else:
        argv += ["--size", "60x80"]
sys.exit(main(argv))
'''


def code_blocks(page: Path) -> list[tuple[int, str, str, str | None]]:
    """(line, language, code, reason not run or None) of each ```bash and ```python block
    of a page, in page order."""
    text = page.read_text()
    blocks = []
    for match in re.finditer(r"^```(bash|python)\n(.*?)^```", text, re.S | re.M):
        before = text[:match.start()].rstrip().splitlines()
        mark = SKIP_MARK.fullmatch(before[-1].strip()) if before else None
        blocks.append((text[:match.start()].count("\n") + 1, match.group(1), match.group(2),
                       mark.group(1) if mark else None))
    return blocks


def bash_blocks(page: Path) -> list[tuple[int, str, str | None]]:
    """(line, commands, reason not run or None) of each ```bash block of a page."""
    return [(line, code, reason) for line, language, code, reason in code_blocks(page)
            if language == "bash"]


def runs_whole(page: Path) -> bool:
    """Whether a docs page's Python blocks run here with its commands, in page order (a
    worked example whose commands read what its Python wrote); tests/test_docs.py runs
    the Python blocks of the other pages, tests/test_readme.py the README's."""
    return (page != REPO / "README.md"
            and any(reason is None for _, _, reason in bash_blocks(page))
            and any(language == "python" for _, language, _, _ in code_blocks(page)))


PAGES_WITH_BLOCKS = [p for p in PAGES if bash_blocks(p)]


def test_pages_have_command_blocks():
    assert REPO / "README.md" in PAGES_WITH_BLOCKS
    for page in PAGES_WITH_BLOCKS:
        for line, _, reason in bash_blocks(page):
            assert reason is None or len(reason) > 10, f"{page}:{line}: say why it is not run"


def _sandbox(root: Path, data_root: Path) -> Path:
    """The folder the blocks run in, with the files the pages name."""
    import cv2
    import tifffile
    import zarr

    from jungleseg.datasets.cells3d import paint_slices, render_cell_volume
    from jungleseg.datasets.faces import render_faces
    from jungleseg.imageio import write_labels

    work = root / "work"
    work.mkdir()
    (root / "shared").mkdir()
    (root / "shared" / "data").symlink_to(data_root)
    (work / "configs").symlink_to(REPO / "configs")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "jungleseg"
    tool.write_text(f"#!{sys.executable}\n{TINY_JUNGLESEG}")
    tool.chmod(0o755)
    images, labels = render_faces(8, seed=5, size=(60, 80))
    colours = {0: [0, 0, 0], 1: [230, 180, 150], 2: [90, 50, 20]}
    for folder, part in (("my", slice(0, 4)), ("my-data", slice(0, 6))):
        for sub in ("images", "labels"):
            (work / folder / sub).mkdir(parents=True, exist_ok=True)
        for i in range(8)[part]:
            cv2.imwrite(str(work / folder / "images" / f"face{i}.png"), images[i][..., ::-1])
            write_labels(work / folder / "labels" / f"face{i}.png", labels[i], colours)
    for sub in ("test-images", "test-labels"):
        (work / "my" / sub).mkdir()
    for i in range(4, 8):
        cv2.imwrite(str(work / "my" / "test-images" / f"face{i}.png"), images[i][..., ::-1])
        write_labels(work / "my" / "test-labels" / f"face{i}.png", labels[i], colours)
    (work / "photos").mkdir()
    for i in (6, 7):
        cv2.imwrite(str(work / "photos" / f"photo{i}.jpg"), images[i][..., ::-1])
    cv2.imwrite(str(work / "photo.jpg"), images[5][..., ::-1])
    zarr.save_array(str(work / "huge.zarr"), images[4])
    for sub in ("images", "labels"):
        (work / "my-stacks" / sub).mkdir(parents=True)
    volume, truth = render_cell_volume(shape=(8, 32, 32), seed=0)
    tifffile.imwrite(work / "my-stacks" / "images" / "cells.tif", volume)
    tifffile.imwrite(work / "my-stacks" / "labels" / "cells.tif",
                     paint_slices(truth, [2, 5], fraction=0.2))
    tifffile.imwrite(work / "stack.tif", volume[:, ::-1].copy())
    return work


@pytest.mark.parametrize("page", PAGES_WITH_BLOCKS, ids=lambda p: str(p.relative_to(REPO)))
def test_page_commands_run(page, tmp_path, data_root):
    work = _sandbox(tmp_path, data_root)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "JUNGLESEG_DATA": str(data_root)}
    ran = 0
    for line, language, code, reason in code_blocks(page):
        if reason is not None or (language == "python" and not runs_whole(page)):
            continue
        command = ["bash", "-e", "-c", code] if language == "bash" else [sys.executable, "-c",
                                                                            code]
        proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True,
                              timeout=900)
        assert proc.returncode == 0, (f"{page.name}:{line}: exit {proc.returncode}\n"
                                      f"{code}\n{proc.stdout[-2000:]}\n"
                                      f"{proc.stderr[-3000:]}")
        assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
        ran += 1
    assert ran or all(reason for _, _, reason in bash_blocks(page))


def test_the_tiny_command_line_changes_only_sizes(tmp_path):
    """The sandbox's ``jungleseg`` passes everything else through to the real one."""
    tool = tmp_path / "jungleseg"
    tool.write_text(f"#!{sys.executable}\n{TINY_JUNGLESEG}")
    tool.chmod(0o755)
    proc = subprocess.run([str(tool), "generate", "faces", "--n", "100", "--out",
                           str(tmp_path / "g")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "wrote 4 faces images" in proc.stdout
    picture = Image.open(next((tmp_path / "g" / "images").iterdir()))
    assert np.asarray(picture).shape[:2] == (60, 80)
