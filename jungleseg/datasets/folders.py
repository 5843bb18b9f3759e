"""A user's own data: a folder of images and a folder of label images whose files pair by
name (``images/a.png`` with ``labels/a.png``, ``labels/a.tif``...), as the command line's
``--images DIR --labels DIR`` (or ``--data DIR`` with ``images/`` and ``labels/``) reads
them.

Every file is accounted for: a file of a type that cannot be read, two files of one name,
an image without labels or labels without an image, and an image whose size differs from
its labels' are each an error naming the file; nothing is skipped. Hidden files (names
starting with ``.``, such as ``.DS_Store``) and the files Windows leaves in folders
(``Thumbs.db``, ``desktop.ini``) are not data and are passed over.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..imageio import IMAGE_SUFFIXES, ZARR_SUFFIX, is_stack, read_image, read_labels
from . import Split

#: Files of class names and colours that a labels folder may hold beside the labels.
CLASS_FILES = ("classes.yaml", "classes.yml", "classes.txt")

#: Files a file manager leaves in folders (Windows' thumbnail cache and folder settings).
SYSTEM_FILES = ("thumbs.db", "desktop.ini")

#: Label values, at least this many, each one region of one label image: object ids.
INSTANCE_VALUES = 16

#: Suffixes of label files (JPEG is lossy, so not among them).
LABEL_FILE_SUFFIXES = (".png", ".tif", ".tiff", ".npy", ".zarr")


def has_image_folders(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds ``images/`` and ``labels/`` of a user's data (not a folder
    written by ``jungleseg generate``, which has a ``meta.json``)."""
    folder = Path(folder)
    return ((folder / "images").is_dir() and (folder / "labels").is_dir()
            and not (folder / "meta.json").exists())


def user_folders(images=None, labels=None, data=None) -> tuple[Path, Path] | None:
    """The (images, labels) folders the command line's ``--images DIR --labels DIR`` (or
    ``--data DIR`` with ``images/`` and ``labels/``) name, or None when they name none
    (a benchmark's data); ValueError when only one of the two is given."""
    if bool(images) != bool(labels):
        raise ValueError("--images and --labels go together (or --data DIR with images/ "
                         "and labels/)")
    if images:
        return Path(images), Path(labels)
    if data and has_image_folders(data):
        return Path(data) / "images", Path(data) / "labels"
    return None


def _entries(folder: Path, suffixes: Sequence[str], what: str) -> dict[str, Path]:
    """The files of ``folder`` by name (stem), or ValueError naming the first that is not
    of a readable type, or two that share a name."""
    if not folder.is_dir():
        raise ValueError(f"{folder}: no such folder (of {what})")
    found: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or path.name.lower() in CLASS_FILES + SYSTEM_FILES:
            continue  # hidden and system files, and the class names of --classes
        suffix = path.suffix.lower()
        readable = suffix in suffixes and (path.is_dir() == (suffix == ZARR_SUFFIX))
        if not readable:
            kind = ("a folder" if path.is_dir() else
                    "not an image file" if what == "images" else "not a label file")
            raise ValueError(f"{path}: {kind}; {what} folders hold only "
                             f"{', '.join(suffixes)} files (move it out)")
        name = path.name[:-len(path.suffix)]
        if name in found:
            raise ValueError(f"{found[name]} and {path}: two {what} named {name!r}; keep one")
        found[name] = path
    if not found:
        kind = "image" if what == "images" else "label"
        raise ValueError(f"{folder}: no {kind} files ({', '.join(suffixes)}) in this folder")
    return found


def paired_files(images: str | os.PathLike, labels: str | os.PathLike
                 ) -> list[tuple[Path, Path]]:
    """(image, label file) pairs of two folders, matched by name and sorted by it.

    Raises ValueError naming the file for an empty folder, a file that is not an image (or
    label) file, two files of one name, or a file without its partner.
    """
    images, labels = Path(images), Path(labels)
    by_name = _entries(images, IMAGE_SUFFIXES, "images")
    label_by_name = _entries(labels, LABEL_FILE_SUFFIXES, "labels")
    for name, path in by_name.items():
        if name not in label_by_name:
            others = len(set(by_name) - set(label_by_name)) - 1
            more = f" (and {others} more images without labels)" if others else ""
            raise ValueError(f"{path}: no label file named {name}.* in {labels}{more}")
    for name, path in label_by_name.items():
        if name not in by_name:
            raise ValueError(f"{path}: no image named {name}.* in {images}")
    return [(by_name[name], label_by_name[name]) for name in sorted(by_name)]


