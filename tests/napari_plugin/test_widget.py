"""The dock widget in a real napari viewer under Xvfb (``make_napari_viewer``)."""
import numpy as np
import pytest

from jungleseg import evaluate, segment

from .scenes import stripes_and_checks, strokes

napari = pytest.importorskip("napari")


def docked_widget(make_napari_viewer, monkeypatch):
    """A viewer with the widget docked (3 DAGs, M = 32, depth 8) and the list its error
    notifications go to."""
    from napari_plugin import _widget

    errors = []
    monkeypatch.setattr(_widget, "show_error", errors.append)
    viewer = make_napari_viewer()
    widget = _widget.JungleWidget(viewer)
    viewer.window.add_dock_widget(widget, name="jungleseg")
    widget.n_estimators.value, widget.width_m.value, widget.max_depth.value = 3, 32, 8
    widget.max_offset.value = 8
    return viewer, widget, errors


@pytest.fixture
def viewer_and_widget(make_napari_viewer, monkeypatch):
    return docked_widget(make_napari_viewer, monkeypatch)


def test_spin_box_ranges_come_from_the_declared_constraints(viewer_and_widget):
    from jungleseg import ColourFeatures, JungleSegmenter
    from jungleseg._validation import bounds

    _, widget, _ = viewer_and_widget
    declared = JungleSegmenter._parameter_constraints
    for box, name in [(widget.n_estimators, "n_estimators"), (widget.width_m, "max_width"),
                      (widget.max_depth, "max_depth"), (widget.smoothing, "smoothing")]:
        assert (box.min, box.max) == bounds(declared[name])
    assert widget.max_offset.max == bounds(ColourFeatures._parameter_constraints["max_offset"])[1]


def add_painted(viewer, image, truth, name="texture"):
    layer = viewer.add_image(image, name=name)
    scribbles = viewer.add_labels(strokes(truth) if truth.ndim == 2 else truth, name="scribbles")
    return layer, scribbles


