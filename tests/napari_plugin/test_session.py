"""The widget's napari-free logic: layer arrays in, estimators and results out."""
import numpy as np
import pytest

from jungleseg import segment
from jungleseg.config import load_preset
from napari_plugin import _session as session

from .scenes import stripes_and_checks, strokes


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
    preset = load_preset("napari")
    grey = session.estimator(preset, "grey", 1, 2, 32, 6, 9.6)
    assert grey.features.input == "grey" and grey.features.max_offset == 10
    assert (grey.n_estimators, grey.max_width, grey.max_depth) == (2, 32, 6)
    multi = session.estimator(preset, "channels", 5, 3, 64, 8, 8)
    assert multi.features.input == "channels" and multi.features.n_input_channels == 5
    depth = session.estimator(load_preset("kinect"), "depth", 1, 3, 64, 8, 0.3)
    assert depth.features.name == "depth" and depth.features.max_offset == pytest.approx(0.3)


@pytest.mark.parametrize("search", ["clustersearch", "clustersearch-alternating"])
def test_a_preset_may_ask_for_clustersearch(search):
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (40, 40)).astype(np.uint8)  # noise: no split is enough
    paint = np.zeros((40, 40), np.uint8)
    paint[::3, ::3] = rng.integers(1, 4, paint[::3, ::3].shape)
    preset = session.load_preset("napari").with_overrides({"jungle.search": search})
    model = session.estimator(preset, "grey", 1, 2, 2, 6, 8)
    session.train(model, image, paint, "grey")
    assert model.search == search and model.jungle_.params["search"] == search
    for dag in model.jungle_.dags:
        split = dag.left >= 0
        children = np.concatenate([dag.left[split], dag.right[split]])
        assert len(np.unique(children)) < len(children)  # M = 2: the levels merged


def test_lazy_stacks_are_read_a_slice_at_a_time():
    da = pytest.importorskip("dask.array")
    image, truth = stripes_and_checks()
    stack = np.stack([image, image[:, ::-1], image])
    lazy = da.from_array(stack, chunks=(1, *image.shape))
    paint = np.zeros(stack.shape, np.uint8)
    paint[0] = strokes(truth)
    model = session.estimator(load_preset("napari"), "grey", 1, 2, 32, 6, 8)
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


def test_a_stack_of_small_slices_goes_several_at_a_time_after_the_visible_one(monkeypatch):
    image, truth = stripes_and_checks()
    stack = np.stack([np.roll(image, k, axis=1) for k in range(5)])
    paint = np.zeros(stack.shape, np.uint8)
    paint[0] = strokes(truth)
    model = session.estimator(load_preset("napari"), "grey", 1, 2, 32, 6, 8)
    session.train(model, stack, paint, "grey")
    streamed = []

    def recording(function, items):
        for result in session_ordered_map(function, items):
            streamed.append(result[0])
            yield result

    session_ordered_map = session.ordered_map
    monkeypatch.setattr(session, "ordered_map", recording)
    results = list(session.segment_stack(model.jungle_, stack, first=(3,)))
    assert [index for index, _, _ in results] == [(3,), (0,), (1,), (2,), (4,)]
    assert streamed == [(0,), (1,), (2,), (4,)]  # all but the visible slice
    for index, labels, proba in results:
        expected_labels, expected_proba = segment(model.jungle_, stack[index])
        np.testing.assert_array_equal(labels, expected_labels)
        np.testing.assert_array_equal(proba, expected_proba)
    streamed.clear()
    monkeypatch.setattr(session, "STREAM_PIXELS", image.size - 1)  # slices now "large"
    assert len(list(session.segment_stack(model.jungle_, stack))) == 5 and streamed == []


def test_guess_kind():
    assert session.guess_kind(np.zeros((4, 4, 3), np.uint8), rgb=True) == "rgb"
    assert session.guess_kind(np.array([[0, 1200]], np.uint16), rgb=False) == "depth"
    assert session.guess_kind(np.ones((4, 4), np.float32), rgb=False) == "grey"


def test_a_16_bit_micrograph_with_a_few_zeros_is_grey_not_depth():
    # a fluorescence camera's 16-bit image: dark background down to 0 here and there,
    # values running up from it; a depth frame has zeros (no depth) and then nothing
    # nearer than the sensor's range (hundreds of millimetres)
    micrograph = np.random.default_rng(0).poisson(8, (64, 64)).astype(np.uint16)
    micrograph[20:30, 20:30] += 200
    assert micrograph.min() == 0
    assert session.guess_kind(micrograph, rgb=False) == "grey"
    assert session.guess_kind(micrograph[None].repeat(3, 0), rgb=False) == "grey"
    frame = np.where(micrograph > 100, 1500, 0).astype(np.uint16)
    frame[:5] = 640
    assert session.guess_kind(frame, rgb=False) == "depth"
    assert session.guess_kind(micrograph + 1, rgb=False) == "grey"  # no zeros


