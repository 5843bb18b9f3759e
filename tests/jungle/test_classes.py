"""JungleClassifier: reference traversal, determinism, structure, scikit-learn checks."""
import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_classification
from sklearn.utils.estimator_checks import parametrize_with_checks

from jungleseg import JungleClassifier, level_width


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=600, n_features=8, n_informative=5, n_classes=4,
                               random_state=0)
    return X, y


def reference_proba(jungle, X):
    """Plain-Python traversal of every DAG, averaged."""
    X = X.astype(np.float32)
    out = np.zeros((len(X), jungle.n_classes))
    for dag in jungle.dags:
        for s, x in enumerate(X):
            node = 0
            while dag.left[node] >= 0:
                column = int(dag.feature_params[node, 0])
                node = dag.left[node] if x[column] < dag.threshold[node] else dag.right[node]
            out[s] += dag.leaf_value[-1 - dag.left[node]]
    return out / len(jungle.dags)


@pytest.mark.parametrize("max_width", [4, 16, None])
def test_prediction_equals_reference_traversal(data, max_width):
    X, y = data
    clf = JungleClassifier(n_estimators=3, max_width=max_width, random_state=0).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), reference_proba(clf.jungle_, X), atol=1e-6)


@pytest.mark.parametrize("max_width, schedule", [(8, "doubling"), (20, "kinect")])
def test_levels_respect_the_width_schedule(data, max_width, schedule):
    X, y = data
    clf = JungleClassifier(n_estimators=2, max_width=max_width, schedule=schedule, max_depth=12,
                           random_state=1).fit(X, y)
    clf.jungle_.validate()
    for dag in clf.jungle_.dags:
        widths = np.diff(dag.level_start)
        for depth, width in enumerate(widths):
            assert width <= level_width(schedule, max_width, depth)
        assert dag.depth <= 12
    assert clf.node_count_ == sum(d.n_nodes for d in clf.jungle_.dags)
    assert clf.model_bytes_ == sum(d.nbytes for d in clf.jungle_.dags)


def test_unlimited_width_grows_trees(data):
    X, y = data
    clf = JungleClassifier(n_estimators=2, max_width=None, random_state=0).fit(X, y)
    for dag in clf.jungle_.dags:
        split = dag.left >= 0
        children = np.concatenate([dag.left[split], dag.right[split]])
        assert len(np.unique(children)) == len(children)  # no node has two parents
        assert dag.n_nodes == 2 * split.sum() + 1
    assert clf.score(X, y) == 1.0  # grown until pure


def test_jungle_merges_and_uses_fewer_nodes(data):
    X, y = data
    forest = JungleClassifier(n_estimators=2, max_width=None, max_depth=10, random_state=0)
    jungle = JungleClassifier(n_estimators=2, max_width=8, max_depth=10, random_state=0)
    forest.fit(X, y)
    jungle.fit(X, y)
    assert jungle.node_count_ < forest.node_count_
    dag = jungle.jungle_.dags[0]
    split = dag.left >= 0
    children = np.concatenate([dag.left[split], dag.right[split]])
    assert len(np.unique(children)) < len(children)  # some node has several parents


def test_same_seed_same_model_different_seed_different_model(data):
    X, y = data
    a = JungleClassifier(n_estimators=3, max_width=8, random_state=5).fit(X, y)
    b = JungleClassifier(n_estimators=3, max_width=8, random_state=5).fit(X, y)
    c = JungleClassifier(n_estimators=3, max_width=8, random_state=6).fit(X, y)
    fresh = np.random.default_rng(0).normal(size=(500, X.shape[1]))
    assert a.predict_proba(fresh).tobytes() == b.predict_proba(fresh).tobytes()
    assert a.predict_proba(fresh).tobytes() != c.predict_proba(fresh).tobytes()


_THREAD_SCRIPT = """
import hashlib, numpy as np
from sklearn.datasets import make_classification
from jungleseg import JungleClassifier
X, y = make_classification(n_samples=2000, n_features=10, n_informative=6, n_classes=5,
                           random_state=1)
for kw in (dict(max_width=16), dict(max_width=None, bootstrap=True),
           dict(max_width=8, search="lsearch-stochastic", criterion="gini"),
           dict(max_width=8, search="clustersearch-alternating"),
           dict(max_width=8, growth="priority", max_nodes=300)):
    clf = JungleClassifier(n_estimators=4, random_state=3, **kw).fit(X, y)
    print(hashlib.sha256(clf.predict_proba(X).tobytes()).hexdigest())
"""


def test_bit_identical_with_one_and_two_threads():
    digests = []
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads)
        out = subprocess.run([sys.executable, "-c", _THREAD_SCRIPT], env=env, check=True,
                             capture_output=True, text=True).stdout.split()
        assert len(out) == 5
        digests.append(out)
    assert digests[0] == digests[1]


def test_bootstrap_changes_dags(data):
    X, y = data
    clf = JungleClassifier(n_estimators=2, max_width=8, bootstrap=True, random_state=0).fit(X, y)
    a, b = clf.jungle_.dags
    assert a.n_nodes != b.n_nodes or not np.array_equal(a.threshold, b.threshold)


