"""The C runtime of image models (:mod:`jungleseg.export._image_runtime`): depth and colour
exports, compiled with -Werror, labels and probabilities compared with Python's."""
from __future__ import annotations

import numpy as np
import pytest

from jungleseg import ColourFeatures, JungleSegmenter
from jungleseg.export._harness import run_harness
from jungleseg.segmentation import segment

from .conftest import NEEDS_GCC, built, proba_dtype

pytestmark = NEEDS_GCC


@pytest.mark.parametrize("variant", ["float", "quantised"])
def test_depth_matches_python(kinect, tmp_path, variant):
    model, depth = kinect
    info, program = built(model, tmp_path, variant, "depth")
    assert info["kind"] == "depth"
    frames = depth[2:4]
    noise = np.random.default_rng(2).integers(0, 4000, frames.shape[1:]).astype(np.uint16)
    noise[noise < 500] = 0  # holes
    frames = np.concatenate([frames, noise[None]])
    labels, proba, _ = run_harness(program, frames, model.jungle_.n_classes,
                                   proba_dtype(variant, 2), "depth")
    for i, frame in enumerate(frames):
        expected, expected_proba = segment(model.jungle_, frame, smoothing=0)
        if variant == "float":
            np.testing.assert_array_equal(labels[i], expected)
            np.testing.assert_allclose(proba[i], expected_proba, atol=1e-6, rtol=0)
        else:
            foreground = frame > 0
            assert np.mean(labels[i][foreground] != expected[foreground]) <= 0.01
            np.testing.assert_array_equal(labels[i][~foreground], expected[~foreground])


@pytest.mark.parametrize("variant", ["float", "quantised"])
def test_colour_channels_with_boxes_match_python(colour_images, tmp_path, variant):
    images, truths = colour_images
    family = ColourFeatures(max_offset=6, max_box=2, input="channels", n_channels=3,
                            kinds=("value", "difference", "sum", "absdiff", "box_value",
                                   "box_difference", "box_absdiff"))
    model = JungleSegmenter(family, n_estimators=2, max_width=16, max_depth=8,
                            samples_per_image=400, random_state=0).fit(images[:2], truths[:2])
    _, program = built(model, tmp_path, variant, "colour")
    # the channel codes the model reads (what the exported <name>_planes.py gives)
    planes = np.stack([model.jungle_.family.prepare([im]).planes(0).astype(np.float32)
                       for im in images])
    labels, proba, _ = run_harness(program, planes, 2, proba_dtype(variant, 2), "colour")
    for i, image in enumerate(images):
        expected, expected_proba = segment(model.jungle_, image, smoothing=0)
        if variant == "float":
            np.testing.assert_array_equal(labels[i], expected)
            np.testing.assert_allclose(proba[i], expected_proba, atol=1e-6, rtol=0)
        else:
            assert np.mean(labels[i] != expected) <= 0.01
