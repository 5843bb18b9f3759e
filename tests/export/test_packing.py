"""Tabular nodes as a bit stream (:mod:`jungleseg.export._packing`): every field reads
back from the stream, and the stream is smaller than byte-wide tables."""
from __future__ import annotations

import numpy as np
import pytest

from jungleseg import JungleClassifier
from jungleseg.export._harness import run_harness
from jungleseg.export._layout import build_layout
from jungleseg.export._packing import bits_for, pack_layout, pack_nodes

from .conftest import NEEDS_GCC, built, proba_dtype


def read_field(stream: np.ndarray, at: int, width: int) -> int:
    """What the C runtime's ``_field`` reads: ``width`` bits at bit ``at``."""
    assert at // 8 + 4 <= len(stream)  # the C read stays inside the stream
    word = int.from_bytes(stream[at // 8: at // 8 + 4].tobytes(), "little")
    return (word >> (at % 8)) & ((1 << width) - 1)


def test_bits_for():
    assert [bits_for(v) for v in (0, 1, 2, 255, 256)] == [1, 1, 2, 8, 9]


@pytest.mark.parametrize("variant", ["float", "quantised"])
def test_every_node_reads_back_from_the_stream(rows, variant):
    X, y = rows
    clf = JungleClassifier(n_estimators=3, max_width=8, max_depth=7, random_state=0).fit(X, y)
    layout = build_layout(clf.jungle_, variant)
    packed = pack_nodes(layout)
    counts = np.diff(layout.level_first)
    assert np.array_equal(packed.level_count, counts)
    cb, tb = packed.column_bits, packed.threshold_bits
    _, nibbles = packed.tables()["level_child_bits"]  # two levels a byte, as C reads them
    np.testing.assert_array_equal([(nibbles[k >> 1] >> (4 * (k & 1))) & 15
                                   for k in range(len(counts))], packed.level_child_bits)
    node = 0
    for dag in range(layout.n_dags):
        at = int(packed.dag_bit[dag])
        level = int(layout.dag_level[dag])
        while True:
            child = int(packed.level_child_bits[level])
            for _ in range(counts[level]):
                assert read_field(packed.stream, at, cb) == layout.feature[node]
                t = read_field(packed.stream, at + cb, tb)
                if variant == "float":
                    assert packed.threshold_value[t] == np.float32(layout.threshold[node])
                else:
                    assert t - packed.threshold_bias == layout.threshold[node]
                assert read_field(packed.stream, at + cb + tb, child) == layout.left[node]
                assert read_field(packed.stream, at + cb + tb + child, child) == \
                    layout.right[node]
                at += cb + tb + 2 * child
                node += 1
            level += 1
            if counts[level - 1] == 0:
                break
    assert node == layout.n_split


def test_packed_tables_are_smaller_than_byte_wide_ones(rows):
    X, y = rows
    clf = JungleClassifier(n_estimators=4, max_width=16, random_state=0).fit(X, y)
    for variant in ("float", "quantised"):
        packed = pack_layout(clf.jungle_, variant)
        assert packed.packed is not None
        assert packed.table_bytes() < build_layout(clf.jungle_, variant).table_bytes()
        assert "left" not in packed.tables() and "nodes" in packed.tables()


@NEEDS_GCC
@pytest.mark.parametrize("style", ["tables", "inline"])
@pytest.mark.parametrize("variant", ["float", "quantised"])
def test_a_model_without_split_nodes_builds_and_predicts(rows, tmp_path, variant, style):
    """One class, or max_depth 0: every DAG is its root leaf, and the float tables have no
    threshold to list; the source still compiles with -Werror and predicts as Python."""
    X, y = rows
    for k, (depth, labels) in enumerate([(None, np.full(len(y), 7)), (0, y)]):
        clf = JungleClassifier(n_estimators=2, max_depth=depth, random_state=0).fit(X, labels)
        assert clf.node_count_ == 2
        _, program = built(clf, tmp_path / str(k), variant, "tabular", style=style)
        found, _, _ = run_harness(program, X[:20], len(clf.classes_),
                                  proba_dtype(variant, 2), "tabular")
        np.testing.assert_array_equal(clf.classes_[found], clf.predict(X[:20]))
