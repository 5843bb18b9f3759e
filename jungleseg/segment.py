"""Segment whole images with a trained (or loaded) jungle."""
from __future__ import annotations

import numpy as np

from .features import DepthFeatures
from .model import Jungle


def segment(jungle: Jungle, image) -> tuple[np.ndarray, np.ndarray]:
    """Labels (H, W) and class probabilities (H, W, n_classes) float32 of one image.

    With depth features only foreground pixels (depth > 0) are classified; the others
    get the model's ``background`` label and zero probabilities.
    """
    family = jungle.family
    channels = family.channels(image)
    depth = isinstance(family, DepthFeatures)
    mask = (channels[:, :, 0] > 0).astype(np.uint8) if depth else None
    proba = jungle.predict_image(family.pack([channels]), 0, mask)
    labels = jungle.classes[np.argmax(proba, axis=2)]
    if depth:
        labels = np.where(mask > 0, labels, jungle.params.get("background", 0))
    return labels, proba