def test_training_refuses_hostile_layers():
    image, truth = stripes_and_checks()
    model = session.estimator(load_preset("napari"), "grey", 1, 2, 16, 4, 8)
    for bad, message in ((np.where(truth > 0, np.nan, image / 255.0), "NaN"),
                         (image.astype(np.complex64), "complex")):
        with pytest.raises(ValueError, match=message):
            session.train(model, bad, strokes(truth), "grey")
    rgb = session.estimator(load_preset("napari"), "rgb", 3, 2, 16, 4, 8)
    with pytest.raises(ValueError, match="must lie in \\[0, 1\\]"):
        session.train(rgb, np.dstack([image.astype(np.float32)] * 3), strokes(truth), "rgb")


def test_a_volume_without_voxel_size_has_offsets_in_voxels():
    """napari's default scale (1 on every axis) gives no voxel size: the preset's lengths
    (micrometres at 0.1 um a pixel) keep their reach in voxels instead of shrinking to a
    tenth of a voxel, and the offset range is in voxels."""
    preset = load_preset("napari_volume")
    assert session.has_voxel_size((0.3, 0.1, 0.1)) and not session.has_voxel_size((1, 1, 1))
    assert not session.has_voxel_size((5.0, 1, 1, 1))  # a time axis is not a voxel axis
    assert session.offset_unit(preset, (1, 1, 1)) == 0.1
    assert session.offset_unit(load_preset("napari"), (1, 1, 1)) == 0.1  # the volume preset's
    assert session.offset_unit(preset, (0.5, 0.2, 0.2)) == 1.0
    plain = session.volume_estimator(preset, 1, (1.0, 1.0, 1.0), 2, 16, 6, 15.0)
    assert plain.features.spacing == (0.1, 0.1, 0.1)
    assert plain.features.max_offset == pytest.approx(1.5)
    scaled = session.volume_estimator(preset, 1, (0.5, 0.2, 0.2), 2, 16, 6, 1.5)
    assert scaled.features.spacing == (0.5, 0.2, 0.2) and scaled.features.max_offset == 1.5


def test_volume_parts_equal_the_whole_volume():
    from jungleseg import segment
    from jungleseg.datasets.cells3d import paint_slices, render_cell_volume

    volume, truth = render_cell_volume((12, 48, 48), seed=3)
    stack = np.stack([volume, volume[::-1]])  # two volumes: a time series
    paint = np.zeros(stack.shape, np.uint8)
    paint[1] = paint_slices(truth[::-1], [4, 8], fraction=0.05)
    model = session.volume_estimator(load_preset("napari_volume"), 1, (0.3, 0.1, 0.1), 2, 16, 6,
                                     0.5, smoothing=2)
    assert model.features.spacing == (0.3, 0.1, 0.1) and model.features.max_offset == 0.5
    prepared = session.train_volumes(model, stack, paint, "grey")
    assert list(prepared) == [(1,)]
    parts = list(session.segment_volumes(model.jungle_, stack, first=(1,), first_slice=5,
                                         prepared=prepared))
    assert [(index, z) for index, z, _, _ in parts] == [
        ((1,), slice(5, 6)), ((1,), slice(0, 12)), ((0,), slice(0, 12))]
    for index, z, labels, proba in parts:
        whole_labels, whole = segment(model.jungle_, stack[index])
        np.testing.assert_array_equal(proba, whole[z])
        np.testing.assert_array_equal(labels, whole_labels[z])
    with pytest.raises(ValueError, match="segments 3-D volumes, but layer 'x' has shape"):
        session.check_model_input(model.jungle_, "grey", (48, 48), False, "layer 'x'")
    with pytest.raises(ValueError, match="reads 1 channel"):
        session.check_model_input(model.jungle_, "channels", (12, 48, 48, 2), False, "x")


def _same_jungle(a, b) -> bool:
    return (len(a.dags) == len(b.dags) and a.metadata == b.metadata
            and all(np.array_equal(getattr(x, f), getattr(y, f))
                    for x, y in zip(a.dags, b.dags) for f in x.__dataclass_fields__))


