"""The ``<name>_planes.py`` helper written beside a colour model's C code
(:mod:`jungleseg.export._planes`)."""
from __future__ import annotations

import sys

import numpy as np

from jungleseg import ColourFeatures, JungleSegmenter
from jungleseg.export._harness import run_harness
from jungleseg.segmentation import segment

from .conftest import NEEDS_GCC, built


@NEEDS_GCC
def test_grey_model_gets_a_planes_helper(colour_images, tmp_path):
    images, truths = colour_images
    grey = [im[:, :, 0] for im in images]
    model = JungleSegmenter(ColourFeatures(max_offset=4, input="grey", kinds=("value",
                                                                              "difference"),
                                           smoothing_scales=(1.0,), box_filters=(2,)),
                            n_estimators=2, max_width=16, max_depth=8, samples_per_image=400,
                            random_state=0).fit(grey[:2], truths[:2])
    info, program = built(model, tmp_path, "float", "colour", name="grey")
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
