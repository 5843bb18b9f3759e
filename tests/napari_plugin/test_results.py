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
                 np.full((1, 6, 8), 2, np.uint8), proba, probabilities=True)
    seg = viewer.layers["cells segmentation"]
    np.testing.assert_allclose(seg.scale, scale)
    np.testing.assert_allclose(seg.translate, translate)
    assert seg.data[2].min() == 2 and seg.data[[0, 1, 3]].max() == 0
    probabilities = viewer.layers["cells probabilities"]
    assert probabilities.data.shape == (2, *shape)
    np.testing.assert_allclose(probabilities.scale, (1.0, *scale))
    assert probabilities.data[0, 2].min() == 0.75
    unsure = viewer.layers["cells uncertainty"]
    assert not unsure.visible and not unsure.data.any()  # hidden: not computed yet
    unsure.visible = True  # shown: the waiting part is written
    np.testing.assert_allclose(unsure.data[2], 0.25, rtol=1e-6)
    assert unsure.data[[0, 1, 3]].max() == 0
    results.show("cells", shape, scale, translate, (slice(0, 4),),
                 np.ones(shape, np.uint8), np.full(shape + (2,), 0.5, np.float32))
    assert seg.data.min() == 1 and unsure.data.min() == unsure.data.max() == 0.5
    assert class_colormap(None, None) is None


def test_stacks_of_many_slices_get_chunked_layers(make_napari_viewer):
    import zarr

    from napari_plugin._results import FEW_SLICES, ResultLayers, blank

    assert isinstance(blank((FEW_SLICES, 5, 5), np.uint8), np.ndarray)
    assert isinstance(blank((40, 64, 64), np.uint8, in_memory=True), np.ndarray)
    viewer = make_napari_viewer()
    results = ResultLayers(viewer)
    shape = (40, 64, 64)
    proba = np.full((64, 64, 3), 1 / 3, np.float32)
    results.show("stack", shape, (1.0, 1.0, 1.0), (0.0, 0.0, 0.0), (7,),
                 np.full((64, 64), 2, np.uint8), proba, probabilities=True)
    seg = viewer.layers["stack segmentation"]
    probabilities = viewer.layers["stack probabilities"]
    assert isinstance(seg.data, zarr.Array) and isinstance(probabilities.data, zarr.Array)
    assert seg.data[7].min() == 2 and seg.data[8].max() == 0
    np.testing.assert_allclose(probabilities.data[:, 7], 1 / 3)
    dense = np.prod(shape) * (1 + 3 * 4)
    assert seg.data.nbytes_stored() + probabilities.data.nbytes_stored() < dense / 20


def test_hidden_uncertainty_waits_in_order_and_within_bounds(make_napari_viewer, monkeypatch):
    from napari_plugin import _results

    viewer = make_napari_viewer()
    results = _results.ResultLayers(viewer)
    shape = (3, 4, 5)

    def show(key, value):
        proba = np.full(np.zeros(shape)[key].shape + (2,), value, np.float32)
        results.show("v", shape, (1, 1, 1), (0, 0, 0), key, np.ones(proba.shape[:-1], np.uint8),
                     proba)

    show((slice(1, 2),), 0.9)  # the visible slice, then the whole volume, twice (retrained)
    show((slice(0, 3),), 0.8)
    show((slice(1, 2),), 0.7)
    show((slice(0, 3),), 0.6)
    unsure = viewer.layers["v uncertainty"]
    unsure.visible = True
    np.testing.assert_allclose(unsure.data, 0.4)  # the last part at each place wins
    unsure.visible = False
    monkeypatch.setattr(_results, "WAITING_BYTES", 4 * 5 * 2 * 4)  # one slice's worth
    show((slice(0, 1),), 0.9)
    show((slice(2, 3),), 0.7)  # more than the bound: the oldest is written at once
    np.testing.assert_allclose(unsure.data[0], 0.1, rtol=1e-6)
    np.testing.assert_allclose(unsure.data[2], 0.4, rtol=1e-6)


def test_the_segmentation_is_on_top_and_retraining_keeps_the_users_settings(
        make_napari_viewer):
    from napari_plugin._choices import is_output
    from napari_plugin._results import ResultLayers

    viewer = make_napari_viewer()
    image = viewer.add_image(np.zeros((6, 8)), name="cells")
    paint = viewer.add_labels(np.zeros((6, 8), np.uint8), name="paint")
    viewer.layers.selection.active = paint
    results = ResultLayers(viewer)
    proba = np.full((6, 8, 2), 0.5, np.float32)
    results.show("cells", (6, 8), (1, 1), (0, 0), (), np.ones((6, 8), np.uint8), proba)
    names = [layer.name for layer in viewer.layers]
    assert names == ["cells", "paint", "cells uncertainty", "cells segmentation"]
    assert viewer.layers["cells segmentation"].visible
    assert not viewer.layers["cells uncertainty"].visible
    assert viewer.layers.selection.active is paint  # painting goes on where it was
    assert all(is_output(viewer.layers[n]) for n in names[2:]) and not is_output(image)
    seg = viewer.layers["cells segmentation"]
    seg.opacity, seg.visible = 0.3, False  # the user's choices
    viewer.layers["cells uncertainty"].visible = True
    viewer.layers.move(3, 0)
    results.show("cells", (6, 8), (1, 1), (0, 0), (), np.full((6, 8), 2, np.uint8), proba)
    assert viewer.layers["cells segmentation"] is seg and seg.data.min() == 2  # in place
    assert (seg.opacity, seg.visible, viewer.layers.index(seg)) == (0.3, False, 0)
    assert viewer.layers["cells uncertainty"].visible
    results.show("cells", (6, 9), (1, 1), (0, 0), (), np.ones((6, 9), np.uint8),
                 np.full((6, 9, 2), 0.5, np.float32))  # a new shape: replaced in place
    seg = viewer.layers["cells segmentation"]
    assert seg.data.shape == (6, 9)
    assert (seg.opacity, seg.visible, viewer.layers.index(seg)) == (0.3, False, 0)
