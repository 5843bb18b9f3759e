"""Benchmark data: loaders for the real sets, generators for the synthetic ones, and one
entry point, :func:`load_benchmark`, that the command line uses."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ._imageset import OnError

BENCHMARKS = ("kinect", "faces", "fasseg", "stanford")


@dataclass
class Split:
    """Images and label images of one part of a benchmark, with its class names."""

    images: list
    labels: list
    class_names: dict = field(default_factory=dict)  # class value -> name
    class_colours: dict = field(default_factory=dict)  # class value -> [r, g, b]


def load_benchmark(name: str, part: str = "train", data: str | os.PathLike | None = None,
                   n: int | None = None, on_error: OnError | None = None) -> Split:
    """The train or test part of a benchmark.

    - ``stanford``: fold 0 of ``kfold_splits(k=5, seed=0)`` over the real images;
    - ``fasseg``: V2 train + V3 train, or V2 test;
    - ``faces``, ``kinect``: synthetic, rendered with seed 0 (train) or 1 (test), ``n``
      images (default 300/100 faces, 1000/200 depth frames), or read from ``data`` when
      it names a folder written by ``jungleseg generate``.

    Files are read strictly. With ``on_error``, each image that cannot be read is reported
    to it (the error names the file) and left out; without, the first one raises.
    """
    if part not in ("train", "test"):
        raise ValueError(f"part must be 'train' or 'test', got {part!r}")
    if name == "stanford":
        from .stanford import CLASS_COLOURS, CLASS_NAMES, kfold_splits, load_stanford

        rows = load_stanford(data, on_error=on_error)
        train_ids, test_ids = kfold_splits([r[0] for r in rows], k=5, seed=0)[0]
        keep = set(train_ids if part == "train" else test_ids)
        rows = [r for r in rows if r[0] in keep][:n]
        return Split([r[1] for r in rows], [r[2] for r in rows], dict(enumerate(CLASS_NAMES)),
                     {i: c.tolist() for i, c in enumerate(CLASS_COLOURS)})
    if name == "fasseg":
        from .fasseg import CLASS_COLOURS, CLASS_NAMES, paper_protocol

        rows = paper_protocol(data, on_error)[0 if part == "train" else 1][:n]
        return Split([r[1] for r in rows], [r[2] for r in rows], dict(enumerate(CLASS_NAMES)),
                     {i: c.tolist() for i, c in enumerate(CLASS_COLOURS)})
    if name == "faces":
        from .faces import CLASS_COLOURS, CLASS_NAMES, load_faces, render_faces

        if data is not None:
            images, labels = load_faces(data, on_error)
        else:
            images, labels = render_faces(n or (300 if part == "train" else 100),
                                          seed=0 if part == "train" else 1)
        return Split(list(images[:n]), list(labels[:n]), dict(enumerate(CLASS_NAMES)),
                     {i: c.tolist() for i, c in enumerate(CLASS_COLOURS)})
    if name == "kinect":
        from .kinect import CLASS_COLOURS, CLASS_NAMES, load_frames, render_frames

        if data is not None:
            depth, labels = load_frames(data, on_error)
        else:
            depth, labels = render_frames(n or (1000 if part == "train" else 200),
                                          seed=0 if part == "train" else 1)
        names = dict(enumerate(CLASS_NAMES))
        return Split(list(depth[:n]), list(labels[:n]), names,
                     {i: c.tolist() for i, c in enumerate(CLASS_COLOURS)})
    raise ValueError(f"unknown dataset {name!r}; choose from {', '.join(BENCHMARKS)}")
