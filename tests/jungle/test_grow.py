"""Level growth: grouping entries by node, node histograms, routing, and the level loop."""
import numpy as np
import pytest

from jungleseg.features import ColourFeatures, Samples, TabularFeatures
from jungleseg.features import _kernels as K
from jungleseg.jungle import GrowParams, grow
from jungleseg.jungle._entries import bootstrap, every_sample
from jungleseg.jungle._grow import group_by_node, node_histograms, route


def test_grouping_is_a_stable_counting_sort_without_retired_entries():
    entry_node = np.array([2, 0, -1, 2, 1, 0, -1, 2])
    order, start = group_by_node(entry_node, 3)
    np.testing.assert_array_equal(start, [0, 2, 3, 6])
    np.testing.assert_array_equal(order, [1, 5, 4, 0, 3, 7])  # entries in order within a node


def test_node_histograms_count_entry_weights_per_class():
    rng = np.random.default_rng(0)
    entry_node = rng.integers(-1, 4, 200)
    entry_sample = rng.integers(0, 50, 200)
    entry_weight = rng.integers(1, 4, 200)
    label = rng.integers(0, 3, 50).astype(np.int32)
    order, start = group_by_node(entry_node, 4)
    hist = node_histograms(order, start, entry_sample, entry_weight, label, 3)
    for node in range(4):
        mine = entry_node == node
        expected = np.bincount(label[entry_sample[mine]], weights=entry_weight[mine], minlength=3)
        np.testing.assert_array_equal(hist[node], expected)


def test_route_sends_an_entry_left_exactly_when_its_response_is_below_the_threshold():
    rng = np.random.default_rng(1)
    image = rng.normal(size=(10, 12, 2)).astype(np.float32)
    family = ColourFeatures(max_offset=3, kinds=["difference"], input="channels", n_channels=2)
    store = family.prepare([image]).as_tuple()
    rows, cols = np.divmod(np.arange(120), 12)
    samples = Samples(np.zeros(120, np.int32), rows.astype(np.int32), cols.astype(np.int32))
    entry_node = np.repeat([0, 1], 60)
    params = np.float32([[1, -1, 0, 2, 0, 1, 0, 0], [-2, 0, 1, 1, 1, 1, 0, 0]])
    kind = np.array([K.KIND_DIFF, K.KIND_DIFF], np.uint8)
    threshold = np.float32([0.1, -0.3])
    new, response = route(entry_node, np.arange(2), np.arange(120), samples.image,
                          samples.row, samples.col, store, False, kind, params, threshold,
                          np.array([10, 30]), np.array([20, 40]), 1)
    for e in range(120):
        node = entry_node[e]
        v = K.response(K.KIND_DIFF, params[node], store, 0, rows[e], cols[e])
        assert response[e] == np.float32(v)
        assert new[e] == ((10, 30)[node] if v < threshold[node] else (20, 40)[node])



def tabular_problem(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = ((X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)).astype(np.int32)
    family = TabularFeatures(4)
    store, samples = family.prepare(X)
    return family, store, Samples(samples.image, samples.row, samples.col, y)


def test_progress_is_called_per_level_and_can_stop_training():
    family, store, samples = tabular_problem()
    params = GrowParams(n_classes=3, max_width=4, max_depth=6, n_candidates=2, seed=3)
    levels = []
    dags, stats = grow(store.as_tuple(), samples, family, every_sample(len(samples), 2), params,
                       progress=lambda level, nodes: levels.append((level, nodes)))
    assert [lev for lev, _ in levels] == list(range(len(levels))) and len(levels) >= 3
    assert all(nodes <= 2 * 4 for _, nodes in levels)  # two DAGs of width at most 4
    assert len(stats.objective) == len(levels) and set(stats.seconds) >= {"features", "route"}

    class Stop(Exception):
        pass

    def stop(level, nodes):
        if level == 1:
            raise Stop

    with pytest.raises(Stop):
        grow(store.as_tuple(), samples, family, every_sample(len(samples), 2), params, stop)


def test_a_depth_zero_jungle_is_the_class_prior_and_weights_count():
    family, store, samples = tabular_problem()
    entries = bootstrap(len(samples), 3, seed=1)
    params = GrowParams(n_classes=3, max_depth=0, seed=0)
    dags, _ = grow(store.as_tuple(), samples, family, entries, params)
    for g, dag in enumerate(dags):
        mine = entries.dag == g
        prior = np.bincount(samples.label[entries.sample[mine]], weights=entries.weight[mine],
                            minlength=3)
        assert dag.n_nodes == 1
        np.testing.assert_allclose(dag.leaf_value[0], prior / prior.sum(), rtol=1e-6)


def same_dag(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)


def test_dags_grown_alone_with_the_ensembles_merge_levels_equal_those_grown_together():
    family, store, samples = tabular_problem()
    entries = bootstrap(len(samples), 4, seed=2)  # each DAG its own samples and weights
    params = GrowParams(n_classes=3, max_width=4, max_depth=8, n_candidates=3, seed=5)
    together, stats = grow(store.as_tuple(), samples, family, entries, params)
    assert any(stats.merging) and len(stats.merging) >= 3
    for g in range(4):
        alone, own = grow(store.as_tuple(), samples, family, entries, params, dags=[g],
                          merge=stats.merging)
        assert len(alone) == 1 and same_dag(alone[0], together[g])
        # a DAG's own merge levels are among the ensemble's
        assert all(stats.merging[d] for d, m in enumerate(own.merging) if m)
    pair, _ = grow(store.as_tuple(), samples, family, entries, params, dags=[1, 3],
                   merge=stats.merging)
    assert same_dag(pair[0], together[1]) and same_dag(pair[1], together[3])

