"""The tree baselines' rules, checked on small data from the node records of a fit."""
import numpy as np
import pytest
from sklearn.datasets import make_classification

from jungleseg import JungleClassifier, level_width
from jungleseg.jungle._baselines import PriorityQueue, top_per_dag
from jungleseg.jungle._criterion import ENTROPY, make_phi_table, node_costs

M = 8


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=800, n_features=8, n_informative=6, n_classes=5,
                               random_state=2)
    return X, y


def fit(data, **kw):
    X, y = data
    return JungleClassifier(n_estimators=2, max_depth=9, random_state=0, **kw).fit(X, y)


def levels_of(dag):
    return np.repeat(np.arange(dag.level_start.shape[0] - 1), np.diff(dag.level_start))


def splittable(records, depth, max_depth, min_split=2):
    counts = records.counts
    return ((depth < max_depth) & (counts.sum(axis=1) >= min_split)
            & ((counts > 0).sum(axis=1) > 1))


def parents(dag):
    parent = np.full(dag.n_nodes, -1)
    split = np.flatnonzero(dag.left >= 0)
    parent[dag.left[split]] = split
    parent[dag.right[split]] = split
    return parent


def test_top_per_dag_takes_the_best_of_each_dag_with_ties_to_the_first():
    score = np.array([1.0, 5.0, 5.0, 2.0, 9.0, 0.5])
    dag = np.array([0, 0, 0, 0, 1, 1])
    np.testing.assert_array_equal(top_per_dag(score, dag, 2), [1, 2, 4, 5])
    np.testing.assert_array_equal(top_per_dag(score, dag, 1), [1, 4])
    np.testing.assert_array_equal(top_per_dag(score, dag, np.array([3, 0])), [1, 2, 3])
    np.testing.assert_array_equal(top_per_dag(score, dag, 1, tiebreak=[0, 2, 1, 3, 4, 5]),
                                  [2, 4])
    np.testing.assert_array_equal(top_per_dag(score, dag, None), np.arange(6))


def test_priority_queue_pops_the_largest_reductions_and_keeps_the_rest():
    q = PriorityQueue()
    q.push(node=np.array([0, 1, 2]), dag=np.array([0, 0, 1]), depth=np.array([1, 1, 1]),
           position=np.array([0, 1, 0]), reduction=np.array([1.0, 3.0, 2.0]))
    q.push(node=np.array([3]), dag=np.array([0]), depth=np.array([2]), position=np.array([0]),
           reduction=np.array([2.0]))
    batch = q.pop(2)
    np.testing.assert_array_equal(batch["node"], [1, 3, 2])  # per DAG, best first
    assert len(q) == 1 and q.rows["node"].tolist() == [0]
    assert q.pop(None)["node"].tolist() == [0] and len(q) == 0


@pytest.mark.parametrize("growth", ["fixed-width-a", "fixed-width-b"])
@pytest.mark.parametrize("schedule", ["doubling", "kinect"])
def test_fixed_width_levels_never_exceed_their_width(data, growth, schedule):
    clf = fit(data, max_width=M, schedule=schedule, growth=growth)
    clf.jungle_.validate()
    for dag in clf.jungle_.dags:
        widths = np.diff(dag.level_start)
        for depth, width in enumerate(widths):
            assert width <= level_width(schedule, M, depth) <= M
        assert max(widths) == M  # the bound is reached, so the rule is what limits them
        split = dag.left >= 0
        children = np.concatenate([dag.left[split], dag.right[split]])
        assert len(np.unique(children)) == len(children)  # a tree: no merging


def test_fixed_width_a_splits_exactly_the_most_energetic_leaves(data):
    clf = fit(data, max_width=M, growth="fixed-width-a")
    for dag, rec in zip(clf.jungle_.dags, clf.grow_stats_.nodes):
        depth = levels_of(dag)
        energy = node_costs(rec.counts, make_phi_table(int(rec.counts.sum()), ENTROPY), ENTROPY)
        open_ = splittable(rec, depth, 9)
        evaluated = ~np.isnan(rec.gain)
        for d in range(dag.depth):
            level = np.flatnonzero(depth == d)
            candidates = level[open_[level]]
            order = candidates[np.lexsort((candidates, -energy[candidates]))]
            top = set(order[:M // 2].tolist())
            assert set(level[evaluated[level]].tolist()) <= top  # no other leaf was tried
            split = set(level[dag.left[level] >= 0].tolist())
            assert split == {n for n in top if np.isfinite(rec.gain[n])}
        assert (dag.left >= 0).sum() > M // 2


def test_fixed_width_b_keeps_exactly_the_best_reductions(data):
    clf = fit(data, max_width=M, growth="fixed-width-b")
    for dag, rec in zip(clf.jungle_.dags, clf.grow_stats_.nodes):
        depth = levels_of(dag)
        open_ = splittable(rec, depth, 9)
        for d in range(dag.depth):
            level = np.flatnonzero(depth == d)
            evaluated = level[np.isfinite(rec.gain[level])]
            assert set(evaluated.tolist()) <= set(level[open_[level]].tolist())
            order = evaluated[np.lexsort((evaluated, -rec.gain[evaluated]))]
            split = set(level[dag.left[level] >= 0].tolist())
            assert split == set(order[:M // 2].tolist())
        assert np.sum(np.isfinite(rec.gain) & (dag.left < 0)) > 0  # some splits were dropped


def test_max_nodes_needs_priority_growth(data):
    X, y = data
    with pytest.raises(ValueError, match="max_nodes applies to growth='priority' only"):
        JungleClassifier(max_width=8, max_nodes=100).fit(X, y)
