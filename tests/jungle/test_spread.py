"""The spread of split nodes' training responses (soft routing's temperature scale)."""
import numpy as np

from jungleseg.features import DepthFeatures, Samples
from jungleseg.features import _kernels as K
from jungleseg.jungle._grow import group_by_node, route
from jungleseg.jungle._spread import node_spread


def test_the_spread_is_the_weighted_standard_deviation_of_each_nodes_responses():
    rng = np.random.default_rng(1)
    entry_node = rng.integers(0, 3, 120)
    response = rng.normal(size=120).astype(np.float32)
    response[rng.random(120) < 0.2] = np.nan  # left out of the spread
    weight = rng.integers(1, 5, 120)
    order, start = group_by_node(entry_node, 3)
    spread = node_spread(order, start, np.array([2, 0]), response, weight)
    for q, node in enumerate((2, 0)):
        mine = (entry_node == node) & ~np.isnan(response)
        r = response[mine].astype(np.float64)
        mean = np.average(r, weights=weight[mine])
        want = np.sqrt(np.average((r - mean) ** 2, weights=weight[mine]))
        np.testing.assert_allclose(spread[q], want, rtol=1e-5)


def test_a_depth_spread_counts_the_responses_in_its_thresholds_regime():
    # a body 2-2.3 m away on a background of 0: probes from its pixels land on and off it
    depth = np.zeros((20, 30), np.float32)
    depth[4:16, 8:22] = np.linspace(2.0, 2.3, 14, dtype=np.float32)[None, :]
    store = DepthFeatures(max_offset=0.5, focal_length=100.0).prepare([depth]).as_tuple()
    rows, cols = (a.ravel().astype(np.int32) for a in np.mgrid[4:16, 8:22])
    n = rows.size
    samples = Samples(np.zeros(n, np.int32), rows, cols)
    params = np.float32([[0, 20, 0, -10]])  # 10 and 5 pixels right and left at 2 m
    v = np.array([K.response(K.KIND_DEPTH, params[0], store, 0, r, c)
                  for r, c in zip(rows, cols)], np.float32)
    regime = (v >= K.DEPTH_FAR / 2).astype(int) - (v <= -K.DEPTH_FAR / 2)  # which probe is off
    assert set(regime) == {-1, 0, 1}
    # node 0 parts on-body differences at 0; node 1 parts the second probe's depth at 97.8
    entry_node = np.repeat([0, 1], n)
    new, response = route(entry_node, np.arange(2), np.tile(np.arange(n), 2),
                          samples.image, samples.row, samples.col, store, False,
                          np.array([K.KIND_DEPTH] * 2, np.uint8), np.repeat(params, 2, 0),
                          np.float32([0.0, 97.8]), np.array([1, 3]), np.array([2, 4]), 1)
    np.testing.assert_array_equal(new, np.r_[np.where(v < 0, 1, 2), np.where(v < 97.8, 3, 4)])
    in_regime = np.r_[regime == 0, regime == 1]
    np.testing.assert_array_equal(np.isnan(response), ~in_regime)
    np.testing.assert_array_equal(response[in_regime], np.r_[v, v][in_regime])
    order, start = group_by_node(entry_node, 2)
    spread = node_spread(order, start, np.array([0, 1]), response, np.ones(2 * n, np.int64))
    for node, mine in enumerate((regime == 0, regime == 1)):
        np.testing.assert_allclose(spread[node], v[mine].astype(np.float64).std(), rtol=1e-5)
    assert np.all(spread < 1)  # centimetres to decimetres, not the ~50 m of all responses
