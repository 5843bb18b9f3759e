"""The README works as written: every Python code block runs (on the synthetic data it
makes), the quick start works on a fresh clone in a fresh virtual environment (slow), and
``.ci/run`` runs its test command verbatim."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jungleseg.cli._commands import DEMO_EXPECTED
from tests.cli.test_run import check_the_base_install

REPO = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"^```python\n(.*?)^```", (REPO / "README.md").read_text(),
                    flags=re.S | re.M)


def quick_start_blocks() -> list[str]:
    """The bash blocks of the README's Quick start section, in order."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def test_ci_runs_the_readme_test_command():
    install, tests = quick_start_blocks()
    assert "jungleseg demo" in install and 'pip install -e ".[dev]"' in tests
    assert tests in (REPO / ".ci/run").read_text().splitlines()


# First in its file, so that under ``-n 2`` one worker starts here (pip, and the kernels of
# the clone's own source) while the other compiles this checkout's kernels once.
@pytest.mark.slow
def test_quick_start_on_a_fresh_clone(tmp_path, data_root):
    """Both quick-start commands, verbatim, in a fresh clone without the caller's venv.
    Between the two, the venv the first made (``pip install -e .`` alone) is the base
    install: every command runs in it without dask (tests/cli/test_run.py). The test
    command runs with PYTEST_ADDOPTS=--collect-only: it must find pytest and its plugins
    and import every test module (running the suite again inside itself would only
    repeat it)."""
    clone = tmp_path / "jungleseg"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    venv = os.environ.get("VIRTUAL_ENV") or str(Path(sys.prefix))
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if not p.startswith(venv))
    install, tests = quick_start_blocks()
    demo = subprocess.run(["bash", "-c", install], cwd=clone, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "test mean Jaccard" in demo.stdout and "a good result" in demo.stdout
    assert (clone / "jungleseg-demo/examples.png").stat().st_size > 10000
    scores = json.loads((clone / "jungleseg-demo/scores.json").read_text())
    for name, expected in DEMO_EXPECTED.items():  # what the README and the demo promise
        assert abs(scores[name] - expected) < 0.002, (name, scores[name], expected)
    (tmp_path / "base").mkdir()
    check_the_base_install(clone / ".venv", tmp_path / "base", data_root)
    collect = subprocess.run(["bash", "-c", tests], cwd=clone, capture_output=True, text=True,
                             env={**env, "PYTEST_ADDOPTS": "--collect-only -q"}, timeout=1800)
    assert collect.returncode == 0, (collect.stdout[-3000:], collect.stderr[-3000:])
    assert re.search(r"tests/test_readme.py: \d+", collect.stdout), collect.stdout[-2000:]


def test_the_demo_figures_quoted_are_the_demo_s_own():
    """The scores the README and the getting-started page quote for ``jungleseg demo`` are
    the ones the demo itself calls a good result (the fresh-clone test checks that the demo
    scores them)."""
    quoted = (f"{DEMO_EXPECTED['mean_jaccard']:.3f}",
              f"{100 * DEMO_EXPECTED['pixel_accuracy']:.1f} %")
    for page in (REPO / "README.md", REPO / "docs/getting-started.md"):
        text = " ".join(page.read_text().split())
        assert all(figure in text for figure in quoted), (page, quoted)


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # blocks may write files (a model)
    exec(compile(BLOCKS[index], f"README.md python block {index}", "exec"), {})
