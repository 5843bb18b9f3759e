"""The C text (:mod:`jungleseg.export._csource`): header, tables and tabular runtime,
compiled with -Werror and compared with Python, and what the comment atop a colour model's
source says its planes hold."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from jungleseg import ColourFeatures, JungleClassifier, JungleSegmenter, load_model
from jungleseg.datasets.uci import load_uci
from jungleseg.export import export_c
from jungleseg.export._csource import c_array
from jungleseg.export._harness import build_harness, run_harness
from jungleseg.segmentation import segment

from .conftest import NEEDS_GCC, built, proba_dtype


@NEEDS_GCC
@pytest.mark.parametrize("style", ["tables", "inline"])
@pytest.mark.parametrize("variant", ["float", "quantised"])
@pytest.mark.parametrize("max_width", [8, None], ids=["jungle", "forest"])
def test_tabular_matches_python(rows, tmp_path, variant, max_width, style):
    X, y = rows
    clf = JungleClassifier(n_estimators=3, max_width=max_width, max_depth=8,
                           random_state=0).fit(X[:400], y[:400])
    _, program = built(clf, tmp_path, variant, "tabular", style=style)
    rng = np.random.default_rng(1)
    inputs = np.concatenate([X[400:], rng.normal(size=(200, 5)).astype(np.float32) * 20])
    labels, proba, _ = run_harness(program, inputs, 4, proba_dtype(variant, 3), "tabular")
    expected = clf.jungle_.label_indices(clf.predict_proba(inputs), axis=1)
    if variant == "float":
        np.testing.assert_array_equal(labels, expected)
        np.testing.assert_allclose(proba, clf.predict_proba(inputs), atol=1e-6, rtol=0)
    else:
        assert np.mean(labels != expected) <= 0.01
        assert np.abs(proba / (255.0 * 3) - clf.predict_proba(inputs)).max() < 0.01


@NEEDS_GCC
def test_tabular_real_data_and_prior_power(data_root, tmp_path):
    X, y = load_uci("letter", data_root)
    X, y = X[:3000], y[:3000]
    clf = JungleClassifier(n_estimators=2, max_width=32, max_depth=12, prior_power=0.5,
                           random_state=0).fit(X[:2000], y[:2000])
    expected = clf.jungle_.label_indices(clf.predict_proba(X[2000:]), axis=1)
    for variant, bits in (("float", 16), ("quantised", 16), ("quantised", 8)):
        export_c(clf, tmp_path / f"{variant}{bits}", variant=variant, threshold_bits=bits)
        program = build_harness(tmp_path / f"{variant}{bits}", "jungle", "tabular")
        labels, _, _ = run_harness(program, X[2000:], 26, proba_dtype(variant, 2), "tabular")
        # whole-number columns: the comparisons are exact, the leaves' rounding is not
        assert np.mean(labels != expected) <= (0 if variant == "float" else 0.01)
        if variant == "float":
            np.testing.assert_array_equal(clf.classes_[labels], clf.predict(X[2000:]))


def test_c_array_writes_rows_in_braces_and_floats_exactly():
    text = c_array("t", "float", np.array([[0.1, 2.0], [-0.0, 3.5]], np.float32))
    assert text.startswith("static const float t[2][2] = {\n")
    body = text.split("{", 1)[1].rsplit("}", 1)[0]
    items = body.replace("{", "").replace("}", "").replace(",", " ").split()
    values = np.array([float.fromhex(v[:-1]) if "x" in v else float(v[:-1]) for v in items],
                      np.float32)
    np.testing.assert_array_equal(values.view(np.uint32),
                                  np.array([0.1, 2.0, -0.0, 3.5], np.float32).view(np.uint32))
    assert c_array("k", "int32_t", np.arange(3), static=False) == \
        "const int32_t k[3] = {\n    0, 1, 2\n};\n"


@NEEDS_GCC
def test_a_colour_model_s_comment_says_its_planes_hold_channel_codes(colour_images, tmp_path):
    """A model of quantised channels reads codes, not the image: the comment atop its
    source gives the formula and the quantiser, and codes made by them from the raw
    channels give Python's labels."""
    images, truths = colour_images
    images = [im // 2 + 40 for im in images]  # 40..167: codes are not the values
    family = ColourFeatures(max_offset=6, max_box=2, input="channels", n_channels=3)
    model = JungleSegmenter(family, n_estimators=2, max_width=16, max_depth=8,
                            samples_per_image=400, random_state=0).fit(images[:2], truths[:2])
    _, program = built(model, tmp_path, "float", "colour")
    text = (tmp_path / "float" / "jungle.c").read_text()
    assert "8-bit codes, clip(rint((v - low) * scale), 0, 255)" in text
    assert "they are the image itself" not in text
    quantiser = json.loads(re.search(r"Features: (.*)", text).group(1))["quantiser"]
    low = np.float32(quantiser["low"])[:, None, None]
    scale = np.float32(quantiser["scale"])[:, None, None]
    planes = [np.moveaxis(im, 2, 0).astype(np.float32) for im in images]
    codes = np.stack([np.clip(np.rint((p - low) * scale), 0, 255) for p in planes])
    assert np.any(codes != np.stack(planes))  # the image itself would not do
    labels, _, _ = run_harness(program, codes.astype(np.float32), 2, np.float32, "colour")
    for i, image in enumerate(images):
        np.testing.assert_array_equal(labels[i], segment(model.jungle_, image, smoothing=0)[0])


def test_a_model_of_float32_channels_reads_the_image_itself(tmp_path):
    old = load_model(Path(__file__).resolve().parents[1] / "data" / "model_format2_colour.h5")
    assert old.family.quantiser is None
    export_c(old, tmp_path, name="old")
    text = (tmp_path / "old.c").read_text()
    assert "quantiser" not in text and "8-bit codes" not in text
    assert "they are the image itself" in text