def test_train_shows_segmentation_close_to_truth(viewer_and_widget, finish):
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks()
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    assert widget.kind.value == "grey"
    widget.train()
    finish(widget)
    assert errors == []
    seg = viewer.layers["texture segmentation"]
    assert isinstance(seg, napari.layers.Labels) and seg.data.shape == truth.shape
    assert np.mean(seg.data == truth) > 0.8
    inside = np.abs(np.arange(truth.shape[1]) - truth.shape[1] // 2) > 12  # probes stay in
    assert np.mean((seg.data == truth)[:, inside]) > 0.95                 # one texture
    assert not viewer.layers["texture uncertainty"].visible  # one click away
    assert not viewer.layers["texture uncertainty"].data.any()  # computed once shown
    viewer.layers["texture uncertainty"].visible = True
    unsure = viewer.layers["texture uncertainty"].data
    assert unsure.shape == truth.shape and 0 <= unsure.min() and unsure.max() <= 1
    assert unsure[truth != seg.data].mean() > unsure[truth == seg.data].mean()
    assert widget.status.value.startswith("Done") and "3 DAGs" in widget.status.tooltip
    # the segmentation uses the scribble layer's colours
    np.testing.assert_allclose(seg.get_color(2), scribbles.get_color(2))


def test_new_scribbles_are_ready_to_paint(viewer_and_widget, finish):
    """A first session through the buttons: New gives a selected layer in paint mode with
    class 1, and strokes painted there by napari train a segmentation."""
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks()
    viewer.add_image(image, name="texture")  # chosen by the widget: the only image
    widget.new_scribbles_button.native.click()
    scribbles = viewer.layers["texture scribbles"]
    assert widget.scribbles.value is scribbles and viewer.layers.selection.active is scribbles
    assert scribbles.mode == "paint" and scribbles.selected_label == 1
    painted = strokes(truth) > 0
    for value in (1, 2):
        for coords in np.argwhere(painted & (truth == value)):
            scribbles.paint(tuple(coords), value, refresh=False)
    widget.train_button.native.click()
    assert widget.status.value.startswith("Computing the image's features, then training")
    finish(widget)
    assert errors == []
    assert np.mean(viewer.layers["texture segmentation"].data == truth) > 0.8
    widget.train_button.native.click()  # the image's features are kept: training only
    assert widget.status.value.startswith("Training on your strokes")
    finish(widget)


def test_errors_become_notifications(viewer_and_widget):
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks()
    layer = viewer.add_image(image, name="texture")
    empty = viewer.add_labels(np.zeros_like(truth), name="empty")
    widget.image.value, widget.scribbles.value = layer, empty
    widget.train()
    assert "no labels painted" in errors[-1]
    assert widget.status.value.startswith("Cannot train yet: no labels painted")
    one = np.zeros_like(truth)
    one[10, 10:30] = 1
    empty.data = one
    widget.train()
    assert "only class 1" in errors[-1]
    widget.kind.value = "rgb"  # a grey layer read as RGB
    empty.data = strokes(truth)
    widget.train()
    assert errors[-1] == "layer 'texture' is not an RGB layer, but rgb images are expected"
    widget.scribbles.value = None
    widget.train()
    assert "Labels layer" in errors[-1]
    widget.apply(layer)  # no model yet
    assert "no model" in errors[-1]
    assert widget._worker is None and not viewer.layers.__contains__("texture segmentation")


def test_save_load_and_apply_to_a_stack(viewer_and_widget, tmp_path, finish):
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks()
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    widget.smoothing.value = 2
    widget.train()
    finish(widget)
    path = tmp_path / "scribbles.h5"
    widget.save(path)
    trained = widget.jungle
    assert trained.params["smoothing"] == 2
    widget.jungle, widget.smoothing.value = None, 0
    widget.load(path)
    assert widget.smoothing.value == 2  # the knob shows the loaded model's smoothing
    assert widget.jungle.metadata["class_colours"]["1"] == [
        int(round(255 * x)) for x in scribbles.get_color(1)[:3]]
    stack = np.stack([stripes_and_checks(seed=s)[0] for s in range(3)])
    target = viewer.add_image(stack, name="stack")
    widget.apply(target)
    finish(widget)
    seg = viewer.layers["stack segmentation"].data
    assert seg.shape == stack.shape
    for z in range(3):
        np.testing.assert_array_equal(seg[z], segment(trained, stack[z])[0])
    assert evaluate([truth] * 3, list(seg), trained.classes).pixel_accuracy > 0.8
    unsmoothed = segment(trained, stack[1], smoothing=0)[0]
    assert not np.array_equal(unsmoothed, seg[1])
    widget.smoothing.value = 0  # the knob applies to loaded models too
    widget.apply(target)
    finish(widget)
    np.testing.assert_array_equal(viewer.layers["stack segmentation"].data[1], unsmoothed)
    rgb_stack = viewer.add_image(np.zeros((2, 8, 8, 3), np.uint8), name="rgb", rgb=True)
    widget.apply(rgb_stack)  # a grey model cannot read RGB slices
    finish(widget)
    assert errors[-1] == "jungleseg: layer 'rgb' is an RGB layer, but grey images are expected"
    assert "rgb segmentation" not in viewer.layers and widget._worker is None


def test_live_update_retrains_after_painting(viewer_and_widget, finish):
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks()
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    widget.live.value = True
    finish(widget)
    first_model = widget.jungle
    assert first_model is not None  # switching live update on trained at once
    scribbles.paint((5, 5), 2)  # a dab of class 2 among the stripes
    finish(widget)
    assert widget.jungle is not first_model and errors == []  # painting retrained
    assert widget.jungle.n_classes == 2 and widget.last_seconds["train"] > 0
    after_paint = widget.jungle
    widget.live.value = False
    scribbles.paint((6, 6), 1)
    assert not widget._timer.isActive()
    finish(widget)
    assert widget.jungle is after_paint  # live update off: painting trains nothing


def test_cancel_stops_training(viewer_and_widget, finish):
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks((256, 256))
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    widget.max_depth.value, widget.width_m.value = 40, 4096
    widget.train_button.native.click()  # Train
    assert widget.train_button.text == "Cancel"
    widget.train_button.native.click()  # Cancel
    finish(widget)
    assert widget.status.value.startswith("Cancelled") and errors == []
    assert "texture segmentation" not in viewer.layers
    assert widget.train_button.enabled


def test_screenshot_with_the_widget_is_not_blank(make_napari_viewer, finish):
    from napari_plugin._widget import JungleWidget

    viewer = make_napari_viewer(show=True)  # the canvas draws only when shown (Xvfb)
    widget = JungleWidget(viewer)
    viewer.window.add_dock_widget(widget, name="jungleseg")
    image, truth = stripes_and_checks()
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    widget.train()
    finish(widget)
    shot = viewer.screenshot(canvas_only=False, flash=False)
    assert shot.ndim == 3 and shot.shape[0] > 200
    assert shot[..., :3].std() > 10  # not a blank window
    canvas = viewer.screenshot(canvas_only=True, flash=False)
    assert len(np.unique(canvas[..., :3].reshape(-1, 3), axis=0)) > 10


def test_depth_sample_trains_on_the_body_only(viewer_and_widget, tmp_path, finish):
    from napari_plugin._sample_data import depth_body

    viewer, widget, errors = viewer_and_widget
    (depth, image_kwargs, _), (truth, _, _), (paint, paint_kwargs, _) = depth_body()
    layer = viewer.add_image(depth, **image_kwargs)
    scribbles = viewer.add_labels(paint, **paint_kwargs)
    widget.image.value, widget.scribbles.value = layer, scribbles
    assert widget.kind.value == "depth" and widget.offset_unit == "m"
    widget.max_offset.value = 0.4
    widget.train()
    finish(widget)
    assert errors == []
    seg = viewer.layers["depth body segmentation"].data
    assert np.all(seg[depth == 0] == 0)  # background is never classified
    body = depth > 0
    assert np.mean(seg[body] == truth[body]) > 0.3  # 31 parts from one frame's scribbles
    widget.save(tmp_path / "body.h5")  # the sample's class names go into the model
    from jungleseg import load_model

    names = load_model(tmp_path / "body.h5").metadata["class_names"]
    assert names["1"] == "left_upper_head" and len(names) == widget.jungle.n_classes


def test_stages_and_soft_routing_knobs(viewer_and_widget, finish):
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks()
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    widget.stages.value, widget.soft.value = 2, 0.2
    widget.train()
    finish(widget)
    assert errors == []
    assert len(widget.jungle.context) == 1 and widget.jungle.params["auto_context"] == 2
    want = segment(widget.jungle, image, soft=0.2)[0]
    np.testing.assert_array_equal(viewer.layers["texture segmentation"].data, want)
    assert np.mean(want == truth) > 0.8
    widget.prior.value = 1.0  # the rare-classes knob: labels by probability / share
    more = scribbles.data.copy()
    more[::3][truth[::3] == 1] = 1  # class 1 painted far more: class 2 is the rarer
    scribbles.data = more
    widget.train()
    finish(widget)
    assert errors == []
    want = segment(widget.jungle, image, soft=0.2, prior_power=1.0)[0]
    np.testing.assert_array_equal(viewer.layers["texture segmentation"].data, want)
    assert not np.array_equal(want, segment(widget.jungle, image, soft=0.2)[0])


def test_a_first_press_says_that_kernels_compile(viewer_and_widget, monkeypatch, finish):
    """The first training after an install compiles kernels for most of a minute: the
    status line says so, rather than leave the user to wonder whether it hangs."""
    from jungleseg import _jit

    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks()
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    monkeypatch.setattr(_jit, "to_compile", lambda *commands: list(commands))
    widget.train_button.native.click()
    assert "First run only: compiling kernels" in widget.status.value
    finish(widget)
    assert errors == [] and widget.status.value.startswith("Done")
