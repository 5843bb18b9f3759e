"""``jungleseg evaluate``: a model's scores on a benchmark's test part or on your own
folders, printed (also with ``--quiet``), as JSON and as a confusion-matrix PNG."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ._outputs import error, warn, writable_file
from ._run import cluster, say
from ._train import user_split

BENCHMARKS = ("kinect", "faces", "fasseg", "stanford")


def benchmark_of(args, jungle) -> str | None:
    """The benchmark to score on: ``--dataset``, else the one the model was trained on
    (its metadata), else the kind of folder ``--data`` names (a folder from ``jungleseg
    generate``: ``depth/`` for kinect, ``images/`` for faces)."""
    if args.dataset:
        return args.dataset
    trained_on = jungle.metadata.get("dataset")
    if trained_on in BENCHMARKS:
        return trained_on
    if args.data and (Path(args.data) / "meta.json").is_file():
        return "kinect" if (Path(args.data) / "depth").is_dir() else "faces"
    return None


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Score a model; print the scores, and write JSON and a confusion PNG."""
    from ..datasets import load_benchmark
    from ..evaluate import class_mismatch, default_ignore, evaluate_jungle, plot_confusion
    from ..io import load_model

    jungle = load_model(args.model)
    confusion_path = writable_file(args.confusion or Path(args.model).with_suffix(
        ".confusion.png"), "--confusion")
    json_path = writable_file(args.json, "--json") if args.json else None
    failures = []

    def report(problem, i=None):
        if args.fail_fast:
            raise problem
        failures.append(problem)
        error(("" if i is None else f"{where} {i}: ") + str(problem).splitlines()[0])

    ignore, where = list(jungle.params.get("ignore", (255,))), "image"
    split = user_split(args, jungle.family, jungle.classes, ignore)
    if split is None:
        ignore = None  # the benchmark's own
        dataset = benchmark_of(args, jungle)
        if dataset is None:
            raise ValueError("give --dataset NAME, or your own images and labels: --data DIR "
                             "holding images/ and labels/, or --images DIR --labels DIR")
        where = f"{dataset} test image"
        split = load_benchmark(dataset, "test", args.data, args.n, on_error=report)
        if not split.images:
            raise ValueError(f"no readable test image of dataset {dataset} in "
                             f"{args.data or 'the default data folder'}")
        problem = class_mismatch(jungle, split.class_names, default_ignore(jungle))
        if problem and not args.allow_class_mismatch:
            raise ValueError(f"{args.model} does not fit dataset {dataset}: {problem} "
                             "(--allow-class-mismatch scores it all the same)")
    n_images = len(split.images) + len(failures)  # the unreadable ones too
    from .._jit import announce_compile

    announce_compile("segment", quiet=args.quiet)
    with cluster(args) as client:
        predicted = None
        if client is not None:
            from ..distributed import segment_images

            predicted = segment_images(client, jungle, split.images)
    scores, result = evaluate_jungle(jungle, split.images, split.labels, not args.quiet,
                                     on_error=lambda i, problem: report(problem, i),
                                     predicted=predicted, ignore=ignore,
                                     class_names=split.class_names)
    names = list(result["per_class_jaccard"])
    for value, name in zip(result["unseen_classes"], names[len(jungle.classes):]):
        warn(f"class {value} ({name}) of the test labels was never seen in training: the "
             "model cannot predict it; scored as Jaccard 0, and counted in the mean")
    plot_confusion(scores.confusion, names, confusion_path)
    if json_path:
        json_path.write_text(json.dumps({**result, "n_failed": len(failures)}, indent=2))
    width = max(len(n) for n in names)
    for name, value in result["per_class_jaccard"].items():
        print(f"  {name:{width}s}  {value:.3f}")
    print(f"mean Jaccard {result['mean_jaccard']:.3f}  pixel accuracy "
          f"{100 * result['pixel_accuracy']:.1f} %  nodes {result['nodes']}  bytes "
          f"{result['bytes']}")
    say(args, f"confusion matrix: {confusion_path}"
              + (f"; scores: {json_path}" if json_path else ""))
    if failures:
        error(f"{len(failures)} of {n_images} images could not be read or segmented (each "
              "reported above); the scores cover the others")
        return 1
    return 0
