"""Feature families (what a split may test) and the packed store their kernels read.

One module per family (:mod:`._tabular`, :mod:`._colour`, :mod:`._depth`, :mod:`._volume`),
the store and samples (:mod:`._store`), the image filters that make channels
(:mod:`._filters`), and every Numba kernel that reads data or draws candidates
(:mod:`._kernels`).
"""
from ._base import FAMILIES, FeatureFamily, family_from_dict
from ._channels import pick_channels
from ._colour import ColourFeatures
from ._depth import DepthFeatures, depth_in_metres
from ._filters import box_mean
from ._store import ImageStore, Samples, fingerprint
from ._tabular import TabularFeatures
from ._volume import VolumeFeatures

__all__ = ["FAMILIES", "ColourFeatures", "DepthFeatures", "FeatureFamily", "ImageStore",
           "Samples", "TabularFeatures", "VolumeFeatures", "box_mean", "depth_in_metres",
           "family_from_dict", "fingerprint", "pick_channels"]
