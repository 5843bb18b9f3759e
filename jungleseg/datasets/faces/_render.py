"""One random face, or a batch, with its exact label map."""
from __future__ import annotations

import math

import cv2
import numpy as np

from ._paint import (
    _HAIRY,
    _SHADED,
    _background,
    _coarse_grid,
    _draw_body_and_hair_back,
    _draw_eyes_and_brows,
    _draw_hair_front,
    _draw_head,
    _draw_mouth,
    _draw_nose,
    _enlarge,
    _hair_colour,
    _Painter,
    _skin_colour,
)


def render_face(
    rng: np.random.Generator, size: tuple[int, int] = (240, 320)
) -> tuple[np.ndarray, np.ndarray]:
    """Render one random face.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of all randomness.
    size : (int, int), default (240, 320)
        Image height and width.

    Returns
    -------
    image : numpy.ndarray
        ``uint8`` (H, W, 3) RGB image.
    labels : numpy.ndarray
        ``uint8`` (H, W) class map, values in 0..7 (see :data:`CLASS_NAMES`).
    """
    height, width = size
    image = _background(rng, height, width)
    labels = np.zeros((height, width), np.uint8)
    b = rng.uniform(0.24, 0.36) * height
    a = b * rng.uniform(0.68, 0.82)
    centre = (
        rng.uniform(1.3 * a, max(1.3 * a, width - 1.3 * a)),
        rng.uniform(
            max(1.05 * b, 0.3 * height), max(1.05 * b, min(height - 0.8 * b, 0.7 * height))
        ),
    )
    roll = math.radians(float(np.clip(rng.normal(0, 7), -18, 18)))
    yaw = rng.uniform(-0.5, 0.5)
    du = 0.3 * yaw * a
    skin, hair = _skin_colour(rng), _hair_colour(rng)
    long_hair = rng.random() < 0.45
    paint = _Painter(image, labels, centre, roll)
    _draw_body_and_hair_back(paint, rng, a, b, skin, hair, long_hair)
    _draw_head(paint, rng, a, b, du, skin)
    _draw_hair_front(paint, rng, a, b, du, hair, long_hair)
    _draw_eyes_and_brows(paint, rng, a, b, du, yaw, hair)
    _draw_nose(paint, rng, a, b, du, yaw, skin)
    _draw_mouth(paint, rng, a, b, du, yaw, skin)

    # smooth fields: rounded-face shading and lighting gradient with overall brightness
    x, y = _coarse_grid(height, width)
    c, s = math.cos(roll), math.sin(roll)
    dx, dy = x - centre[0], y - centre[1]
    radius2 = ((dx * c + dy * s) / a) ** 2 + ((dy * c - dx * s) / b) ** 2
    phi = rng.uniform(0, 2 * math.pi)
    gradient = (x / width - 0.5) * math.cos(phi) + (y / height - 0.5) * math.sin(phi)
    light = rng.uniform(0.75, 1.15) * (1 + rng.uniform(0, 0.6) * gradient)
    smooth = _enlarge(np.stack([np.minimum(radius2, 1.3), light], axis=2), height, width)
    # hair strands: noise stretched vertically
    strands = rng.normal(0, 1, (max(1, height // 8), width)).astype(np.float32)
    strands = _enlarge(strands, height, width)
    factor = smooth[..., 1] * (1 - (rng.uniform(0.1, 0.3) * _SHADED)[labels] * smooth[..., 0])
    factor *= 1 + (rng.uniform(0.05, 0.2) * _HAIRY)[labels] * strands
    balance = np.diag(rng.uniform(0.9, 1.1, 3))  # white balance
    out = cv2.multiply(image.astype(np.float32), cv2.cvtColor(factor, cv2.COLOR_GRAY2RGB))
    out = cv2.transform(out, balance)
    out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.4, 1.1))
    noise = np.frombuffer(rng.bytes(out.size), np.int8).reshape(out.shape)
    out += noise * np.float32(rng.uniform(0.015, 0.06))
    np.clip(out, 0, 255, out=out)
    return out.astype(np.uint8), labels


def render_faces(
    n: int, seed: int = 0, size: tuple[int, int] = (240, 320)
) -> tuple[np.ndarray, np.ndarray]:
    """Render a batch of random labelled faces.

    Parameters
    ----------
    n : int
        Number of faces.
    seed : int, default 0
        Base seed. Frame ``i`` uses ``numpy.random.SeedSequence([seed, i])``, so it equals
        frame ``i`` of any other batch with the same seed and size.
    size : (int, int), default (240, 320)
        Image height and width.

    Returns
    -------
    images : numpy.ndarray
        ``uint8`` (n, H, W, 3) RGB images.
    labels : numpy.ndarray
        ``uint8`` (n, H, W) class maps with values 0..7 (see :data:`CLASS_NAMES`).
    """
    height, width = size
    images = np.empty((n, height, width, 3), np.uint8)
    labels = np.empty((n, height, width), np.uint8)
    for i in range(n):
        rng = np.random.default_rng(np.random.SeedSequence([seed, i]))
        images[i], labels[i] = render_face(rng, size)
    return images, labels
