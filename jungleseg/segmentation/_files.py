"""Segmenting files: an image or volume file into a label file, in this process."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def segment_file(jungle, path: Path, target: Path, tile=None, smoothing: int | None = None,
                 probabilities: bool = False, max_memory: int | None = None) -> int:
    """Segment one image or volume file into the label file ``target`` (PNG, TIFF for
    volumes, or zarr, written chunk by chunk); ``tile`` None picks tiles by the memory
    budget ``max_memory`` (:func:`jungleseg.segmentation.auto_tile`). A stack of the 2-D
    images a 2-D model reads (:func:`jungleseg.imageio.is_stack`: a z-stack or a time
    series) is segmented slice by slice into a label stack, a multipage TIFF (``target``
    with the suffix ``.tif`` for ``.png``) or zarr. Returns the pixels segmented."""
    from ..imageio import is_stack, open_label_array, read_image
    from ._context import input_stage
    from ._segment import auto_tile, label_dtype, segment, segment_to

    family = input_stage(jungle).family
    image = read_image(path, family, mmap=True, stacks=True)
    if is_stack(family, image.shape):
        return _segment_stack(jungle, image, Path(target), tile, smoothing, probabilities,
                              max_memory)
    dtype = label_dtype(jungle)
    if tile is None:
        tile = auto_tile(jungle, image, smoothing, max_memory, probabilities, dtype)
    colours = jungle.metadata.get("class_colours")
    shape = tuple(image.shape[:jungle.family.spatial_ndim])
    if Path(target).suffix.lower() == ".zarr" and not probabilities:
        out = open_label_array(target, shape, dtype, colours=colours)
        segment_to(jungle, image, out, None, tile, smoothing)
        return int(np.prod(shape))
    if tile is None:
        labels, proba = segment(jungle, image, smoothing=smoothing, probabilities=probabilities)
    else:  # large: the labels of every tile straight into the smallest type that holds them
        labels = np.empty(shape, dtype)
        proba = np.empty((*shape, jungle.n_classes), np.float32) if probabilities else None
        segment_to(jungle, image, labels, proba, tile, smoothing)
    _write(target, labels, proba, colours)
    return int(labels.size)


def _segment_stack(jungle, stack, target: Path, tile, smoothing, probabilities: bool,
                   max_memory) -> int:
    """:func:`segment_file` of a stack of 2-D images, slice by slice: small slices several
    at a time, each on one thread (:func:`~jungleseg.segmentation.segment_frames`), large
    ones one after another, in tiles by the memory budget."""
    from ..imageio import open_label_array
    from ._segment import STREAM_PIXELS, auto_tile, label_dtype, segment, segment_frames

    shape, dtype = tuple(stack.shape[:3]), label_dtype(jungle)
    colours = jungle.metadata.get("class_colours")
    if tile is None:
        tile = auto_tile(jungle, stack[0], smoothing, max_memory, probabilities, dtype)
    slices = (np.asarray(stack[z]) for z in range(shape[0]))
    if tile is None and shape[1] * shape[2] <= STREAM_PIXELS:
        results = segment_frames(jungle, slices, smoothing, probabilities)
    else:
        results = (segment(jungle, s, tile, smoothing, probabilities) for s in slices)
    zarr = target.suffix.lower() == ".zarr"
    if not zarr:
        target = target.with_suffix(".tif")
    labels = (open_label_array(target, shape, dtype, colours=colours) if zarr
              else np.empty(shape, dtype))
    proba = np.empty((*shape, jungle.n_classes), np.float32) if probabilities else None
    for z, (found, p) in enumerate(results):
        labels[z] = found
        if proba is not None:
            proba[z] = p
    _write(target, None if zarr else labels, proba, colours)
    return int(np.prod(shape))


def _write(target, labels, proba, colours) -> None:
    """The label file (unless ``labels`` is None: written already) and the probabilities
    beside it."""
    from .._atomic import written_atomically
    from ..imageio import write_labels

    if labels is not None:
        write_labels(target, labels, colours)
    if proba is not None:
        where = Path(target).with_name(f"{Path(target).stem}_proba.npy")
        with written_atomically(where) as tmp, open(tmp, "wb") as handle:
            np.save(handle, proba)
