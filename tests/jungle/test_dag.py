"""Model arrays: validation catches every inconsistency a kernel could trip on."""
import dataclasses

import numpy as np
import pytest

from jungleseg import JungleClassifier, ModelError


@pytest.fixture(scope="module")
def dag():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 0.5)
    clf = JungleClassifier(n_estimators=1, max_width=4, max_depth=6, random_state=0).fit(X, y)
    d = clf.jungle_.dags[0]
    d.validate(3, 1, (0,))
    return d


def corrupt(dag, **changes):
    return dataclasses.replace(dag, **changes)


def test_dag_properties(dag):
    assert dag.n_nodes == dag.level_start[-1]
    assert dag.n_leaves == (dag.left < 0).sum()
    assert dag.nbytes == sum(a.nbytes for a in dag.arrays().values())
    assert np.all(np.diff(dag.level_start)[1:] <= 4)


@pytest.mark.parametrize("change, message", [
    (lambda d: {"left": np.where(d.left >= 0, d.left + 100, d.left).astype(np.int32)},
     "outside the next level"),
    (lambda d: {"right": np.where(d.right >= 0, 0, d.right).astype(np.int32)},
     "outside the next level"),
    (lambda d: {"left": np.where(d.left < 0, d.left - 50, d.left).astype(np.int32)}, "leaf"),
    (lambda d: {"threshold": np.full_like(d.threshold, np.nan)}, "finite"),
    (lambda d: {"threshold": d.threshold.astype(np.float64)}, "float32"),
    (lambda d: {"leaf_value": d.leaf_value * 2}, "sum to one"),
    (lambda d: {"leaf_value": -d.leaf_value}, "non-negative"),
    (lambda d: {"level_start": d.level_start[:-1]}, "level_start"),
    (lambda d: {"feature_params": d.feature_params[:, :0]}, "feature_params"),
    (lambda d: {"feature_kind": np.full_like(d.feature_kind, 9)}, "kind"),
])
def test_validation_names_the_problem(dag, change, message):
    with pytest.raises(ModelError, match=message):
        corrupt(dag, **change(dag)).validate(3, 1, (0,))


def test_last_level_must_be_leaves(dag):
    left = dag.left.copy()
    right = dag.right.copy()
    last = slice(dag.level_start[-2], dag.level_start[-1])
    left[last] = 0
    right[last] = 0
    with pytest.raises(ModelError):
        corrupt(dag, left=left, right=right).validate(3, 1, (0,))
