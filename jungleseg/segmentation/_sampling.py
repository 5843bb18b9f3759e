"""Training pixels from label images: which (image, row, col) samples a jungle sees.

Labels are per-pixel class values; ``ignore`` values (void, and for sparse painted
labels the unlabelled 0, for depth the background) are never sampled. No feature
matrix is built: samples are indices into the image store.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..features import Samples

STRATEGIES = ("random", "all", "balanced")


def sample_pixels(labels: Sequence[ArrayLike], classes: ArrayLike, strategy: str = "random",
                  per_image: int = 1000, ignore: Sequence[int] = (255,), seed: int = 0,
                  first_image: int = 0) -> Samples:
    """Pick training pixels from each label image.

    Parameters
    ----------
    labels : sequence of (H, W) integer arrays, or of (D, H, W) label volumes: paint on
        any slices counts, and voxel (z, y, x) is sampled at row ``z H + y`` (the volume's
        slices as rows of one plane; :meth:`ImageStore.rows` places them in a store)
    classes : array of the class values the model predicts; other values are ignored.
    strategy : 'random' (``per_image`` pixels drawn uniformly among usable pixels),
        'all' (every usable pixel) or 'balanced' (``per_image`` pixels split equally
        among the classes present in the image).
    ignore : label values never sampled (void, unlabelled, background...).
    seed : image i draws from ``numpy.random.default_rng([seed, first_image + i])``.
    first_image : the global index of ``labels[0]`` when they are a shard's images, so
        that a shard draws the samples all the images would give it.

    Returns
    -------
    Samples whose ``label`` holds class indices (positions in ``classes``).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"sampling strategy must be one of {STRATEGIES}, got {strategy!r}")
    if per_image < 1:
        raise ValueError(f"per_image must be >= 1, got {per_image}")
    classes = np.asarray(classes)
    lookup = {int(v): i for i, v in enumerate(classes) if int(v) not in set(ignore)}
    parts = []
    for i, lab in enumerate(labels):
        lab = np.asarray(lab)
        if lab.ndim not in (2, 3) or (i and lab.ndim != np.ndim(labels[0])):
            raise ValueError(f"label image {i} must be 2-D (or all 3-D), got shape {lab.shape}")
        usable, usable_index = _usable(lab.ravel(), lookup)
        rng = np.random.default_rng([seed, first_image + i])
        if strategy == "all" or usable.size <= per_image and strategy == "random":
            chosen = usable
        elif strategy == "random":
            chosen = np.sort(rng.choice(usable, per_image, replace=False))
        else:
            present = np.unique(usable_index)
            quota = max(1, per_image // max(1, present.size))
            chosen = []
            for k in present:
                pool = usable[usable_index == k]
                chosen.append(rng.choice(pool, min(quota, pool.size), replace=False))
            chosen = np.sort(np.concatenate(chosen)) if chosen else usable[:0]
        width = lab.shape[-1]
        parts.append((np.full(chosen.size, i, np.int32), (chosen // width).astype(np.int32),
                      (chosen % width).astype(np.int32),
                      usable_index[np.searchsorted(usable, chosen)].astype(np.int32)))
    if not parts or sum(p[0].size for p in parts) == 0:
        raise ValueError("no labelled pixels to train on (all pixels are ignored or unknown)")
    image, row, col, label = (np.concatenate([p[j] for p in parts]) for j in range(4))
    return Samples(image, row, col, label)


def _usable(flat: np.ndarray, lookup: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The (ascending) positions in ``flat`` whose value is a key of ``lookup``, and the
    class index there. One pass over the labels, and none over the unpainted zeros when
    0 is not a class: a volume painted on a few slices is mostly zeros."""
    pixels = np.arange(flat.size) if 0 in lookup else np.flatnonzero(flat != 0)  # bools: faster
    keys = np.array(sorted(lookup), np.int64)
    if not keys.size:
        return pixels[:0], pixels[:0]
    values = flat[pixels]
    at = np.minimum(np.searchsorted(keys, values), keys.size - 1)
    hit = keys[at] == values
    codes = np.array([lookup[int(k)] for k in keys], np.int64)
    return pixels[hit], codes[at[hit]]


def label_values(label: np.ndarray) -> np.ndarray:
    """The distinct values of a label image, sorted: :func:`numpy.unique` over its nonzero
    values, and 0 where it occurs (one pass when most pixels are unpainted zeros)."""
    flat = np.asarray(label).ravel()
    nonzero = flat[flat != 0]  # a mask of bools: faster than the positions of nonzeros
    values = np.unique(nonzero)
    if nonzero.size < flat.size:
        values = np.union1d(values, np.zeros(1, flat.dtype))
    return values


class TooFewClasses(ValueError):
    """Labels of fewer than two trainable classes; ``classes`` holds those found."""

    def __init__(self, message: str, classes: np.ndarray) -> None:
        super().__init__(message)
        self.classes = classes


def trained_classes(values: np.ndarray, ignore) -> np.ndarray:
    """The label values training learns: the distinct ``values`` of every label image less
    the never-trained ones (``ignore``). Raises ValueError when fewer than two are left,
    naming the values set aside as unlabelled, the usual cause (a 0/1 mask under a preset
    where 0 means unpainted, a 0/255 mask under one where 255 means unknown).

    Examples
    --------
    >>> trained_classes(np.array([0, 1, 2]), ignore={0}).tolist()
    [1, 2]
    """
    classes = np.array([v for v in values if int(v) not in ignore])
    if classes.size < 2:
        unlabelled = [int(v) for v in values if int(v) in ignore]
        renumber = ("number the classes from 1" if unlabelled == [0] else
                    f"give the classes values other than {', '.join(map(str, unlabelled))}")
        hint = (f"; label value {unlabelled} means unlabelled here and is never trained on: "
                f"{renumber}, or train with ignore=() (command line: --set "
                "sampling.ignore=[])" if unlabelled else "")
        raise TooFewClasses(f"need labels of at least two classes, found "
                            f"{classes.tolist()}{hint}", classes)
    return classes


def trainable_boxes(images: Sequence[ArrayLike], labels: Sequence[ArrayLike],
                    classes: ArrayLike) -> list[tuple[int, int]]:
    """(H, W) of the box around each 2-D image's nonzero pixels and its pixels labelled
    with one of ``classes`` ((1, 1) when there are none): the largest box
    :func:`crop_to_nonzero` can cut, whatever the samples, since samples lie on labelled
    pixels. Bounds the training store of depth images before any sample is drawn.

    Examples
    --------
    >>> image = np.zeros((4, 5)); image[1, 2] = 1.0
    >>> labels = np.zeros((4, 5), np.uint8); labels[3, 4] = 7; labels[0, 0] = 9
    >>> trainable_boxes([image], [labels], classes=[7])
    [(3, 3)]
    """
    boxes = []
    for image, label in zip(images, labels):
        used = (np.asarray(image) != 0) | np.isin(label, classes)
        rows, cols = np.flatnonzero(used.any(axis=1)), np.flatnonzero(used.any(axis=0))
        boxes.append((int(rows[-1] - rows[0]) + 1, int(cols[-1] - cols[0]) + 1)
                     if rows.size else (1, 1))
    return boxes


def crop_to_nonzero(images: Sequence[np.ndarray], samples: Samples
                    ) -> tuple[list[np.ndarray], Samples]:
    """Each 2-D image cut to the box around its nonzero pixels and its samples, and the
    samples moved into those boxes.

    Depth features read the same far value from a probe off the image as from a zero
    (background) pixel, so a training store of the boxes gives every response the whole
    images give, and the same model. A body filling a few per cent of a frame then takes a
    few per cent of its memory: the store is the largest thing training holds, and writing
    fresh memory is a large part of preparing it. An image with nothing in it keeps its
    first pixel.

    Examples
    --------
    >>> from jungleseg.features import Samples
    >>> image = np.zeros((4, 5), np.float32); image[1:3, 2] = 1.5
    >>> samples = Samples(np.zeros(1, np.int32), np.array([2], np.int32),
    ...                   np.array([2], np.int32))
    >>> crops, moved = crop_to_nonzero([image], samples)
    >>> crops[0].shape, int(moved.row[0]), int(moved.col[0])
    ((2, 1), 1, 0)
    """
    bounds = np.searchsorted(samples.image, np.arange(len(images) + 1))  # drawn image by image
    top = np.empty(len(images), np.int32)
    left = np.empty(len(images), np.int32)
    crops = []
    for i, image in enumerate(images):
        rows = np.flatnonzero(np.any(image, axis=1))
        cols = np.flatnonzero(np.any(image, axis=0))
        chosen = slice(bounds[i], bounds[i + 1])
        r = np.concatenate([rows[[0, -1]] if rows.size else rows, samples.row[chosen]])
        c = np.concatenate([cols[[0, -1]] if cols.size else cols, samples.col[chosen]])
        r0, r1 = (int(r.min()), int(r.max()) + 1) if r.size else (0, 1)
        c0, c1 = (int(c.min()), int(c.max()) + 1) if c.size else (0, 1)
        crops.append(image[r0:r1, c0:c1])
        top[i], left[i] = r0, c0
    return crops, Samples(samples.image, samples.row - top[samples.image],
                          samples.col - left[samples.image], samples.label)
