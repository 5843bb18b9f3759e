"""Stanford Background data set (Gould, Fulton & Koller, ICCV 2009).

Two layouts are accepted, both with ``images/<id>.jpg``:

* the PNG layout of the shared data folder: ``labels/<id>.png``, 8-bit class maps with 255 for
  unknown, and ``ids.txt`` listing the ids;
* the original ``iccv09Data`` release: ``labels/<id>.regions.txt``, whitespace-separated integer
  matrices with -1 for unknown.

Labels are returned as ``uint8`` maps with 0..7 for the classes in :data:`CLASS_NAMES` and
:data:`VOID` (255) for unknown pixels.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ._imageset import OnError, read_each, read_rgb
from ._paths import dataset_dir

#: The eight semantic classes, in label order.
CLASS_NAMES: tuple[str, ...] = (
    "sky",
    "tree",
    "road",
    "grass",
    "water",
    "building",
    "mountain",
    "foreground",
)

#: Display colour (RGB) of each class, shape (8, 3).
CLASS_COLOURS: np.ndarray = np.array(
    [
        [128, 176, 255],  # sky
        [0, 110, 0],  # tree
        [128, 64, 128],  # road
        [140, 220, 60],  # grass
        [0, 60, 200],  # water
        [200, 90, 40],  # building
        [120, 100, 80],  # mountain
        [255, 220, 0],  # foreground
    ],
    dtype=np.uint8,
)

#: Label value of unknown (void) pixels.
VOID: int = 255

#: Folder name of the data set inside the data root.
FOLDER = "stanford_background"


def stanford_ids(root: str | os.PathLike[str] | None = None) -> list[str]:
    """List the image ids of a Stanford Background folder.

    Parameters
    ----------
    root : str or os.PathLike, optional
        The data set folder, or the data root containing ``stanford_background/``. Defaults to
        the folder found by :func:`jungleseg.datasets._paths.data_root`.

    Returns
    -------
    list of str
        The ids from ``ids.txt`` if present, else the sorted stems of ``images/*.jpg``.

    Raises
    ------
    FileNotFoundError
        If the folder has no ``images/`` sub-folder, or no images.
    """
    folder = dataset_dir(FOLDER, root)
    if not (folder / "images").is_dir():
        raise FileNotFoundError(f"{folder} has no images/ folder: not a Stanford Background copy")
    ids_file = folder / "ids.txt"
    ids = (ids_file.read_text().split() if ids_file.is_file()
           else sorted(p.stem for p in (folder / "images").glob("*.jpg")))
    if not ids:
        raise FileNotFoundError(f"{folder}: no Stanford Background images (images/*.jpg)")
    return ids


def _read_regions(path: Path) -> np.ndarray:
    regions = np.loadtxt(path, dtype=np.int64, ndmin=2)
    bad = (regions < -1) | (regions >= len(CLASS_NAMES))
    if bad.any():
        raise ValueError(f"{path}: label {regions[bad][0]} outside -1..{len(CLASS_NAMES) - 1}")
    return np.where(regions < 0, VOID, regions).astype(np.uint8)


def _read_labels(folder: Path, image_id: str) -> np.ndarray:
    png = folder / "labels" / f"{image_id}.png"
    if png.is_file():
        from ..imageio import read_image

        labels = read_image(png)
        if labels.ndim != 2 or labels.dtype != np.uint8:
            raise ValueError(f"{png}: expected an 8-bit single-channel class map")
        bad = (labels >= len(CLASS_NAMES)) & (labels != VOID)
        if bad.any():
            raise ValueError(f"{png}: label {labels[bad][0]} is neither a class nor {VOID}")
        return labels
    regions = folder / "labels" / f"{image_id}.regions.txt"
    if regions.is_file():
        return _read_regions(regions)
    raise FileNotFoundError(f"no labels for id {image_id}: neither {png} nor {regions} exists")


def load_stanford(
    root: str | os.PathLike[str] | None = None, ids: Sequence[str] | None = None,
    on_error: OnError | None = None,
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Load Stanford Background images and label maps.

    Parameters
    ----------
    root : str or os.PathLike, optional
        The data set folder (holding ``images/`` and ``labels/``), or the data root containing
        ``stanford_background/``. Defaults to the folder found by
        :func:`jungleseg.datasets._paths.data_root`.
    ids : sequence of str, optional
        Ids to load, in this order. Defaults to all ids (see :func:`stanford_ids`).
    on_error : callable, optional
        Told of each image or label file that cannot be read (damaged, truncated, not
        fitting its image), which is then left out; without it the first one raises.

    Returns
    -------
    list of (str, numpy.ndarray, numpy.ndarray)
        ``(id, image, labels)`` per image: ``image`` is ``uint8`` of shape (H, W, 3) in RGB
        order, ``labels`` is ``uint8`` of shape (H, W) with 0..7 for the classes and 255 for
        unknown.

    Raises
    ------
    FileNotFoundError
        If the folder, an image or its labels are missing.
    ValueError
        If a label map has values outside the classes or a shape different from its image.
    """
    folder = dataset_dir(FOLDER, root)

    def read(image_id):
        image = read_rgb(folder / "images" / f"{image_id}.jpg")
        labels = _read_labels(folder, image_id)
        if labels.shape != image.shape[:2]:
            raise ValueError(
                f"id {image_id}: labels of shape {labels.shape} do not match the image of "
                f"shape {image.shape[:2]}"
            )
        return image_id, image, labels

    return read_each(stanford_ids(folder) if ids is None else ids, read, on_error)


def kfold_splits(
    ids: Sequence[str], k: int = 5, seed: int = 0
) -> list[tuple[list[str], list[str]]]:
    """Split ids into k cross-validation folds.

    The ids are shuffled with a fixed seed and cut into ``k`` folds whose sizes differ by at
    most one. Each fold is the test set once, with the remaining ids as the training set.

    Parameters
    ----------
    ids : sequence of str
        The ids to split; they must be unique.
    k : int, default 5
        Number of folds, between 2 and ``len(ids)``.
    seed : int, default 0
        Seed of the shuffle.

    Returns
    -------
    list of (list of str, list of str)
        ``(train_ids, test_ids)`` per fold, each list in the order of ``ids``. Every id is in
        exactly one test list.

    Raises
    ------
    ValueError
        If ``k`` is out of range or the ids are not unique.
    """
    ids = list(ids)
    if not 2 <= k <= len(ids):
        raise ValueError(f"k must be between 2 and the number of ids ({len(ids)}), got {k}")
    if len(set(ids)) != len(ids):
        raise ValueError("ids must be unique")
    order = np.random.default_rng(seed).permutation(len(ids))
    splits = []
    for fold in np.array_split(order, k):
        in_test = np.zeros(len(ids), dtype=bool)
        in_test[fold] = True
        train = [i for i, t in zip(ids, in_test) if not t]
        test = [i for i, t in zip(ids, in_test) if t]
        splits.append((train, test))
    return splits
