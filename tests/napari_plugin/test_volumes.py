"""The widget with volumes and multichannel input, in a real napari viewer under Xvfb:
3-D training on paint on two slices, three stain layers as channels, a channels-last
layer split so that paint lands on the right pixels, and bad combinations."""
import numpy as np
import pytest

from jungleseg import evaluate

napari = pytest.importorskip("napari")

SCALE = (0.3, 0.1, 0.1)


@pytest.fixture
def viewer_and_widget(make_napari_viewer, monkeypatch):
    from .test_widget import docked_widget

    viewer, widget, errors = docked_widget(make_napari_viewer, monkeypatch)
    widget.n_estimators.value = 2
    return viewer, widget, errors


def cells(shape=(24, 96, 96), channels=False):
    from jungleseg.datasets.cells3d import render_cell_volume

    return render_cell_volume(shape, seed=2, channels=channels)


def two_slices(truth, slices=(8, 14)):
    from jungleseg.datasets.cells3d import paint_slices

    return paint_slices(truth, slices, fraction=0.05, seed=0)


def test_volume_mode_trains_on_two_slices_and_segments_the_volume(viewer_and_widget, finish):
    viewer, widget, errors = viewer_and_widget
    volume, truth = cells()
    layer = viewer.add_image(volume, name="cells", scale=SCALE, translate=(1.0, 2.0, 3.0))
    scribbles = viewer.add_labels(two_slices(truth), name="paint", scale=SCALE,
                                  translate=(1.0, 2.0, 3.0))
    widget.image.value, widget.scribbles.value = layer, scribbles
    widget.mode.value = "3-D volume"
    assert widget.preset.value == "napari_volume" and widget.offset_unit == "scale units"
    widget.detail.value = widget.detail.max  # 3 DAGs for sparse random strokes on 2 slices
    widget.max_offset.value = 0.6
    widget.train()
    finish(widget)
    assert errors == []
    family = widget.jungle.family
    assert family.name == "volume" and family.spacing == SCALE and family.max_offset == 0.6
    seg = viewer.layers["cells segmentation"]
    assert seg.data.shape == truth.shape
    np.testing.assert_allclose(seg.scale, SCALE)
    np.testing.assert_allclose(seg.translate, (1.0, 2.0, 3.0))
    assert evaluate([truth], [seg.data], [1, 2, 3]).mean_jaccard > 0.5  # all background: 0.29
    assert "segmented the volume" in widget.status.tooltip


def test_a_stack_without_voxel_size_in_3d_mode(viewer_and_widget, finish):
    """A z-stack opened from a plain TIFF has napari's scale 1: it opens in 2-D mode, and in
    3-D mode the offset range is in voxels, with the preset's reach (not a tenth of a voxel);
    a layer with a voxel size chosen next goes back to scale units."""
    viewer, widget, errors = viewer_and_widget
    volume, truth = cells()
    layer = viewer.add_image(volume, name="stack")
    widget.image.value = layer
    assert widget.mode.value == "2-D slices"
    widget.scribbles.value = viewer.add_labels(two_slices(truth), name="paint")
    widget.mode.value = "3-D volume"
    assert widget.offset_unit == "voxels" and widget.max_offset.value == pytest.approx(15)
    widget.train()
    finish(widget)
    assert errors == []
    family = widget.jungle.family
    assert family.spacing == (0.1, 0.1, 0.1) and family.max_offset == pytest.approx(1.5)
    assert evaluate([truth], [viewer.layers["stack segmentation"].data],
                    [1, 2, 3]).mean_jaccard > 0.5
    widget.image.value = viewer.add_image(volume, name="scaled", scale=SCALE)
    assert widget.mode.value == "3-D volume" and widget.offset_unit == "scale units"
    assert widget.max_offset.value == pytest.approx(1.5)


def test_three_stain_layers_train_and_segment_as_channels(viewer_and_widget, finish):
    viewer, widget, errors = viewer_and_widget
    volume, truth = cells(channels=True)
    stains = viewer.add_image(volume, channel_axis=3, name=["nuclear", "membrane", "cyto"],
                              scale=SCALE)
    scribbles = viewer.add_labels(two_slices(truth), name="paint", scale=SCALE)
    widget.reset_choices()
    widget.image.value = stains[0]
    widget.channel_layers.value = list(stains[1:])
    widget.kind.value = "channels"
    widget.scribbles.value = scribbles
    widget.mode.value = "3-D volume"
    widget.train()
    finish(widget)
    assert errors == []
    assert widget.jungle.family.n_channels == 3
    assert widget.jungle.metadata["channel_names"] == ["nuclear", "membrane", "cyto"]
    seg = viewer.layers["nuclear segmentation"].data
    assert seg.shape == truth.shape
    assert evaluate([truth], [seg], [1, 2, 3]).mean_jaccard > 0.5
    widget.apply(stains[0], channels=[stains[1]])  # two channels for a 3-channel model
    finish(widget)
    assert errors[-1] == "jungleseg: the model reads 3 channel(s), but layer 'nuclear' has 2"
    viewer.layers["nuclear"].scale = (0.3, 0.2, 0.1)
    widget.train()
    assert "channel layers differ: 'membrane' has scale" in errors[-1]


