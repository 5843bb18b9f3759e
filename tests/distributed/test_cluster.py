"""Cluster set-up: a client of a LocalCluster or of a scheduler, the workers asked of the
scheduler; and without dask installed, the rest of jungleseg works while asking for a
cluster gives a one-line error naming the extra to install."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jungleseg import distributed as jd
from jungleseg.distributed import _cluster

REPO = Path(__file__).resolve().parents[2]
#: a process where dask and distributed cannot be imported (as after ``pip install -e .``)
WITHOUT_DASK = "import sys; sys.modules.update(dask=None, distributed=None)\n"


def test_workers_are_asked_of_the_scheduler_not_of_the_cached_info(client, monkeypatch):
    # distributed 2026.8 may refresh the cached info without its workers at any moment
    monkeypatch.setattr(client, "scheduler_info", lambda *a, **k: {"workers": {}})
    workers = jd.worker_threads(client)
    assert len(workers) == 2 and all(n == 1 for n in workers.values())
    plan = _cluster._worker_plan(client)
    assert sorted(plan) == sorted(workers)
    assert all(threads >= 1 and host for host, threads in plan.values())


def test_workers_run_this_checkout(client):
    import jungleseg

    files = client.run(lambda: __import__("jungleseg").__file__)
    assert set(files.values()) == {jungleseg.__file__}


def test_scheduler_and_workers_exclude_each_other():
    with pytest.raises(ValueError, match="exclude each other"), \
            jd.connect("tcp://127.0.0.1:1", 2):
        pass


def without_dask(code: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_DASK + code], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def test_local_work_needs_no_dask(tmp_path):
    proc = without_dask("""
import numpy as np
import jungleseg, jungleseg.cli, jungleseg.distributed
from jungleseg import ColourFeatures, JungleSegmenter, save_model, segment
from jungleseg.datasets.faces import render_faces
import cv2
from jungleseg.imageio import read_labels
images, labels = render_faces(3, seed=0, size=(40, 48))
seg = JungleSegmenter(ColourFeatures(max_offset=4), n_estimators=1, max_depth=4,
                      max_width=4, samples_per_image=200, random_state=0)
seg.fit(list(images), list(labels))
save_model(seg.jungle_, "m.h5")
cv2.imwrite("a.png", np.ascontiguousarray(images[0][..., ::-1]))
assert jungleseg.cli.main(["segment", "m.h5", "a.png", "--out", "a_labels.png",
                           "--quiet"]) == 0
whole = segment(seg.jungle_, images[0], probabilities=False)[0]
assert np.array_equal(read_labels("a_labels.png"), whole)
assert "dask" not in sys.modules or sys.modules["dask"] is None
print("ok")
""", tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


@pytest.mark.parametrize("call", ["with jd.connect(workers=2): pass",
                                  "jd.local_cluster(2)",
                                  "jd.segment_array(None, [[0]])"])
def test_a_cluster_without_dask_is_a_one_line_error(call, tmp_path):
    proc = without_dask(f"""
from jungleseg import distributed as jd
try:
    {call}
except ImportError as err:
    print(err)
""", tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith('pip install "jungleseg[distributed]"'), lines
    assert "dask" in lines[0]



def test_workers_numba_threads_agree_with_their_environment(tmp_path):
    """A script that imports jungleseg (as the ``jungleseg`` command does) starts a local
    cluster: each spawned worker imports that script first, so it must find its thread
    count in the environment it starts with. Numba refuses to compile in a worker whose
    threads run with a count other than its environment's, and a first data-parallel
    training there stopped with 'Cannot set NUMBA_NUM_THREADS'."""
    script = tmp_path / "start.py"
    script.write_text(
        "import os\n"
        "import numba\n"
        "import jungleseg  # noqa: F401\n"
        "from jungleseg.distributed._cluster import local_cluster\n\n\n"
        "def threads():\n"
        "    return os.environ.get('NUMBA_NUM_THREADS'), numba.config.NUMBA_NUM_THREADS\n\n\n"
        "if __name__ == '__main__':\n"
        "    with local_cluster(2) as client:\n"
        "        print(sorted(set(client.run(threads).values())))\n"
        "    print(os.environ.get('NUMBA_NUM_THREADS'))\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_NUM_THREADS"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, check=True, timeout=300).stdout.split("\n")
    expected = str(max(1, (len(os.sched_getaffinity(0)) or 1) // 2))
    assert out[0] == f"[('{expected}', {expected})]", out
    assert out[1] == "None"  # this process's environment is as it was
