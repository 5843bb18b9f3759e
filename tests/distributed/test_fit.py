"""jungleseg.distributed.fit on a real LocalCluster of two worker processes: one task per
DAG, and the jungle equals local training bit for bit, also when a worker is killed
mid-training."""
import os
import signal
import threading
import time

import pytest

from jungleseg import distributed as jd
from jungleseg.distributed import _fit
from tests.distributed.test_tasks import same_model, small


@pytest.mark.parametrize("kw", [{}, {"images_per_dag": 3, "max_width": 4},
                                {"growth": "priority", "max_nodes": 40}])
def test_fit_equals_local_fit(client, faces, kw):
    images, labels = faces
    local = small(**kw).fit(images, labels)
    spread = jd.fit(small(**kw), images, labels, client)
    assert same_model(local.jungle_, spread.jungle_)
    assert spread.grow_stats_.merging == local.grow_stats_.merging


def test_one_dag_alone_needs_the_ensembles_merge_levels(faces):
    """What the rounds of fit settle: a DAG grown alone with the ensemble's merge levels
    equals the same DAG grown among all."""
    images, labels = faces
    seg = small().fit(images, labels)
    plan = seg._plan(images, labels)
    assert any(seg.grow_stats_.merging)
    for g in range(3):
        alone = seg._grow(plan, dags=[g], merge=seg.grow_stats_.merging)[0][0]
        assert same_model(type(seg.jungle_)([alone], seg.classes_, seg.features),
                          type(seg.jungle_)([seg.jungle_.dags[g]], seg.classes_, seg.features))


def test_settled_rounds():
    ensemble = [False, True, True]
    assert _fit._settled([False, True, True], (), ensemble)
    assert not _fit._settled([False, False, False], (), ensemble)  # assumed none: run again
    assert _fit._settled([False, False], (False, True, True), ensemble)  # stopped early
    runs = {0: ((), {"merging": [False, True]}), 1: ((), {"merging": [False, False, True]})}
    assert _fit._ensemble(runs, 2) == [False, True, True]


def test_killed_worker_is_retried_with_the_same_result(client, faces):
    images, labels = faces
    kw = dict(max_depth=12, samples_per_image=3000, n_candidate_features=60, max_width=32)
    local = small(**kw).fit(images, labels)
    pids = client.run(os.getpid)
    result, killed = {}, []

    def train():
        result["model"] = jd.fit(small(**kw), images, labels, client)

    worker = threading.Thread(target=train)
    worker.start()
    deadline = time.time() + 120
    while worker.is_alive() and not killed and time.time() < deadline:
        for address, keys in client.processing().items():
            if any(str(k).startswith("_train_dag") for k in keys) and address in pids:
                os.kill(pids[address], signal.SIGKILL)
                killed.append(address)
                break
        time.sleep(0.05)
    worker.join(300)
    assert killed, "no training task was seen running"
    assert same_model(local.jungle_, result["model"].jungle_)
