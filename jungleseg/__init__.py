"""jungleseg: per-pixel segmentation and classification with decision jungles."""
from ._classes import JungleClassifier
from ._criterion import impurity, split_gain
from ._dag import DAG, ModelError
from ._schedules import level_width, level_widths
from ._version import __version__
from .evaluate import Scores, confusion_matrix, evaluate, scores
from .features import (ColourFeatures, DepthFeatures, FeatureFamily, ImageStore, Samples,
                       TabularFeatures)
from .io import ModelFileError, load_model, save_model
from .model import Jungle
from .sampling import sample_pixels
from .segment import segment
from .segmenter import JungleSegmenter

__all__ = [
    "DAG", "ColourFeatures", "DepthFeatures", "FeatureFamily", "ImageStore", "Jungle",
    "JungleClassifier", "JungleSegmenter", "ModelError", "Samples", "Scores",
    "TabularFeatures", "__version__", "confusion_matrix", "evaluate", "impurity",
    "level_width", "level_widths", "load_model", "ModelFileError", "sample_pixels",
    "save_model", "scores", "segment", "split_gain",
]
