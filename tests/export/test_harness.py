"""The command-line program around an export (:mod:`jungleseg.export._harness`)."""
from __future__ import annotations

import numpy as np

from jungleseg import JungleClassifier
from jungleseg.export import export_c
from jungleseg.export._harness import build_harness, harness_source, run_harness

from .conftest import NEEDS_GCC


def test_harness_source_calls_the_kind_s_functions():
    assert "tiny_predict_proba(" in harness_source("tiny", "tabular")
    depth = harness_source("tiny", "depth")
    assert "tiny_segment_depth_proba(" in depth and "NAME" not in depth
    colour = harness_source("tiny", "colour")
    assert "tiny_segment(" in colour and "tiny_segment_depth" not in colour


@NEEDS_GCC
def test_harness_labels_and_times_equal_python(rows, tmp_path):
    X, y = rows
    clf = JungleClassifier(n_estimators=2, max_width=4, max_depth=5, random_state=0).fit(X, y)
    export_c(clf, tmp_path, name="tiny")
    program = build_harness(tmp_path, "tiny", "tabular")
    labels, proba, seconds = run_harness(program, X[:50], 4, np.float32, "tabular", repeat=3)
    np.testing.assert_array_equal(clf.classes_[labels], clf.predict(X[:50]))
    np.testing.assert_allclose(proba, clf.predict_proba(X[:50]), atol=1e-6, rtol=0)
    assert seconds is not None and seconds >= 0