def test_paint_on_a_channels_last_layer_lands_on_the_right_pixels(viewer_and_widget, finish):
    viewer, widget, errors = viewer_and_widget
    rng = np.random.default_rng(0)
    h, w = 60, 80
    truth = np.ones((h, w), np.uint8)
    truth[:, w // 2:] = 2
    truth[h // 2:, :] += 2  # four quadrants, each its own pair of channel values
    means = {1: (0.2, 0.8, 0.5, 0.5, 0.5), 2: (0.8, 0.2, 0.5, 0.5, 0.5),
             3: (0.2, 0.2, 0.5, 0.5, 0.5), 4: (0.8, 0.8, 0.5, 0.5, 0.5)}
    image = np.stack([np.vectorize(lambda t, c=c: means[t][c])(truth) for c in range(5)], axis=2)
    image = (image + rng.normal(0, 0.05, image.shape)).astype(np.float32)
    layer = viewer.add_image(image, name="multi")  # (H, W, C): napari shows W x C planes
    widget.image.value, widget.kind.value = layer, "channels"
    painted_wrongly = viewer.add_labels(np.zeros((h, w), np.uint8), name="wrong")
    widget.scribbles.value = painted_wrongly
    painted_wrongly.data[5, 5] = 1
    widget.train()
    assert "covers world axes (1, 2), but the image's spatial axes are (0, 1)" in errors[-1]
    widget.channel_axis.value = "2"
    channels = widget.split_channels()
    assert [c.data.shape for c in channels] == [(h, w)] * 5 and "multi" not in viewer.layers
    viewer.layers.remove(painted_wrongly)
    scribbles = widget.new_scribbles()
    assert scribbles.data.shape == (h, w)
    for (r, c), value in [((10, 10), 1), ((10, 60), 2), ((45, 15), 3), ((50, 70), 4)]:
        for dr in range(-3, 4):  # short strokes, through napari's own painting
            scribbles.paint((r + dr, c), value, refresh=False)
            scribbles.paint((r, c + dr), value, refresh=False)
    painted = scribbles.data > 0
    np.testing.assert_array_equal(scribbles.data[painted], truth[painted])
    n_errors = len(errors)
    widget.train()
    finish(widget)
    assert len(errors) == n_errors
    seg = viewer.layers["multi [0] segmentation"].data
    assert np.mean(seg == truth) > 0.9
    rows, cols = np.indices(truth.shape)
    inside = (np.abs(rows - h // 2) > 12) & (np.abs(cols - w // 2) > 12)  # probes in one
    assert np.mean((seg == truth)[inside]) > 0.98                         # quadrant


def test_bad_combinations_are_notifications(viewer_and_widget, finish):
    viewer, widget, errors = viewer_and_widget
    volume, truth = cells((16, 64, 64))
    layer = viewer.add_image(volume, name="cells", scale=SCALE)
    scribbles = viewer.add_labels(two_slices(truth, (5, 9)), name="paint", scale=SCALE)
    widget.image.value, widget.scribbles.value = layer, scribbles
    widget.mode.value = "3-D volume"
    widget.train()
    finish(widget)
    assert errors == []
    flat = viewer.add_image(volume[3], name="flat")
    widget.apply(flat)  # a volume model on a 2-D layer
    finish(widget)
    assert errors[-1] == ("jungleseg: the model segments 3-D volumes, but layer 'flat' has "
                          "shape (64, 64): choose a volume layer or a 2-D model")
    assert "flat segmentation" not in viewer.layers
    shifted = viewer.add_labels(np.zeros_like(truth), name="shifted", scale=(0.3, 0.2, 0.2))
    widget.scribbles.value = shifted
    widget.train()
    assert "has scale (0.3, 0.2, 0.2) but the image has (0.3, 0.1, 0.1)" in errors[-1]


def test_sample_volumes_load_and_train(viewer_and_widget):
    from napari_plugin._sample_data import cells_volume_channels

    viewer, widget, errors = viewer_and_widget
    for data, kwargs, kind in cells_volume_channels():
        getattr(viewer, f"add_{kind}")(data, **kwargs)
    assert viewer.layers["nuclear stain"].data.shape == (64, 256, 256)
    np.testing.assert_allclose(viewer.layers["membrane stain"].scale, SCALE)
    np.testing.assert_allclose(viewer.layers["cell volume scribbles"].scale, SCALE)
