"""Output layers: created on the input's scale and translate, filled part by part."""
import numpy as np
import pytest

napari = pytest.importorskip("napari")


def test_parts_fill_layers_on_the_input_scale(make_napari_viewer):
    from napari_plugin._results import ResultLayers, class_colormap

    viewer = make_napari_viewer()
    results = ResultLayers(viewer)
    shape, scale, translate = (4, 6, 8), (0.3, 0.1, 0.1), (1.0, 2.0, 3.0)
    proba = np.full((1, 6, 8, 2), 0.5, np.float32)
    proba[..., 0] = 0.75
    results.show("cells", shape, scale, translate, (slice(2, 3),),
                 np.full((1, 6, 8), 2, np.uint8), proba, "probabilities")
    seg = viewer.layers["cells segmentation"]
    np.testing.assert_allclose(seg.scale, scale)
    np.testing.assert_allclose(seg.translate, translate)
    assert seg.data[2].min() == 2 and seg.data[[0, 1, 3]].max() == 0
    probabilities = viewer.layers["cells probabilities"]
    assert probabilities.data.shape == (2, *shape)
    np.testing.assert_allclose(probabilities.scale, (1.0, *scale))
    assert probabilities.data[0, 2].min() == 0.75
    results.show("cells", shape, scale, translate, (slice(0, 4),),
                 np.ones(shape, np.uint8), np.full(shape + (2,), 0.5, np.float32),
                 "uncertainty")
    assert seg.data.min() == 1 and viewer.layers["cells uncertainty"].data.max() == 0.5
    assert class_colormap(None, None) is None
