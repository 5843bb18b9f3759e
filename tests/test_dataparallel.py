"""Data-parallel fitting without a cluster (every shard in this process): the model equals
local training bit for bit (DAG arrays with spreads, classes and metadata), for LSearch
and ClusterSearch jungles, trees, DAGs on their own images and prior correction, with 2 and
3 shards and images given as files; what it refuses. On a real cluster:
``tests/test_distributed.py``."""
import numpy as np
import pytest

from jungleseg._dataparallel import fit_in_process, shard_ranges
from tests.test_distributed import faces, same_model, small  # noqa: F401 (a fixture)


@pytest.mark.parametrize("kw", [{}, {"max_width": None}, {"search": "clustersearch"},
                                {"images_per_dag": 3, "max_width": 4},
                                {"correct_prior": True, "sampling": "balanced"}])
@pytest.mark.parametrize("n_shards", [2, 3])
def test_fit_in_process_equals_local_fit(faces, kw, n_shards):  # noqa: F811
    images, labels = faces
    local = small(**kw).fit(images, labels)
    sharded = fit_in_process(small(**kw), images, labels, n_shards)
    assert same_model(local.jungle_, sharded.jungle_)
    assert all(dag.spread is not None for dag in sharded.jungle_.dags)
    assert sharded.grow_stats_.evaluations == local.grow_stats_.evaluations


def test_images_as_files(faces, tmp_path):  # noqa: F811
    images, labels = faces
    paths = []
    for i, (image, label) in enumerate(zip(images, labels)):
        np.save(tmp_path / f"{i}.npy", image)
        np.save(tmp_path / f"{i}_labels.npy", label)
        paths.append((tmp_path / f"{i}.npy", tmp_path / f"{i}_labels.npy"))
    local = small().fit(images, labels)
    sharded = fit_in_process(small(), *zip(*paths), 3)
    assert same_model(local.jungle_, sharded.jungle_)


def test_shard_ranges_are_contiguous_and_even():
    assert shard_ranges(8, 3) == [(0, 2), (2, 5), (5, 8)]
    with pytest.raises(ValueError, match="shards"):
        shard_ranges(2, 3)


@pytest.mark.parametrize("kw, message", [({"growth": "priority", "max_nodes": 20},
                                          "level by level"),
                                         ({"auto_context": 2}, "auto-context")])
def test_what_it_refuses(faces, kw, message):  # noqa: F811
    images, labels = faces
    with pytest.raises(ValueError, match=message) as err:
        fit_in_process(small(**kw), images, labels)
    assert "\n" not in str(err.value)
