"""prune: a grown DAG cut back equals the DAG growth makes when it stops there."""
import numpy as np
import pytest
from sklearn.datasets import make_classification

from jungleseg import JungleClassifier
from jungleseg.jungle import prune


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=700, n_features=8, n_informative=6, n_classes=4,
                               random_state=3)


def assert_same(a, b):
    for name, array in a.arrays().items():
        other = getattr(b, name)
        assert array.dtype == other.dtype, name
        np.testing.assert_array_equal(array, other, err_msg=name)


@pytest.mark.parametrize("kw", [dict(max_width=None), dict(max_width=8),
                                dict(max_width=8, search="clustersearch"),
                                dict(max_width=8, growth="fixed-width-a")])
def test_pruned_to_a_depth_equals_grown_to_that_depth(data, kw):
    X, y = data
    deep = JungleClassifier(2, max_depth=9, random_state=0, **kw).fit(X, y)
    for depth in (0, 2, 5, 9):
        shallow = JungleClassifier(2, max_depth=depth, random_state=0, **kw).fit(X, y)
        for dag, rec, ref, ref_rec in zip(deep.jungle_.dags, deep.grow_stats_.nodes,
                                          shallow.jungle_.dags, shallow.grow_stats_.nodes):
            pruned, pruned_rec = prune(dag, rec, max_depth=depth)
            pruned.validate(4, 1)
            assert_same(pruned, ref)
            np.testing.assert_array_equal(pruned_rec.counts, ref_rec.counts)
            np.testing.assert_array_equal(pruned_rec.split_rank, ref_rec.split_rank)


def test_pruned_to_fewer_splits_equals_a_smaller_node_budget(data):
    X, y = data
    deep = JungleClassifier(2, max_width=6, max_depth=12, growth="priority",
                            random_state=0).fit(X, y)
    for budget in (1, 3, 40, 161):
        small = JungleClassifier(2, max_width=6, max_depth=12, growth="priority",
                                 max_nodes=budget, random_state=0).fit(X, y)
        for dag, rec, ref in zip(deep.jungle_.dags, deep.grow_stats_.nodes, small.jungle_.dags):
            pruned, _ = prune(dag, rec, max_splits=(budget - 1) // 2)
            assert_same(pruned, ref)
            assert pruned.n_nodes <= budget
