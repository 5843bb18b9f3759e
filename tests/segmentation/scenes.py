"""Synthetic scenes shared by the segmentation tests."""
import numpy as np


def textured(rng, shape=(64, 64)):
    """Two regions with the same mean intensity but different texture scales."""
    labels = np.zeros(shape, np.uint8)
    labels[:, shape[1] // 2:] = 1
    fine = rng.normal(0, 30, shape)
    coarse = np.kron(rng.normal(0, 30, (shape[0] // 8, shape[1] // 8)), np.ones((8, 8)))
    image = 128 + np.where(labels == 0, fine, coarse)
    return image.astype(np.float32), labels
