"""Fuzzing model files: damaged copies of a real model either fail to load with
ModelFileError or load a model whose outputs equal the original's; never a traceback,
a crash or a silently different result. The loads run in a subprocess, so that a crash
(a signal) is caught as a failure rather than ending the test run."""
import json
import subprocess
import sys

import h5py
import numpy as np
import pytest

from jungleseg import ColourFeatures, JungleSegmenter, save_model
from jungleseg.datasets.faces import render_faces
from jungleseg.io import DIGEST_ATTRIBUTES, content_digest
from jungleseg.jungle._dag import _DTYPES

_LOADER = """
import sys
import numpy as np
from jungleseg import ModelFileError, load_model, segment
original = load_model(sys.argv[1])
image = np.load(sys.argv[2])
want_labels, want_proba = segment(original, image)
for path in sys.argv[3:]:
    try:
        jungle = load_model(path)
    except ModelFileError as err:
        print("error", str(err).splitlines()[0].replace(" ", "_"), flush=True)
        continue
    except BaseException as err:
        print("traceback", type(err).__name__, flush=True)
        continue
    try:
        labels, proba = segment(jungle, image)
        same = (labels.tobytes() == want_labels.tobytes()
                and proba.tobytes() == want_proba.tobytes()
                and jungle.summary() == original.summary())
        print("same" if same else "different", path, flush=True)
    except BaseException as err:
        print("traceback-segment", type(err).__name__, flush=True)
"""


@pytest.fixture(scope="module")
def real_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    images, labels = render_faces(5, seed=4, size=(40, 56))
    seg = JungleSegmenter(ColourFeatures(max_offset=6, max_box=2), n_estimators=3, max_width=8,
                          max_depth=5, n_candidate_features=10, samples_per_image=200,
                          smoothing=2, guided_eps=0.1, random_state=0).fit(images[:4], labels[:4])
    seg.jungle_.metadata.update(class_names={str(c): f"class {c}" for c in seg.classes_})
    np.save(folder / "image.npy", images[4])
    return folder, save_model(seg.jungle_, folder / "model.h5")


def _load_all(folder, model, paths):
    proc = subprocess.run([sys.executable, "-c", _LOADER, str(model), str(folder / "image.npy"),
                           *map(str, paths)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"loader died ({proc.returncode}): {proc.stderr[-2000:]}"
    results = proc.stdout.splitlines()
    assert len(results) == len(paths), proc.stderr[-2000:]
    return [line.split()[0] for line in results]


def _mutated_json(value, rng):
    """``value`` (parsed JSON) with one random leaf changed, removed or added."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = sorted(value)[rng.integers(len(value))]
        if rng.random() < 0.2:
            return {k: v for k, v in value.items() if k != key}
        return {**value, key: _mutated_json(value[key], rng)}
    if isinstance(value, list) and value and rng.random() < 0.8:
        i = int(rng.integers(len(value)))
        return value[:i] + [_mutated_json(value[i], rng)] + value[i + 1:]
    choices = [None, True, "x", -1, 0, 1e30, float(rng.integers(-5, 50)), [], {"a": 1}]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        choices += [value + 1, -value, value * 2]
    return choices[rng.integers(len(choices))]


def _damaged_copies(folder, data, rng):
    """150 copies with 1-4 bytes changed, 50 truncated ones."""
    paths = []
    for i in range(200):
        damaged = bytearray(data)
        if i < 150:
            for position in rng.integers(0, len(data), rng.integers(1, 5)):
                damaged[position] = (damaged[position] + int(rng.integers(1, 256))) % 256
        else:
            damaged = damaged[:rng.integers(0, len(data))]
        path = folder / f"damaged{i:03d}.h5"
        path.write_bytes(bytes(damaged))
        paths.append(path)
    return paths


def _json_edited_copies(folder, data, rng, restamp):
    """50 copies with one JSON attribute mutated; with ``restamp`` the content checksum is
    recomputed afterwards (a forged file)."""
    paths = []
    for i in range(50):
        path = folder / f"json{int(restamp)}_{i:02d}.h5"
        path.write_bytes(data)
        with h5py.File(path, "r+") as f:
            name = ("features", "training", "metadata")[i % 3]
            value = json.loads(f.attrs[name])
            mutated = _mutated_json(value, rng)
            while mutated == value:
                mutated = _mutated_json(value, rng)
            f.attrs[name] = json.dumps(mutated)
            if restamp:
                arrays = [("/classes", f["classes"][()])] + [
                    (f"/dags/{g}/{n}", f["dags"][g][n][()]) for g in sorted(f["dags"], key=int)
                    for n in _DTYPES]
                f.attrs["sha256"] = content_digest({k: f.attrs[k] for k in DIGEST_ATTRIBUTES},
                                                   arrays)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def outcomes(real_model):
    """What loading each damaged copy gave, by kind of damage (one subprocess for all)."""
    folder, model = real_model
    data = model.read_bytes()
    rng = np.random.default_rng(19)
    groups = {"bytes": _damaged_copies(folder, data, rng),
              "json": _json_edited_copies(folder, data, rng, restamp=False),
              "forged json": _json_edited_copies(folder, data, rng, restamp=True)}
    results = iter(_load_all(folder, model, [p for paths in groups.values() for p in paths]))
    return {kind: [next(results) for _ in paths] for kind, paths in groups.items()}


def test_byte_flips_and_truncations_never_pass_silently(outcomes):
    assert len(outcomes["bytes"]) == 200
    assert set(outcomes["bytes"]) <= {"error", "same"}, outcomes["bytes"]
    assert outcomes["bytes"].count("error") > 100  # most damage is detected, not survived


def test_edited_json_attributes_break_the_checksum(outcomes):
    assert outcomes["json"] == ["error"] * 50


def test_forged_json_attributes_are_validated(outcomes):
    """With the checksum recomputed, the validation behind it must still give
    ModelFileError or a model that loads and segments, never a traceback."""
    assert len(outcomes["forged json"]) == 50
    assert set(outcomes["forged json"]) <= {"error", "same", "different"}
