"""Segmenting files: an image or volume file into a label file, in this process."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np


def segment_file(jungle, path: Path, target: Path, tile=None, smoothing: int | None = None,
                 probabilities: bool = False, max_memory: int | None = None,
                 stop: Callable[[], bool] | None = None) -> int | None:
    """Segment one image or volume file into the label file ``target`` (PNG, TIFF for
    volumes, or zarr, written chunk by chunk); ``tile`` None picks tiles by the memory
    budget ``max_memory`` (:func:`jungleseg.segmentation.auto_tile`). A stack of the 2-D
    images a 2-D model reads (:func:`jungleseg.imageio.is_stack`: a z-stack or a time
    series) is segmented slice by slice into a label stack, a multipage TIFF (``target``
    with the suffix ``.tif`` for ``.png``) or zarr. Returns the pixels segmented.

    Every label file appears complete or not at all: a zarr is written in a hidden
    folder beside ``target`` that takes its place once its last chunk is written
    (:func:`jungleseg._atomic.zarr_written_atomically`), so an error or Ctrl-C midway
    leaves any previous ``target`` as it was. ``stop``, if given, is asked before each
    tile and slice (Ctrl-C in the command line): once it says True, nothing is written
    and None is returned."""
    try:
        return _segment_file(jungle, Path(path), Path(target), tile, smoothing,
                             probabilities, max_memory, stop)
    except _Stopped:
        return None


class _Stopped(Exception):
    """``stop`` said True: what was written is removed, and None returned."""


def _segment_file(jungle, path: Path, target: Path, tile, smoothing, probabilities: bool,
                  max_memory, stop) -> int:
    from .._atomic import zarr_written_atomically
    from ..imageio import NamedWrites, is_stack, open_label_array, read_image
    from ._context import input_stage
    from ._segment import auto_tile, label_dtype, segment, segment_to

    family = input_stage(jungle).family
    image = read_image(path, family, mmap=True, stacks=True)
    if is_stack(family, image.shape):
        return _segment_stack(jungle, image, Path(target), tile, smoothing, probabilities,
                              max_memory, stop)
    dtype = label_dtype(jungle)
    if tile is None:
        tile = auto_tile(jungle, image, smoothing, max_memory, probabilities, dtype)
    colours = jungle.metadata.get("class_colours")
    shape = tuple(image.shape[:jungle.family.spatial_ndim])
    if Path(target).suffix.lower() == ".zarr" and not probabilities:
        with zarr_written_atomically(target) as tmp:
            out = NamedWrites(open_label_array(tmp, shape, dtype, colours=colours,
                                               name=Path(target).stem), target)
            if not segment_to(jungle, image, out, None, tile, smoothing, stop):
                raise _Stopped
        return int(np.prod(shape))
    if tile is None:
        labels, proba = segment(jungle, image, smoothing=smoothing, probabilities=probabilities)
    else:  # large: the labels of every tile straight into the smallest type that holds them
        labels = np.empty(shape, dtype)
        proba = np.empty((*shape, jungle.n_classes), np.float32) if probabilities else None
        if not segment_to(jungle, image, labels, proba, tile, smoothing, stop):
            raise _Stopped
    _write(target, labels, proba, colours)
    return int(labels.size)


def _segment_stack(jungle, stack, target: Path, tile, smoothing, probabilities: bool,
                   max_memory, stop=None) -> int:
    """:func:`segment_file` of a stack of 2-D images, slice by slice: small slices several
    at a time, each on one thread (:func:`~jungleseg.segmentation.segment_frames`), large
    ones one after another, in tiles by the memory budget."""
    from contextlib import nullcontext

    from .._atomic import zarr_written_atomically
    from ..imageio import NamedWrites, open_label_array
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
    with zarr_written_atomically(target) if zarr else nullcontext(target) as where:
        labels = (NamedWrites(open_label_array(where, shape, dtype, colours=colours,
                                               name=target.stem), target)
                  if zarr else np.empty(shape, dtype))
        proba = np.empty((*shape, jungle.n_classes), np.float32) if probabilities else None
        for z, (found, p) in enumerate(results):
            if stop is not None and stop():
                raise _Stopped
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
