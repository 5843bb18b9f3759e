"""DepthFeatures: depth units and the probe margin."""
import numpy as np
import pytest

from jungleseg.features import depth_in_metres


def test_depth_units():
    mm = np.array([[0, 1500], [2500, 4000]], np.uint16)
    metres, units = depth_in_metres(mm)
    assert units == "mm" and metres[1, 0] == pytest.approx(2.5)
    assert depth_in_metres(mm.astype(np.float32) / 1000)[1] == "m"
    with pytest.raises(ValueError, match="millimetres"):
        depth_in_metres(mm.astype(np.float32), units="m")
    with pytest.raises(ValueError, match="non-negative"):
        depth_in_metres(np.array([[-1.0]]))
    with pytest.raises(ValueError, match="8-bit"):
        depth_in_metres(np.zeros((2, 2), np.uint8))
