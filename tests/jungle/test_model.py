"""The Jungle model: counts, names, summary, validation, probe reach."""
from dataclasses import replace

import numpy as np
import pytest

from jungleseg import ColourFeatures, Jungle, JungleClassifier, JungleSegmenter, ModelError
from jungleseg.datasets.faces import render_faces
from jungleseg.jungle._model import checked_jungle, integer_classes


@pytest.fixture(scope="module")
def tabular():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = (X[:, 0] > 0).astype(int) * 3 + 1
    return JungleClassifier(n_estimators=3, max_width=4, max_depth=5, random_state=0).fit(X, y)


def test_counts_add_up_over_dags(tabular):
    jungle = tabular.jungle_
    assert jungle.node_count == sum(d.n_nodes for d in jungle.dags) == tabular.node_count_
    assert jungle.nbytes == sum(d.nbytes for d in jungle.dags)
    assert jungle.max_feature_evaluations == jungle.max_depth * 3
    assert jungle.n_classes == 2 and jungle.class_names == ["1", "4"]


def test_summary_names_the_classes_and_leaves_names_out_of_the_metadata(tabular):
    jungle = replace(tabular.jungle_, metadata={"class_names": {"1": "one"}, "seed": 5})
    summary = jungle.summary()
    assert summary["classes"] == {"1": "one", "4": "4"}
    assert summary["metadata"] == {"seed": 5} and summary["dags"] == 3
    assert summary["features"] == {"name": "tabular", "n_columns": 5}


def test_validation_names_the_dag_and_the_problem(tabular):
    jungle = tabular.jungle_
    jungle.validate()
    with pytest.raises(ModelError, match="at least one DAG"):
        replace(jungle, dags=[]).validate()
    bad = replace(jungle.dags[1], feature_params=jungle.dags[1].feature_params + 7)
    with pytest.raises(ModelError, match="DAG 1: column indices"):
        replace(jungle, dags=[jungle.dags[0], bad]).validate()


def test_point_reach_is_the_longest_probe_within_the_family_reach():
    images, labels = render_faces(2, seed=0, size=(40, 50))
    seg = JungleSegmenter(ColourFeatures(max_offset=6, kinds=("value", "difference")),
                          n_estimators=2, max_depth=5, samples_per_image=200,
                          random_state=0).fit(images, labels)
    jungle = seg.jungle_
    longest = max(np.abs(d.feature_params[d.left >= 0, :4]).max() for d in jungle.dags)
    assert jungle.point_reach == longest <= 6
    boxes = JungleSegmenter(ColourFeatures(max_offset=6), n_estimators=1, max_depth=4,
                            samples_per_image=200, random_state=0).fit(images, labels)
    assert boxes.jungle_.point_reach is None  # box kinds: no fixed single-pixel reach
    assert isinstance(jungle, Jungle)


@pytest.mark.parametrize("classes, expected", [
    (np.array([0.0, 2.0, 7.0]), [0, 2, 7]),        # labels read from a CSV file as floats
    (np.array([False, True]), [0, 1]),
    (np.array([3, 1 << 40], np.uint64), [3, 1 << 40]),
    (np.array(["a", "b"]), None),
    (np.array(["a", 1], dtype=object), None),
    (np.array([0.5, 1.0]), None),
    (np.array([2.0 ** 64]), None),
    (np.array([1 << 63], np.uint64), None),
])
def test_integer_classes_holds_whole_numbers_only(classes, expected):
    values = integer_classes(classes)
    if expected is None:
        assert values is None
    else:
        assert values.dtype == np.int64 and values.tolist() == expected


def test_checked_jungle_names_the_estimator_given_instead_of_its_model(tabular):
    assert checked_jungle(tabular.jungle_, "f") is tabular.jungle_
    with pytest.raises(TypeError, match=r"f takes a model .* JungleClassifier: pass its jungle_"):
        checked_jungle(tabular, "f")
    with pytest.raises(TypeError, match="fitted estimator's jungle_, or a model from load_model"):
        checked_jungle(JungleClassifier(), "f")
