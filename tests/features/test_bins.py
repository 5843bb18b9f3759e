"""Quantile bins of tabular columns: codes that round-trip, rise with the value, and split
as the raw thresholds they map back to."""
import numpy as np

from jungleseg.features import _bins
from jungleseg.features._bins import fit_cuts, quantise, raw_thresholds


def test_few_distinct_values_get_a_bin_each_and_quantise_without_loss():
    rng = np.random.default_rng(0)
    distinct = np.float32([-3.5, -1.0, 0.0, 0.25, 7.0, 1e6])
    X = rng.choice(distinct, size=(500, 2)).astype(np.float32)
    cuts = fit_cuts(X, 256, seed=0)
    codes = quantise(X, cuts)
    assert codes.dtype == np.uint8
    for j in range(2):
        present = np.unique(X[:, j])
        assert cuts[j].size == present.size - 1
        # the round trip: a code gives back its value
        np.testing.assert_array_equal(present[codes[:, j]], X[:, j])


def test_many_values_fall_in_their_bin_and_bins_hold_about_equal_counts():
    rng = np.random.default_rng(1)
    X = rng.lognormal(size=(20000, 1)).astype(np.float32)
    cuts = fit_cuts(X, 64, seed=0)
    codes = quantise(X, cuts)[:, 0].astype(np.int64)
    assert cuts[0].size == 63 and np.all(np.diff(cuts[0]) > 0)
    edges = np.concatenate([[-np.inf], cuts[0], [np.inf]])
    assert np.all(edges[codes] <= X[:, 0]) and np.all(X[:, 0] < edges[codes + 1])
    counts = np.bincount(codes, minlength=64)
    assert counts.min() > 0.8 * 20000 / 64 and counts.max() < 1.2 * 20000 / 64


def test_a_heavy_value_gets_a_bin_of_its_own():
    X = np.concatenate([np.zeros(5000), np.arange(1, 5001)]).astype(np.float32)[:, None]
    cuts = fit_cuts(X, 16, seed=0)[0]
    assert cuts[0] == 0.5  # zero alone in bin 0
    assert cuts.size <= 15


def test_codes_are_monotone_in_the_value():
    rng = np.random.default_rng(2)
    X = np.concatenate([rng.normal(size=3000), rng.integers(0, 5, 3000)]).astype(np.float32)
    cuts = fit_cuts(X[:, None], 256, seed=0)
    order = np.argsort(X, kind="stable")
    codes = quantise(X[order, None], cuts)[:, 0]
    assert np.all(np.diff(codes.astype(np.int64)) >= 0)
    # unseen values too, and distinct codes only for distinct values
    probe = np.sort(rng.uniform(-6, 6, 5000).astype(np.float32))
    assert np.all(np.diff(quantise(probe[:, None], cuts)[:, 0].astype(np.int64)) >= 0)


def test_cuts_come_from_a_subsample_of_large_columns(monkeypatch):
    monkeypatch.setattr(_bins, "BIN_SUBSAMPLE", 1000)
    X = np.arange(5000, dtype=np.float32)[:, None]
    a, b = fit_cuts(X, 8, seed=0)[0], fit_cuts(X, 8, seed=1)[0]
    assert a.size == b.size == 7 and not np.array_equal(a, b)
    np.testing.assert_array_equal(a, fit_cuts(X, 8, seed=0)[0])


def test_a_code_threshold_splits_as_its_raw_threshold():
    """``code < t`` and ``value < raw_thresholds(t)`` send the same rows left, on values
    seen when the cuts were made and on others."""
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(4000, 3)), 2).astype(np.float32)
    cuts = fit_cuts(X[:2000], 32, seed=0)
    codes = quantise(X, cuts)
    for column in range(3):
        n_bins = cuts[column].size + 1
        t = np.concatenate([rng.uniform(0, n_bins - 1, 50), np.arange(n_bins + 1)]).astype(
            np.float32)
        raw = raw_thresholds(t, np.full(t.size, column), cuts)
        assert np.all(np.isfinite(raw))
        for code_t, raw_t in zip(t, raw):
            np.testing.assert_array_equal(codes[:, column] < code_t, X[:, column] < raw_t)
