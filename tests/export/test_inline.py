"""Tabular models as code (:mod:`jungleseg.export._inline`): one comparison per split
node, gotos for shared nodes, returns for leaves."""
from __future__ import annotations

import numpy as np
import pytest

from jungleseg import JungleClassifier
from jungleseg.export._harness import run_harness
from jungleseg.export._inline import dag_function, float_keys, inline_walk
from jungleseg.export._layout import column_codes
from jungleseg.export._packing import pack_layout

from .conftest import NEEDS_GCC, built, proba_dtype


def test_every_split_node_is_one_comparison_and_shared_nodes_are_written_once(rows):
    X, y = rows
    clf = JungleClassifier(n_estimators=2, max_width=4, max_depth=8, random_state=0).fit(X, y)
    layout = pack_layout(clf.jungle_, "float", style="inline")
    assert layout.inline and layout.packed is None
    assert set(layout.tables()) <= {"leaf", "leaf_single", "label_weight", "CLASSES"}  # no nodes
    texts = [dag_function(layout, "m", g) for g in range(2)]
    assert sum(t.count("if (x[") for t in texts) == layout.n_split
    # width 4 merges nodes: some label is the target of more than one goto
    targets = [line.strip() for t in texts for line in t.splitlines() if "goto" in line]
    assert len(targets) > len(set(targets))
    assert all(len(t.splitlines()) > 3 for t in texts)
    walk = inline_walk(layout, "m")
    assert "leaf[0] = m_dag0(x);" in walk and "leaf[1] = m_dag1(x);" in walk
    quantised = pack_layout(clf.jungle_, "quantised", style="inline")
    assert "const int16_t *x" in dag_function(quantised, "m", 0)
    assert np.all(np.asarray(quantised.threshold) == np.round(quantised.threshold))


def test_rows_of_one_nonzero_value_are_marked(rows):
    X, y = rows
    clf = JungleClassifier(n_estimators=2, max_width=4, max_depth=3, random_state=0).fit(X, y)
    layout = pack_layout(clf.jungle_, "float", style="inline")
    _, single = layout.tables()["leaf_single"]
    for row, c in zip(layout.leaves, single):
        if c < layout.n_classes:
            assert np.count_nonzero(row) == 1 and row[c] != 0
        else:
            assert np.count_nonzero(row) > 1


def test_float_keys_order_as_the_floats_compare():
    values = np.array([-np.inf, -3.5, -1e-45, -0.0, 0.0, 1e-45, 1e-38, 0.5, 7.5, np.inf],
                      np.float32)
    keys = float_keys(values)
    for a, ka in zip(values, keys):
        for b, kb in zip(values, keys):
            assert (a < b) == (ka < kb)


@NEEDS_GCC
@pytest.mark.parametrize("variant", ["float", "quantised"])
@pytest.mark.parametrize("prior_power", [0.0, 1.0])
def test_pure_leaves_vote_and_match_python(rows, tmp_path, variant, prior_power):
    X, y = rows
    # grown to the end, every leaf holds one class
    clf = JungleClassifier(n_estimators=3, max_width=16, prior_power=prior_power,
                           random_state=0).fit(X[:400], y[:400])
    layout = pack_layout(clf.jungle_, variant, style="inline")
    assert layout.leaf_classes() is not None and "leaf" not in layout.tables()
    _, program = built(clf, tmp_path, variant, "tabular", style="inline")
    text = (tmp_path / variant / "jungle.c").read_text()
    assert ("votes[jungle_dag0(x)]++" in text) == (prior_power == 0)  # weighed labels sum
    rng = np.random.default_rng(2)
    inputs = np.concatenate([X[400:], rng.normal(size=(200, 5)).astype(np.float32) * 20])
    labels, proba, _ = run_harness(program, inputs, 4, proba_dtype(variant, 3), "tabular")
    expected = clf.jungle_.label_indices(clf.predict_proba(inputs), axis=1)
    if variant == "float":
        np.testing.assert_array_equal(labels, expected)
        np.testing.assert_array_equal(proba, clf.predict_proba(inputs))
    else:
        assert np.mean(labels != expected) <= 0.01
        assert np.abs(proba / (255.0 * 3) - clf.predict_proba(inputs)).max() < 0.01