def test_accuracy_on_iris():
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))
    tr, te = idx[:100], idx[100:]
    clf = JungleClassifier(n_estimators=8, max_width=8, random_state=0).fit(X[tr], y[tr])
    assert clf.score(X[te], y[te]) >= 0.9


def test_prior_power_balances_recall_on_imbalanced_classes():
    from sklearn.metrics import balanced_accuracy_score

    X, y = make_classification(3000, n_features=8, n_informative=3, weights=[0.9, 0.1],
                               flip_y=0.05, random_state=0)
    tr, te = slice(0, 2000), slice(2000, None)
    plain = JungleClassifier(n_estimators=4, max_width=16, max_depth=8, random_state=0)
    weighed = JungleClassifier(n_estimators=4, max_width=16, max_depth=8, prior_power=1.0,
                               random_state=0)
    plain.fit(X[tr], y[tr])
    weighed.fit(X[tr], y[tr])
    shares = np.bincount(y[tr]) / 2000
    np.testing.assert_allclose(weighed.jungle_.metadata["class_shares"], shares)
    proba = weighed.predict_proba(X[te])
    assert proba.tobytes() == plain.predict_proba(X[te]).tobytes()  # the same DAGs
    np.testing.assert_array_equal(weighed.predict(X[te]),
                                  np.argmax(proba / shares.astype(np.float32), axis=1))
    assert (balanced_accuracy_score(y[te], weighed.predict(X[te]))
            > balanced_accuracy_score(y[te], plain.predict(X[te])) + 0.02)


@pytest.mark.parametrize("param, value", [
    ("n_estimators", 0), ("max_width", 1), ("schedule", "linear"), ("criterion", "mse"),
    ("search", "annealing"), ("n_candidate_features", "log3"), ("min_samples_leaf", 0),
    ("n_thresholds", 0), ("growth", "bushy"), ("max_nodes", 0), ("prior_power", 1.5),
])
def test_bad_parameters_are_named(data, param, value):
    X, y = data
    with pytest.raises(ValueError, match=param):
        JungleClassifier(**{param: value}).fit(X, y)


# scikit-learn's estimator checks: all apply and pass except those listed here
EXPECTED_FAILED_CHECKS = {}


@parametrize_with_checks([JungleClassifier(n_estimators=3, max_width=8, random_state=0)],
                         expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("kw", [{}, dict(criterion="dgmml"), dict(growth="priority", max_nodes=41)])
def test_binned_fit_routes_raw_rows_as_its_codes(data, kw):
    """A jungle fitted on binned columns stores raw thresholds: predicting raw rows (seen
    and unseen) gives what the same jungle trained and predicting on the bin codes gives."""
    from jungleseg.features._bins import quantise

    X, y = data
    X = np.round(X, 1).astype(np.float32)  # some ties, so that bins hold several rows
    binned = JungleClassifier(n_estimators=3, max_width=8, max_bins=16, random_state=4, **kw)
    binned.fit(X[:400], y[:400])
    codes = quantise(X, binned.bin_cuts_)
    on_codes = JungleClassifier(n_estimators=3, max_width=8, max_bins=None, random_state=4,
                                **kw)
    on_codes.fit(codes[:400], y[:400])
    assert binned.node_count_ == on_codes.node_count_
    for a, b in zip(binned.jungle_.dags, on_codes.jungle_.dags):
        np.testing.assert_array_equal(a.left, b.left)
        np.testing.assert_array_equal(a.feature_params, b.feature_params)
        split = a.left >= 0
        assert not np.array_equal(a.threshold[split], b.threshold[split])  # raw, not codes
    assert binned.predict_proba(X).tobytes() == on_codes.predict_proba(codes).tobytes()
    assert len(binned.bin_cuts_) == X.shape[1]
    assert all(c.size <= 15 for c in binned.bin_cuts_)


def test_max_bins_none_trains_on_raw_values(data):
    X, y = data
    clf = JungleClassifier(n_estimators=2, max_width=8, max_bins=None, random_state=0)
    clf.fit(X, y)
    assert clf.bin_cuts_ is None and clf.score(X, y) > 0.8


def test_predict_on_raw_values_routes_as_the_codes_trained():
    """A model trained on bin codes stores raw thresholds: predicting raw rows gives what
    the same model with code thresholds gives on the rows' codes. The codes of codes are
    the codes, so a classifier fitted on the codes grows the same DAGs, and its code
    thresholds route the (training and unseen) rows' codes as the raw thresholds route
    the raw rows."""
    from jungleseg.features._bins import quantise

    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(1500, 6)), 3)
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + 2 * (X[:, 2] * X[:, 3] > 0.1)
    train, test = np.arange(1000), np.arange(1000, 1500)
    raw = JungleClassifier(4, max_width=16, max_bins=64, random_state=0).fit(X[train],
                                                                            y[train])
    codes = quantise(X.astype(np.float32), raw.bin_cuts_)
    on_codes = JungleClassifier(4, max_width=16, max_bins=64, random_state=0).fit(
        codes[train], y[train])
    for a, b in zip(raw.jungle_.dags, on_codes.jungle_.dags):
        np.testing.assert_array_equal(a.left, b.left)
        np.testing.assert_array_equal(a.feature_params, b.feature_params)
    for rows in (train, test):
        np.testing.assert_array_equal(raw.predict_proba(X[rows]),
                                      on_codes.predict_proba(codes[rows]))
