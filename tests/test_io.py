"""Model files: round trip, corrupt and hostile files, atomic saves."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from jungleseg import (
    ColourFeatures,
    JungleClassifier,
    JungleSegmenter,
    ModelError,
    ModelFileError,
    load_model,
    save_model,
)
from jungleseg.datasets.faces import render_faces
from jungleseg.io import DIGEST_ATTRIBUTES, FORMAT_VERSION, PLAIN_VERSION, content_digest
from jungleseg.jungle._dag import _DTYPES
from jungleseg.segmentation import segment

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def segmenter():
    images, labels = render_faces(4, seed=0, size=(48, 64))
    return JungleSegmenter(ColourFeatures(max_offset=8, max_box=2), n_estimators=2,
                           max_width=8, max_depth=6, n_candidate_features=10,
                           samples_per_image=200, random_state=0).fit(images[:3], labels[:3])


@pytest.fixture
def model_file(segmenter, tmp_path):
    return save_model(segmenter.jungle_, tmp_path / "model.h5")


def test_round_trip_is_bit_identical(segmenter, model_file):
    images, _ = render_faces(4, seed=0, size=(48, 64))
    loaded = load_model(model_file)
    family = loaded.family
    before = segmenter.jungle_.predict_image(family.prepare([images[3]]))
    after = loaded.predict_image(family.prepare([images[3]]))
    assert before.tobytes() == after.tobytes()
    assert loaded.family == segmenter.jungle_.family
    np.testing.assert_array_equal(loaded.classes, segmenter.classes_)
    assert loaded.params["max_width"] == 8
    assert loaded.metadata["seed"] == segmenter.jungle_.metadata["seed"]
    assert len(loaded.metadata["data_fingerprint"]) == 16


def test_round_trip_keeps_spreads_and_soft_routing(segmenter, model_file):
    images, _ = render_faces(4, seed=0, size=(48, 64))
    loaded = load_model(model_file)
    for a, b in zip(loaded.dags, segmenter.jungle_.dags):
        assert a.spread.tobytes() == b.spread.tobytes()
    assert any(d.spread.max() > 0 for d in loaded.dags)
    before = segment(segmenter.jungle_, images[3], soft=0.5, soft_epsilon=1e-3)[1]
    after = segment(loaded, images[3], soft=0.5, soft_epsilon=1e-3)[1]
    assert before.tobytes() == after.tobytes()
    assert before.tobytes() != segment(loaded, images[3])[1].tobytes()


def test_files_without_spreads_route_hard_only():
    loaded = load_model(DATA / "model_format1.h5")
    assert not loaded.can_route_softly
    with pytest.raises(ValueError, match="no per-node response spread"):
        loaded.soft_routing(0.5)
    assert loaded.soft_routing(0.0) == (0.0, 0.0)


def test_round_trip_keeps_class_shares_and_prior_power(segmenter, model_file):
    images, _ = render_faces(4, seed=0, size=(48, 64))
    loaded = load_model(model_file)
    assert loaded.metadata["class_shares"] == segmenter.jungle_.metadata["class_shares"]
    before = segment(segmenter.jungle_, images[3], prior_power=0.7)[0]
    after = segment(loaded, images[3], prior_power=0.7)[0]
    np.testing.assert_array_equal(before, after)  # (class values come back as int64)
    assert not np.array_equal(before, segment(loaded, images[3])[0])


def test_files_without_class_shares_label_by_probability_only():
    loaded = load_model(DATA / "model_format1.h5")
    assert "class_shares" not in loaded.metadata
    with pytest.raises(ValueError, match="no training class shares"):
        loaded.label_weights(0.5)
    np.testing.assert_array_equal(loaded.label_weights(0.0), 1)


@pytest.mark.parametrize("kw", [dict(max_width=4), dict(max_width=4, search="clustersearch"),
                                dict(max_width=4, growth="fixed-width-a"),
                                dict(max_width=4, growth="fixed-width-b"),
                                dict(max_width=4, growth="priority", max_nodes=41)])
def test_tabular_round_trip(tmp_path, kw):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    clf = JungleClassifier(3, random_state=0, **kw).fit(X, y)
    loaded = load_model(save_model(clf.jungle_, tmp_path / "t.h5"))
    store, samples = loaded.family.prepare(X)
    assert loaded.predict_proba(store, samples).tobytes() == clf.predict_proba(X).tobytes()
    summary = loaded.summary()
    assert summary["nodes"] == clf.node_count_ and summary["bytes"] == clf.model_bytes_
    assert {key: summary["training"][key] for key in kw} == kw


def test_saving_string_classes_is_refused_naming_them(tmp_path):
    """A model file holds integer class values: a classifier fitted on strings is refused
    with the classes and the remedy, and no file is written."""
    X = np.arange(40, dtype=float).reshape(20, 2)
    y = np.where(X[:, 0] > 19, "virginica", "setosa")
    clf = JungleClassifier(2, max_width=4, random_state=0).fit(X, y)
    with pytest.raises(ModelError, match="'setosa', 'virginica': fit on integer labels"):
        save_model(clf.jungle_, tmp_path / "s.h5")
    assert not (tmp_path / "s.h5").exists()
    whole = JungleClassifier(2, max_width=4, random_state=0).fit(X, (X[:, 0] > 19) * 2.0)
    assert load_model(save_model(whole.jungle_, tmp_path / "f.h5")).classes.tolist() == [0, 2]


def test_saving_the_estimator_itself_says_to_pass_its_jungle(segmenter, tmp_path):
    with pytest.raises(TypeError, match="got a JungleSegmenter: pass its jungle_"):
        save_model(segmenter, tmp_path / "m.h5")


def test_binned_tabular_files_store_raw_thresholds(tmp_path):
    """A jungle trained on bin codes is saved with raw thresholds (values where bins part):
    the file needs no bins, and the loaded model predicts raw rows as the fitted one."""
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(300, 4)), 1).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    clf = JungleClassifier(3, max_width=4, max_bins=8, random_state=0).fit(X, y)
    path = save_model(clf.jungle_, tmp_path / "binned.h5")
    with h5py.File(path, "r") as f:
        assert f.attrs["format_version"] == PLAIN_VERSION
        for g in f["dags"]:
            dag = f["dags"][g]
            split = dag["left"][()] >= 0
            for column, threshold in zip(dag["feature_params"][()][split, 0],
                                         dag["threshold"][()][split]):
                assert threshold in clf.bin_cuts_[int(column)]
    loaded = load_model(path)
    store, samples = loaded.family.prepare(X)
    assert loaded.predict_proba(store, samples).tobytes() == clf.predict_proba(X).tobytes()


def _restamp(f):
    """Recompute the content checksum after an edit, as a forger would, so that the
    validation behind the checksum is what meets the edit."""
    if not set(DIGEST_ATTRIBUTES) <= set(f.attrs) or "classes" not in f or "dags" not in f:
        return
    arrays = [("/classes", f["classes"][()])]
    for g in sorted(f["dags"], key=int):
        arrays += [(f"/dags/{g}/{name}", f["dags"][g][name][()])
                   for name in (*_DTYPES, "spread") if name in f["dags"][g]]
    f.attrs["sha256"] = content_digest({k: f.attrs[k] for k in DIGEST_ATTRIBUTES}, arrays)


def _edit(path, action, restamp=True):
    with h5py.File(path, "r+") as f:
        action(f)
        if restamp:
            _restamp(f)


def _replace(f, name, data):
    del f[name]
    f.create_dataset(name, data=data)


CORRUPTIONS = {
    "child index out of range": lambda f: _replace(
        f, "dags/0/left", np.where(f["dags/0/left"][()] >= 0, 10**6, f["dags/0/left"][()])),
    "negative leaf index beyond the leaves": lambda f: _replace(
        f, "dags/0/left", np.where(f["dags/0/left"][()] < 0, -(10**6), f["dags/0/left"][()])),
    "wrong dtype": lambda f: _replace(f, "dags/0/threshold",
                                      f["dags/0/threshold"][()].astype(np.float64)),
    "NaN thresholds": lambda f: _replace(
        f, "dags/0/threshold", np.full_like(f["dags/0/threshold"][()], np.nan)),
    "negative spread": lambda f: _replace(
        f, "dags/0/spread", -np.ones_like(f["dags/0/spread"][()])),
    "NaN spread": lambda f: _replace(
        f, "dags/0/spread", np.full_like(f["dags/0/spread"][()], np.nan)),
    "spread of the wrong dtype": lambda f: _replace(
        f, "dags/0/spread", f["dags/0/spread"][()].astype(np.float64)),
    "spread of the wrong length": lambda f: _replace(
        f, "dags/0/spread", f["dags/0/spread"][()][:-1].copy()),
    "soft factor negative": lambda f: f.attrs.__setitem__(
        "training", json.dumps({**json.loads(f.attrs["training"]), "soft": -1})),
    "soft_epsilon not below 1": lambda f: f.attrs.__setitem__(
        "training", json.dumps({**json.loads(f.attrs["training"]), "soft_epsilon": 1.0})),
    "prior_power above 1": lambda f: f.attrs.__setitem__(
        "training", json.dumps({**json.loads(f.attrs["training"]), "prior_power": 2})),
    "class shares of the wrong length": lambda f: f.attrs.__setitem__("metadata", json.dumps(
        {**json.loads(f.attrs["metadata"]), "class_shares": [1.0]})),
    "a class share of 0": lambda f: f.attrs.__setitem__("metadata", json.dumps(
        {**json.loads(f.attrs["metadata"]), "class_shares": [1.0, 0.0]})),
    "class shares not numbers": lambda f: f.attrs.__setitem__("metadata", json.dumps(
        {**json.loads(f.attrs["metadata"]), "class_shares": ["a", "b"]})),
    "missing group (a gap in the DAG numbers)": lambda f: f.__delitem__("dags/0"),
    "missing dags": lambda f: f.__delitem__("dags"),
    "missing dataset": lambda f: f.__delitem__("dags/0/leaf_value"),
    "newer format version": lambda f: f.attrs.__setitem__("format_version", 99),
    "other format": lambda f: f.attrs.__setitem__("format", "something-else"),
    "bad JSON": lambda f: f.attrs.__setitem__("features", "{not json"),
    "unknown family": lambda f: f.attrs.__setitem__("features", json.dumps({"name": "x"})),
    "channel index out of range": lambda f: _replace(
        f, "dags/0/feature_params", np.full_like(f["dags/0/feature_params"][()], 99)),
    "negative box size": lambda f: _replace(
        f, "dags/0/feature_params",
        np.concatenate([f["dags/0/feature_params"][()][:, :6],
                        -np.ones_like(f["dags/0/feature_params"][()][:, 6:])], axis=1)),
    "leaf values not a distribution": lambda f: _replace(
        f, "dags/0/leaf_value", f["dags/0/leaf_value"][()] * 3),
    "level structure broken": lambda f: _replace(
        f, "dags/0/level_start", f["dags/0/level_start"][()][::-1].copy()),
    "classes not integers": lambda f: _replace(f, "classes", np.array([0.5, 1.5])),
    "class count mismatch": lambda f: _replace(f, "classes", np.arange(3)),
    "smoothing not a whole number": lambda f: f.attrs.__setitem__(
        "training", json.dumps({**json.loads(f.attrs["training"]), "smoothing": -3})),
    "background not a label": lambda f: f.attrs.__setitem__(
        "training", json.dumps({**json.loads(f.attrs["training"]), "background": "sky"})),
    "guided_eps negative": lambda f: f.attrs.__setitem__(
        "training", json.dumps({**json.loads(f.attrs["training"]), "guided_eps": -0.1})),
    "guided smoothing without a guide scale": lambda f: (
        f.attrs.__setitem__("training", json.dumps(
            {**json.loads(f.attrs["training"]), "guided_eps": 0.1})),
        f.attrs.__setitem__("metadata", json.dumps(
            {**json.loads(f.attrs["metadata"]), "guide": [0.5, 0.0]}))),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corrupt_and_hostile_files_give_the_clear_error(model_file, name):
    _edit(model_file, CORRUPTIONS[name])
    with pytest.raises(ModelFileError, match=str(model_file)) as error:
        load_model(model_file)
    assert "checksum" not in str(error.value)  # the validation behind it caught this


@pytest.mark.parametrize("edit", [
    lambda f: f.attrs.__setitem__("training", json.dumps(
        {**json.loads(f.attrs["training"]), "smoothing": 6})),
    lambda f: f.attrs.__setitem__("metadata", json.dumps(
        {**json.loads(f.attrs["metadata"]), "class_names": {"0": "sky"}})),
    lambda f: f["dags/1/threshold"].write_direct(f["dags/1/threshold"][()] + np.float32(1)),
    lambda f: f.attrs.__setitem__("library_version", "0.0.0"),
])
def test_any_edit_breaks_the_content_checksum(model_file, edit):
    _edit(model_file, edit, restamp=False)
    with pytest.raises(ModelFileError, match="checksum"):
        load_model(model_file)


def test_every_dataset_has_a_fletcher32_checksum(model_file):
    with h5py.File(model_file, "r") as f:
        datasets = []
        f.visititems(lambda name, obj: datasets.append(obj)
                     if isinstance(obj, h5py.Dataset) else None)
        assert f.attrs["format_version"] == FORMAT_VERSION == 4  # quantised channels: 4
        assert len(datasets) == 1 + 2 * (len(_DTYPES) + 1)  # with each DAG's spread
        assert all(ds.fletcher32 for ds in datasets)


def test_files_are_written_with_the_umask(segmenter, tmp_path):
    previous = os.umask(0o022)
    try:
        assert (save_model(segmenter.jungle_, tmp_path / "a.h5").stat().st_mode & 0o777
                == 0o644)
        os.umask(0o077)
        assert (save_model(segmenter.jungle_, tmp_path / "b.h5").stat().st_mode & 0o777
                == 0o600)
    finally:
        os.umask(previous)


def test_format_1_files_still_load_and_segment_the_same():
    """tests/data/model_format1.h5 was written by the format-1 writer (before checksums)."""
    with h5py.File(DATA / "model_format1.h5", "r") as f:
        assert f.attrs["format_version"] == 1 and "sha256" not in f.attrs
    jungle = load_model(DATA / "model_format1.h5")
    expected = np.load(DATA / "model_format1_expected.npz")
    labels, proba = segment(jungle, expected["image"])
    np.testing.assert_array_equal(labels, expected["labels"])
    assert proba.tobytes() == expected["proba"].tobytes()
    assert jungle.class_names[1] == "skin" and jungle.params["smoothing"] == 2


def test_a_folder_is_not_a_model_file(tmp_path):
    with pytest.raises(ModelFileError, match="is a folder"):
        load_model(tmp_path)


def test_truncated_and_foreign_files(model_file, tmp_path):
    data = model_file.read_bytes()
    for cut in (10, len(data) // 3, len(data) - 100):
        truncated = tmp_path / f"cut{cut}.h5"
        truncated.write_bytes(data[:cut])
        with pytest.raises(ModelFileError):
            load_model(truncated)
    text = tmp_path / "notes.h5"
    text.write_text("not HDF5 at all")
    with pytest.raises(ModelFileError, match="unreadable"):
        load_model(text)
    with pytest.raises(ModelFileError, match="no such"):
        load_model(tmp_path / "missing.h5")


def test_failed_save_keeps_the_previous_file(segmenter, model_file, monkeypatch):
    good = model_file.read_bytes()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_model(segmenter.jungle_, model_file)
    assert model_file.read_bytes() == good
    assert [p.name for p in model_file.parent.iterdir()] == [model_file.name]


_SLOW_SAVE = """
import sys, time, h5py
from jungleseg import load_model, save_model
jungle = load_model(sys.argv[1])
create = h5py.Group.create_dataset
def slow(self, *args, **kwargs):
    time.sleep(0.2)
    return create(self, *args, **kwargs)
h5py.Group.create_dataset = slow
print("saving", flush=True)
save_model(jungle, sys.argv[1])
"""


def test_killing_a_save_midway_leaves_the_previous_model_intact(model_file):
    good = model_file.read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_SAVE, str(model_file)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "saving"
    deadline = time.time() + 60
    while not list(model_file.parent.glob(".model.h5.*.tmp")) and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # a few datasets into the temporary file
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert list(model_file.parent.glob(".model.h5.*.tmp"))  # killed mid-write
    assert model_file.read_bytes() == good
    load_model(model_file)


@pytest.mark.parametrize("name", ["model_format2_colour", "model_format3_context"])
def test_float32_store_models_still_load_and_segment_the_same(name):
    """Models of float32 channel stores (tests/data/make_float32_fixtures.py, run with the
    code before quantised stores) segment as they did then, bit for bit."""
    jungle = load_model(DATA / f"{name}.h5")
    expected = np.load(DATA / f"{name}_expected.npz")
    labels, proba = segment(jungle, expected["image"])
    np.testing.assert_array_equal(labels, expected["labels"])
    assert proba.tobytes() == expected["proba"].tobytes()
