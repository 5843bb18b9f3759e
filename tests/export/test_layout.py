"""The tables a model is packed into (:mod:`jungleseg.export._layout`)."""
from __future__ import annotations

import numpy as np
import pytest

from jungleseg import JungleClassifier
from jungleseg.export._layout import ExportError, build_layout, c_float, c_int_type, type_bytes


def test_c_int_type_is_the_narrowest_that_holds_the_range():
    assert c_int_type(0, 255) == "uint8_t"
    assert c_int_type(-1, 127) == "int8_t"
    assert c_int_type(0, 256) == "uint16_t"
    assert c_int_type(-32769, 0) == "int32_t"
    with pytest.raises(ExportError, match="do not fit in 32 bits"):
        c_int_type(0, 1 << 32)


@pytest.mark.parametrize("x", [0.1, -0.0, 3.0, 1e-40, 16777217.0, -2.5e30, 1 / 3])
def test_c_float_reads_back_bit_for_bit(x):
    text = c_float(x)
    assert text.endswith("f")
    back = np.float32(float.fromhex(text[:-1]) if "x" in text else float(text[:-1]))
    assert back.view(np.uint32) == np.float32(x).view(np.uint32)


@pytest.mark.parametrize("variant", ["float", "quantised"])
def test_layout_codes_reach_every_node_and_leaf(rows, variant):
    X, y = rows
    clf = JungleClassifier(n_estimators=2, max_width=4, max_depth=6, random_state=0).fit(X, y)
    layout = build_layout(clf.jungle_, variant)
    assert layout.level_first[-1] == layout.n_split
    assert len(layout.dag_level) == layout.n_dags == 2
    counts = np.diff(layout.level_first)
    # a child code of a node on level l: a split node of level l + 1, or a leaf row
    level_of = np.repeat(np.arange(len(counts)), counts)
    for codes in (layout.left, layout.right):
        below = counts[np.minimum(level_of + 1, len(counts) - 1)]
        below[level_of + 1 >= len(counts)] = 0
        assert np.all(codes < below + layout.n_leaves)
    reached = np.concatenate([layout.left[layout.left >= below] - below[layout.left >= below],
                              layout.right[layout.right >= below]
                              - below[layout.right >= below]])
    assert set(reached.tolist()) == set(range(layout.n_leaves))  # no leaf row unused
    assert layout.table_bytes() == sum(np.asarray(v).size * type_bytes(t)
                                       for t, v in layout.tables().values())


def test_quantised_thresholds_sharing_their_last_bits_are_divided_exactly():
    # whole numbers with every value present: every cut, so every threshold, is k + 0.5
    rng = np.random.default_rng(2)
    X = rng.integers(0, 200, size=(3000, 3)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 2 * X[:, 2]).astype(int) + (X[:, 0] > 120)
    clf = JungleClassifier(n_estimators=2, max_width=16, random_state=0).fit(X, y)
    float_layout = build_layout(clf.jungle_, "float")
    layout = build_layout(clf.jungle_, "quantised")
    quant = layout.quant
    assert np.all(quant["step"] == 1)  # half-integers at shift 1 share their last bit
    assert np.ptp(layout.threshold) < 256  # halved: 8 bits instead of 9
    # the C reading, floor((floor(x * 2^shift) - offset) / 2^step) < q, on and off the grid
    x = np.concatenate([np.arange(-3, 203, 0.25), rng.uniform(-5, 205, 500)])
    for node in range(layout.n_split):
        j = layout.feature[node]
        code = np.floor((np.floor(np.ldexp(x, int(quant["shift"][j]))) - quant["offset"][j])
                        / 2 ** int(quant["step"][j]))
        np.testing.assert_array_equal(code < layout.threshold[node],
                                      x < float_layout.threshold[node])


def test_class_values_must_be_integers_of_32_bits(rows):
    """String classes are refused naming them; whole-number float classes (labels read as
    floats) export as their integers, as they do through a model file."""
    X, y = rows
    names = np.array(["cat", "dog", "eel", "fox", "gnu"])[y % 5]
    clf = JungleClassifier(n_estimators=1, max_width=4, max_depth=3, random_state=0)
    with pytest.raises(ExportError, match="this model's are 'cat', 'dog', 'eel', ...: fit on"):
        build_layout(clf.fit(X, names).jungle_, "float")
    layout = build_layout(clf.fit(X, y * 2.0).jungle_, "float")
    assert layout.classes.dtype == np.int64
    assert layout.classes.tolist() == (np.unique(y) * 2).tolist()
    with pytest.raises(ExportError, match="32 bits at most; this model's are"):
        build_layout(clf.fit(X, y + (1 << 31)).jungle_, "float")
