"""Synthetic Kinect-like depth frames of people with 31 body-part labels.

Benchmark A of the Decision Jungles paper (Shotton et al., NIPS 2013) uses Kinect depth
images labelled with 31 body parts, which are not public. This package renders a
stand-in: an articulated body made of capsules and ellipsoids is posed by forward
kinematics (:mod:`._scene`, :mod:`._body`), placed in front of a pinhole camera with
Kinect intrinsics and ray cast in a Numba kernel (:mod:`._render`). Sensor effects
(distance dependent noise, millimetre quantisation, invalid pixels at depth
discontinuities) are added afterwards.

Every frame is a pure function of ``(seed, index)``: its random numbers come from
``np.random.SeedSequence([seed, index])``, so frame ``i`` of a batch is identical to frame
``i`` rendered on its own.

Label conventions: 0 is background (depth 0), 1..31 are the body parts listed in
:data:`CLASS_NAMES`, 255 (:data:`VOID`) marks invalid pixels on the body (depth 0).
"Left" and "right" are the person's own left and right.
"""
from __future__ import annotations

import os

import numpy as np

from .._imageset import OnError, colourise, load_image_set, save_image_set
from .._imageset import contact_sheet as _sheet
from ._labels import (
    BACKGROUND,
    CLASS_COLOURS,
    CLASS_NAMES,
    MIRROR_LABEL,
    N_CLASSES,
    VOID,
)
from ._render import render_frame, render_frames
from ._scene import kinect_intrinsics

__all__ = ["BACKGROUND", "CLASS_COLOURS", "CLASS_NAMES", "MIRROR_LABEL", "N_CLASSES", "VOID",
           "contact_sheet", "kinect_intrinsics", "load_frames", "render_frame",
           "render_frames", "save_frames"]

_DEPTH_SCALES = {"mm": 1000.0, "100um": 10000.0}  # PNG units per metre


def save_frames(folder: str | os.PathLike, depth: np.ndarray, labels: np.ndarray,
                units: str = "mm", seed: int | None = None) -> None:
    """Write frames as 16-bit depth PNGs, 8-bit label PNGs and ``meta.json``.

    Layout: ``depth/000000.png`` (uint16, 0 = background/invalid), ``labels/000000.png``
    (uint8 class index) and ``meta.json`` with units, depth scale, intrinsics, seed,
    count, size and class names.

    Parameters
    ----------
    folder : str or path-like
        Output folder, created if needed.
    depth : ndarray of float, shape (n, height, width)
        Depth in metres.
    labels : ndarray of uint8, shape (n, height, width)
        Part labels.
    units : {'mm', '100um'}, optional
        Depth PNG units: millimetres (range 65.5 m) or 0.1 mm (range 6.5 m).
    seed : int, optional
        Seed the frames were rendered with, recorded in ``meta.json``.

    Raises
    ------
    ValueError
        If ``units`` is unknown, shapes differ, or a depth does not fit in 16 bits at the
        chosen units.
    """
    if units not in _DEPTH_SCALES:
        raise ValueError(f"units must be one of {sorted(_DEPTH_SCALES)}, got {units!r}")
    if depth.shape != labels.shape or depth.ndim != 3:
        raise ValueError(f"depth {depth.shape} and labels {labels.shape} must be equal "
                         "(n, height, width)")
    scale = _DEPTH_SCALES[units]
    raw = np.round(np.asarray(depth, dtype=np.float64) * scale)
    if raw.size and (raw.min() < 0 or raw.max() > np.iinfo(np.uint16).max):
        raise ValueError(f"depth outside the 16-bit range for units {units!r}")
    save_image_set(folder, raw.astype(np.uint16), labels, image_dir="depth", meta={
        "units": units, "depth_scale": scale, "intrinsics": kinect_intrinsics(depth.shape[1:]),
        "seed": seed, "class_names": CLASS_NAMES, "class_colours": CLASS_COLOURS.tolist(),
        "void_label": VOID})


def load_frames(folder: str | os.PathLike, on_error: OnError | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Read frames written by :func:`save_frames`: depth (n, H, W) float32 metres and
    labels (n, H, W) uint8 (``on_error``: see :func:`~jungleseg.datasets._imageset.read_each`)."""
    raw, labels, meta = load_image_set(folder, image_dir="depth", on_error=on_error)
    height, width = meta["size"]
    depth = np.empty((len(raw), height, width), np.float32)
    for i, frame in enumerate(raw):
        depth[i] = frame / meta["depth_scale"]
    return depth, np.array(labels, np.uint8).reshape(len(raw), height, width)


def contact_sheet(depth: np.ndarray, labels: np.ndarray, path: str | os.PathLike,
                  n: int = 8) -> None:
    """Write a PNG grid of the first ``n`` depth frames (near bright, no data black) above
    their coloured part labels (void white)."""
    from matplotlib import colormaps

    items = []
    for i in range(min(n, len(depth))):
        body = depth[i] > 0
        shaded = np.zeros(depth[i].shape + (3,), np.uint8)
        if body.any():
            low, high = depth[i][body].min(), depth[i][body].max()
            scaled = (depth[i] - low) / max(high - low, 1e-6)
            shaded[body] = (255 * colormaps["viridis_r"](scaled[body])[:, :3]).astype(np.uint8)
        items.append([(shaded, f"frame {i}"), (colourise(labels[i], CLASS_COLOURS), "")])
    _sheet(items, path, per_row=8, facecolor="black", panel_inches=2.4)
