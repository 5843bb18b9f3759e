"""Split tables of tabular training on uint8 codes (:mod:`jungleseg.jungle._histogram`)
against the plain reference loop of ``test_tables``."""
import numpy as np
import pytest

from jungleseg.features import Samples, TabularFeatures
from jungleseg.jungle._criterion import make_phi_table
from jungleseg.jungle._histogram import code_tables

from .test_tables import random_level, reference_tables


@pytest.mark.parametrize("keep_table", [False, True])
@pytest.mark.parametrize("n_thresholds", [3, 6, 40])
def test_code_tables_equal_the_reference_loop(keep_table, n_thresholds):
    """Tabular training on uint8 codes counts its tables from code histograms
    (:mod:`._histogram`): the same thresholds, left histograms, costs and best splits as
    the reference loop, which draws thresholds from the sorted responses and tests
    ``code < threshold`` for each; nodes above and below the subsample size, weighted
    entries, a constant column, more thresholds than the codes have gaps."""
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 12, (300, 7)).astype(np.uint8)
    codes[:, 2] = rng.integers(0, 256, 300)  # every code up to 255
    codes[:, 3] = 5  # constant: no thresholds
    family = TabularFeatures(7)
    store, samples = family.prepare(codes)
    assert store.pixels.dtype == np.uint8
    samples = Samples(samples.image, samples.row, samples.col,
                      rng.integers(0, 3, 300).astype(np.int32))
    level = random_level(store, samples, family, 2, 5, 5, seed=7, weights=True)
    nodes, order, start, entry_sample, entry_weight, kinds, params, n_drawn, dags, \
        positions, P = level
    phi_table = make_phi_table(int(entry_weight.sum()), 0)
    n_sub = 64
    sizes = np.diff(start)[nodes]
    assert sizes.max() > n_sub > sizes.min()
    want = reference_tables(nodes, order, start, entry_sample, entry_weight, samples,
                            store.as_tuple(), kinds, params, n_drawn, 11, dags, positions, 3,
                            n_thresholds, n_sub, P, 2, phi_table, 0)
    got = code_tables(nodes, order, start, entry_sample, entry_weight, samples.row,
                      samples.label, store.pixels.reshape(7, -1), params, n_drawn, 11, dags,
                      positions, 3, n_thresholds, n_sub, P, keep_table, 2, phi_table, 0)
    np.testing.assert_array_equal(got[0], want[0])
    for g, w, what in zip(got[4:], want[4:], ("best threshold", "cost")):
        np.testing.assert_array_equal(g, w, err_msg=what)
    if keep_table:
        for g, w, what in zip(got[1:4], want[1:4], ("table", "left weights", "costs")):
            np.testing.assert_array_equal(g, w, err_msg=what)
    else:
        assert got[1].shape[0] == 0
    assert np.isfinite(got[5]).any()
