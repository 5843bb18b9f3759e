"""Split tables against a plain reference loop over samples, candidates and thresholds."""
import numpy as np
import pytest

from jungleseg.features import ColourFeatures
from jungleseg.features import _kernels as K
from jungleseg.jungle._criterion import ENTROPY, make_phi_table
from jungleseg.jungle._grow import draw_all, group_by_node
from jungleseg.jungle._tables import THRESHOLD_SUBSAMPLE, best_threshold, split_tables


@pytest.mark.parametrize("unclamped", [False, True])
def test_left_histograms_count_exactly_the_samples_below_each_threshold(unclamped):
    rng = np.random.default_rng(4)
    family = ColourFeatures(max_offset=5, kinds=["value", "difference", "absdiff"],
                            input="channels", n_channels=2)
    images = [rng.normal(size=(14, 17, 2)).astype(np.float32),
              rng.normal(size=(9, 11, 2)).astype(np.float32)]
    store = family.prepare(images, pad=5 if unclamped else 0).as_tuple()
    n = 260
    image = rng.integers(0, 2, n).astype(np.int32)
    row = np.where(image == 0, rng.integers(0, 14, n), rng.integers(0, 9, n)).astype(np.int32)
    col = np.where(image == 0, rng.integers(0, 17, n), rng.integers(0, 11, n)).astype(np.int32)
    label = rng.integers(0, 3, n).astype(np.int32)
    entry_node = rng.integers(0, 3, n)
    weight = rng.integers(1, 3, n)
    order, start = group_by_node(entry_node, 3)
    nodes = np.arange(3)
    dags, positions = np.zeros(3, np.int64), np.arange(3)
    kinds, params, n_drawn = draw_all(family.spec(), 9, dags, positions, 2, 6, family.n_params)
    P = np.stack([np.bincount(label[entry_node == i], weights=weight[entry_node == i],
                              minlength=3) for i in range(3)]).astype(np.int64)
    phi = make_phi_table(int(weight.sum()), ENTROPY)
    thresholds, table, wl, tree_cost, cand_t, cand_cost = split_tables(
        nodes, order, start, np.arange(n), weight, image, row, col, label, store, unclamped,
        kinds, params, n_drawn, 9, dags, positions, 2, 8, THRESHOLD_SUBSAMPLE, P, True, 1, phi,
        ENTROPY)
    assert np.isfinite(thresholds).sum() > 100  # most candidates got thresholds
    for i in range(3):
        mine = np.flatnonzero(entry_node == i)
        for k in range(6):
            values = np.array([K.response(kinds[i, k], params[i, k], store, image[e], row[e],
                                          col[e]) for e in mine])
            for t, thr in enumerate(thresholds[i, k]):
                if np.isnan(thr):
                    assert not table[i, k, t].any()
                    continue
                left = values < thr
                expected = np.bincount(label[mine[left]], weights=weight[mine[left]],
                                       minlength=3)
                np.testing.assert_array_equal(table[i, k, t], expected)
                assert wl[i, k, t] == weight[mine[left]].sum()
            best, cost = best_threshold(table[i, k].astype(np.int64), wl[i, k], P[i], 1, phi,
                                        ENTROPY, np.empty(8))
            assert (best, cost) == (cand_t[i, k], cand_cost[i, k]) or np.isnan(thresholds[i, k, 0])
