"""``jungleseg.cli.main``: errors start at column 0 whether or not standard error is a
terminal, a preset list after an unknown name, and exit codes."""
import shutil
import subprocess
import sys

from .test_commands import REPO, run


def error_lines(stderr: str) -> list[str]:
    """The lines (split at newlines only, as a log filter does) that hold an error."""
    return [line for line in stderr.split("\n") if "jungleseg: error:" in line]


def test_errors_after_a_progress_bar_start_at_column_0(trained, tmp_path):
    """A bad file in the middle of a batch, progress bars on, standard error a pipe (not
    a terminal): tqdm leaves its line open with a carriage return, yet each error line
    starts with ``jungleseg: error:``."""
    _, data, model = trained
    batch = tmp_path / "batch"
    batch.mkdir()
    for i in range(3):
        shutil.copy(data / f"images/00000{i}.png", batch / f"{i}.png")
    (batch / "1.png").write_bytes((batch / "1.png").read_bytes()[:200])  # truncated
    proc = subprocess.run([sys.executable, "-m", "jungleseg.cli", "segment", str(model),
                           str(batch), "--out", str(tmp_path / "out"), "--fail-fast"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 1
    assert "segmenting" in proc.stderr  # the bar was shown
    lines = error_lines(proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("jungleseg: error: "), proc.stderr
    proc = subprocess.run([sys.executable, "-m", "jungleseg.cli", "segment", str(model),
                           str(batch), "--out", str(tmp_path / "out2")],
                          capture_output=True, text=True, cwd=REPO)
    lines = error_lines(proc.stderr)
    assert len(lines) == 2 and all(ln.startswith("jungleseg: error: ") for ln in lines), \
        proc.stderr


def test_errors_during_evaluation_start_at_column_0(trained, tmp_path):
    _, data, model = trained
    copy = tmp_path / "faces"
    shutil.copytree(data, copy)
    bad = copy / "images/000002.png"
    bad.write_bytes(bad.read_bytes()[:200])
    proc = run("evaluate", model, "--dataset", "faces", "--data", copy, "--confusion",
               tmp_path / "cm.png", ok=False, quiet=False)
    assert proc.returncode == 1
    assert all(ln.startswith("jungleseg: error: ") for ln in error_lines(proc.stderr))
    assert len(error_lines(proc.stderr)) == 2


def test_an_unknown_preset_lists_the_presets(tmp_path):
    proc = run("train", "nope", "--out", tmp_path / "m.h5", ok=False)
    first, *rest = proc.stderr.strip().splitlines()
    assert first == "jungleseg: error: nope: no such preset or config file; the presets are:"
    names = [line.split()[0] for line in rest]
    assert {"stanford", "faces", "kinect", "napari"} <= set(names)
    assert all(len(line.split(None, 1)[1]) > 20 for line in rest)  # a description each
