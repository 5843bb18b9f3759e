"""What every image set shares: folders of numbered image and label PNGs with a
``meta.json``, label maps drawn in class colours, and contact sheets to look at."""
from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import ArrayLike


def colourise(labels: np.ndarray, colours: np.ndarray,
              other: tuple[int, int, int] = (255, 255, 255)) -> np.ndarray:
    """Label map (any shape, values 0..255) as RGB: class k in ``colours[k]``, values beyond
    the table (void) in ``other``.

    >>> colourise(np.array([0, 1, 255]), np.array([[0, 0, 0], [255, 0, 0]], np.uint8))
    array([[  0,   0,   0],
           [255,   0,   0],
           [255, 255, 255]], dtype=uint8)
    """
    table = np.empty((256, 3), np.uint8)
    table[:] = other
    table[:len(colours)] = colours
    return table[np.asarray(labels, np.uint8)]


def save_image_set(folder: str | os.PathLike, images: ArrayLike, labels: ArrayLike, meta: dict,
                   image_dir: str = "images") -> Path:
    """Write ``<image_dir>/000000.png``... and ``labels/000000.png``... (8-bit class
    indices) and ``meta.json`` with ``count`` and ``size`` plus ``meta``; when ``meta``
    has ``class_names`` (and ``class_colours``), also ``classes.yaml``
    (:func:`write_class_file`) beside ``labels/``.

    Images are written as they are: uint8 RGB (converted to PNG's BGR order), 8-bit grey
    or 16-bit single-channel (depth). Raises ValueError for shapes that do not pair up
    and OSError naming the file that could not be written.
    """
    images, labels = np.asarray(images), np.asarray(labels)
    if labels.ndim != 3 or images.shape[:3] != labels.shape:
        raise ValueError(f"expected images (n, H, W[, 3]) and labels (n, H, W), got "
                         f"{images.shape} and {labels.shape}")
    folder = Path(folder)
    (folder / image_dir).mkdir(parents=True, exist_ok=True)
    (folder / "labels").mkdir(parents=True, exist_ok=True)
    for i, (image, label) in enumerate(zip(images, labels)):
        name = f"{i:06d}.png"
        if image.ndim == 3:
            image = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
        for path, array in ((folder / image_dir / name, image),
                            (folder / "labels" / name, label.astype(np.uint8))):
            if not cv2.imwrite(str(path), array):
                raise OSError(f"{path}: could not write this file")
    info = {"count": int(len(images)), "size": list(images.shape[1:3]), **meta}
    (folder / "meta.json").write_text(json.dumps(info, indent=2) + "\n")
    if meta.get("class_names"):
        write_class_file(folder / "classes.yaml", meta["class_names"],
                         meta.get("class_colours"))
    return folder


def write_class_file(path: str | os.PathLike, names: Sequence[str],
                     colours: ArrayLike | None = None) -> Path:
    """Write ``classes.yaml``: class value i is called ``names[i]`` and drawn in
    ``colours[i]`` (RGB), the file ``jungleseg train --images/--labels`` reads beside a
    labels folder, so that a model trained on a written set knows its classes by name.

    >>> import tempfile
    >>> path = write_class_file(Path(tempfile.mkdtemp()) / "classes.yaml", ["sky", "tree"],
    ...                         [[70, 130, 180], [34, 139, 34]])
    >>> print(path.read_text(), end="")
    0: {name: "sky", colour: "#4682b4"}
    1: {name: "tree", colour: "#228b22"}
    """
    lines = []
    for value, name in enumerate(names):
        colour = "" if colours is None else ", colour: \"#{:02x}{:02x}{:02x}\"".format(
            *(int(c) for c in colours[value]))
        lines.append(f"{value}: {{name: {json.dumps(str(name))}{colour}}}")
    path = Path(path)
    path.write_text("\n".join(lines) + "\n")
    return path


#: ``on_error(error)`` is told of a file that cannot be read (the error names it); the
#: loaders then leave that image out instead of ending the whole load.
OnError = Callable[[Exception], None]


