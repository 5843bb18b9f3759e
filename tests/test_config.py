"""YAML run configurations: shipped files, validation errors, overrides, estimators."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from jungleseg import ColourFeatures, DepthFeatures, JungleClassifier, JungleSegmenter
from jungleseg.config import Config, ConfigError, load_config

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
SHIPPED = ("stanford", "kinect", "faces", "fasseg", "uci", "napari")

MINIMAL = {"features": {"family": "colour"}}


def write(tmp_path: Path, data, name: str = "run.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def raises_naming(path_or_source, key: str):
    """pytest.raises for a ConfigError whose message names the source and the dotted key."""
    return pytest.raises(ConfigError, match=rf"{re.escape(str(path_or_source))}.*"
                                            rf"(?<![\w.]){re.escape(key)}(?![\w.])")


@pytest.mark.parametrize("preset, changes, feature_changes", [
    ("fasseg_context", {"auto_context": 2, "soft": 0.05, "soft_epsilon": 0.03}, {}),
    ("stanford_context", {"auto_context": 2, "guided_eps": 0.01, "prior_power": 0.3},
     {"orientation": True}),
])
def test_context_presets_are_their_benchmark_config_with_only_these_changes(
        preset, changes, feature_changes):
    dataset = preset.removesuffix("_context")
    base = load_config(CONFIGS / f"{dataset}.yaml").estimator().get_params(deep=False)
    config = load_config(CONFIGS / f"{preset}.yaml")
    assert config.dataset == dataset and config.seed == 0
    params = config.estimator().get_params(deep=False)
    expected = {**changes, **({"features": base["features"].with_params(**feature_changes)}
                              if feature_changes else {})}
    assert {k: params[k] for k in params if params[k] != base[k]} == expected


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_config_loads_and_builds(name):
    path = CONFIGS / f"{name}.yaml"
    assert path.read_text().startswith("# ")
    config = load_config(path)
    assert config.dataset == name and config.seed == 0
    estimator = config.estimator()
    if name == "uci":
        assert isinstance(estimator, JungleClassifier)
        assert estimator.n_candidate_features == "sqrt" and estimator.max_depth is None
        with pytest.raises(ConfigError, match="features"):
            config.features()
    else:
        assert isinstance(estimator, JungleSegmenter)
        family = DepthFeatures if name == "kinect" else ColourFeatures
        assert isinstance(estimator.features, family)
    assert estimator.random_state == 0


def test_config_values_reach_the_estimator():
    seg = load_config(CONFIGS / "stanford.yaml").estimator()
    assert seg.features == ColourFeatures(
        max_offset=80, kinds=("value", "difference", "absdiff"), box_filters=(1, 3, 7, 15),
        input="rgb", gradient=True, smoothing_scales=(1, 2, 4), position=True)
    params = seg.get_params(deep=False)
    expected = dict(n_estimators=3, max_width=256, schedule="doubling", max_depth=26,
                    n_candidate_features=100, n_thresholds=16, min_samples_leaf=5, smoothing=6,
                    sampling="random", samples_per_image=1000, ignore=(255,))
    assert {key: params[key] for key in expected} == expected
    kinect = load_config(CONFIGS / "kinect.yaml").estimator()
    assert kinect.features == DepthFeatures(max_offset=0.45, focal_length=285.63)
    assert (kinect.schedule, kinect.images_per_dag, kinect.ignore) == ("kinect", 1000, (0, 255))
    assert (kinect.n_estimators, kinect.n_candidate_features, kinect.smoothing) == (9, 200, 3)
    assert kinect.prior_power == 0.75


def test_keys_left_out_take_the_estimator_defaults():
    config = Config.from_dict(MINIMAL)
    assert config.estimator().get_params(deep=False) == {
        **JungleSegmenter().get_params(deep=False), "features": ColourFeatures()}
    tabular = Config.from_dict({"dataset": "uci"}).estimator()
    assert tabular.get_params() == JungleClassifier().get_params()


@pytest.mark.parametrize("data, key", [
    ({**MINIMAL, "jungel": {}}, "jungel"),
    ({**MINIMAL, "jungle": {"max_widht": 64}}, "jungle.max_widht"),
    ({"features": {"family": "colour", "focal_length": 200.0}}, "features.focal_length"),
    ({"features": {"family": "depth", "kinds": ["value"]}}, "features.kinds"),
    ({**MINIMAL, "sampling": {"per_image": 10}}, "sampling.per_image"),
])
def test_unknown_key(tmp_path, data, key):
    path = write(tmp_path, data)
    with raises_naming(path, key) as error:
        load_config(path)
    assert "unknown key" in str(error.value)


@pytest.mark.parametrize("data, key", [
    ({**MINIMAL, "jungle": {"n_estimators": "3"}}, "jungle.n_estimators"),
    ({**MINIMAL, "jungle": {"max_depth": 2.5}}, "jungle.max_depth"),
    ({**MINIMAL, "jungle": {"max_width": True}}, "jungle.max_width"),
    ({**MINIMAL, "seed": False}, "seed"),
    ({**MINIMAL, "sampling": {"ignore": [True]}}, "sampling.ignore"),
    ({**MINIMAL, "sampling": {"ignore": 255}}, "sampling.ignore"),
    ({"features": {"family": "colour", "position": 1}}, "features.position"),
    ({"features": {"family": "depth", "max_offset": True}}, "features.max_offset"),
    ({"features": {"family": "depth", "focal_length": "285"}}, "features.focal_length"),
    ({"features": ["colour"]}, "features"),
    ({**MINIMAL, "jungle": [3]}, "jungle"),
])
def test_wrong_type(tmp_path, data, key):
    path = write(tmp_path, data)
    with raises_naming(path, key) as error:
        load_config(path)
    assert "expected" in str(error.value) or ("must be" in str(error.value)
                                              and "got" in str(error.value))


@pytest.mark.parametrize("key", ["n_estimators", "max_width", "max_depth", "n_thresholds",
                                 "n_candidate_features", "min_samples_split"])
def test_bool_is_not_an_int(tmp_path, key):
    path = write(tmp_path, {**MINIMAL, "jungle": {key: True}})
    with raises_naming(path, f"jungle.{key}") as error:
        load_config(path)
    assert "got bool True" in str(error.value)


@pytest.mark.parametrize("data, key", [
    ({**MINIMAL, "jungle": {"n_estimators": 0}}, "jungle.n_estimators"),
    ({**MINIMAL, "jungle": {"max_width": 1}}, "jungle.max_width"),
    ({**MINIMAL, "jungle": {"max_depth": -1}}, "jungle.max_depth"),
    ({**MINIMAL, "jungle": {"min_samples_split": 1}}, "jungle.min_samples_split"),
    ({**MINIMAL, "jungle": {"lsearch_steps": -5}}, "jungle.lsearch_steps"),
    ({**MINIMAL, "jungle": {"max_nodes": 0}}, "jungle.max_nodes"),
    ({**MINIMAL, "sampling": {"samples_per_image": 0}}, "sampling.samples_per_image"),
    ({**MINIMAL, "sampling": {"ignore": [0, 65536]}}, "sampling.ignore"),
    ({**MINIMAL, "seed": -1}, "seed"),
    ({"features": {"family": "colour", "max_offset": -2}}, "features.max_offset"),
    ({"features": {"family": "colour", "smoothing_scales": [1.0, 0]}},
     "features.smoothing_scales"),
    ({"features": {"family": "depth", "max_offset": 0}}, "features.max_offset"),
    ({"features": {"family": "depth", "focal_length": float("nan")}}, "features.focal_length"),
])
def test_out_of_range(tmp_path, data, key):
    path = write(tmp_path, data)
    with raises_naming(path, key) as error:
        load_config(path)
    assert "must be" in str(error.value)


@pytest.mark.parametrize("data, key", [
    ({**MINIMAL, "dataset": "cityscapes"}, "dataset"),
    ({"features": {"family": "hog"}}, "features.family"),
    ({"features": {"family": "colour", "input": "hsv"}}, "features.input"),
    ({"features": {"family": "colour", "kinds": ["value", "ratio"]}}, "features.kinds"),
    ({**MINIMAL, "jungle": {"schedule": "halving"}}, "jungle.schedule"),
    ({**MINIMAL, "jungle": {"criterion": "log_loss"}}, "jungle.criterion"),
    ({**MINIMAL, "jungle": {"search": "exhaustive"}}, "jungle.search"),
    ({**MINIMAL, "jungle": {"growth": "bushy"}}, "jungle.growth"),
    ({**MINIMAL, "sampling": {"strategy": "stratified"}}, "sampling.strategy"),
])
def test_bad_choice(tmp_path, data, key):
    path = write(tmp_path, data)
    with raises_naming(path, key) as error:
        load_config(path)
    assert "one of" in str(error.value)


@pytest.mark.parametrize("data, key", [
    ({}, "features"),
    ({"features": {"max_offset": 3}}, "features.family"),
    ({"features": {"family": "colour", "input": "channels"}}, "features.n_channels"),
    ({"features": {"family": "colour", "n_channels": 4}}, "features.n_channels"),
    ({"features": {"family": "colour", "kinds": []}}, "features.kinds"),
    ({"features": {"family": "colour", "kinds": ["value", "value"]}}, "features.kinds"),
    ({**MINIMAL, "jungle": {"n_candidate_features": "sqrt"}}, "jungle.n_candidate_features"),
    ({"dataset": "uci", **MINIMAL}, "features"),
    ({"dataset": "uci", "sampling": {"strategy": "all"}}, "sampling"),
])
def test_inconsistent_sections(tmp_path, data, key):
    path = write(tmp_path, data)
    with raises_naming(path, key):
        load_config(path)


def test_from_dict_names_its_source_and_rejects_non_mappings(tmp_path):
    with raises_naming("bench run", "jungle.max_width"):
        Config.from_dict({**MINIMAL, "jungle": {"max_width": 0}}, source="bench run")
    with pytest.raises(ConfigError, match="<dict>: expected a mapping"):
        Config.from_dict(["features"])
    path = tmp_path / "broken.yaml"
    path.write_text("jungle: [unclosed\n")
    with pytest.raises(ConfigError, match=re.escape(str(path))):
        load_config(path)


def test_overrides_apply_and_are_validated():
    base = load_config(CONFIGS / "stanford.yaml")
    new = base.with_overrides({"jungle.max_width": 128, "seed": 3,
                               "features.kinds": ["value", "box_value"],
                               "jungle.lsearch_steps": 10})
    assert new.jungle_params["max_width"] == 128 and new.seed == 3
    assert new.feature_params["kinds"] == ("value", "box_value")
    seg = new.estimator()
    assert (seg.max_width, seg.random_state, seg.lsearch_steps) == (128, 3, 10)
    assert base.jungle_params["max_width"] == 256 and base.seed == 0  # unchanged
    forest = base.with_overrides({"jungle.max_width": None})
    assert forest.estimator().max_width is None
    napari = load_config(CONFIGS / "napari.yaml")
    assert napari.with_overrides({"features.input": "grey"}).features().input == "grey"
    source = CONFIGS / "stanford.yaml"
    with raises_naming(source, "jungle.max_width"):
        base.with_overrides({"jungle.max_width": True})
    with raises_naming(source, "jungle.schedule"):
        base.with_overrides({"jungle.schedule": "linear"})


@pytest.mark.parametrize("key", ["jungle.max_widht", "jungel.max_width", "colour",
                                 "jungle.max_width.value", "seed.value"])
def test_bad_override_key(key):
    config = load_config(CONFIGS / "stanford.yaml")
    with raises_naming(CONFIGS / "stanford.yaml", key):
        config.with_overrides({key: 1})


@pytest.mark.parametrize("name", SHIPPED)
def test_to_dict_round_trip(name, tmp_path):
    config = load_config(CONFIGS / f"{name}.yaml")
    data = config.to_dict()
    assert data == yaml.safe_load((CONFIGS / f"{name}.yaml").read_text())
    assert Config.from_dict(data) == config
    assert load_config(write(tmp_path, data)) == config


def test_napari_config_fits_scribbles():
    config = load_config(CONFIGS / "napari.yaml")
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (32, 32), dtype=np.uint8)  # grey, as the preset says
    image[:, 16:] //= 4  # a dark right half
    scribbles = np.zeros((32, 32), np.uint8)  # 0: not painted, ignored
    scribbles[4:28, 3:6] = 1
    scribbles[4:28, 25:28] = 2
    seg = config.estimator()
    seg.fit([image], [scribbles])
    assert seg.n_samples_ == int((scribbles > 0).sum())  # fewer painted than the cap: all
    labels = seg.predict(image)
    assert labels.shape == (32, 32) and set(np.unique(labels)) <= {1, 2}
    assert np.all(labels[scribbles > 0] == scribbles[scribbles > 0])


def test_the_parameters_page_is_generated_from_the_declarations():
    from jungleseg.config import parameter_table

    page = (Path(__file__).resolve().parents[1] / "docs" / "parameters.md").read_text()
    assert page == parameter_table(), ("docs/parameters.md is stale: regenerate it with "
                                       "jungleseg.config.parameter_table()")
    assert "| `max_width` | an int in the range [2, 1048576] or None | `256` |" in page


def test_a_new_parameter_reaches_the_schema_from_its_declaration(monkeypatch):
    from jungleseg._validation import Integral, Interval
    from jungleseg.config import jungle_schema

    constraints = {**JungleSegmenter._parameter_constraints,
                   "probe_budget": [Interval(Integral, 1, None, closed="left")]}
    monkeypatch.setattr(JungleSegmenter, "_parameter_constraints", constraints)
    assert "probe_budget" in jungle_schema(False)
    with pytest.raises(ConfigError, match=r"jungle\.probe_budget: must be an int"):
        Config.from_dict({**MINIMAL, "jungle": {"probe_budget": 0}})


def test_presets_are_read_once_per_change_of_their_file():
    from jungleseg.config import load_preset, preset_paths

    assert load_preset("napari") is load_preset("napari")
    assert {"napari", "stanford", "kinect", "demo", "uci"} <= set(preset_paths())
    with pytest.raises(ValueError, match="unknown preset"):
        load_preset("nonsense")


@pytest.mark.parametrize("jungle", [{"search": "clustersearch"},
                                    {"search": "clustersearch-alternating"},
                                    {"growth": "fixed-width-a"}, {"growth": "fixed-width-b"},
                                    {"growth": "priority", "max_nodes": 500}])
def test_searches_and_growths_are_config_keys(jungle):
    config = load_config(CONFIGS / "faces.yaml").with_overrides(
        {f"jungle.{key}": value for key, value in jungle.items()})
    model = config.estimator()
    assert {key: getattr(model, key) for key in jungle} == jungle
    tabular = Config.from_dict({"dataset": "uci", "jungle": jungle}).estimator()
    assert {key: getattr(tabular, key) for key in jungle} == jungle

