"""Segmenting files: an image or volume file into a label file, in this process."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def segment_file(jungle, path: Path, target: Path, tile=None, smoothing: int | None = None,
                 probabilities: bool = False, max_memory: int | None = None) -> int:
    """Segment one image or volume file into the label file ``target`` (PNG, TIFF for
    volumes, or zarr, written chunk by chunk); ``tile`` None picks tiles by the memory
    budget ``max_memory`` (:func:`jungleseg.segmentation.auto_tile`). Returns the pixels
    segmented."""
    from .._atomic import written_atomically
    from ..imageio import open_label_array, read_image, write_labels
    from ._context import input_stage
    from ._segment import auto_tile, label_dtype, segment, segment_to

    image = read_image(path, input_stage(jungle).family, mmap=True)
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
    write_labels(target, labels, colours)
    if probabilities:
        where = Path(target).with_name(f"{Path(target).stem}_proba.npy")
        with written_atomically(where) as tmp, open(tmp, "wb") as handle:
            np.save(handle, proba)
    return int(labels.size)
