"""``jungleseg train``: a preset or config, a benchmark or your own folders, a model file."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from ._outputs import save_or_rescue, warn, writable_file
from ._run import budget, cluster, progress, say, stop_if_interrupted


def train_model(estimator, split, args, client=None, limit: int | None = None) -> float:
    """Fit ``estimator`` on the split (on the cluster of ``client`` if given), with a
    progress bar of levels and Ctrl-C between levels; the seconds it took."""
    start = time.perf_counter()
    if client is not None:
        from ._run import cluster_module

        cluster_module(args).fit(estimator, split.images, split.labels, client,
                                 data_parallel=args.data_parallel)
        return time.perf_counter() - start

    def on_level(level, nodes):
        bar.update(1)
        stop_if_interrupted(f"training stopped after level {level}; no model was written")

    bar = progress(args, estimator.max_depth or None, "training (levels)")
    try:
        estimator.fit(split.images, split.labels, progress=on_level, max_memory=limit)
    finally:
        bar.close()
    return time.perf_counter() - start


def check_training_memory(estimator, split, limit: int) -> None:
    """MemoryError, in one line with the estimate and the budget, before training when
    its estimated peak exceeds ``limit`` bytes."""
    from .._memory import check_training_memory as check

    try:
        check(estimator, split.images, split.labels, limit, "--max-memory")
    except MemoryError as err:
        raise MemoryError(f"{err}: lower jungle.n_estimators, max_width, "
                          "n_candidate_features or n_thresholds, or train on fewer "
                          "images (--n)") from None


def with_metadata(estimator, split, dataset: str | None = None):
    """The fitted jungle with its class names and colours (and the benchmark it was
    trained on) in its metadata."""
    from ._classes import tab20_colours

    classes = [int(c) for c in estimator.classes_]
    spare = iter(tab20_colours(len(classes)))
    jungle = estimator.jungle_
    jungle.metadata.update(
        class_names={str(c): split.class_names.get(c, str(c)) for c in classes},
        class_colours={str(c): split.class_colours.get(c) or next(spare) for c in classes})
    if dataset in ("kinect", "faces", "fasseg", "stanford"):
        jungle.metadata["dataset"] = dataset
    return jungle


def user_split(args, family, classes=None, ignore=()):
    """The images and labels of ``--images``/``--labels`` (or ``--data`` holding
    ``images/`` and ``labels/``), paired by name, or None for a benchmark; of a stack of
    2-D images, its slices with labels outside ``ignore``. When training (``classes``
    None), the classes get names and colours (:mod:`._classes`)."""
    from ..datasets.folders import load_folders, paired_files, user_folders
    from ._classes import class_names_and_colours, given_classes

    folders = user_folders(args.images, args.labels, args.data)
    if folders is None:
        return None
    try:
        split = load_folders(*folders, family, args.n, ignore=ignore)
    except ValueError as err:
        raise ValueError(_with_input_hint(str(err), family, folders)) from None
    if classes is None:
        values = sorted(split.class_names)
        given = getattr(args, "classes", None)
        unheld = sorted(set(given_classes(given)) - set(values) - set(ignore)) if given else []
        if unheld:
            warn(f"--classes names {', '.join(map(str, unheld))}, which no label image holds "
                 f"(they hold {', '.join(map(str, values))}): check the values")
        files = [label for _, label in paired_files(*folders)[:args.n]]
        split.class_names, split.class_colours = class_names_and_colours(
            values, getattr(args, "classes", None), folders[1], files)
    return split


def _with_input_hint(message: str, family, folders: tuple[Path, Path]) -> str:
    """A preset given pictures of the other kind (colour or grey): say which setting to
    change or, when the images before the one refused were of the preset's kind (a grey
    picture among colour photos), to convert that one. Images of channels other than
    RGB's three (stains) are read by the napari preset's channels input."""
    import re

    from ..datasets.folders import paired_files

    kinds = {"grey": ("grey", "grey images", "colour pictures", "rgb"),
             "rgb": ("RGB", "RGB pictures", "grey images", "grey")}
    kind = kinds.get(getattr(family, "input", None))
    if kind is None or f"model reads {kind[0]} images; this one" not in message:
        return message
    name, preset_reads, other, setting = kind
    if not message.startswith(f"{paired_files(*folders)[0][0]}:"):
        return f"{message}; the images before it are {name}: save this one as {name} too"
    stains = re.search(r"this one has (\d+) channels", message)
    if stains and int(stains[1]) != 3:
        return (f"{message}; for images of {stains[1]} channels train the napari preset "
                f"with --set features.input=channels features.n_channels={stains[1]} "
                "features.gradient=false")
    return (f"{message}; this preset reads {preset_reads}: for {other} add --set "
            f"features.input={setting}")


def cmd_train(args: argparse.Namespace) -> int:
    """Train with a preset or config on a benchmark's training part or on folders of
    images and labels paired by name; save the model."""
    from ..config import parse_overrides
    from ..datasets import load_benchmark
    from ..datasets.folders import looks_like_instances
    from ._presets import load_named_config

    out = writable_file(args.out, "--out")
    if out.suffix.lower() not in (".h5", ".hdf5"):
        warn(f"--out {out}: a model is an HDF5 file; name it NAME.h5 so that others "
             "recognise it")
    if args.data_parallel and args.scheduler is None and args.workers is None:
        raise ValueError("--data-parallel trains on a dask cluster: give --scheduler "
                         "ADDRESS or --workers N")
    limit = budget(args)
    config = load_named_config(args.config).with_overrides(parse_overrides(args.set))
    if config.dataset == "uci" or config.dataset is None:
        raise ValueError(f"{args.config}: 'jungleseg train' trains on images; this config is "
                         f"for {config.dataset!r} (use benchmarks/uci.py for tabular sets)")
    estimator = config.estimator()
    split = user_split(args, estimator._family(), ignore=estimator.ignore)
    if split is not None and looks_like_instances(split.labels, estimator.ignore):
        ids = len([v for v in split.class_names if v not in estimator.ignore])
        warn(f"the labels hold {ids} values, each one region of one image: "
             "they look like object ids (an instance mask), and training learns a class per "
             "object. Give each pixel its class instead (for objects on a background: 1 "
             "where the ids are above 0)")
    dataset = None
    if split is None:
        if config.dataset == "napari":
            raise ValueError(f"{args.config}: a config for your own data: give --images DIR "
                             "--labels DIR (or --data DIR with images/ and labels/)")
        if args.classes:
            raise ValueError("--classes names the classes of your own folders; a benchmark "
                             f"({config.dataset}) has its own")
        dataset = config.dataset
        split = load_benchmark(dataset, "train", args.data, args.n)
    check_training_memory(estimator, split, limit)
    stop_if_interrupted()
    from .._jit import announce_compile

    announce_compile("train", quiet=args.quiet)
    with cluster(args) as client:
        seconds = train_model(estimator, split, args, client, limit)
    path = save_or_rescue(with_metadata(estimator, split, dataset), Path(out))
    kind = "volume" if estimator._family().spatial_ndim == 3 else "image"
    count = len(split.images)
    say(args, f"trained on {count} {kind}{'' if count == 1 else 's'} in {seconds:.1f} s: "
              f"{estimator.node_count_} nodes, {estimator.model_bytes_} bytes -> {path}")
    return 0
