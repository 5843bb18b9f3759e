"""Which layers are picked by themselves, and the next action the status line names."""
import numpy as np
import pytest

napari = pytest.importorskip("napari")
from napari.layers import Image, Labels  # noqa: E402

from napari_plugin import _choices as choices  # noqa: E402
from napari_plugin._panel import STATUS_CHARS  # noqa: E402


def test_the_only_image_or_the_first_of_a_channel_set_is_picked():
    grey = Image(np.zeros((8, 8)), name="grey")
    assert choices.pick_image([grey]) == (grey, [])
    stains = [Image(np.zeros((4, 8, 8)), name=f"s{c}", blending="additive") for c in range(3)]
    assert choices.pick_image(stains) == (stains[0], stains[1:])
    other = Image(np.zeros((9, 9)), name="other")
    assert choices.pick_image([grey, other]) == (None, [])  # two unrelated images: ask
    assert choices.pick_image([]) == (None, [])


def test_outputs_are_never_inputs():
    seg = Labels(np.zeros((8, 8), np.uint8), name="grey segmentation")
    marked = Image(np.zeros((8, 8)), name="renamed", metadata={choices.OUTPUT_KEY: True})
    grey = Image(np.zeros((8, 8)), name="grey")
    assert choices.inputs([grey, seg, marked], Image) == [grey]
    assert choices.inputs([grey, seg, marked], Labels) == []


def test_scribbles_are_the_sparse_visible_labels_of_the_images_shape():
    paint = np.zeros((8, 8), np.uint8)
    paint[2, 2:5] = 1
    scribbles = Labels(paint, name="paint")
    truth = Labels(np.ones((8, 8), np.uint8), name="truth", visible=False)
    result = Labels(np.ones((8, 8), np.uint8), name="result")
    small = Labels(np.zeros((4, 4), np.uint8), name="small")
    assert choices.pick_scribbles([truth, scribbles, small], (8, 8), (1, 1)) is scribbles
    assert choices.pick_scribbles([result, scribbles], (8, 8), (1, 1)) is scribbles
    assert choices.pick_scribbles([small], (8, 8), (1, 1)) is None
    twin = Labels(paint.copy(), name="twin")
    assert choices.pick_scribbles([scribbles, twin], (8, 8), (1, 1)) is None  # ask


def test_a_stack_with_a_voxel_size_is_a_volume():
    assert choices.looks_like_volume(Image(np.zeros((4, 8, 8)), scale=(0.3, 0.1, 0.1)), 3)
    assert not choices.looks_like_volume(Image(np.zeros((4, 8, 8))), 3)  # frames
    assert not choices.looks_like_volume(Image(np.zeros((8, 8)), scale=(0.1, 0.1)), 2)


def test_the_next_action_in_plain_words():
    image = Image(np.zeros((8, 8)), name="grey")
    paint = Labels(np.zeros((8, 8), np.uint8), name="paint")
    assert "File > Open Sample" in choices.next_action(0, None, None, False)
    assert "Choose the image" in choices.next_action(2, None, None, False)
    assert "'New'" in choices.next_action(1, image, None, False)
    assert choices.next_action(1, image, paint, False).startswith("Paint a few strokes")
    paint.data[1, 1] = 2
    assert "Only label 2" in choices.next_action(1, image, paint, False)
    paint.data[5, 5] = 1
    assert choices.next_action(1, image, paint, False).startswith("Ready: 2 classes")
    assert "where the segmentation is wrong" in choices.next_action(1, image, paint, True)


def test_the_layers_of_napari_channel_axis_are_a_channel_set(make_napari_viewer):
    # napari draws the first channel opaque (translucent_no_depth) and adds the others
    # over it: the set is picked although its first layer is not additive
    viewer = make_napari_viewer()
    stains = viewer.add_image(np.zeros((2, 16, 16), np.float32), channel_axis=0,
                              name=["dapi", "gfp"])
    assert stains[0].blending != "additive"
    assert choices.pick_image(choices.inputs(viewer.layers, Image)) == (stains[0], stains[1:])
    one, two = (Image(np.zeros((16, 16)), name=name) for name in ("one", "two"))
    assert choices.pick_image([one, two]) == (None, [])  # two images drawn opaque: ask


def test_a_channels_last_layer_is_told_to_be_split():
    # napari draws (H, W, 2) as H planes of W x 2: paint on it lands on the wrong axes
    two = Image(np.zeros((64, 48, 2)), name="two stains")
    assert not two.rgb
    said = choices.next_action(1, two, None, False)
    assert "channels last" in said and "'channel axis' to 2" in said
    assert said.endswith("'Split channels into layers'.") and len(said) <= STATUS_CHARS
    stack = Image(np.zeros((5, 64, 48)), name="stack")  # a z-stack: its slices are fine
    assert "Split" not in choices.next_action(1, stack, None, False)
