"""Kinect-style depth comparison features."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import Interval, Real
from . import _kernels as kernels
from ._base import FeatureFamily, Window


def depth_in_metres(depth: ArrayLike, units: str = "auto") -> tuple[np.ndarray, str]:
    """Depth as float32 metres with 0 for background or invalid pixels, and the units read.

    ``units='auto'`` takes integer images (16-bit PNG) and float images whose largest
    value exceeds 20 as millimetres, other float images as metres.
    """
    depth = np.asarray(depth)
    if depth.ndim != 2:
        raise ValueError(f"a depth image must be 2-D (H, W), got shape {depth.shape}")
    if depth.dtype.itemsize == 1:
        raise ValueError("an 8-bit depth image cannot hold depth: expected 16-bit millimetres "
                         "or floating-point metres")
    # NaN passes through min and max and fails both comparisons: two passes check it all
    low, high = (float(depth.min()), float(depth.max())) if depth.size else (0.0, 0.0)
    if not (low >= 0 and high <= float(np.finfo(np.float32).max)):
        raise ValueError("depth must be finite and non-negative (0 marks invalid pixels)")
    if units == "auto":
        units = "mm" if depth.dtype.kind in "ui" or high > 20 else "m"
    if units not in ("m", "mm"):
        raise ValueError(f"depth units must be 'm', 'mm' or 'auto', got {units!r}")
    if units == "m" and high > 20:
        raise ValueError(f"depth up to {high:.0f} m: is it in millimetres?")
    metres = depth.astype(np.float32)
    if units == "mm":
        metres /= np.float32(1000.0)
    return metres, units


class DepthFeatures(FeatureFamily):
    """Depth comparisons ``d(x + u/d(x)) - d(x + v/d(x))`` for depth images.

    Depth is in metres (16-bit millimetre images are recognised); a probe off the image,
    on background or on invalid depth (0) reads ``DEPTH_FAR`` (100 m). Only foreground
    pixels (depth > 0) are classified (Shotton et al., CVPR 2011).

    Parameters
    ----------
    max_offset : float
        Largest probe offset per axis in world metres (a body part a metre away).
    focal_length : float
        Camera focal length in pixels, converting metres to pixel-metres.

    Examples
    --------
    >>> DepthFeatures(max_offset=0.5, focal_length=300.0).reach
    150.0
    """

    name = "depth"
    n_params = kernels.N_PARAMS[kernels.FAMILY_DEPTH]
    kind_codes = (kernels.KIND_DEPTH,)
    border = "zero"  # a probe off the image reads background, as a padded border of 0 does
    _parameter_constraints = {
        "max_offset": [Interval(Real, 0, 100, closed="right")],
        "focal_length": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, max_offset: float = 0.45, focal_length: float = 285.63):
        self.max_offset = max_offset
        self.focal_length = focal_length
        self._validate()

    @property
    def reach(self) -> float:
        """Largest offset component in pixel-metres."""
        return self.max_offset * self.focal_length

    def spec(self) -> np.ndarray:
        return np.array([kernels.FAMILY_DEPTH, self.reach], np.float64)

    def channels_into(self, depth: ArrayLike, out: np.ndarray, window: Window | None = None
                      ) -> None:
        """Depth in metres (see :func:`depth_in_metres`) into ``out[0]``."""
        out[0] = depth_in_metres(depth)[0]

    def margin(self, tile: ArrayLike) -> int:
        """A probe from a pixel at depth d reaches ``reach / d`` pixels: the margin of a
        tile follows from its nearest foreground pixel."""
        depth = depth_in_metres(tile)[0]
        foreground = depth[depth > 0]
        return int(np.ceil(self.reach / float(foreground.min()))) + 1 if foreground.size else 0