@NEEDS_GCC
def test_keys_send_every_float_as_a_float_comparison_does(rows, tmp_path):
    """Zeros of both signs, subnormals, infinities and NaN: the inline code (integer keys)
    labels them as the table code (float comparisons) does."""
    X, y = rows
    clf = JungleClassifier(n_estimators=3, max_width=8, max_depth=8,
                           random_state=0).fit(X[:400], y[:400])
    special = np.array([0.0, -0.0, 1e-45, -1e-45, np.inf, -np.inf, np.nan, -np.nan, 1.0],
                       np.float32)
    rng = np.random.default_rng(3)
    inputs = np.concatenate([rng.choice(special, size=(300, 5)),
                             np.where(rng.random((300, 5)) < 0.3, np.nan, X[:300])]
                            ).astype(np.float32)
    inputs[300:, 0] = -np.nan  # a NaN with its sign bit set
    got = {}
    for style in ("tables", "inline"):
        _, program = built(clf, tmp_path / style, "float", "tabular", style=style)
        got[style] = run_harness(program, inputs, 4, np.float32, "tabular")[:2]
    np.testing.assert_array_equal(got["inline"][0], got["tables"][0])
    np.testing.assert_array_equal(got["inline"][1], got["tables"][1])
    finite = np.isfinite(inputs).all(axis=1)
    np.testing.assert_array_equal(got["inline"][0][finite], clf.jungle_.label_indices(
        clf.predict_proba(inputs[finite]), axis=1))


@NEEDS_GCC
@pytest.mark.parametrize("variant", ["float", "quantised"])
def test_dags_that_are_one_leaf_build_warning_free(rows, tmp_path, variant):
    X, y = rows
    clf = JungleClassifier(n_estimators=2, max_width=4, max_depth=0, random_state=0).fit(X, y)
    _, program = built(clf, tmp_path, variant, "tabular", style="inline")  # -Werror
    labels, _, _ = run_harness(program, X[:20], 4, proba_dtype(variant, 2), "tabular")
    np.testing.assert_array_equal(labels, clf.jungle_.label_indices(
        clf.predict_proba(X[:20]), axis=1))


@NEEDS_GCC
@pytest.mark.parametrize("negative", [False, True])  # codes from 0 up (truncation), or below
def test_column_codes_send_every_float_as_a_float_comparison_does(rows, tmp_path, negative):
    """Columns of halves (thresholds: quarters): the float variant compares small codes (short
    immediates), and labels every value, special ones and the floats next to each
    threshold too, as the table code (float comparisons) and Python do."""
    X, y = rows
    X = np.round(X * 2) / 2 - np.float32(20) if negative else np.round(np.abs(X) * 2) / 2
    clf = JungleClassifier(n_estimators=3, max_width=8, max_depth=8,
                           random_state=0).fit(X[:400], y[:400])
    layout = pack_layout(clf.jungle_, "float", style="inline")
    codes = column_codes(layout)
    assert codes is not None and set(codes["shift"][np.unique(layout.feature)]) <= {1, 2}
    text = dag_function(layout, "m", 0)
    constants = [int(line.split()[-2].rstrip(")")) for line in text.splitlines()
                 if "if (x[" in line]
    assert max(abs(c) for c in constants) < 256  # quarters over about 80: within 160
    t = np.asarray(layout.threshold, np.float32)
    near = np.concatenate([t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf)])
    special = np.array([0.0, -0.0, 1e-45, -1e-45, np.inf, -np.inf, np.nan, 3e38, -3e38],
                       np.float32)
    rng = np.random.default_rng(4)
    inputs = np.concatenate([rng.choice(np.concatenate([near, special]), size=(400, 5)),
                             X[400:]]).astype(np.float32)
    got = {}
    for style in ("tables", "inline"):
        _, program = built(clf, tmp_path / style, "float", "tabular", style=style)
        got[style] = run_harness(program, inputs, 4, np.float32, "tabular")[:2]
    source = (tmp_path / "inline" / "float" / "jungle.c").read_text()
    assert "jungle_code_scale" in source
    assert ("the floor of a negative y" in source) == negative == (codes["low"].min() < 0)
    np.testing.assert_array_equal(got["inline"][0], got["tables"][0])
    np.testing.assert_array_equal(got["inline"][1], got["tables"][1])
    finite = np.isfinite(inputs).all(axis=1)
    np.testing.assert_array_equal(got["inline"][0][finite], clf.jungle_.label_indices(
        clf.predict_proba(inputs[finite]), axis=1))


def test_thresholds_of_many_significant_bits_keep_float_keys(rows):
    X, y = rows
    clf = JungleClassifier(n_estimators=2, max_width=4, max_depth=6, random_state=0).fit(
        X * np.float32(np.pi) * 1e3, y)
    layout = pack_layout(clf.jungle_, "float", style="inline")
    assert column_codes(layout) is None and "code_scale" not in layout.tables()
    assert column_codes(pack_layout(clf.jungle_, "quantised", style="inline")) is None