def load_folders(images: str | os.PathLike, labels: str | os.PathLike, family=None,
                 n: int | None = None, classes: Sequence[int] | None = None,
                 ignore: Sequence[int] = ()) -> Split:
    """The images and label images of two folders (see :func:`paired_files`), read for
    the feature ``family`` (None: any image): 2-D images with (H, W) labels, or with
    :class:`~jungleseg.VolumeFeatures` volumes (TIFF stacks, NPY, zarr) with (D, H, W)
    labels; a stack of the 2-D images ``family`` reads (:func:`~jungleseg.imageio.is_stack`)
    with a label stack gives its slices that hold a label outside ``ignore``. With
    ``classes`` (a model's), every label value must be one of them or in ``ignore``.
    Raises ValueError naming the file for images and labels whose sizes differ, label
    values that are not classes, and every error of the readers.
    """
    ndim = getattr(family, "spatial_ndim", 2)
    allowed = None if classes is None else {int(c) for c in classes} | {int(v) for v in ignore}
    split = Split([], [])
    for image_path, label_path in paired_files(images, labels)[:n]:
        image = read_image(image_path, family, stacks=True)
        label = read_labels(label_path)
        if is_stack(family, image.shape):
            _add_slices(split, image, label, image_path, label_path, allowed, ignore)
            continue
        if image.ndim < ndim or label.ndim != ndim:
            kind = "(D, H, W) volumes" if ndim == 3 else "(H, W) images"
            bad = label_path if image.ndim >= ndim else image_path
            shape = label.shape if image.ndim >= ndim else image.shape
            raise ValueError(f"{bad}: shape {shape}; the config's features read {kind}")
        if image.shape[:ndim] != label.shape:
            size = "x".join(map(str, image.shape[:ndim]))
            raise ValueError(f"{label_path}: labels of size {'x'.join(map(str, label.shape))} "
                             f"but the image {image_path.name} is {size}")
        _check_values(label, label_path, allowed, ignore)
        split.images.append(image)
        split.labels.append(label)
    if not split.labels:
        raise ValueError(f"{labels}: no labelled slice in its stacks")
    values = np.unique(np.concatenate([np.unique(lab) for lab in split.labels]))
    split.class_names = {int(v): str(int(v)) for v in values}
    return split


def _check_values(label: np.ndarray, path: Path, allowed: set | None,
                  ignore: Sequence[int]) -> None:
    if allowed is None:
        return
    outside = [int(v) for v in np.unique(label) if int(v) not in allowed]
    if outside:
        classes = sorted(allowed - {int(v) for v in ignore})
        raise ValueError(f"{path}: label value {outside[0]} is not a class of the model "
                         f"(classes {', '.join(map(str, classes))}; ignored "
                         f"{', '.join(map(str, sorted(ignore))) or 'none'})")


def _add_slices(split: Split, stack: np.ndarray, label: np.ndarray, image_path: Path,
                label_path: Path, allowed: set | None, ignore: Sequence[int]) -> None:
    """The slices of a stack of 2-D images (:func:`~jungleseg.imageio.is_stack`) that hold
    a label outside ``ignore``, each as an image of ``split``: a stack painted on a few
    slices trains on those."""
    if label.shape != stack.shape[:3]:
        raise ValueError(f"{label_path}: labels of shape {label.shape} but the stack "
                         f"{image_path.name} is {'x'.join(map(str, stack.shape[:3]))}")
    _check_values(label, label_path, allowed, ignore)
    unlabelled = np.isin(label, list(ignore))
    for z in np.flatnonzero(~unlabelled.all(axis=(1, 2))):
        split.images.append(np.ascontiguousarray(stack[z]))
        split.labels.append(label[z])


def looks_like_instances(labels: Sequence[np.ndarray], ignore: Sequence[int] = ()) -> bool:
    """Whether label images hold object ids (an instance mask, one value per nucleus or
    cell) rather than classes: at least :data:`INSTANCE_VALUES` values outside ``ignore``,
    each found in one label image only and there, for nine in ten of them, as one
    connected region. Training on them would learn a class per object.

    Examples
    --------
    >>> ids = np.kron(np.arange(20).reshape(4, 5), np.ones((3, 3), np.uint16))
    >>> looks_like_instances([ids], ignore=(0,)), looks_like_instances([ids % 2], ignore=(0,))
    (True, False)
    """
    from scipy import ndimage

    image_of: dict[int, int] = {}
    for k, label in enumerate(labels):
        for value in np.unique(label):
            if int(value) not in ignore and image_of.setdefault(int(value), k) != k:
                return False  # a value in two images: a class
    if len(image_of) < INSTANCE_VALUES:
        return False
    regions = 0
    for k, label in enumerate(labels):
        boxes = ndimage.find_objects(label)
        for value in (v for v, i in image_of.items() if i == k and v > 0):
            regions += ndimage.label(label[boxes[value - 1]] == value)[1] == 1
    return regions >= 0.9 * len(image_of)
