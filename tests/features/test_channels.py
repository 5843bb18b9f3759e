"""Channels chosen by name or index, moved last."""
import numpy as np
import pytest

from jungleseg.features import pick_channels

NAMES = ["dapi", "actin", "gfp"]


def test_channels_by_name_or_index_in_the_order_given():
    stack = np.arange(3 * 4 * 5).reshape(3, 4, 5)  # (C, H, W)
    got = pick_channels(stack, ["gfp", 0, -2], names=NAMES, axis=0)
    assert got.shape == (4, 5, 3)
    np.testing.assert_array_equal(got[..., 0], stack[2])
    np.testing.assert_array_equal(got[..., 1], stack[0])
    np.testing.assert_array_equal(got[..., 2], stack[1])
    np.testing.assert_array_equal(pick_channels(stack, axis=0), np.moveaxis(stack, 0, 2))


def test_unknown_channels_are_named():
    stack = np.zeros((4, 5, 3))
    with pytest.raises(ValueError, match=r"no channel named 'mito' \(channels: 'dapi'"):
        pick_channels(stack, ["mito"], names=NAMES)
    with pytest.raises(ValueError, match="none given"):
        pick_channels(stack, ["dapi"])
    with pytest.raises(ValueError, match=r"channel 3 is not a name or an index in -3..2"):
        pick_channels(stack, [3])
    with pytest.raises(ValueError, match="2 channel names for 3 channels"):
        pick_channels(stack, names=NAMES[:2])
