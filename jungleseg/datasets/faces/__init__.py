"""Synthetic labelled faces: the project's embedded default data set (no downloads).

:func:`render_faces` draws frontal-ish faces with OpenCV primitives (:mod:`._paint`)
together with an exact 8-class label map (see :data:`CLASS_NAMES`). Face shape, position,
scale, roll, a yaw-like asymmetry, hair style, mouth opening and all colours are random;
backgrounds are cluttered with gradients, blobs and stripes, some in skin or hair
colours, so that colour alone cannot separate the classes. Mild blur, a lighting gradient
and noise are applied to the image only.

Frame ``i`` of seed ``s`` is drawn from ``numpy.random.SeedSequence([s, i])``, so a frame
does not depend on how many frames are rendered with it.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .._imageset import OnError, colourise, load_image_set, save_image_set
from .._imageset import contact_sheet as _sheet
from ._labels import (
    BACKGROUND,
    CLASS_COLOURS,
    CLASS_NAMES,
    EYEBROWS,
    EYES,
    HAIR,
    INNER_MOUTH,
    LIPS,
    NOSE,
    SKIN,
)
from ._render import render_face, render_faces

__all__ = ["BACKGROUND", "CLASS_COLOURS", "CLASS_NAMES", "EYEBROWS", "EYES", "HAIR",
           "INNER_MOUTH", "LIPS", "NOSE", "SKIN", "contact_sheet", "load_faces", "render_face",
           "render_faces", "save_faces"]


def save_faces(folder: str | os.PathLike, images: np.ndarray, labels: np.ndarray,
               meta: dict | None = None) -> Path:
    """Write faces as ``images/000000.png`` (RGB), ``labels/000000.png`` (8-bit class
    index), ..., ``meta.json`` (with the class names and colours, plus ``meta``) and
    ``classes.yaml`` (the names and colours, for ``jungleseg train --images/--labels``).

    Raises ValueError if the shapes of images (n, H, W, 3) and labels (n, H, W) do not
    match.
    """
    images = np.asarray(images)
    if images.ndim != 4 or images.shape[3] != 3:
        raise ValueError(f"expected images (n, H, W, 3), got {images.shape}")
    return save_image_set(folder, images, labels, {
        "class_names": list(CLASS_NAMES), "class_colours": CLASS_COLOURS.tolist(),
        **(meta or {})})


def load_faces(folder: str | os.PathLike, on_error: OnError | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Read faces written by :func:`save_faces`: (n, H, W, 3) RGB images and (n, H, W)
    class maps, both uint8 (``on_error``: see :func:`~jungleseg.datasets._imageset.read_each`)."""
    images, labels, _ = load_image_set(folder, on_error=on_error)
    return np.array(images, np.uint8), np.array(labels, np.uint8)


def contact_sheet(images: np.ndarray, labels: np.ndarray, path: str | os.PathLike,
                  n: int = 8) -> Path:
    """Save a contact sheet of the first ``n`` faces, four per row, each as image, labels
    and an overlay of both, with a legend of the classes."""
    items = []
    for i in range(min(n, len(images))):
        coloured = colourise(labels[i], CLASS_COLOURS)
        overlay = (0.5 * images[i] + 0.5 * coloured).astype(np.uint8)
        items.append([(images[i], f"face {i}"), (coloured, "labels"), (overlay, "overlay")])
    return _sheet(items, path, legend=(CLASS_NAMES, CLASS_COLOURS))
