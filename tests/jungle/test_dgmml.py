"""dGMML proposals against plain NumPy: the closed-form weight, the class-extreme threshold,
and whole proposals of small nodes on a tabular store."""
import numpy as np
import pytest

from jungleseg import JungleClassifier
from jungleseg.features import TabularFeatures
from jungleseg.jungle._criterion import ENTROPY, hist_cost, make_phi_table
from jungleseg.jungle._dgmml import dgmml_splits, gmml_threshold, gmml_weights
from jungleseg.jungle._grow import group_by_node


def weight_reference(x, y, w):
    """sqrt(between-class / within-class scatter) of one feature, weighted."""
    mean = np.average(x, weights=w)
    between = within = 0.0
    for c in np.unique(y):
        m = y == c
        mc = np.average(x[m], weights=w[m])
        between += w[m].sum() * (mc - mean) ** 2
        within += np.sum(w[m] * (x[m] - mc) ** 2)
    if between == 0:
        return 0.0
    return np.inf if within == 0 else np.sqrt(between / within)


def threshold_reference(x, y):
    """The class-extreme midpoint, snapped, in plain NumPy (two groups split at the
    largest gap between sorted class means)."""
    classes = np.unique(y)
    means = np.array([x[y == c].mean() for c in classes])
    order = np.argsort(means, kind="mergesort")
    cut = int(np.argmax(np.diff(means[order])))
    high = np.isin(y, classes[order[cut + 1:]])
    upper, lower = np.sort(x[high]), np.sort(x[~high])
    low_end = upper[:5].mean() if upper.size > 10 else upper[0]
    high_end = lower[-6:].mean() if lower.size > 10 else lower[-1]
    tau = (low_end + high_end) / 2
    s = np.sort(x)
    i = int(np.argmin(np.abs(s - tau)))
    while i + 1 < s.size and s[i + 1] == s[i]:
        i += 1
    return np.nan if i + 1 >= s.size else (s[i] + s[i + 1]) / 2


def test_weights_match_the_reference_and_handle_degenerate_features():
    rng = np.random.default_rng(0)
    for _ in range(30):
        n, k, c = int(rng.integers(4, 40)), int(rng.integers(1, 5)), int(rng.integers(2, 4))
        y = rng.integers(0, c, n)
        x = rng.normal(size=(n, k)) + y[:, None] * rng.normal(size=k)
        w = rng.integers(1, 4, n)
        got = gmml_weights(x, y, w, c)
        for j in range(k):
            assert got[j] == pytest.approx(weight_reference(x[:, j], y, w), rel=1e-9)
    y = np.array([0, 0, 1, 1])
    x = np.array([[5.0, 1.0, 0.1], [5.0, 1.0, 0.2], [5.0, 2.0, 0.3], [5.0, 2.0, 0.0]])
    np.testing.assert_array_equal(gmml_weights(x, y, np.ones(4, np.int64), 2)[:2], [0, np.inf])


@pytest.mark.parametrize("n_classes", [2, 3, 4])
def test_threshold_matches_the_reference(n_classes):
    rng = np.random.default_rng(n_classes)
    for _ in range(40):
        n = int(rng.integers(3, 60))
        y = rng.integers(0, n_classes, n)
        if np.unique(y).size < 2:
            continue
        x = np.round(rng.normal(size=n), 1) + 1.5 * y + 0.37 * y ** 2  # ties happen
        got, want = gmml_threshold(x, y, n_classes), threshold_reference(x, y)
        assert (np.isnan(got) and np.isnan(want)) or got == pytest.approx(want, abs=1e-12)


def test_proposals_of_small_nodes_match_the_reference():
    rng = np.random.default_rng(5)
    n, n_features, n_classes = 90, 4, 3
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    y = rng.integers(0, n_classes, n)
    X[:, 2] += 2 * y  # the informative column
    store, samples = TabularFeatures(n_features).prepare(X)
    node = np.repeat([0, 1, 2], 30)
    order, start = group_by_node(node, 3)
    weight = np.ones(n, np.int64)
    kinds = np.zeros((3, n_features), np.uint8)
    params = np.tile(np.arange(n_features, dtype=np.float32)[:, None], (3, 1))
    P = np.stack([np.bincount(y[node == i], minlength=n_classes) for i in range(3)])
    phi = make_phi_table(n, ENTROPY)
    k, tau, left, wl, cost = dgmml_splits(
        np.arange(3), order, start, np.arange(n), weight, samples.image, samples.row,
        samples.col, y.astype(np.int32), store.as_tuple(), False, kinds, params,
        np.full(3, n_features), P, 1, phi, ENTROPY)
    for i in range(3):
        xi, yi = X[node == i].astype(np.float64), y[node == i]
        ws = [weight_reference(xi[:, j], yi, np.ones(30)) for j in range(n_features)]
        assert k[i] == int(np.argmax(ws)) == 2
        assert tau[i] == np.float32(threshold_reference(xi[:, k[i]], yi))
        want = np.bincount(yi[xi[:, k[i]] < tau[i]], minlength=n_classes)
        np.testing.assert_array_equal(left[i], want)
        assert wl[i] == want.sum()
        assert cost[i] == pytest.approx(hist_cost(want, phi, ENTROPY)
                                        + hist_cost(P[i] - want, phi, ENTROPY))


def test_dgmml_jungles_are_deterministic_and_learn():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] + 0.5 * X[:, 3] > 0).astype(int) + (X[:, 1] > 1)
    fits = [JungleClassifier(4, max_width=8, criterion="dgmml", random_state=0).fit(X, y)
            for _ in range(2)]
    assert fits[0].predict_proba(X).tobytes() == fits[1].predict_proba(X).tobytes()
    assert fits[0].score(X, y) > 0.9
    assert fits[0].jungle_.params["criterion"] == "dgmml"