def read_each(items: Iterable, read: Callable, on_error: OnError | None = None) -> list:
    """``read(item)`` for every item, in order. Without ``on_error`` the first unreadable
    file (ValueError or OSError) ends the load; with it, that item is reported and left
    out, so that a batch goes on past a bad file."""
    out = []
    for item in items:
        try:
            out.append(read(item))
        except (ValueError, OSError) as error:
            if on_error is None:
                raise
            on_error(error)
    return out


def read_rgb(path: Path) -> np.ndarray:
    """A picture as (H, W, 3) RGB, read strictly (a truncated or damaged file is an error
    naming it; :func:`jungleseg.imageio.read_image`), or by OpenCV for other formats
    (BMP): grey repeated, alpha dropped."""
    from ..imageio import IMAGE_SUFFIXES, read_image

    if Path(path).suffix.lower() in IMAGE_SUFFIXES:
        image = read_image(path)
    else:
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError(f"{path}: cannot read this image")
        image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    return np.repeat(image[:, :, None], 3, axis=2) if image.ndim == 2 else image[:, :, :3]


def load_image_set(folder: str | os.PathLike, image_dir: str = "images",
                   on_error: OnError | None = None
                   ) -> tuple[list[np.ndarray], list[np.ndarray], dict]:
    """Read a folder written by :func:`save_image_set`: images (RGB, grey or 16-bit as
    stored), label maps and the ``meta.json`` entries. Files are read strictly; with
    ``on_error``, an unreadable pair is reported and left out (:func:`read_each`)."""
    from ..imageio import read_image

    folder = Path(folder)
    if not (folder / "meta.json").is_file():
        raise FileNotFoundError(f"{folder}: not a folder written by 'jungleseg generate' "
                                "(no meta.json)")
    try:
        meta = json.loads((folder / "meta.json").read_text())
        count = int(meta["count"])
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{folder / 'meta.json'}: not a valid image-set description "
                         f"({err})") from None
    if count < 1:
        raise ValueError(f"{folder}: the image set is empty (meta.json count {count})")

    def read(i):
        name = f"{i:06d}.png"
        return read_image(folder / image_dir / name), read_image(folder / "labels" / name)

    pairs = read_each(range(count), read, on_error)
    return [p[0] for p in pairs], [p[1] for p in pairs], meta


def contact_sheet(items: Sequence[Sequence[tuple[np.ndarray, str]]], path: str | os.PathLike,
                  per_row: int = 4,
                  legend: tuple | None = None, facecolor: str = "white",
                  panel_inches: float = 2.5) -> Path:
    """Save a grid of pictures: each item is a column of ``(RGB array, title)`` panels,
    ``per_row`` items side by side; ``legend = (names, colours)`` adds a class legend.

    Matplotlib's object interface (no pyplot state), so it runs in any thread.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    items = list(items)
    if not items:
        raise ValueError("a contact sheet needs at least one item")
    panels = len(items[0])
    columns = min(len(items), per_row)
    rows = panels * math.ceil(len(items) / columns)
    height, width = items[0][0][0].shape[:2]
    fig = Figure(figsize=(panel_inches * columns,
                          panel_inches * rows * height / width + (0.6 if legend else 0.2)),
                 dpi=90, facecolor=facecolor)
    axes = fig.subplots(rows, columns, squeeze=False)
    text = "white" if facecolor == "black" else "black"
    for ax in axes.flat:
        ax.set_axis_off()
    for i, item in enumerate(items):
        row, col = panels * (i // columns), i % columns
        for k, (picture, title) in enumerate(item):
            axes[row + k, col].imshow(picture, interpolation="nearest")
            axes[row + k, col].set_title(title, fontsize=8, color=text)
    if legend:
        names, colours = legend
        handles = [Patch(facecolor=np.asarray(c) / 255, edgecolor="grey", label=name)
                   for name, c in zip(names, colours)]
        fig.legend(handles=handles, loc="lower center", ncol=min(len(names), 8), fontsize=7,
                   labelcolor=text, frameon=False)
    fig.tight_layout(rect=(0, 0.06 if legend else 0, 1, 1))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, facecolor=facecolor)
    return path
