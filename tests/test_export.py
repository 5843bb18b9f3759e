"""The C export: generated, compiled with -Werror by a real compiler, run on random and
real inputs, and compared with Python."""
from __future__ import annotations

import dataclasses
import os
import platform
import shutil
import subprocess
import sys

import numpy as np
import pytest

from jungleseg import (
    ColourFeatures,
    DepthFeatures,
    JungleClassifier,
    JungleSegmenter,
    VolumeFeatures,
    save_model,
)
from jungleseg.cli import main
from jungleseg.datasets.kinect import render_frames
from jungleseg.datasets.uci import load_uci
from jungleseg.export import ExportError, export_c, footprint
from jungleseg.export._harness import build_harness, run_harness
from jungleseg.segmentation import segment

# CI installs gcc (.ci/run): there these tests run, never skip
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None and os.environ.get("CI") != "true",
                                reason="needs gcc")
WERROR = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
X86 = platform.machine() in ("x86_64", "AMD64")


def _built(model, tmp_path, variant, kind, name="jungle"):
    info = export_c(model, tmp_path / variant, name=name, variant=variant)
    # the quantised variant must build without any floating-point register (x86-64)
    no_float = ["-mgeneral-regs-only"] if variant == "quantised" and X86 else []
    subprocess.run([*WERROR, *no_float, "-c", str(tmp_path / variant / f"{name}.c"), "-o",
                    str(tmp_path / variant / f"{name}.o")], check=True)
    return info, build_harness(tmp_path / variant, name, kind)


def _proba_dtype(variant, n_dags):
    return np.float32 if variant == "float" else (np.uint16 if 255 * n_dags < 65536
                                                  else np.uint32)


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5)).astype(np.float32) * 10
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 / 10 > X[:, 2]).astype(int) + 2 * (X[:, 3] > 5)
    return X, y


@pytest.mark.parametrize("variant", ["float", "quantised"])
@pytest.mark.parametrize("max_width", [8, None], ids=["jungle", "forest"])
def test_tabular_matches_python(rows, tmp_path, variant, max_width):
    X, y = rows
    clf = JungleClassifier(n_estimators=3, max_width=max_width, max_depth=8,
                           random_state=0).fit(X[:400], y[:400])
    _, program = _built(clf, tmp_path, variant, "tabular")
    rng = np.random.default_rng(1)
    inputs = np.concatenate([X[400:], rng.normal(size=(200, 5)).astype(np.float32) * 20])
    labels, proba, _ = run_harness(program, inputs, 4, _proba_dtype(variant, 3), "tabular")
    expected = clf.jungle_.label_indices(clf.predict_proba(inputs), axis=1)
    if variant == "float":
        np.testing.assert_array_equal(labels, expected)
        np.testing.assert_allclose(proba, clf.predict_proba(inputs), atol=1e-6, rtol=0)
    else:
        assert np.mean(labels != expected) <= 0.01
        assert np.abs(proba / (255.0 * 3) - clf.predict_proba(inputs)).max() < 0.01


def test_tabular_real_data_and_prior_power(data_root, tmp_path):
    X, y = load_uci("letter", data_root)
    X, y = X[:3000], y[:3000]
    clf = JungleClassifier(n_estimators=2, max_width=32, max_depth=12, prior_power=0.5,
                           random_state=0).fit(X[:2000], y[:2000])
    expected = clf.jungle_.label_indices(clf.predict_proba(X[2000:]), axis=1)
    for variant, bits in (("float", 16), ("quantised", 16), ("quantised", 8)):
        export_c(clf, tmp_path / f"{variant}{bits}", variant=variant, threshold_bits=bits)
        program = build_harness(tmp_path / f"{variant}{bits}", "jungle", "tabular")
        labels, _, _ = run_harness(program, X[2000:], 26, _proba_dtype(variant, 2), "tabular")
        # whole-number columns: the comparisons are exact, the leaves' rounding is not
        assert np.mean(labels != expected) <= (0 if variant == "float" else 0.01)
        if variant == "float":
            np.testing.assert_array_equal(clf.classes_[labels], clf.predict(X[2000:]))


@pytest.fixture(scope="module")
def kinect():
    depth, labels = render_frames(4, seed=3, size=(60, 80))
    model = JungleSegmenter(DepthFeatures(max_offset=0.3, focal_length=70.0), n_estimators=2,
                            max_width=32, max_depth=10, samples_per_image=300,
                            ignore=(0, 255), random_state=0).fit(list(depth[:3]),
                                                                 list(labels[:3]))
    return model, np.round(depth * 1000).astype(np.uint16)  # millimetres, as sensors give


