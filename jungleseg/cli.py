"""The ``jungleseg`` command: train, segment, evaluate, info, generate, demo.

Exit codes: 0 success; 1 an error, reported on one line ``jungleseg: error: ...`` naming
the file or key (batch commands report each bad file on its own line, finish the others
and end with a count); 2 a malformed command line (one line too); 130 interrupted
(Ctrl-C: training stops between levels, nothing is written).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ._cli_parser import build_parser
from ._cli_parser import error as _error
from ._outputs import save_or_rescue as _save_or_rescue
from ._outputs import writable_file as _writable_file
from ._outputs import writable_folder as _writable_folder

#: Suffix of ``--out`` that names one label file rather than a folder.
LABEL_SUFFIX = ".png"


class Interrupted(Exception):
    """Ctrl-C was pressed; raised where the work can stop cleanly, saying what was done."""


class _Flag:
    interrupted = False


@contextmanager
def _interruptible():
    """Ctrl-C sets a flag that :func:`_stop_if_interrupted` turns into :class:`Interrupted`
    between training levels and images (a KeyboardInterrupt inside a parallel kernel
    leaves Numba in a bad state); a second Ctrl-C interrupts at once."""
    def handler(signum, frame):
        _Flag.interrupted = True
        signal.signal(signal.SIGINT, signal.default_int_handler)

    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop_if_interrupted(done: str = "nothing was written") -> None:
    if _Flag.interrupted:
        raise Interrupted(f"interrupted; {done}")


def _progress(args, total, desc):
    from ._progress import progress_bar

    return progress_bar(total=total, desc=desc, disable=args.quiet)


def _say(args, text: str) -> None:
    if not args.quiet:
        print(text)


def _budget(args) -> int:
    """Bytes the work may add: ``--max-memory`` (the whole process) less what the process
    holds already, or the default budget (a share of what is still available)."""
    from ._memory import default_budget, parse_size, resident_memory

    if not getattr(args, "max_memory", None):
        return default_budget()
    return max(parse_size(args.max_memory) - resident_memory(), 0)


def _train_model(estimator, split, args, client=None):
    if client is not None:
        from .distributed import fit

        start = time.perf_counter()
        fit(estimator, split.images, split.labels, client, data_parallel=args.data_parallel)
        return time.perf_counter() - start

    def progress(level, nodes):
        bar.update(1)
        _stop_if_interrupted(f"training stopped after level {level}; no model was written")

    bar = _progress(args, estimator.max_depth or None, "training (levels)")
    start = time.perf_counter()
    try:
        estimator.fit(split.images, split.labels, progress=progress)
    finally:
        bar.close()
    return time.perf_counter() - start


def _check_training_memory(estimator, split, budget: int) -> None:
    from ._memory import format_size, training_bytes
    from .segmentation._sampling import trainable_boxes

    family = estimator._family()
    ignored = estimator._never_trained(family)
    values = np.unique(np.concatenate([np.unique(lab) for lab in split.labels]))
    classes = [v for v in values if int(v) not in ignored]
    # depth training stores only the box around each body (JungleSegmenter.fit)
    boxes = (trainable_boxes(split.images, split.labels, classes) if family.border == "zero"
             else None)
    estimate = training_bytes(estimator, [np.shape(im) for im in split.images],
                              max(np.asarray(im).dtype.itemsize for im in split.images),
                              max(len(classes), 2), store_shapes=boxes)
    if estimate.total > budget:
        raise MemoryError(
            f"training would need up to {format_size(estimate.total)}, more than the memory "
            f"budget {format_size(budget)} (--max-memory); the largest part is "
            f"{estimate.largest} ({format_size(estimate.largest_bytes)}): lower "
            "jungle.n_estimators, max_width, n_candidate_features or n_thresholds")


def _with_metadata(estimator, split):
    classes = [int(c) for c in estimator.classes_]
    jungle = estimator.jungle_
    jungle.metadata.update(
        class_names={str(c): split.class_names.get(c, str(c)) for c in classes},
        class_colours={str(c): split.class_colours.get(c, [255, 255, 255]) for c in classes})
    return jungle


def _user_split(args, family, jungle=None):
    """The images and labels of ``--images``/``--labels`` (or ``--data`` holding
    ``images/`` and ``labels/``), paired by name, or None for a benchmark; with a model,
    every label value must be one of its classes or ignored."""
    from .datasets.folders import load_folders, user_folders

    folders = user_folders(args.images, args.labels, args.data)
    if folders is None:
        return None
    if jungle is None:
        return load_folders(*folders, family, args.n)
    ignore = list(jungle.params.get("ignore", (255,)))
    return load_folders(*folders, family, args.n, classes=jungle.classes, ignore=ignore)


def cmd_train(args: argparse.Namespace) -> int:
    """Train with a config on a benchmark's training part or on folders of images and
    labels paired by name; save the model."""
    from .config import load_config, parse_overrides
    from .datasets import load_benchmark

    out = _writable_file(args.out, "--out")
    if args.data_parallel and args.scheduler is None and args.workers is None:
        raise ValueError("--data-parallel trains on a dask cluster: give --scheduler "
                         "ADDRESS or --workers N")
    budget = _budget(args)
    config = load_config(args.config).with_overrides(parse_overrides(args.set))
    if config.dataset == "uci" or config.dataset is None:
        raise ValueError(f"{args.config}: 'jungleseg train' trains on images; this config is "
                         f"for {config.dataset!r} (use benchmarks/uci.py for tabular sets)")
    estimator = config.estimator()
    split = _user_split(args, estimator._family())
    if split is None:
        if config.dataset == "napari":
            raise ValueError(f"{args.config}: a config for your own data: give --images DIR "
                             "--labels DIR (or --data DIR with images/ and labels/)")
        split = load_benchmark(config.dataset, "train", args.data, args.n)
    _check_training_memory(estimator, split, budget)
    _stop_if_interrupted()
    from ._jit import announce_compile
    from .distributed import connect

    announce_compile("train", quiet=args.quiet)
    with connect(args.scheduler, args.workers) as client:
        seconds = _train_model(estimator, split, args, client)
    path = _save_or_rescue(_with_metadata(estimator, split), out)
    _say(args, f"trained on {len(split.images)} images in {seconds:.1f} s: "
               f"{estimator.node_count_} nodes, {estimator.model_bytes_} bytes -> {path}")
    return 0


def _label_targets(files: list[Path], out: Path, suffix: str) -> list[tuple[Path, Path]]:
    """(input, label file) pairs: ``--out`` ending in .png (.tif for volumes, or .zarr)
    names the one label file; else it is a folder for ``<name><suffix>`` files."""
    from .imageio import IMAGE_SUFFIXES

    if out.suffix.lower() in (suffix, ".zarr") or out.name.lower().endswith(".tiff"):
        if len(files) != 1:
            raise ValueError(f"--out {out} names one label file, but there are "
                             f"{len(files)} images; give a folder")
        return [(files[0], _writable_file(out, "--out"))]
    if out.suffix.lower() in IMAGE_SUFFIXES:
        raise ValueError(f"--out {out}: labels are written as {suffix[1:].upper()} (or zarr); "
                         f"give NAME{suffix}, NAME.zarr or a folder")
    folder = _writable_folder(out, "--out")
    return [(f, folder / f"{f.name[:-len(f.suffix)] if f.suffix else f.name}{suffix}")
            for f in files]


def cmd_segment(args: argparse.Namespace) -> int:
    """Segment image files and folders (volume files with a volume model) with a model;
    write label PNGs (multipage label TIFFs for volumes, or zarr), and probabilities."""
    from .distributed import connect, segment_files
    from .imageio import image_files
    from .io import load_model
    from .segmentation import with_inference

    jungle = with_inference(load_model(args.model), args.soft, args.soft_epsilon,
                            args.prior_power)
    budget = _budget(args)
    if args.tile is not None and args.tile < 1:
        raise ValueError(f"--tile must be >= 1, got {args.tile}")
    suffix = ".tif" if jungle.family.spatial_ndim == 3 else LABEL_SUFFIX
    targets = _label_targets(image_files(args.inputs), Path(args.out), suffix)
    pixels, failed, start = 0, 0, time.perf_counter()
    with connect(args.scheduler, args.workers) as client:
        if client is not None:
            results = segment_files(client, args.model, targets, args.tile, args.smoothing,
                                    args.probabilities,
                                    inference=(args.soft, args.soft_epsilon,
                                               args.prior_power))
            for (path, _), (n, problem) in zip(targets, results):
                if problem is not None and args.fail_fast:
                    raise ValueError(_naming(path, ValueError(problem)))
                if problem is not None:
                    _error(_naming(path, ValueError(problem)))
                failed, pixels = failed + (problem is not None), pixels + n
    if client is None:
        from ._jit import announce_compile

        announce_compile("segment", quiet=args.quiet)
    bar = _progress(args, len(targets) if client is None else 0, "segmenting")
    local, segmented = (targets if client is None else []), 0
    for (path, _), (n, err) in zip(local, _segmented(jungle, local, args, budget)):
        bar.update(1)
        if err is not None and args.fail_fast:
            raise err
        if err is not None:
            failed += 1
            _error(_naming(path, err))
        pixels, segmented = pixels + n, segmented + (err is None)
    bar.close()
    if client is None:
        _stop_if_interrupted(f"{segmented} of {len(targets)} images segmented")
    seconds = max(time.perf_counter() - start, 1e-9)
    done = len(targets) - failed
    _say(args, f"segmented {done} images ({pixels / seconds / 1e6:.2f} Mpx/s) -> {args.out}")
    if failed and len(targets) > 1:
        _error(f"{failed} of {len(targets)} images failed (each reported above); "
               f"{done} segmented")
    return 1 if failed else 0


def _segmented(jungle, targets: list[tuple[Path, Path]], args, budget: int):
    """(pixels, None) or (0, error) for each (image file, label file) pair, in order; on
    Ctrl-C no further file is begun (those begun are finished and reported).

    Once an image of at most :data:`jungleseg.segmentation.STREAM_PIXELS` pixels has been
    segmented, the others go several at a time (:func:`jungleseg._workers.ordered_map`, as
    :func:`jungleseg.segment_frames` does), each on one thread with an equal share of the
    memory budget: a folder of frames then keeps every core busy, reading and writing
    files included. Larger images go one at a time, each on every thread, and so do all
    with ``--fail-fast``, so that no file after the first bad one is written."""
    import numba

    from ._workers import ordered_map
    from .distributed import segment_file
    from .jungle import ModelError
    from .segmentation import STREAM_PIXELS

    def one(pair, max_memory: int):
        try:
            return segment_file(jungle, *pair, args.tile, args.smoothing, args.probabilities,
                                max_memory), None
        except (ValueError, OSError, MemoryError, ModelError) as err:
            return 0, err

    def interrupted() -> bool:
        return _Flag.interrupted

    rest = iter(targets)
    for pair in rest:
        if interrupted():
            return
        n, err = result = one(pair, budget)
        yield result
        if err is None and n <= STREAM_PIXELS and not args.fail_fast:
            share = budget // numba.get_num_threads()
            yield from ordered_map(lambda p: one(p, share), rest, stop=interrupted)
            return


def _naming(path: Path, err: BaseException) -> str:
    """The error's first line, starting with the file it concerns."""
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    text = text.removeprefix("image: ")  # segmentation's name for the array
    return text if text.startswith(str(path)) else f"{path}: {text}"


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Score a model on a benchmark's test part; print, and write JSON and a confusion PNG."""
    from .datasets import load_benchmark
    from .distributed import connect, segment_images
    from .evaluate import class_mismatch, evaluate_jungle, plot_confusion
    from .io import load_model

    jungle = load_model(args.model)
    confusion_path = _writable_file(args.confusion or Path(args.model).with_suffix(
        ".confusion.png"), "--confusion")
    json_path = _writable_file(args.json, "--json") if args.json else None
    failures = []

    def report(error, i=None):
        if args.fail_fast:
            raise error
        failures.append(error)
        _error(("" if i is None else f"{where} {i}: ") + str(error).splitlines()[0])

    split, ignore, where = _user_split(args, jungle.family, jungle), None, "image"
    if split is not None:
        ignore = list(jungle.params.get("ignore", (255,)))
    elif not args.dataset:
        raise ValueError("give --dataset NAME, or your own --images DIR --labels DIR")
    else:
        where = f"{args.dataset} test image"
        split = load_benchmark(args.dataset, "test", args.data, args.n, on_error=report)
        if not split.images:
            raise ValueError(f"no readable test image of dataset {args.dataset} in "
                             f"{args.data or 'the default data folder'}")
        problem = class_mismatch(jungle, split.class_names)
        if problem and not args.allow_class_mismatch:
            raise ValueError(f"{args.model} does not fit dataset {args.dataset}: {problem} "
                             "(--allow-class-mismatch scores it all the same)")
    n_images = len(split.images) + len(failures)  # the unreadable ones too
    from ._jit import announce_compile

    announce_compile("segment", quiet=args.quiet)
    with connect(args.scheduler, args.workers) as client:
        predicted = None if client is None else segment_images(client, jungle, split.images)
    scores, result = evaluate_jungle(jungle, split.images, split.labels, not args.quiet,
                                     on_error=lambda i, error: report(error, i),
                                     predicted=predicted, ignore=ignore)
    names = jungle.class_names
    plot_confusion(scores.confusion, names, confusion_path)
    if json_path:
        json_path.write_text(json.dumps({**result, "n_failed": len(failures)}, indent=2))
    if not args.quiet:
        width = max(len(n) for n in names)
        for name, value in result["per_class_jaccard"].items():
            print(f"  {name:{width}s}  {value:.3f}")
        print(f"mean Jaccard {result['mean_jaccard']:.3f}  pixel accuracy "
              f"{100 * result['pixel_accuracy']:.1f} %  nodes {result['nodes']}  bytes "
              f"{result['bytes']}  (confusion matrix: {confusion_path})")
    if failures:
        _error(f"{len(failures)} of {n_images} images could not be read or segmented (each "
               "reported above); the scores cover the others")
        return 1
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """Describe a model file."""
    from .io import load_model

    info = load_model(args.model).summary()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"{args.model}: {info['dags']} DAGs, depth {info['depth']}, {info['nodes']} nodes, "
          f"{info['bytes']} bytes")
    print("classes: " + ", ".join(f"{k} {v}" for k, v in info["classes"].items()))
    print("features: " + json.dumps(info["features"]))
    print("training: " + json.dumps(info["training"]))
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    """Render a synthetic data set to a folder."""
    try:
        height, width = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size {args.size!r}: expected HEIGHTxWIDTH, e.g. 240x320") from None
    _writable_folder(args.out, "--out")
    if args.what == "kinect":
        from .datasets.kinect import render_frames, save_frames

        depth, labels = render_frames(args.n, seed=args.seed, size=(height, width))
        save_frames(args.out, depth, labels, seed=args.seed)
    else:
        from .datasets.faces import render_faces, save_faces

        images, labels = render_faces(args.n, seed=args.seed, size=(height, width))
        save_faces(args.out, images, labels)
    _say(args, f"wrote {args.n} {args.what} images to {args.out}")
    return 0


