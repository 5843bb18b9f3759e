"""Synthetic Kinect body parts (31 classes) with configs/kinect.yaml.

Each of 3 DAGs trains on its own rendered frames (``images_per_dag`` of the config, 3000)
x 250 foreground pixels; the test set is 1000 further frames (seed 1). Prints rendering
speed, training time and stages, nodes, and the mean Jaccard over foreground pixels (PASCAL
VOC, one confusion matrix) for the jungle and for our forest at a similar node count and
fully grown, all in one run. ``--train N`` renders N training frames instead, shared out
over the DAGs.

    python benchmarks/kinect.py [--train 9000] [--test 1000]

``--per-dag 1000 3000 10000`` instead trains the jungle alone with that many frames per
DAG (frames rendered one by one straight into the training store, so 30,000 frames fit in
memory) and prints Jaccard, nodes and training time for each. ``--set KEY=VALUE`` overrides
the config (as in benchmarks/stanford.py); ``--test-seed 2`` scores on validation frames
instead of the test frames (seed 1), to compare settings without choosing on the test set.
``--prior-powers 0 0.5 1`` also scores the jungle's labels at those prior powers, from
the same model and one segmentation of the frames.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fit_and_score, scores_by_prior_power, warm_up, write_results  # noqa: E402

from jungleseg import ImageStore, evaluate, segment  # noqa: E402
from jungleseg.config import load_config, parse_overrides  # noqa: E402
from jungleseg.datasets.kinect import render_frame, render_frames  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "kinect.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=None,
                        help="training frames (default: the config's frames per DAG x DAGs)")
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--forest-depths", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--no-jungle", action="store_true", help="only the forests")
    parser.add_argument("--per-dag", type=int, nargs="+", default=None,
                        help="frames per DAG to train the jungle with, one run each")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="override configs/kinect.yaml values")
    parser.add_argument("--test-seed", type=int, default=1,
                        help="seed of the frames scored (1: the test frames)")
    parser.add_argument("--prior-powers", type=float, nargs="+", default=[],
                        help="also score the jungle's labels at these prior powers")
    args = parser.parse_args()
    overrides = parse_overrides(args.set)
    warm_up()
    if args.per_dag:
        runs = frames_against_accuracy(args.per_dag, args.test, args.test_seed, overrides)
        write_results("kinect_frames", {"overrides": args.set, "test_frames": args.test,
                                        "test_seed": args.test_seed, "runs": runs})
        return
    config = load_config(CONFIG).with_overrides(overrides)
    n_dags = config.jungle_params.get("n_estimators", 3)
    n_train = args.train or n_dags * config.sampling_params["images_per_dag"]
    render_frames(2, seed=0)
    start = time.perf_counter()
    depth, labels = render_frames(n_train, seed=0)
    seconds = time.perf_counter() - start
    print(f"rendered {n_train} frames of 320x240 in {seconds:.1f} s "
          f"({n_train / seconds:.0f} frames/s)")
    test_depth, test_labels = render_frames(args.test, seed=args.test_seed)
    per_dag = n_train // n_dags
    figures = {"overrides": args.set, "train_frames": n_train, "test_frames": args.test,
               "test_seed": args.test_seed, "render_seconds": seconds,
               "render_frames_per_second": n_train / seconds, "models": {}}
    runs = {} if args.no_jungle else {"jungle": {"sampling.images_per_dag": per_dag}}
    for d in args.forest_depths:
        runs[f"forest depth {d}"] = {"sampling.images_per_dag": per_dag,
                                     "jungle.max_width": None, "jungle.max_depth": d}
    for name, overrides in runs.items():
        model = config.with_overrides(overrides).estimator()
        s, fit, seg = fit_and_score(model, depth, labels, test_depth, test_labels, (0, 255))
        stages = {k: round(v, 1) for k, v in model.grow_stats_.seconds.items()}
        print(f"{name:16s} mean Jaccard {s.mean_jaccard:.3f}  pixel acc "
              f"{100 * s.pixel_accuracy:5.1f} %  nodes {model.node_count_:7d}  bytes "
              f"{model.model_bytes_:9d}  fit {fit:6.1f} s {stages}  test {args.test} frames in "
              f"{seg:.1f} s", flush=True)
        figures["models"][name] = {
            "mean_jaccard": s.mean_jaccard, "pixel_accuracy": s.pixel_accuracy,
            "nodes": int(model.node_count_), "model_bytes": int(model.model_bytes_),
            "fit_seconds": fit, "stage_seconds": stages, "segment_seconds": seg}
        if name == "jungle" and args.prior_powers:
            by_power = scores_by_prior_power(model.jungle_, test_depth, test_labels,
                                             args.prior_powers, (0, 255))
            for power, p in by_power.items():
                print(f"  prior power {power:<4}  mean Jaccard {p.mean_jaccard:.4f}  pixel acc "
                      f"{100 * p.pixel_accuracy:5.1f} %", flush=True)
            figures["models"][name]["by_prior_power"] = {
                str(power): {"mean_jaccard": p.mean_jaccard, "pixel_accuracy": p.pixel_accuracy}
                for power, p in by_power.items()}
    write_results("kinect", figures)


#: Stands for every rendered frame, whose depth is already in the training store: fit
#: checks the frames (one array, so nothing is copied) and reads their shape.
_FRAME = np.ones((240, 320), np.float32)


def frames_against_accuracy(per_dag: list[int], n_test: int, test_seed: int = 1,
                            overrides: dict | None = None) -> list[dict]:
    """Train the jungle with each number of frames per DAG; print and return the figures."""
    config = load_config(CONFIG).with_overrides(overrides or {})
    family = config.features()
    n_dags = config.jungle_params.get("n_estimators", 3)
    test_depth, test_labels = render_frames(n_test, seed=test_seed)
    runs = []
    for n in per_dag:
        total = n * n_dags
        labels = np.empty((total, *_FRAME.shape), np.uint8)

        def fill(i, planes, labels=labels):  # bound now: the loop deletes labels below
            depth, labels[i] = render_frame(0, i)
            family.channels_into(depth, planes)

        start = time.perf_counter()
        store = ImageStore.build([_FRAME.shape] * total, 1, fill)
        rendered = time.perf_counter() - start
        model = config.with_overrides({"sampling.images_per_dag": n}).estimator()
        start = time.perf_counter()
        model.fit([_FRAME] * total, list(labels), store=store)
        fit = time.perf_counter() - start
        del store, labels
        predicted = [segment(model.jungle_, d, probabilities=False)[0] for d in test_depth]
        s = evaluate(list(test_labels), predicted, model.classes_, ignore=(0, 255))
        stages = {k: round(v, 1) for k, v in model.grow_stats_.seconds.items()}
        print(f"{n:6d} frames per DAG: mean Jaccard {s.mean_jaccard:.3f}  pixel acc "
              f"{100 * s.pixel_accuracy:5.1f} %  nodes {model.node_count_:7d}  fit {fit:7.1f} s "
              f"{stages}  (rendering {rendered:.0f} s)", flush=True)
        runs.append({"frames_per_dag": n, "mean_jaccard": s.mean_jaccard,
                     "pixel_accuracy": s.pixel_accuracy, "nodes": int(model.node_count_),
                     "fit_seconds": fit, "stage_seconds": stages, "render_seconds": rendered})
    return runs


if __name__ == "__main__":
    main()