@pytest.mark.parametrize("variant", ["float", "quantised"])
def test_depth_matches_python(kinect, tmp_path, variant):
    model, depth = kinect
    info, program = _built(model, tmp_path, variant, "depth")
    assert info["kind"] == "depth"
    frames = depth[2:4]
    noise = np.random.default_rng(2).integers(0, 4000, frames.shape[1:]).astype(np.uint16)
    noise[noise < 500] = 0  # holes
    frames = np.concatenate([frames, noise[None]])
    labels, proba, _ = run_harness(program, frames, model.jungle_.n_classes,
                                   _proba_dtype(variant, 2), "depth")
    for i, frame in enumerate(frames):
        expected, expected_proba = segment(model.jungle_, frame, smoothing=0)
        if variant == "float":
            np.testing.assert_array_equal(labels[i], expected)
            np.testing.assert_allclose(proba[i], expected_proba, atol=1e-6, rtol=0)
        else:
            foreground = frame > 0
            assert np.mean(labels[i][foreground] != expected[foreground]) <= 0.01
            np.testing.assert_array_equal(labels[i][~foreground], expected[~foreground])


@pytest.fixture(scope="module")
def colour_images():
    rng = np.random.default_rng(4)
    images, truths = [], []
    for _ in range(3):
        image = rng.integers(0, 256, (40, 48, 3)).astype(np.uint8)
        truth = np.ones((40, 48), np.uint8)
        truth[10:30, 12:36] = 2
        image[10:30, 12:36, 0] //= 3
        images.append(image)
        truths.append(truth)
    return images, truths


@pytest.mark.parametrize("variant", ["float", "quantised"])
def test_colour_channels_with_boxes_match_python(colour_images, tmp_path, variant):
    images, truths = colour_images
    family = ColourFeatures(max_offset=6, max_box=2, input="channels", n_channels=3,
                            kinds=("value", "difference", "sum", "absdiff", "box_value",
                                   "box_difference", "box_absdiff"))
    model = JungleSegmenter(family, n_estimators=2, max_width=16, max_depth=8,
                            samples_per_image=400, random_state=0).fit(images[:2], truths[:2])
    _, program = _built(model, tmp_path, variant, "colour")
    planes = np.stack([np.moveaxis(im, 2, 0).astype(np.float32) for im in images])
    labels, proba, _ = run_harness(program, planes, 2, _proba_dtype(variant, 2), "colour")
    for i, image in enumerate(images):
        expected, expected_proba = segment(model.jungle_, image, smoothing=0)
        if variant == "float":
            np.testing.assert_array_equal(labels[i], expected)
            np.testing.assert_allclose(proba[i], expected_proba, atol=1e-6, rtol=0)
        else:
            assert np.mean(labels[i] != expected) <= 0.01


def test_grey_model_gets_a_planes_helper(colour_images, tmp_path):
    images, truths = colour_images
    grey = [im[:, :, 0] for im in images]
    model = JungleSegmenter(ColourFeatures(max_offset=4, input="grey", kinds=("value",
                                                                              "difference"),
                                           smoothing_scales=(1.0,), box_filters=(2,)),
                            n_estimators=2, max_width=16, max_depth=8, samples_per_image=400,
                            random_state=0).fit(grey[:2], truths[:2])
    info, program = _built(model, tmp_path, "float", "colour", name="grey")
    helper = tmp_path / "float" / "grey_planes.py"
    assert str(helper) in info["files"]
    sys.path.insert(0, str(helper.parent))
    try:
        from grey_planes import planes
    finally:
        sys.path.remove(str(helper.parent))
    stack = np.stack([planes(im) for im in grey])
    assert stack.shape == (3, model.jungle_.family.n_store_channels, 40, 48)
    labels, _, _ = run_harness(program, stack, 2, np.float32, "colour")
    for i, image in enumerate(grey):
        np.testing.assert_array_equal(labels[i], segment(model.jungle_, image, smoothing=0)[0])


def test_uncovered_models_are_refused_in_one_line(rows, tmp_path):
    X, y = rows
    jungle = JungleClassifier(n_estimators=1, max_width=4, random_state=0).fit(X, y).jungle_
    volume = dataclasses.replace(jungle, family=VolumeFeatures())
    with pytest.raises(ExportError, match="^volume features are not exported") as err:
        export_c(volume, tmp_path)
    assert "\n" not in str(err.value)
    soft = dataclasses.replace(jungle, params={**jungle.params, "soft": 1.0})
    with pytest.raises(ExportError, match="soft routing"):
        export_c(soft, tmp_path)
    with pytest.raises(ExportError, match="not a C identifier"):
        export_c(jungle, tmp_path, name="1bad")
    with pytest.raises(ExportError, match="unknown variant"):
        export_c(jungle, tmp_path, variant="double")
    with pytest.raises(ExportError, match="cannot export a str"):
        export_c("model.h5", tmp_path)


def test_command_line_export_and_info(rows, tmp_path, capsys):
    X, y = rows
    clf = JungleClassifier(n_estimators=2, max_width=8, random_state=0).fit(X, y)
    save_model(clf.jungle_, tmp_path / "m.h5")
    assert main(["export", str(tmp_path / "m.h5"), "--format", "c", "--out",
                 str(tmp_path / "c"), "--variant", "quantised", "--name", "tiny"]) == 0
    out = capsys.readouterr().out
    assert "tiny.c" in out and "bytes of flash" in out
    assert (tmp_path / "c" / "tiny.h").exists()
    assert main(["info", str(tmp_path / "m.h5")]) == 0
    tables = footprint(clf, "quantised")["tables"]
    assert f"quantised {tables} bytes of tables" in capsys.readouterr().out
