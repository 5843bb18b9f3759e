"""grow(): level-wise growth, or priority growth from one queue, by ``growth``."""
import numpy as np
import pytest

from jungleseg.features import Samples, TabularFeatures
from jungleseg.jungle import GrowParams, grow
from jungleseg.jungle._entries import bootstrap, every_sample


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
    _, stats = grow(store.as_tuple(), samples, family, every_sample(len(samples), 2), params,
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


def test_priority_growth_runs_the_queue_and_keeps_to_max_nodes():
    family, store, samples = tabular_problem()
    entries = every_sample(len(samples), 2)
    common = {"n_classes": 3, "max_width": None, "max_depth": 8, "n_candidates": 3, "seed": 5}
    levels, _ = grow(store.as_tuple(), samples, family, entries, GrowParams(**common))
    queued, _ = grow(store.as_tuple(), samples, family, entries,
                     GrowParams(**common, growth="priority", max_nodes=9))
    assert all(dag.n_nodes <= 9 for dag in queued)
    assert all(dag.n_nodes > 9 for dag in levels)  # the budget, not the data, stopped it
