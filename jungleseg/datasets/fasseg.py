"""FASSEG face-part data set (Khan, Mauro & Leonardi, ICIP 2015; Khan et al., ICME 2017).

Layout of the shared data folder (folder-name case differs between versions)::

    fasseg/V1/{Train_RGB,Train_Labels,Test_RGB,Test_Labels}/<name>.png
    fasseg/V2/{Train_RGB,Train_Labels,Test_RGB,Test_Labels}/<name>.png
    fasseg/V3/Train_RGB/<angle>/<name>.png,  fasseg/V3/Train_labels/<angle>/<name>.png

Label folders hold ``<name>.png`` (the colour-coded map) and ``<name>.idx.png`` (the 8-bit class
map). The class map is read when present; otherwise the colour map (``.png`` or ``.bmp``) is
snapped to the nearest colour of :data:`CLASS_COLOURS`, as the original release only has colour
maps.

The protocol used in this project (:func:`paper_protocol`): train on V2 train plus V3 train,
test on V2 test.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from ._imageset import OnError, read_each, read_rgb
from ._paths import dataset_dir

#: The six classes, in label order. Eyebrows are painted as hair.
CLASS_NAMES: tuple[str, ...] = ("background", "skin", "hair", "eyes", "nose", "mouth")

#: Colour (RGB) of each class in the colour-coded label maps, shape (6, 3).
CLASS_COLOURS: np.ndarray = np.array(
    [
        [255, 0, 0],  # background
        [255, 255, 0],  # skin
        [127, 0, 0],  # hair
        [0, 0, 255],  # eyes
        [0, 255, 255],  # nose
        [0, 255, 0],  # mouth
    ],
    dtype=np.uint8,
)

#: Folder name of the data set inside the data root.
FOLDER = "fasseg"

#: Splits available per version.
SPLITS: dict[str, tuple[str, ...]] = {
    "V1": ("train", "test"),
    "V2": ("train", "test"),
    "V3": ("train",),
}

_IMAGE_SUFFIXES = (".png", ".bmp", ".jpg", ".jpeg")


def colour_to_index(label_rgb: np.ndarray) -> np.ndarray:
    """Snap a colour-coded FASSEG label map to class indices.

    Parameters
    ----------
    label_rgb : numpy.ndarray
        ``uint8`` array of shape (H, W, 3) in RGB order.

    Returns
    -------
    numpy.ndarray
        ``uint8`` array of shape (H, W): the index of the nearest colour of
        :data:`CLASS_COLOURS` (Euclidean distance in RGB) for every pixel.
    """
    pixels = label_rgb.reshape(-1, 1, 3).astype(np.int32)
    distance = ((pixels - CLASS_COLOURS.astype(np.int32)[None]) ** 2).sum(axis=2)
    return distance.argmin(axis=1).astype(np.uint8).reshape(label_rgb.shape[:2])


def _natural_key(text: str) -> list[int | str]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _child(folder: Path, name: str) -> Path:
    """Return the sub-folder of ``folder`` called ``name``, ignoring case."""
    exact = folder / name
    if exact.is_dir():
        return exact
    if folder.is_dir():
        for child in folder.iterdir():
            if child.is_dir() and child.name.lower() == name.lower():
                return child
    raise FileNotFoundError(f"no folder {name!r} (any case) in {folder}")


def _read_label_map(folder: Path, stem: str) -> np.ndarray:
    from ..imageio import read_image

    index_file = folder / f"{stem}.idx.png"
    if index_file.is_file():
        labels = read_image(index_file)
        if labels.ndim != 2 or labels.dtype != np.uint8:
            raise ValueError(f"{index_file}: expected an 8-bit single-channel class map")
        if labels.max(initial=0) >= len(CLASS_NAMES):
            raise ValueError(f"{index_file}: label {labels.max()} outside 0..5")
        return labels
    for suffix in _IMAGE_SUFFIXES:
        colour_file = folder / f"{stem}{suffix}"
        if colour_file.is_file():
            return colour_to_index(read_rgb(colour_file))
    raise FileNotFoundError(f"no label map for {stem!r} in {folder}")


def _load_pairs(
    image_folder: Path, label_folder: Path, prefix: str, on_error: OnError | None = None
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    images = sorted(
        (p for p in image_folder.iterdir() if p.suffix.lower() in _IMAGE_SUFFIXES),
        key=lambda p: _natural_key(p.name),
    )

    def read(path):
        image = read_rgb(path)
        labels = _read_label_map(label_folder, path.stem)
        if labels.shape != image.shape[:2]:
            raise ValueError(
                f"{path}: image of shape {image.shape[:2]} but labels of shape {labels.shape}"
            )
        return prefix + path.stem, image, labels

    return read_each(images, read, on_error)


def load_fasseg(
    root: str | os.PathLike[str] | None = None, version: str = "V2", split: str = "train",
    on_error: OnError | None = None,
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Load one split of one FASSEG version.

    Parameters
    ----------
    root : str or os.PathLike, optional
        The ``fasseg`` folder, or the data root containing ``fasseg/``. Defaults to the folder
        found by :func:`jungleseg.datasets._paths.data_root`.
    version : {"V1", "V2", "V3"}, default "V2"
        Data set version.
    split : {"train", "test"}, default "train"
        Split; V3 only has ``"train"``, which covers all 13 pose angles.
    on_error : callable, optional
        Told of each image or label map that cannot be read (damaged, truncated, not
        fitting its image), which is then left out; without it the first one raises.

    Returns
    -------
    list of (str, numpy.ndarray, numpy.ndarray)
        ``(name, image, labels)`` in natural file-name order: ``image`` is ``uint8`` (H, W, 3)
        RGB, ``labels`` is ``uint8`` (H, W) with class indices 0..5 (see :data:`CLASS_NAMES`).
        V3 names are ``"<angle>/<file stem>"``, angles in increasing order.

    Raises
    ------
    ValueError
        If the version or split is unknown, or a label map does not fit its image.
    FileNotFoundError
        If a folder or label map is missing.
    """
    if version not in SPLITS:
        raise ValueError(f"unknown FASSEG version {version!r}; expected one of {list(SPLITS)}")
    if split not in SPLITS[version]:
        raise ValueError(f"FASSEG {version} has no split {split!r}; it has {SPLITS[version]}")
    base = _child(dataset_dir(FOLDER, root), version)
    image_folder = _child(base, f"{split.capitalize()}_RGB")
    label_folder = _child(base, f"{split.capitalize()}_Labels")
    if version != "V3":
        return _load_pairs(image_folder, label_folder, "", on_error)
    samples = []
    angles = sorted((p.name for p in image_folder.iterdir() if p.is_dir()), key=int)
    for angle in angles:
        samples += _load_pairs(image_folder / angle, label_folder / angle, f"{angle}/",
                               on_error)
    return samples


