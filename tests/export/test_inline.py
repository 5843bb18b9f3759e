"""Tabular models as code (:mod:`jungleseg.export._inline`): one comparison per split
node, gotos for shared nodes, returns for leaves."""
from __future__ import annotations

import numpy as np

from jungleseg import JungleClassifier
from jungleseg.export._inline import dag_function, inline_walk
from jungleseg.export._packing import pack_layout


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
