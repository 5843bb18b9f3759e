"""Sample data: synthetic images with sparse strokes that agree with their truth, and
that open ready to train: open, dock the widget, press Train, a good segmentation on top."""
import numpy as np
import pytest


@pytest.mark.parametrize("name", ["cells", "face", "depth_body"])
def test_sample_data_scribbles_are_sparse_and_true(name):
    from napari_plugin import _sample_data

    (image, _, _), (truth, _, _), (paint, meta, kind) = getattr(_sample_data, name)()
    assert kind == "labels" and paint.shape == truth.shape == image.shape[:2]
    painted = paint > 0
    assert 0 < painted.mean() < 0.05  # a few strokes, not the truth
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


SAMPLES = ["cells", "face", "depth_body", "cells_volume", "cells_volume_channels"]


@pytest.mark.parametrize("name", SAMPLES)
def test_a_sample_opens_ready_and_trains_well_with_one_press(name, make_napari_viewer,
                                                             monkeypatch, finish):
    pytest.importorskip("napari")
    from jungleseg import evaluate
    from napari_plugin import _widget

    errors = []
    monkeypatch.setattr(_widget, "show_error", errors.append)
    viewer = make_napari_viewer()
    viewer.open_sample("jungleseg", name)
    widget = _widget.JungleWidget(viewer)
    viewer.window.add_dock_widget(widget, name="jungleseg")
    assert widget.status.value.startswith("Ready")
    widget.train_button.native.click()  # the only action
    finish(widget)
    assert errors == [] and widget.status.value.startswith("Done")
    visible = [layer for layer in viewer.layers if layer.visible]
    assert visible[-1].name.endswith(" segmentation")
    unsure = [layer for layer in viewer.layers if layer.name.endswith(" uncertainty")]
    assert len(unsure) == 1 and not unsure[0].visible
    truth = next(layer.data for layer in viewer.layers if layer.name.endswith("ground truth"))
    classes = [c for c in np.unique(truth) if c]
    mean_jaccard = evaluate([truth], [np.asarray(visible[-1].data)], classes).mean_jaccard
    assert mean_jaccard >= 0.6
