"""Stanford Background, k-fold cross-validation (k = 5, fixed seed) in one run:

- a 3-DAG jungle and our 3-tree forest with the same colour features,
- the peer pipeline users run today: scikit-image ``multiscale_basic_features`` + a
  scikit-learn random forest (as in ``skimage.future.fit_segmenter``).

Prints per model: mean Jaccard (PASCAL VOC, one confusion matrix per fold, void left
out), pixel accuracy, nodes, training time (and its stages for ours) and end-to-end
segmentation throughput in megapixels per second (features included), per fold and
averaged.

    python benchmarks/stanford.py [--data DIR] [--folds 0 1 2 3 4] [--skip-peer]
                                  [--skip-forest] [--set jungle.min_samples_leaf=10 ...]
                                  [--preset stanford_context]

``--preset NAME`` runs configs/NAME.yaml instead of configs/stanford.yaml (its figures go to
``stanford_<NAME>.json``).
"""
from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import warm_up, write_results  # noqa: E402

from jungleseg import confusion_matrix, scores  # noqa: E402
from jungleseg.config import load_config, parse_overrides  # noqa: E402
from jungleseg.datasets.stanford import kfold_splits, load_stanford  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def ours(config, forest, seed, overrides):
    """The config (a path) with the overrides and seed: its jungle, or (``forest``) the
    same without the width cap, a standard forest."""
    overrides = {**overrides, "seed": seed, **({"jungle.max_width": None} if forest else {})}
    return load_config(config).with_overrides(overrides).estimator()


def run_ours(model, train, test):
    start = time.perf_counter()
    model.fit([im for im, _ in train], [lab for _, lab in train])
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    predicted = [model.predict(im) for im, _ in test]
    seconds = time.perf_counter() - start
    stages = {k: round(v, 1) for k, v in model.grow_stats_.seconds.items()}
    return predicted, fit_seconds, seconds, model.node_count_, stages


def run_peer(train, test, n_trees, per_image, seed):
    from skimage.feature import multiscale_basic_features
    from sklearn.ensemble import RandomForestClassifier

    features = partial(multiscale_basic_features, channel_axis=-1, sigma_min=1, sigma_max=16)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    X, y = [], []
    for im, lab in train:
        f = features(im)
        usable = np.flatnonzero(lab.ravel() != 255)
        pick = rng.choice(usable, min(per_image, usable.size), replace=False)
        X.append(f.reshape(-1, f.shape[-1])[pick])
        y.append(lab.ravel()[pick])
    forest = RandomForestClassifier(n_trees, n_jobs=-1, random_state=seed)
    forest.fit(np.concatenate(X), np.concatenate(y))
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    predicted = []
    for im, _ in test:
        f = features(im)
        predicted.append(forest.predict(f.reshape(-1, f.shape[-1])).reshape(im.shape[:2]))
    seconds = time.perf_counter() - start
    nodes = sum(t.tree_.node_count for t in forest.estimators_)
    return predicted, fit_seconds, seconds, nodes, {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--skip-forest", action="store_true")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="override configs/stanford.yaml values, e.g. jungle.max_depth=24")
    parser.add_argument("--preset", default="stanford", metavar="NAME",
                        help="configs/NAME.yaml (default: stanford)")
    parser.add_argument("--peer-trees", type=int, default=100)
    parser.add_argument("--peer-pixels", type=int, default=250)
    args = parser.parse_args()
    warm_up()
    data = load_stanford(args.data)
    by_id = {i: (im, lab) for i, im, lab in data}
    classes = np.arange(8)
    splits = kfold_splits(list(by_id), k=5, seed=0)
    overrides = parse_overrides(args.set)
    config = CONFIGS / f"{args.preset}.yaml"
    width = load_config(config).with_overrides(overrides).jungle_params["max_width"]
    runners = {f"jungle (3 DAGs, M={width})":
               lambda tr, te, f: run_ours(ours(config, False, f, overrides), tr, te)}
    if not args.skip_forest:
        runners["forest (3 trees)"] = (
            lambda tr, te, f: run_ours(ours(config, True, f, overrides), tr, te))
    if not args.skip_peer:
        runners[f"peer: skimage features + RF({args.peer_trees})"] = (
            lambda tr, te, f: run_peer(tr, te, args.peer_trees, args.peer_pixels, f))
    totals = {name: [] for name in runners}
    for fold in args.folds:
        train_ids, test_ids = splits[fold]
        train = [by_id[i] for i in train_ids]
        test = [by_id[i] for i in test_ids]
        pixels = sum(im.shape[0] * im.shape[1] for im, _ in test)
        for name, run in runners.items():
            predicted, fit_s, seg_s, nodes, stages = run(train, test, fold)
            s = scores(confusion_matrix([lab for _, lab in test], predicted, classes))
            row = (s.mean_jaccard, s.pixel_accuracy, nodes, fit_s, pixels / seg_s / 1e6)
            totals[name].append(row)
            print(f"fold {fold} {name:38s} Jaccard {s.mean_jaccard:.3f} pixel acc "
                  f"{100 * s.pixel_accuracy:5.1f} % nodes {nodes:8d} fit {fit_s:6.1f} s "
                  f"segment {pixels / seg_s / 1e6:5.2f} Mpx/s {stages}", flush=True)
    print(f"\nmean over folds {args.folds}:")
    figures = {}
    for name, rows in totals.items():
        j, acc, nodes, fit_s, mpx = np.array(rows).T
        print(f"{name:38s} Jaccard {j.mean():.3f} +- {j.std():.3f}  pixel acc "
              f"{100 * acc.mean():5.1f} %  nodes {nodes.mean():9.0f}  fit {fit_s.mean():6.1f} s"
              f"  segment {mpx.mean():5.2f} Mpx/s")
        figures[name] = {"mean_jaccard": float(j.mean()), "jaccard_std": float(j.std()),
                         "pixel_accuracy": float(acc.mean()), "nodes": float(nodes.mean()),
                         "fit_seconds": float(fit_s.mean()), "mpx_per_s": float(mpx.mean())}
    name = "stanford" if args.preset == "stanford" else f"stanford_{args.preset}"
    write_results(name, {"folds": args.folds, "overrides": args.set, "models": figures})


if __name__ == "__main__":
    main()
