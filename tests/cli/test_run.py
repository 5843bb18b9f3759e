"""No dask unless a cluster is asked for: the base install (``pip install -e .``, no
extras) runs train, segment, evaluate, info, presets and generate (checked on the fresh
clone's venv by tests/test_readme.py, slow); ``--workers`` without dask is a one-line error
naming the extra."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from .test_commands import REPO

#: Runs the commands of a tiny workflow in one process and fails if dask was imported.
NO_DASK = textwrap.dedent('''
    import sys
    from jungleseg.cli import main

    folder = sys.argv[1]
    tiny = ["--set", "jungle.n_estimators=1", "jungle.max_depth=4", "jungle.max_width=8",
            "jungle.n_candidate_features=5", "sampling.samples_per_image=100",
            "sampling.images_per_dag=null", "--quiet"]
    for argv in (["generate", "faces", "--n", "3", "--size", "40x48", "--out", f"{folder}/f"],
                 ["train", "faces", "--data", f"{folder}/f", "--out", f"{folder}/m.h5", *tiny],
                 ["segment", f"{folder}/m.h5", f"{folder}/f/images", "--out", f"{folder}/s"],
                 ["evaluate", f"{folder}/m.h5", "--data", f"{folder}/f", "--quiet"],
                 ["info", f"{folder}/m.h5"], ["presets"]):
        assert main(argv) == 0, argv
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")
                    or m == "jungleseg.distributed")
    assert not loaded, loaded
    print("no dask")
''')


def test_commands_without_a_cluster_import_no_dask(tmp_path):
    proc = subprocess.run([sys.executable, "-c", NO_DASK, str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0 and "no dask" in proc.stdout, proc.stderr[-3000:]


def test_workers_without_dask_name_the_extra(trained, tmp_path):
    """dask made unimportable (as in the base install)."""
    _, data, model = trained
    blocker = tmp_path / "block"
    blocker.mkdir()
    for name in ("dask", "distributed"):
        (blocker / name).mkdir()
        (blocker / name / "__init__.py").write_text("raise ImportError('no dask here')\n")
    env = {**os.environ, "PYTHONPATH": f"{blocker}{os.pathsep}{REPO}"}
    for argv in (["segment", str(model), str(data / "images"), "--out", str(tmp_path / "s"),
                  "--workers", "2"],
                 ["evaluate", str(model), "--data", str(data), "--scheduler", "tcp://h:1"]):
        proc = subprocess.run([sys.executable, "-m", "jungleseg.cli", *argv], env=env,
                              capture_output=True, text=True, cwd=REPO)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 1 and len(lines) == 1, proc.stderr
        assert lines[0].startswith("jungleseg: error: --") and \
            'pip install "jungleseg[distributed]"' in lines[0]


def check_the_base_install(venv: Path, folder: Path, data_root: Path) -> None:
    """A venv with ``pip install -e .`` alone (no extras) runs train, segment, evaluate,
    info, presets and generate on small data, real photos included, without dask.

    Run by ``tests/test_readme.py`` (slow) on the fresh clone's venv right after the quick
    start's install, before the test command adds the ``dev`` extra: one fresh venv, not two.
    """
    python = str(venv / "bin" / "python")
    assert subprocess.run([python, "-c", "import dask"], capture_output=True).returncode != 0
    proc = subprocess.run([python, "-c", NO_DASK, str(folder)], cwd=folder,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0 and "no dask" in proc.stdout, proc.stderr[-3000:]
    jungleseg = str(venv / "bin" / "jungleseg")
    photo = sorted((data_root / "stanford_background" / "images").iterdir())[0]
    for argv in (["segment", str(folder / "m.h5"), str(photo), "--out",
                  str(folder / "photo.png")],
                 ["info", str(folder / "m.h5"), "--json"]):
        done = subprocess.run([jungleseg, *argv], capture_output=True, text=True,
                              cwd=folder, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
    assert Path(folder / "photo.png").is_file()
    done = subprocess.run([jungleseg, "segment", str(folder / "m.h5"), str(photo), "--out",
                           str(folder / "x.png"), "--workers", "2"],
                          capture_output=True, text=True, cwd=folder)
    assert done.returncode == 1 and "jungleseg[distributed]" in done.stderr
