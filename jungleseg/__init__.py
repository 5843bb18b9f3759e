"""jungleseg: per-pixel segmentation and classification with decision jungles.

The package is laid out by concept: :mod:`jungleseg.jungle` (DAGs, criteria, LSearch,
growth, traversal, the model and the tabular estimator), :mod:`jungleseg.features`
(feature families and the store they read), :mod:`jungleseg.segmentation` (the image
estimator and segmentation), then model files (:mod:`jungleseg.io`), scores
(:mod:`jungleseg.evaluate`), run configurations (:mod:`jungleseg.config`), the command
line (:mod:`jungleseg.cli`) and data sets (:mod:`jungleseg.datasets`).
"""
from ._lazy import lazy_attributes
from ._version import __version__
from .evaluate import Scores, confusion_matrix, evaluate, evaluate_jungle, scores
from .export import export_c
from .features import (
    ColourFeatures,
    DepthFeatures,
    FeatureFamily,
    ImageStore,
    Samples,
    TabularFeatures,
    VolumeFeatures,
)
from .io import ModelFileError, load_model, save_model
from .jungle import (
    DAG,
    Jungle,
    ModelError,
    impurity,
    level_width,
    level_widths,
    split_gain,
)
from .segmentation import (
    guided_smoothing,
    sample_pixels,
    segment,
    segment_frames,
    segment_prepared,
    segment_to,
    segment_volume,
    smooth_probabilities,
)

_LAZY = {"JungleClassifier": ".jungle", "JungleSegmenter": ".segmentation"}

__all__ = [
    "DAG", "ColourFeatures", "DepthFeatures", "FeatureFamily", "ImageStore", "Jungle",
    "JungleClassifier", "JungleSegmenter", "ModelError", "ModelFileError", "Samples",
    "Scores", "TabularFeatures", "VolumeFeatures", "__version__", "confusion_matrix",
    "evaluate", "evaluate_jungle", "export_c", "guided_smoothing", "impurity", "level_width",
    "level_widths", "load_model", "sample_pixels", "save_model", "scores", "segment",
    "segment_frames", "segment_prepared", "segment_to", "segment_volume",
    "smooth_probabilities", "split_gain",
]


__getattr__ = lazy_attributes(__name__, _LAZY)
