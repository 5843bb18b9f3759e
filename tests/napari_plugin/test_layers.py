"""Reading layers as one input: channels from several layers or a channel axis, spatial
axes as napari lines layers up, and scribble layers that do or do not line up."""
from types import SimpleNamespace

import numpy as np
import pytest

from napari_plugin import _layers as layers


def layer(data, name="image", rgb=False, scale=None, translate=None):
    ndim = np.ndim(data) - rgb
    return SimpleNamespace(name=name, data=data, rgb=rgb, ndim=ndim,
                           scale=scale or (1.0,) * ndim, translate=translate or (0.0,) * ndim)


def test_several_layers_are_the_channels_of_one_input():
    a, b = np.zeros((4, 5, 6)), np.ones((4, 5, 6))
    inp = layers.read_input([layer(a, "a", scale=(3, 1, 1)), layer(b, "b", scale=(3, 1, 1))],
                            "grey", None, world_ndim=3)
    assert inp.kind == "channels" and np.shape(inp.data) == (4, 5, 6, 2)
    np.testing.assert_array_equal(inp.data[..., 1], b)
    assert inp.world_axes == (0, 1, 2) and inp.scale == (3, 1, 1) and inp.shape == (4, 5, 6)
    assert inp.channel_names == ("a", "b")
    with pytest.raises(ValueError, match="channel layers differ: 'b' has shape"):
        layers.read_input([layer(a, "a"), layer(b[:2], "b")], "grey", None, 3)
    with pytest.raises(ValueError, match="'b' has scale"):
        layers.read_input([layer(a, "a"), layer(b, "b", scale=(1, 2, 2))], "grey", None, 3)


def test_channel_layers_that_view_one_array_are_read_without_a_copy():
    from napari_plugin._layers import _stacked

    data = np.arange(2 * 5 * 6 * 3, dtype=np.float32).reshape(2, 5, 6, 3)
    views = [data[..., c] for c in range(3)]  # as napari's channel_axis shows them
    joined = _stacked(views)
    assert np.shares_memory(joined, data) and not joined.flags.writeable
    np.testing.assert_array_equal(joined, data)
    for arrays in ([views[0], views[2], views[1]], [views[0], views[1], views[1]],
                   [v.copy() for v in views], [views[0], data.copy()[..., 1]],
                   views[::-1], views[:2]):
        stacked = _stacked(arrays)  # not one array's channels in order: a copy
        assert not np.shares_memory(stacked, data)
        np.testing.assert_array_equal(stacked, np.stack(arrays, axis=-1))


def test_a_channel_axis_is_moved_last_and_leaves_the_spatial_axes():
    data = np.arange(3 * 4 * 5).reshape(3, 4, 5)
    inp = layers.read_input([layer(data, scale=(1, 0.5, 0.25))], "grey", 0, world_ndim=3)
    assert np.shape(inp.data) == (4, 5, 3) and inp.world_axes == (1, 2)
    assert inp.scale == (0.5, 0.25) and inp.channel_names == ("image[0]", "image[1]",
                                                               "image[2]")
    np.testing.assert_array_equal(inp.data[..., 2], data[2])


def test_scribbles_must_cover_the_spatial_axes():
    channels_last = layer(np.zeros((6, 8, 3)))
    inp = layers.read_input([channels_last], "channels", None, world_ndim=3)
    assert inp.world_axes == (0, 1) and inp.shape == (6, 8)
    # a (6, 8) Labels layer lines up with the last two world axes: W x C
    with pytest.raises(ValueError, match=r"covers world axes \(1, 2\)"):
        layers.check_scribbles(inp, layer(np.zeros((6, 8), int), "paint"), world_ndim=3)
    first = layers.read_input([layer(np.zeros((3, 6, 8)))], "grey", 0, world_ndim=3)
    layers.check_scribbles(first, layer(np.zeros((6, 8), int), "paint"), world_ndim=3)
    with pytest.raises(ValueError, match="has translate"):
        layers.check_scribbles(first, layer(np.zeros((6, 8), int), "paint",
                                            translate=(0.0, 1.0)), world_ndim=3)
    with pytest.raises(ValueError, match=r"shape \(6, 7\)"):
        layers.check_scribbles(first, layer(np.zeros((6, 7), int), "paint"), world_ndim=3)


def test_visible_index_follows_scale_and_translate():
    inp = layers.read_input([layer(np.zeros((10, 6, 8)), scale=(0.3, 0.1, 0.1),
                                   translate=(1.0, 0, 0))], "grey", None, world_ndim=3)
    assert layers.visible_index(inp, (1.0 + 0.3 * 4, 0.2, 0.3), 1) == (4,)
    assert layers.visible_index(inp, (99.0, 0.0, 0.0), 2) == (9, 0)
