"""jungleseg: per-pixel segmentation and classification with decision jungles."""
from ._classes import JungleClassifier
from ._criterion import impurity, split_gain
from ._dag import DAG, ModelError
from ._schedules import level_width, level_widths
from ._version import __version__
from .features import FeatureFamily, ImageStore, Samples, TabularFeatures
from .model import Jungle

__all__ = [
    "DAG", "FeatureFamily", "ImageStore", "Jungle", "JungleClassifier", "ModelError",
    "Samples", "TabularFeatures", "__version__", "impurity", "level_width", "level_widths",
    "split_gain",
]
