"""Data-parallel fitting without a cluster (every shard in this process): the model equals
local training bit for bit (DAG arrays with spreads, classes and metadata), for LSearch
and ClusterSearch jungles, trees, fixed-width trees, DAGs on their own images, prior
correction and depth features, with 2 and 3 shards and images given as files; what it
refuses. On a real cluster:
``tests/distributed/test_tasks.py``."""
from pathlib import Path

import numpy as np
import pytest

from jungleseg.distributed._dataparallel import fit_in_process, shard_ranges
from tests.distributed.test_tasks import same_model, small


@pytest.mark.parametrize("kw", [{}, {"max_width": None}, {"search": "clustersearch"},
                                {"images_per_dag": 3, "max_width": 4},
                                {"correct_prior": True, "sampling": "balanced"},
                                {"growth": "fixed-width-b"}])
@pytest.mark.parametrize("n_shards", [2, 3])
def test_fit_in_process_equals_local_fit(faces, kw, n_shards):
    images, labels = faces
    local = small(**kw).fit(images, labels)
    sharded = fit_in_process(small(**kw), images, labels, n_shards)
    assert same_model(local.jungle_, sharded.jungle_)
    assert sharded.jungle_.family.quantiser is not None  # 8-bit codes, fitted by the driver
    assert all(dag.spread is not None for dag in sharded.jungle_.dags)
    assert sharded.grow_stats_.evaluations == local.grow_stats_.evaluations


def test_images_as_files(faces, tmp_path):
    images, labels = faces
    paths = []
    for i, (image, label) in enumerate(zip(images, labels)):
        np.save(tmp_path / f"{i}.npy", image)
        np.save(tmp_path / f"{i}_labels.npy", label)
        paths.append((tmp_path / f"{i}.npy", tmp_path / f"{i}_labels.npy"))
    local = small().fit(images, labels)
    sharded = fit_in_process(small(), *zip(*paths), 3)
    assert same_model(local.jungle_, sharded.jungle_)


def test_depth_frames_with_background():
    from jungleseg.config import load_config
    from jungleseg.datasets import load_benchmark

    config = load_config(Path(__file__).resolve().parents[2] / "configs" / "kinect.yaml"
                         ).with_overrides({
        "sampling.images_per_dag": 3, "jungle.max_depth": 6, "jungle.max_width": 16,
        "jungle.n_candidate_features": 20, "sampling.samples_per_image": 150})
    frames = load_benchmark("kinect", "train", None, 6)
    local = config.estimator().fit(frames.images, frames.labels)
    sharded = fit_in_process(config.estimator(), frames.images, frames.labels, 3)
    assert same_model(local.jungle_, sharded.jungle_)


def test_a_bad_image_is_named_by_its_place_among_all(faces):
    images, labels = faces
    labels = [*labels[:5], labels[5][:10], *labels[6:]]
    with pytest.raises(ValueError, match=r"image 1 .*\(counting from image 4"):
        fit_in_process(small(), images, labels, 2)


def test_shard_ranges_are_contiguous_and_even():
    assert shard_ranges(8, 3) == [(0, 2), (2, 5), (5, 8)]
    with pytest.raises(ValueError, match="shards"):
        shard_ranges(2, 3)


@pytest.mark.parametrize("kw, message", [({"growth": "priority", "max_nodes": 20},
                                          "level by level"),
                                         ({"auto_context": 2}, "auto-context")])
def test_what_it_refuses(faces, kw, message):
    images, labels = faces
    with pytest.raises(ValueError, match=message) as err:
        fit_in_process(small(**kw), images, labels)
    assert "\n" not in str(err.value)


def test_a_broadcast_cut_by_a_lost_worker_is_tried_again(monkeypatch):
    """A worker killed during a broadcast closes the scheduler's connection midway
    (CommClosedError); the broadcast is tried again, and a cluster that never recovers
    still raises."""
    from distributed.comm.core import CommClosedError

    from jungleseg.distributed import _dataparallel

    monkeypatch.setattr(_dataparallel, "SHARE_WAIT_SECONDS", 0.0)

    class Client:
        def __init__(self, failures):
            self.failures, self.calls = failures, 0

        def scatter(self, value, broadcast, hash):
            self.calls += 1
            if self.calls <= self.failures:
                raise CommClosedError("in <TCP ConnectionPool.scatter>: Stream is closed")
            return ("future of", value, broadcast)

    shards = _dataparallel.DaskShards(Client(2), [], [], [])
    assert shards.share(7) == ("future of", 7, True) and shards.client.calls == 3
    never = _dataparallel.DaskShards(Client(99), [], [], [])
    with pytest.raises(CommClosedError):
        never.share(7)
    assert never.client.calls == _dataparallel.SHARE_TRIES