def test_kept_channels_serve_only_the_same_content():
    image, truth = stripes_and_checks()
    paint = strokes(truth)
    more = paint.copy()
    more[truth.shape[0] // 3, 10:30] = paint[truth.shape[0] // 4, truth.shape[1] // 8]
    kept = {}

    def trained(picture, scribbles, channels):
        model = session.estimator(load_preset("napari"), "grey", 1, 2, 16, 6, 8, seed=3)
        prepared = session.train(model, picture, scribbles, "grey", channels=channels)
        return model.jungle_, next(iter(prepared.values()))[0]

    _, store = trained(image, paint, kept)
    again, reused = trained(image, more, kept)  # another stroke: same image, same channels
    assert reused is store
    assert _same_jungle(again, trained(image, more, None)[0])
    edited = image.copy()
    edited[:4] = 255 - edited[:4]  # the image changed in place: channels computed anew
    changed, fresh = trained(edited, more, kept)
    assert fresh is not store and kept["store"] is fresh
    assert _same_jungle(changed, trained(edited, more, None)[0])
    assert not _same_jungle(changed, again)
    for bad in (np.where(truth > 0, np.nan, image / 255.0), image.astype(np.complex64)):
        with pytest.raises(ValueError, match="NaN|complex"):
            trained(bad, paint, kept)


def test_volume_training_keeps_its_channels_for_the_next():
    from jungleseg.datasets.cells3d import paint_slices, render_cell_volume

    volume, truth = render_cell_volume((10, 40, 40), seed=2)
    paint = paint_slices(truth, [3, 6], fraction=0.05)
    more = paint_slices(truth, [3, 6, 8], fraction=0.05, seed=1)
    kept = {}

    def trained(scribbles, channels):
        model = session.volume_estimator(load_preset("napari_volume"), 1, (0.3, 0.1, 0.1), 2,
                                         16, 6, 0.5, seed=1)
        prepared = session.train_volumes(model, volume, scribbles, "grey", channels=channels)
        return model.jungle_, prepared[()][0]

    _, store = trained(paint, kept)
    again, reused = trained(more, kept)  # more paint on the same volume: its channels
    assert reused is store
    assert _same_jungle(again, trained(more, None)[0])
    session.train_volumes(session.volume_estimator(load_preset("napari_volume"), 1,
                                                   (0.3, 0.1, 0.1), 2, 16, 6, 1.0),
                          volume, more, "grey", channels=kept)
    assert kept["store"] is not store  # other features (a longer reach): other channels


def test_inference_knobs_are_the_models_own_where_it_can_use_them():
    import dataclasses
    from pathlib import Path

    from jungleseg import load_model

    old = load_model(Path(__file__).resolve().parents[1] / "data" / "model_format1.h5")
    old = dataclasses.replace(old, params={**old.params, "smoothing": 2, "soft": 0.3,
                                           "prior_power": 0.5})
    assert session.inference_knobs(old) == (2, 0.0, 0.0)  # no spreads, no class shares
    image, truth = stripes_and_checks()
    model = session.estimator(load_preset("napari"), "grey", 1, 2, 16, 6, 8, seed=3,
                              smoothing=1)
    model.set_params(soft=0.3, prior_power=0.5)
    session.train(model, image, strokes(truth), "grey")
    assert session.inference_knobs(model.jungle_) == (1, 0.3, 0.5)


def test_the_status_of_a_first_run_says_that_kernels_compile(monkeypatch):
    from jungleseg import _jit

    monkeypatch.setattr(_jit, "to_compile", lambda *commands: list(commands))
    first = session.running_status("cells", segmenting=False, features_kept=False)
    seconds = _jit.COMPILE_SECONDS["train"] + _jit.COMPILE_SECONDS["segment"]
    assert first.startswith("Computing the image's features, then training...")
    assert f"First run only: compiling kernels, about {seconds} s more." in first
    assert first.endswith("(press Cancel to stop)")
    applying = session.running_status("stack", segmenting=True, features_kept=False)
    assert applying.startswith("Segmenting every slice of stack...")
    assert f"about {_jit.COMPILE_SECONDS['segment']} s" in applying
    monkeypatch.setattr(_jit, "to_compile", lambda *commands: [])
    assert session.running_status("cells", segmenting=False, features_kept=True) == (
        "Training on your strokes... (press Cancel to stop)")


def test_a_loaded_models_labels_take_a_byte_a_pixel(tmp_path):
    """A model file holds its classes as int64; its segmentation layer is uint8, as a
    trained model's is (8x less memory on a large stack)."""
    from jungleseg import load_model, save_model

    image, truth = stripes_and_checks()
    model = session.estimator(load_preset("napari"), "grey", 1, 2, 16, 6, 8, seed=0)
    session.train(model, image, strokes(truth), "grey")
    loaded = load_model(save_model(model.jungle_, tmp_path / "m.h5"))
    assert loaded.classes.dtype == np.int64 and session.label_dtype(loaded) == np.uint8
    stack = np.stack([image, image])
    (_, first, _), (_, second, _) = session.segment_stack(loaded, stack)
    assert first.dtype == second.dtype == np.uint8
    np.testing.assert_array_equal(first, segment(model.jungle_, image)[0])
