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
