"""The napari plugin: its napari-free session logic, and the dock widget in a real viewer
under Xvfb (``make_napari_viewer``)."""
import numpy as np
import pytest

from jungleseg import evaluate, segment
from napari_plugin import _session as session

napari = pytest.importorskip("napari")


def stripes_and_checks(shape=(96, 128), seed=0):
    """Grey image of two textures with equal mean (vertical stripes left, fine checks right)
    and its ground truth 1 | 2: intensity alone cannot separate them."""
    rng = np.random.default_rng(seed)
    h, w = shape
    r, c = np.mgrid[:h, :w]
    stripes = 0.5 + 0.4 * np.sign(np.sin((c + 0.5) * np.pi / 3))
    checks = 0.5 + 0.4 * np.sign(np.sin((r + 0.5) * np.pi / 2) * np.sin((c + 0.5) * np.pi / 2))
    truth = np.where(c < w // 2, 1, 2).astype(np.uint8)
    image = np.where(truth == 1, stripes, checks) + rng.normal(0, 0.05, shape)
    return image.astype(np.float32), truth


def strokes(truth):
    """A few short painted lines per class, well inside the regions."""
    paint = np.zeros_like(truth)
    h, w = truth.shape
    for row in (h // 4, h // 2, 3 * h // 4):
        paint[row, w // 8: w // 8 + 20] = 1
        paint[row, w - w // 8 - 20: w - w // 8] = 2
    return paint


# ---------------------------------------------------------------- napari-free session
def test_painted_indices_name_the_problem():
    image, truth = stripes_and_checks()
    with pytest.raises(ValueError, match="no labels painted"):
        session.painted_indices(image.shape, np.zeros_like(truth), "grey")
    one = np.zeros_like(truth)
    one[5, 5:9] = 2
    with pytest.raises(ValueError, match="only class 2 is painted"):
        session.painted_indices(image.shape, one, "grey")
    with pytest.raises(ValueError, match="shape"):
        session.painted_indices(image.shape, strokes(truth)[:-1], "grey")
    with pytest.raises(ValueError, match="rgb images need at least 3 axes"):
        session.painted_indices(image.shape, strokes(truth), "rgb")
    with pytest.raises(ValueError, match="3 or 4"):
        session.painted_indices(np.dstack([image] * 5).shape, strokes(truth), "rgb")
    stack = np.stack([image, image, image])
    paint = np.zeros(stack.shape, np.uint8)
    paint[2] = strokes(truth)
    assert session.painted_indices(stack.shape, paint, "grey") == [(2,)]


def test_visible_slice_comes_first():
    assert session.slice_indices((4, 10, 10), "grey", (2,)) == [(2,), (0,), (1,), (3,)]
    assert session.slice_indices((10, 10, 3), "rgb") == [()]
    assert session.slice_indices((2, 3, 10, 10), "grey", (1, 2))[0] == (1, 2)


def test_uncertainty_is_one_minus_the_winning_probability():
    proba = np.random.default_rng(0).dirichlet(np.ones(5), size=(7, 9)).astype(np.float32)
    before = proba.copy()
    got = session.uncertainty(proba)
    assert got.dtype == np.float32 and got.shape == (7, 9)
    np.testing.assert_array_equal(got, np.float32(1) - proba.max(axis=-1))
    np.testing.assert_array_equal(proba, before)  # the probabilities are left alone
    np.testing.assert_array_equal(session.uncertainty(proba[..., :1]), 1 - proba[..., 0])


def test_estimator_follows_the_image_kind():
    preset = session.load_preset("napari")
    grey = session.estimator(preset, "grey", 1, 2, 32, 6, 9.6)
    assert grey.features.input == "grey" and grey.features.max_offset == 10
    assert (grey.n_estimators, grey.max_width, grey.max_depth) == (2, 32, 6)
    multi = session.estimator(preset, "channels", 5, 3, 64, 8, 8)
    assert multi.features.input == "channels" and multi.features.n_input_channels == 5
    depth = session.estimator(session.load_preset("kinect"), "depth", 1, 3, 64, 8, 0.3)
    assert depth.features.name == "depth" and depth.features.max_offset == pytest.approx(0.3)


def test_lazy_stacks_are_read_a_slice_at_a_time():
    da = pytest.importorskip("dask.array")
    image, truth = stripes_and_checks()
    stack = np.stack([image, image[:, ::-1], image])
    lazy = da.from_array(stack, chunks=(1, *image.shape))
    paint = np.zeros(stack.shape, np.uint8)
    paint[0] = strokes(truth)
    model = session.estimator(session.load_preset("napari"), "grey", 1, 2, 32, 6, 8)
    prepared = session.train(model, lazy, paint, "grey")
    assert list(prepared) == [(0,)]  # the painted slice's channels, kept for segmentation
    results = {index: (labels, proba) for index, labels, proba in
               session.segment_stack(model.jungle_, lazy, first=(1,), prepared=prepared)}
    assert list(results) == [(1,), (0,), (2,)]
    for z in range(3):  # reused channels or not, the same segmentation
        labels, proba = segment(model.jungle_, stack[z])
        np.testing.assert_array_equal(results[(z,)][0], labels)
        np.testing.assert_array_equal(results[(z,)][1], proba)
    assert session.guess_kind(da.zeros((3, 8, 8), dtype=np.uint16), rgb=False) == "depth"


def test_guess_kind():
    assert session.guess_kind(np.zeros((4, 4, 3), np.uint8), rgb=True) == "rgb"
    assert session.guess_kind(np.array([[0, 1200]], np.uint16), rgb=False) == "depth"
    assert session.guess_kind(np.ones((4, 4), np.float32), rgb=False) == "grey"


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


def test_manifest_is_valid():
    from npe2 import PluginManifest

    manifest = PluginManifest.from_distribution("jungleseg")
    manifest.validate_imports()
    assert manifest.name == "jungleseg"
    assert {w.display_name for w in manifest.contributions.widgets} == {
        "Decision jungle segmentation"}
    assert len(manifest.contributions.sample_data) == 3


# ---------------------------------------------------------------- the widget in a viewer
@pytest.fixture
def viewer_and_widget(make_napari_viewer, monkeypatch):
    from napari_plugin import _widget

    errors = []
    monkeypatch.setattr(_widget, "show_error", errors.append)
    viewer = make_napari_viewer()
    widget = _widget.JungleWidget(viewer)
    viewer.window.add_dock_widget(widget, name="jungleseg")
    widget.n_estimators.value, widget.width_m.value, widget.max_depth.value = 3, 32, 8
    widget.max_offset.value = 8
    return viewer, widget, errors


def add_painted(viewer, image, truth, name="texture"):
    layer = viewer.add_image(image, name=name)
    scribbles = viewer.add_labels(strokes(truth) if truth.ndim == 2 else truth, name="scribbles")
    return layer, scribbles


def test_train_shows_segmentation_close_to_truth(viewer_and_widget):
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks()
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    assert widget.kind.value == "grey"
    widget.train()
    widget.wait()
    assert errors == []
    seg = viewer.layers["texture segmentation"]
    assert isinstance(seg, napari.layers.Labels) and seg.data.shape == truth.shape
    assert np.mean(seg.data == truth) > 0.8
    inside = np.abs(np.arange(truth.shape[1]) - truth.shape[1] // 2) > 12  # probes stay in
    assert np.mean((seg.data == truth)[:, inside]) > 0.95                 # one texture
    unsure = viewer.layers["texture uncertainty"].data
    assert unsure.shape == truth.shape and 0 <= unsure.min() and unsure.max() <= 1
    assert unsure[truth != seg.data].mean() > unsure[truth == seg.data].mean()
    assert "trained 3 DAGs" in widget.status.value or "3 DAGs" in widget.status.value
    # the segmentation uses the scribble layer's colours
    np.testing.assert_allclose(seg.get_color(2), scribbles.get_color(2))


def test_errors_become_notifications(viewer_and_widget):
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks()
    layer = viewer.add_image(image, name="texture")
    empty = viewer.add_labels(np.zeros_like(truth), name="empty")
    widget.image.value, widget.scribbles.value = layer, empty
    widget.train()
    assert "no labels painted" in errors[-1]
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


def test_save_load_and_apply_to_a_stack(viewer_and_widget, tmp_path):
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks()
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    widget.smoothing.value = 2
    widget.train()
    widget.wait()
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
    widget.wait()
    seg = viewer.layers["stack segmentation"].data
    assert seg.shape == stack.shape
    for z in range(3):
        np.testing.assert_array_equal(seg[z], segment(trained, stack[z])[0])
    assert evaluate([truth] * 3, list(seg), trained.classes).pixel_accuracy > 0.8
    unsmoothed = segment(trained, stack[1], smoothing=0)[0]
    assert not np.array_equal(unsmoothed, seg[1])
    widget.smoothing.value = 0  # the knob applies to loaded models too
    widget.apply(target)
    widget.wait()
    np.testing.assert_array_equal(viewer.layers["stack segmentation"].data[1], unsmoothed)
    rgb_stack = viewer.add_image(np.zeros((2, 8, 8, 3), np.uint8), name="rgb", rgb=True)
    widget.apply(rgb_stack)  # a grey model cannot read RGB slices
    widget.wait()
    assert errors[-1] == "jungleseg: layer 'rgb' is an RGB layer, but grey images are expected"
    assert "rgb segmentation" not in viewer.layers and widget._worker is None


def test_live_update_retrains_after_painting(viewer_and_widget):
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks()
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    widget.live.value = True
    widget.wait()
    first_model = widget.jungle
    assert first_model is not None  # switching live update on trained at once
    scribbles.paint((5, 5), 2)  # a dab of class 2 among the stripes
    widget.wait()
    assert widget.jungle is not first_model and errors == []  # painting retrained
    assert widget.jungle.n_classes == 2 and widget.last_seconds["train"] > 0
    after_paint = widget.jungle
    widget.live.value = False
    scribbles.paint((6, 6), 1)
    assert not widget._timer.isActive()
    widget.wait()
    assert widget.jungle is after_paint  # live update off: painting trains nothing


def test_cancel_stops_training(viewer_and_widget):
    viewer, widget, errors = viewer_and_widget
    image, truth = stripes_and_checks((256, 256))
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    widget.max_depth.value, widget.width_m.value = 40, 4096
    widget.train()
    widget.cancel()
    widget.wait()
    assert widget.status.value == "cancelled" and errors == []
    assert "texture segmentation" not in viewer.layers
    assert widget.train_button.enabled


def test_screenshot_with_the_widget_is_not_blank(make_napari_viewer):
    from napari_plugin._widget import JungleWidget

    viewer = make_napari_viewer(show=True)  # the canvas draws only when shown (Xvfb)
    widget = JungleWidget(viewer)
    viewer.window.add_dock_widget(widget, name="jungleseg")
    image, truth = stripes_and_checks()
    layer, scribbles = add_painted(viewer, image, truth)
    widget.image.value, widget.scribbles.value = layer, scribbles
    widget.train()
    widget.wait()
    shot = viewer.screenshot(canvas_only=False, flash=False)
    assert shot.ndim == 3 and shot.shape[0] > 200
    assert shot[..., :3].std() > 10  # not a blank window
    canvas = viewer.screenshot(canvas_only=True, flash=False)
    assert len(np.unique(canvas[..., :3].reshape(-1, 3), axis=0)) > 10


def test_depth_sample_trains_on_the_body_only(viewer_and_widget, tmp_path):
    from napari_plugin._sample_data import depth_body

    viewer, widget, errors = viewer_and_widget
    (depth, image_kwargs, _), (truth, _, _), (paint, paint_kwargs, _) = depth_body()
    layer = viewer.add_image(depth, **image_kwargs)
    scribbles = viewer.add_labels(paint, **paint_kwargs)
    widget.image.value, widget.scribbles.value = layer, scribbles
    assert widget.kind.value == "depth" and widget.max_offset.label == "offset range (m)"
    widget.max_offset.value = 0.4
    widget.train()
    widget.wait()
    assert errors == []
    seg = viewer.layers["depth body segmentation"].data
    assert np.all(seg[depth == 0] == 0)  # background is never classified
    body = depth > 0
    assert np.mean(seg[body] == truth[body]) > 0.3  # 31 parts from one frame's scribbles
    widget.save(tmp_path / "body.h5")  # the sample's class names go into the model
    from jungleseg import load_model

    names = load_model(tmp_path / "body.h5").metadata["class_names"]
    assert names["1"] == "left_upper_head" and len(names) == widget.jungle.n_classes
