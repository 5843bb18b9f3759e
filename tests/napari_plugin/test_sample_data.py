"""Sample data: synthetic images with sparse strokes that agree with their truth."""
import numpy as np
import pytest


@pytest.mark.parametrize("name", ["cells", "face", "depth_body"])
def test_sample_data_scribbles_are_sparse_and_true(name):
    from napari_plugin import _sample_data

    (image, _, _), (truth, _, _), (paint, meta, kind) = getattr(_sample_data, name)()
    assert kind == "labels" and paint.shape == truth.shape == image.shape[:2]
    painted = paint > 0
    assert 0 < painted.mean() < 0.02
    np.testing.assert_array_equal(paint[painted], truth[painted])
    assert len(np.unique(paint[painted])) >= 2
    assert len(meta["features"]["class"]) > int(truth.max())


@pytest.mark.parametrize("name", ["cells_volume", "cells_volume_channels"])
def test_volume_samples_are_anisotropic_with_strokes_on_three_slices(name):
    from napari_plugin import _sample_data

    (image, image_kwargs, _), (truth, _, _), (paint, meta, _) = getattr(_sample_data, name)()
    assert image.shape[:3] == truth.shape == paint.shape == _sample_data.VOLUME_SHAPE
    assert meta["scale"] == image_kwargs["scale"] == (0.3, 0.1, 0.1)
    assert [z for z in range(paint.shape[0]) if paint[z].any()] == list(
        _sample_data.PAINTED_SLICES)
    painted = paint > 0
    np.testing.assert_array_equal(paint[painted], truth[painted])
    assert set(np.unique(paint[painted])) == {1, 2, 3}