#: What ``jungleseg demo`` scores with seed 0 (configs/demo.yaml), to tell a good run.
DEMO_EXPECTED = {"mean_jaccard": 0.246, "pixel_accuracy": 0.636}


def cmd_demo(args: argparse.Namespace) -> int:
    """Synthetic faces: train with ``configs/demo.yaml``, save, evaluate, and draw a few
    segmentations beside their pictures and truth (``examples.png``)."""
    from .config import load_preset
    from .datasets import load_benchmark
    from .datasets._imageset import colourise, contact_sheet
    from .datasets.faces import CLASS_COLOURS, CLASS_NAMES
    from .evaluate import evaluate_jungle, plot_confusion
    from .io import load_model
    from .segmentation import segment

    from ._jit import announce_compile

    out = _writable_folder(args.out, "--out")
    start = time.perf_counter()
    announce_compile("train", "segment", quiet=args.quiet)
    config = load_preset("demo").with_overrides({"seed": args.seed})
    _say(args, "rendering synthetic faces (8 classes: background, skin, hair, eyebrows, eyes, "
               "nose, lips, inner mouth) ...")
    train = load_benchmark(config.dataset, "train", n=120)
    test = load_benchmark(config.dataset, "test", n=30)
    estimator = config.estimator()
    _say(args, "training a 3-DAG jungle on 120 faces ...")
    seconds = _train_model(estimator, train, args)
    model_path = _save_or_rescue(_with_metadata(estimator, train), out / "faces-jungle.h5")
    jungle = load_model(model_path)
    scores, result = evaluate_jungle(jungle, test.images, test.labels, not args.quiet)
    plot_confusion(scores.confusion, jungle.class_names, out / "confusion.png")
    (out / "scores.json").write_text(json.dumps(result, indent=2))
    panels = [[(image, f"test face {i}"), (colourise(truth, CLASS_COLOURS), "truth"),
               (colourise(segment(jungle, image)[0], CLASS_COLOURS), "jungle")]
              for i, (image, truth) in enumerate(zip(test.images[:4], test.labels[:4]))]
    contact_sheet(panels, out / "examples.png", legend=(CLASS_NAMES, CLASS_COLOURS))
    per_class = result["per_class_jaccard"]
    _say(args, f"trained in {seconds:.1f} s: {jungle.node_count} nodes, {jungle.nbytes} bytes; "
               f"test mean Jaccard {result['mean_jaccard']:.3f}, pixel accuracy "
               f"{100 * result['pixel_accuracy']:.1f} % (background "
               f"{per_class['background']:.2f}, skin {per_class['skin']:.2f}, hair "
               f"{per_class['hair']:.2f})")
    _say(args, f"a good result: with seed 0, mean Jaccard {DEMO_EXPECTED['mean_jaccard']:.3f} "
               f"and pixel accuracy {100 * DEMO_EXPECTED['pixel_accuracy']:.1f} %; background, skin and hair are found where they "
               "are large, while the small parts (eyebrows, eyes, nose, lips) are mostly "
               "missed by a model this small (3 DAGs, 80 faces each). Far lower scores mean "
               "something is wrong.")
    _say(args, f"wrote {out}/: examples.png (test faces | truth | jungle, with a legend), "
               f"faces-jungle.h5 (the model), scores.json, confusion.png; "
               f"{time.perf_counter() - start:.0f} s")
    return 0


#: What each subcommand runs (the parser is built in :mod:`._cli_parser`).
COMMANDS = {"train": cmd_train, "segment": cmd_segment, "evaluate": cmd_evaluate,
            "info": cmd_info, "generate": cmd_generate, "demo": cmd_demo}


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    from .jungle import ModelError

    args = build_parser().parse_args(argv)
    run = COMMANDS[args.command]
    _Flag.interrupted = False
    try:
        with _interruptible():
            return run(args)
    except Interrupted as err:
        _error(str(err))
        return 130
    except KeyboardInterrupt:  # a second Ctrl-C, or one outside the checked places
        _error("interrupted")
        return 130
    except BrokenPipeError:  # the reader left (``| head``): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (ValueError, OSError, KeyError, MemoryError, ModelError) as err:
        _error(str(err).splitlines()[0] if str(err) else type(err).__name__)
        return 1


if __name__ == "__main__":
    sys.exit(main())