def paper_protocol(
    root: str | os.PathLike[str] | None = None, on_error: OnError | None = None,
) -> tuple[list[tuple[str, np.ndarray, np.ndarray]], list[tuple[str, np.ndarray, np.ndarray]]]:
    """Load the train and test sets of the protocol used in this project.

    Parameters
    ----------
    root : str or os.PathLike, optional
        As for :func:`load_fasseg`.
    on_error : callable, optional
        As for :func:`load_fasseg`.

    Returns
    -------
    train : list of (str, numpy.ndarray, numpy.ndarray)
        V2 train (20 frontal faces, names prefixed ``"V2/"``) followed by V3 train (182
        multi-pose heads, names prefixed ``"V3/"``).
    test : list of (str, numpy.ndarray, numpy.ndarray)
        V2 test (50 frontal faces, names prefixed ``"V2/"``).
    """
    v2_train = load_fasseg(root, "V2", "train", on_error)
    v3_train = load_fasseg(root, "V3", "train", on_error)
    v2_test = load_fasseg(root, "V2", "test", on_error)
    train = [(f"V2/{n}", i, lab) for n, i, lab in v2_train]
    train += [(f"V3/{n}", i, lab) for n, i, lab in v3_train]
    test = [(f"V2/{n}", i, lab) for n, i, lab in v2_test]
    return train, test
