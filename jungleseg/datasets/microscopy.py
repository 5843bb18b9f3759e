"""Synthetic microscopy-like grey images whose classes differ by texture, not by intensity.

Most synthetic sets here can be segmented fairly well from colour or depth alone, which hides
whether a segmenter has learnt texture. :func:`render_cells` draws fluorescence-microscopy-like
grey images in which three of the four classes (see :data:`CLASS_NAMES`) share one intensity
range and differ only in texture:

1. background: dark and smooth, under a slow illumination gradient;
2. cytoplasm: medium intensity with a fine granular texture;
3. nucleus: inside each cell, about as bright as its cytoplasm but with coarse bright speckles;
4. fibres: extracellular matrix of thin oriented streaks that follow a smooth random
   orientation field; their mean lies among the cell intensities and their dark gaps reach
   down to the background.

Cells are irregular ellipses of a fixed size range in pixels, about 55 per 512 x 512 pixels
(the count scales with the image area). The label map is exact; the image is then blurred by
a point-spread function and corrupted by Poisson shot noise and Gaussian read noise. Label 0
is never used: the napari plugin reserves it for unlabelled pixels.

Frame ``i`` of seed ``s`` is drawn from ``numpy.random.SeedSequence([s, i])``, so a frame does
not depend on how many frames are rendered with it.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

#: The four classes, for labels 1..4 (label 0 means "unlabelled" and does not occur).
CLASS_NAMES: tuple[str, ...] = ("background", "cytoplasm", "nucleus", "fibres")

BACKGROUND, CYTOPLASM, NUCLEUS, FIBRES = range(1, len(CLASS_NAMES) + 1)

_CELLS_PER_PIXEL = 55 / 512**2  # mean number of cells per pixel of image area
_ANGLES = 8  # orientation bins of the fibre texture, blended by the orientation field
_MARGIN = 48  # largest shift (pixels) between the streak samples used for different bins
_SHIFT = 4  # fractional bits of the fixed-point polygon coordinates passed to OpenCV
_SCALE = 1 << _SHIFT


def _smooth_noise(rng: np.random.Generator, height: int, width: int, period: float) -> np.ndarray:
    """Isotropic random field, zero mean and about unit std, varying over ``period`` pixels.

    White noise on a grid 8 cells per period is blurred there (cheap) and then enlarged;
    enlarging a few random nodes directly would give boxy, axis-aligned level sets.
    """
    step = period / 8
    rows, cols = math.ceil(height / step) + 1, math.ceil(width / step) + 1
    coarse = cv2.GaussianBlur(rng.standard_normal((rows, cols), dtype=np.float32), (0, 0), 2.5)
    return _standardise(cv2.resize(coarse, (width, height), interpolation=cv2.INTER_CUBIC))


def _texture(rng: np.random.Generator, height: int, width: int, sigma: float) -> np.ndarray:
    """White noise blurred by a Gaussian of ``sigma`` pixels, scaled to zero mean, unit std."""
    field = cv2.GaussianBlur(rng.standard_normal((height, width), dtype=np.float32), (0, 0), sigma)
    return _standardise(field)


def _standardise(field: np.ndarray) -> np.ndarray:
    field -= field.mean()
    field /= max(float(field.std()), 1e-6)
    return field


def _speckles(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """Coarse mottling with bright clumps (chromatin), zero mean and unit std."""
    mottle = _texture(rng, height, width, 2.5)
    return _standardise(mottle + 2.5 * np.maximum(mottle - 1.0, 0))


def _fibres(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """Thin streaks following a smooth random orientation field, zero mean and unit std.

    Horizontal streaks are made once, by blurring white noise along x on a square canvas
    that covers the frame at any rotation. Each of :data:`_ANGLES` orientation bins samples
    the canvas rotated to its angle and shifted (so bins are not correlated), and every pixel
    blends the two bins nearest to its orientation.
    """
    side = math.ceil(math.hypot(height, width)) + 2 * _MARGIN + 4
    noise = rng.standard_normal((side, side), dtype=np.float32)
    streaks = cv2.GaussianBlur(
        noise, (0, 0), sigmaX=rng.uniform(6.0, 12.0), sigmaY=rng.uniform(0.8, 1.4)
    )
    orientation = rng.uniform(0, math.pi) + rng.uniform(0.3, 0.9) * _smooth_noise(
        rng, height, width, 256
    )
    position = orientation * np.float32(_ANGLES / math.pi)  # in bins, periodic
    blend = np.zeros((height, width), np.float32)
    weights = np.zeros((height, width), np.float32)
    frame_centre = np.array([(width - 1) / 2, (height - 1) / 2])
    for k in range(_ANGLES):
        angle = k * math.pi / _ANGLES
        c, s = math.cos(angle), math.sin(angle)
        rotation = np.array([[c, s], [-s, c]])  # frame direction `angle` -> canvas x axis
        canvas_centre = (side - 1) / 2 + rng.uniform(-_MARGIN, _MARGIN, 2)
        matrix = np.hstack([rotation, (canvas_centre - rotation @ frame_centre)[:, None]])
        distance = np.abs((position - k + _ANGLES / 2) % _ANGLES - _ANGLES / 2)
        weight = np.maximum(1 - distance, 0)
        sample = cv2.warpAffine(
            streaks,
            matrix,
            (width, height),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        )
        blend += weight * sample
        weights += weight * weight
    return _standardise(blend / np.sqrt(weights))


def _cell_outline(
    rng: np.random.Generator, centre: np.ndarray, axes: np.ndarray, angle: float
) -> tuple[np.ndarray, np.ndarray]:
    """Fixed-point outlines of an irregular cell and of its nucleus."""
    t = np.linspace(0, 2 * math.pi, 48, endpoint=False)
    harmonics = np.arange(2, 5)[:, None]
    amplitude = rng.uniform(0, 0.065, (3, 1))
    wobble = 1 + (amplitude * np.cos(harmonics * t + rng.uniform(0, 2 * math.pi, (3, 1)))).sum(0)
    # Wobble shrinks the cell to at least 0.8 of its ellipse; the nucleus keeps inside 0.72.
    scale = rng.uniform(0.4, 0.6)
    offset = rng.uniform(-1, 1, 2) * (0.72 - scale) * 0.7
    c, s = math.cos(angle), math.sin(angle)
    rotation = np.array([[c, -s], [s, c]])

    def points(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        xy = centre + np.stack([u * axes[0], v * axes[1]], axis=1) @ rotation.T
        return np.round(xy * _SCALE).astype(np.int32)

    cell = points(wobble * np.cos(t), wobble * np.sin(t))
    nucleus_angle = rng.uniform(-0.4, 0.4)
    nu, nv = scale * np.cos(t), scale * np.sin(t) * rng.uniform(0.75, 1.0)
    cn, sn = math.cos(nucleus_angle), math.sin(nucleus_angle)
    nucleus = points(offset[0] + cn * nu - sn * nv, offset[1] + sn * nu + cn * nv)
    return cell, nucleus


def render_cell_frame(
    rng: np.random.Generator, size: tuple[int, int] = (512, 512)
) -> tuple[np.ndarray, np.ndarray]:
    """Render one random microscopy-like frame.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of all randomness.
    size : (int, int), default (512, 512)
        Image height and width.

    Returns
    -------
    image : numpy.ndarray
        ``float32`` (H, W) grey image with values in [0, 1].
    labels : numpy.ndarray
        ``uint8`` (H, W) class map with values 1..4 (see :data:`CLASS_NAMES`).
    """
    height, width = size
    labels = np.full((height, width), BACKGROUND, np.uint8)
    cell_level = rng.uniform(0.35, 0.5)
    base = np.full((height, width), rng.uniform(0.08, 0.16), np.float32)

    # extracellular matrix: the top quantile of a smooth random field
    matrix = _smooth_noise(rng, height, width, 160)
    threshold = np.quantile(matrix[::4, ::4], 1 - rng.uniform(0.3, 0.45))
    in_matrix = matrix > threshold
    labels[in_matrix] = FIBRES
    base[in_matrix] = cell_level * rng.uniform(0.85, 1.0)

    for _ in range(max(1, rng.poisson(_CELLS_PER_PIXEL * height * width))):
        centre = rng.uniform((0, 0), (width, height))
        radius = rng.uniform(16, 32)
        aspect = math.sqrt(rng.uniform(1.0, 1.8))
        cell, nucleus = _cell_outline(
            rng, centre, np.array([radius * aspect, radius / aspect]), rng.uniform(0, math.pi)
        )
        brightness = cell_level * rng.uniform(0.8, 1.2)
        cv2.fillPoly(labels, [cell], CYTOPLASM, cv2.LINE_8, _SHIFT)
        cv2.fillPoly(base, [cell], brightness, cv2.LINE_8, _SHIFT)
        cv2.fillPoly(labels, [nucleus], NUCLEUS, cv2.LINE_8, _SHIFT)
        cv2.fillPoly(base, [nucleus], brightness * rng.uniform(0.95, 1.08), cv2.LINE_8, _SHIFT)

    # class textures, each applied through a table of amplitudes indexed by label
    amplitude = np.zeros((3, 256), np.float32)
    amplitude[0, CYTOPLASM] = cell_level * rng.uniform(0.3, 0.4)
    amplitude[1, NUCLEUS] = cell_level * rng.uniform(0.3, 0.4)
    amplitude[2, FIBRES] = cell_level * rng.uniform(0.5, 0.65)
    image = base
    image += amplitude[0][labels] * _texture(rng, height, width, 0.7)
    image += amplitude[1][labels] * _speckles(rng, height, width)
    image += amplitude[2][labels] * _fibres(rng, height, width)
    np.maximum(image, 0, out=image)

    # slow illumination gradient with some unevenness, then optics and camera
    phi = rng.uniform(0, 2 * math.pi)
    x = np.linspace(-0.5, 0.5, width, dtype=np.float32)
    y = np.linspace(-0.5, 0.5, height, dtype=np.float32)
    gradient = (math.cos(phi) * x)[None, :] + (math.sin(phi) * y)[:, None]
    illumination = 1 + rng.uniform(0.2, 0.5) * gradient
    illumination += rng.uniform(0.03, 0.1) * _smooth_noise(rng, height, width, 256)
    image *= illumination
    image = cv2.GaussianBlur(image, (0, 0), rng.uniform(0.6, 1.0))
    photons = rng.uniform(150, 400)  # expected photon count at intensity 1
    image = rng.poisson(np.maximum(image, 0) * photons).astype(np.float32) / np.float32(photons)
    image += rng.standard_normal((height, width), dtype=np.float32) * np.float32(
        rng.uniform(0.005, 0.02)
    )
    np.clip(image, 0, 1, out=image)
    return image, labels


def render_cells(
    n: int = 1, seed: int = 0, size: tuple[int, int] = (512, 512)
) -> tuple[np.ndarray, np.ndarray]:
    """Render a batch of random labelled microscopy-like frames.

    Parameters
    ----------
    n : int, default 1
        Number of frames.
    seed : int, default 0
        Base seed. Frame ``i`` uses ``numpy.random.SeedSequence([seed, i])``, so it equals
        frame ``i`` of any other batch with the same seed and size.
    size : (int, int), default (512, 512)
        Image height and width.

    Returns
    -------
    images : numpy.ndarray
        ``float32`` (n, H, W) grey images with values in [0, 1].
    labels : numpy.ndarray
        ``uint8`` (n, H, W) class maps with values 1..4 (see :data:`CLASS_NAMES`).
    """
    height, width = size
    images = np.empty((n, height, width), np.float32)
    labels = np.empty((n, height, width), np.uint8)
    for i in range(n):
        rng = np.random.default_rng(np.random.SeedSequence([seed, i]))
        images[i], labels[i] = render_cell_frame(rng, size)
    return images, labels
