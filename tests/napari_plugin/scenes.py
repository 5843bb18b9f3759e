"""Painted test scenes shared by the session and widget tests."""
import numpy as np


def stripes_and_checks(shape=(96, 128), seed=0):
    """Grey image of two textures with equal mean (vertical stripes left, fine checks right)
    and its ground truth 1 | 2: intensity alone cannot separate them."""
    rng = np.random.default_rng(seed)
    h, w = shape
    r, c = np.mgrid[:h, :w]
    stripes = 0.5 + 0.4 * np.sign(np.sin((c + 0.5) * np.pi / 3))
    checks = 0.5 + 0.4 * np.sign(np.sin((r + 0.5) * np.pi / 2) * np.sin((c + 0.5) * np.pi / 2))
    truth = np.where(c < w // 2, 1, 2).astype(np.uint8)
    image = np.where(truth == 1, stripes, checks) + rng.normal(0, 0.05, shape)
    return image.astype(np.float32), truth


def strokes(truth):
    """A few short painted lines per class, well inside the regions."""
    paint = np.zeros_like(truth)
    h, w = truth.shape
    for row in (h // 4, h // 2, 3 * h // 4):
        paint[row, w // 8: w // 8 + 20] = 1
        paint[row, w - w // 8 - 20: w - w // 8] = 2
    return paint
