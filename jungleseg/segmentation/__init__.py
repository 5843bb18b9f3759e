"""Segmentation of images: the :class:`JungleSegmenter` estimator, which pixels it trains
on (:mod:`._sampling`), which image arrays it accepts (:mod:`._input`), and segmenting
whole images, tiles and prepared stores (:mod:`._segment`) with probability smoothing
(:mod:`._smoothing`), volumes (:mod:`._volume`), and image files into label files
(:mod:`._files`)."""
from .._lazy import lazy_attributes
from ._files import segment_file
from ._input import UNIT_SCALE, checked_image, training_values
from ._sampling import STRATEGIES, sample_pixels
from ._segment import (
    SEGMENTATION_CONSTRAINTS,
    STREAM_PIXELS,
    auto_tile,
    segment,
    segment_frames,
    segment_prepared,
    segment_to,
    with_inference,
)
from ._smoothing import guided_smoothing, smooth_probabilities, smoothing_reach
from ._volume import segment_volume

__all__ = ["JungleSegmenter", "SEGMENTATION_CONSTRAINTS", "STRATEGIES", "STREAM_PIXELS",
           "UNIT_SCALE", "auto_tile", "checked_image", "guided_smoothing", "sample_pixels",
           "segment", "segment_file", "segment_frames", "segment_prepared", "segment_to",
           "segment_volume", "smooth_probabilities", "smoothing_reach", "training_values",
           "with_inference"]

_LAZY = {"JungleSegmenter": "._segmenter"}


__getattr__ = lazy_attributes(__name__, _LAZY)
