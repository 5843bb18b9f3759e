"""Segmenting one image or volume file into a label file: what ``jungleseg segment`` does
per file, in this process or as a task on a dask worker."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def segment_file(jungle, path: Path, target: Path, tile=None, smoothing: int | None = None,
                 probabilities: bool = False, max_memory: int | None = None) -> int:
    """Segment one image or volume file into the label file ``target`` (PNG, TIFF for
    volumes, or zarr, written chunk by chunk); ``tile`` None picks tiles by the memory
    budget ``max_memory`` (:func:`jungleseg.segmentation.auto_tile`). Returns the pixels
    segmented."""
    from ..imageio import open_label_array, read_image, write_labels
    from . import auto_tile, segment, segment_to
    from ._context import input_stage

    image = read_image(path, input_stage(jungle).family, mmap=True)
    if tile is None:
        tile = auto_tile(jungle, image, smoothing, max_memory)
    colours = jungle.metadata.get("class_colours")
    shape = tuple(image.shape[:jungle.family.spatial_ndim])
    if Path(target).suffix.lower() == ".zarr" and not probabilities:
        out = open_label_array(target, shape, jungle.classes.dtype, colours=colours)
        segment_to(jungle, image, out, None, tile, smoothing)
        return int(np.prod(shape))
    labels, proba = segment(jungle, image, tile=tile, smoothing=smoothing,
                            probabilities=probabilities)
    write_labels(target, labels, colours)
    if probabilities:
        np.save(Path(target).with_name(f"{Path(target).stem}_proba.npy"), proba)
    return int(labels.size)
