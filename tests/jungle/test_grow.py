"""Level growth's steps: grouping entries by node, node histograms, routing."""
import numpy as np

from jungleseg.features import ColourFeatures, Samples
from jungleseg.features import _kernels as K
from jungleseg.jungle._grow import group_by_node, node_histograms, route


def test_grouping_is_a_stable_counting_sort_without_retired_entries():
    entry_node = np.array([2, 0, -1, 2, 1, 0, -1, 2])
    order, start = group_by_node(entry_node, 3)
    np.testing.assert_array_equal(start, [0, 2, 3, 6])
    np.testing.assert_array_equal(order, [1, 5, 4, 0, 3, 7])  # entries in order within a node


def test_node_histograms_count_entry_weights_per_class():
    rng = np.random.default_rng(0)
    entry_node = rng.integers(-1, 4, 200)
    entry_sample = rng.integers(0, 50, 200)
    entry_weight = rng.integers(1, 4, 200)
    label = rng.integers(0, 3, 50).astype(np.int32)
    order, start = group_by_node(entry_node, 4)
    hist = node_histograms(order, start, entry_sample, entry_weight, label, 3)
    for node in range(4):
        mine = entry_node == node
        expected = np.bincount(label[entry_sample[mine]], weights=entry_weight[mine], minlength=3)
        np.testing.assert_array_equal(hist[node], expected)


def test_route_sends_an_entry_left_exactly_when_its_response_is_below_the_threshold():
    rng = np.random.default_rng(1)
    image = rng.normal(size=(10, 12, 2)).astype(np.float32)
    family = ColourFeatures(max_offset=3, kinds=["difference"], input="channels", n_channels=2)
    store = family.prepare([image]).as_tuple()
    rows, cols = np.divmod(np.arange(120), 12)
    samples = Samples(np.zeros(120, np.int32), rows.astype(np.int32), cols.astype(np.int32))
    entry_node = np.repeat([0, 1], 60)
    params = np.float32([[1, -1, 0, 2, 0, 1, 0, 0], [-2, 0, 1, 1, 1, 1, 0, 0]])
    kind = np.array([K.KIND_DIFF, K.KIND_DIFF], np.uint8)
    threshold = np.float32([0.1, -0.3])
    new, response = route(entry_node, np.arange(2), np.arange(120), samples.image,
                          samples.row, samples.col, store, False, kind, params, threshold,
                          np.array([10, 30]), np.array([20, 40]), 1)
    for e in range(120):
        node = entry_node[e]
        v = K.response(K.KIND_DIFF, params[node], store, 0, rows[e], cols[e])
        assert response[e] == np.float32(v)
        assert new[e] == ((10, 30)[node] if v < threshold[node] else (20, 40)[node])
