"""Data-parallel growth's kernels against one process's: the shards' subsamples,
thresholds and summed count tables equal :func:`split_tables` on all the entries, for
every store kind, nodes above and below the subsample size, 1 to 3 shards; routing and
spreads continued shard to shard equal one process's."""
import dataclasses
import itertools

import numpy as np
import pytest

from jungleseg.distributed import _sharded
from jungleseg.distributed._sharded import InProcess, ShardedData, new_shard
from jungleseg.jungle._criterion import make_phi_table
from jungleseg.jungle._entries import Entries
from jungleseg.jungle._grow import GrowParams, _Training, route
from jungleseg.jungle._spread import node_spread
from jungleseg.jungle._tables import split_tables
from tests.jungle.test_tables import random_level, stores

N_SUB = 64  # some nodes hold more entries, some fewer


def sharded(store, samples, level, n_shards, unclamped, n_classes):
    """The level's entries cut into shards of contiguous images (entry order kept)."""
    _, order, start, entry_sample, entry_weight = level[:5]
    entry_node = np.empty(entry_sample.size, np.int64)
    for i in range(start.size - 1):
        entry_node[order[start[i]:start[i + 1]]] = i
    cuts = np.linspace(0, samples.image.max() + 1, n_shards + 1).astype(int)
    states = []
    for a, b in itertools.pairwise(cuts):
        mine = (samples.image[entry_sample] >= a) & (samples.image[entry_sample] < b)
        shard = new_shard(store.as_tuple(), samples, Entries(entry_sample[mine],
                                                             entry_weight[mine],
                                                             np.zeros(mine.sum(), np.int64)),
                          unclamped, n_classes)
        states.append(dataclasses.replace(shard, entry_node=entry_node[mine]))
    return InProcess(states)


@pytest.mark.parametrize("keep_table", [False, True])
@pytest.mark.parametrize("n_shards", [1, 2, 3])
def test_shard_tables_sum_to_the_single_machine_tables(keep_table, n_shards, monkeypatch):
    monkeypatch.setattr(_sharded, "THRESHOLD_SUBSAMPLE", N_SUB)
    rng = np.random.default_rng(1)
    for name, family, store, samples, unclamped in stores(rng):
        level = random_level(store, samples, family, 2, 5, 5, seed=7, weights=True)
        nodes, order, start, entry_sample, entry_weight, kinds, params, n_drawn, dags, \
            positions, P = level
        n_classes = int(samples.label.max()) + 1
        phi_table = make_phi_table(int(entry_weight.sum()), 0)
        want = split_tables(nodes, order, start, entry_sample, entry_weight,
                            np.arange(entry_sample.size), samples.image, samples.row,
                            samples.col, samples.label, store.as_tuple(), unclamped, kinds,
                            params, n_drawn, 11, dags, positions, 3, 6, N_SUB, P, keep_table,
                            2, phi_table, 0)
        p = GrowParams(n_classes, n_thresholds=6, min_samples_leaf=2, seed=11)
        tr = _Training(None, None, None, family.spec(), family.n_params, p, phi_table, False,
                       np.arange(2), ())
        data = ShardedData(sharded(store, samples, level, n_shards, unclamped, n_classes), tr)
        hist, _ = data.histograms(start.size - 1)
        np.testing.assert_array_equal(hist[nodes], P, err_msg=name)
        got = data.tables(nodes, dags, positions, 3, P, keep_table, kinds, params, n_drawn)
        for g, w, what in zip(got, want, ("thresholds", "table", "left weights", "tree costs",
                                          "best thresholds", "costs")):
            np.testing.assert_array_equal(g, w, err_msg=f"{name}, {n_shards} shards: {what}")
        assert len(data.table_bytes) == 1


def test_routing_and_spread_shard_by_shard_equal_one_process():
    rng = np.random.default_rng(3)
    _, family, store, samples, unclamped = list(stores(rng))[1]
    level = random_level(store, samples, family, 1, 4, 3, seed=5, weights=True)
    nodes, order, start, entry_sample, entry_weight, kinds, params = level[:7]
    n_nodes = start.size - 1
    kind, prm = kinds[:, 0], params[:, 0]
    threshold = rng.normal(size=nodes.size).astype(np.float32)
    left, right = 2 * np.arange(nodes.size), 2 * np.arange(nodes.size) + 1
    node_row = np.full(n_nodes, -1, np.int64)
    node_row[nodes] = np.arange(nodes.size)
    entry_node = np.empty(entry_sample.size, np.int64)
    for i in range(n_nodes):
        entry_node[order[start[i]:start[i + 1]]] = i
    moved, response = route(entry_node, node_row, entry_sample, samples.image, samples.row,
                            samples.col, store.as_tuple(), unclamped, kind, prm, threshold,
                            left, right, 1)
    want = node_spread(order, start, nodes, response, entry_weight)
    p = GrowParams(int(samples.label.max()) + 1)
    tr = _Training(None, None, None, family.spec(), family.n_params, p, None, False,
                   np.arange(1), ())
    shards = sharded(store, samples, level, 3, unclamped, p.n_classes)
    data = ShardedData(shards, tr)
    data.histograms(n_nodes)
    got = data.route(n_nodes, nodes, kind, prm, threshold, left, right)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float32 and (got > 0).any()
    np.testing.assert_array_equal(np.concatenate([s.entry_node for s in shards.states]),
                                  moved[np.argsort(samples.image[entry_sample], kind="stable")])


def test_priority_growth_is_refused():
    p = GrowParams(2, growth="priority")
    with pytest.raises(ValueError, match="level by level"):
        _sharded.grow_sharded(InProcess([]), None, p, 1)
