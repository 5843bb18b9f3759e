"""What the paper's figure scripts share: scales, data, the models compared, and curves.

A *curve* is one model family (standard trees, a tree baseline, jungles) traced over its
size: the model is trained once, as large as the curve goes, and cut back with
:func:`jungleseg.jungle.prune` to each smaller size. A cut model equals the model trained to
that depth or node budget (a test checks it), so one fit gives the whole curve. Curves are
kept as JSON under ``<out>/cache`` so that figures sharing a curve (Fig. 2 and 3, the memory
figure) train it once per run; ``--fresh`` ignores them.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jungleseg import evaluate  # noqa: E402
from jungleseg.config import load_config  # noqa: E402
from jungleseg.jungle import prune  # noqa: E402
from jungleseg.segmentation import segment_prepared  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
KINECT_IGNORE = (0, 255)  # background and invalid depth: only body pixels are scored


@dataclass(frozen=True)
class Sizes:
    """How large one image benchmark is run: training images (per DAG for the synthetic
    sets, each DAG on its own; in all for the real ones, every DAG on all; None: all),
    test images (None: all), pixels sampled per image, candidate features, the deepest
    level of the bounded models and of standard trees, the image size of the synthetic
    sets, and (Stanford) the cross-validation folds run."""

    train: int | None
    test: int | None
    samples: int
    candidates: int
    depth: int
    tree_depth: int
    size: tuple[int, int] | None = None
    folds: tuple[int, ...] = (0,)


@dataclass(frozen=True)
class Scale:
    """Everything that changes between ``ci`` (seconds, for tests), ``quick`` (minutes),
    ``medium`` (about an hour), ``full`` (every figure at the paper's protocol: all Stanford
    folds and objective depths, within 2 hours on 2 cores) and ``paper`` (the paper's own
    sizes where the data allow: several hours)."""

    name: str
    images: dict
    uci_sets: tuple[str, ...]
    uci_repeats: int
    uci_rows: int | None  # rows used per set (None: all)
    uci_depth: int
    objective: Sizes  # faces, for the objective table
    objective_depths: tuple[int, ...]
    ensembles: tuple[int, ...] = (1, 3, 9)
    widths: tuple[int, ...] = (128, 256, 512)
    width: int = 256  # M of the jungles and baselines of Fig. 2
    time_repeats: int = 1


SCALES = {
    "ci": Scale(
        "ci",
        images={"kinect": Sizes(3, 3, 100, 20, 6, 6, (60, 80)),
                "faces": Sizes(3, 3, 200, 20, 6, 6, (60, 80)),
                "fasseg": Sizes(6, 3, 200, 20, 6, 6),
                "stanford": Sizes(6, 3, 200, 20, 6, 6)},
        uci_sets=("pendigits",), uci_repeats=1, uci_rows=600, uci_depth=6,
        objective=Sizes(3, None, 300, 20, 0, 0, (60, 80)), objective_depths=(4, 8),
        widths=(4, 8), width=8),
    "quick": Scale(
        "quick",
        images={"kinect": Sizes(40, 40, 250, 60, 20, 16),
                "faces": Sizes(30, 30, 500, 60, 20, 16),
                "fasseg": Sizes(60, 20, 300, 60, 20, 16),
                "stanford": Sizes(120, 40, 300, 60, 20, 16)},
        uci_sets=("letter", "pendigits", "mnist10k", "usps", "satimage", "dna"),
        uci_repeats=2, uci_rows=None, uci_depth=20,
        objective=Sizes(30, None, 1000, 40, 0, 0), objective_depths=(8, 14, 20),
        width=128),
    "medium": Scale(
        "medium",
        # sized to finish in about 1.5 h on a 2-core machine shared with other work
        images={"kinect": Sizes(150, 100, 250, 100, 30, 20),
                "faces": Sizes(100, 50, 1000, 100, 30, 20),
                "fasseg": Sizes(None, None, 500, 100, 30, 20),
                "stanford": Sizes(None, None, 200, 100, 30, 26, folds=(0, 1))},
        uci_sets=("letter", "pendigits", "mnist10k", "usps", "satimage", "dna"),
        uci_repeats=2, uci_rows=None, uci_depth=25,
        objective=Sizes(30, None, 2000, 50, 0, 0), objective_depths=(14, 28, 46),
        time_repeats=1),
    "full": Scale(
        "full",
        # the largest run that fits 2 hours on 2 cores: the medium sizes with every Stanford
        # fold, the objective table at all six of the paper's depths and 5 UCI splits
        images={"kinect": Sizes(150, 100, 250, 100, 30, 20),
                "faces": Sizes(100, 50, 1000, 100, 30, 20),
                "fasseg": Sizes(None, None, 500, 100, 30, 20),
                "stanford": Sizes(None, None, 200, 100, 30, 26, folds=(0, 1, 2, 3, 4))},
        uci_sets=("letter", "pendigits", "mnist10k", "usps", "satimage", "dna"),
        uci_repeats=5, uci_rows=None, uci_depth=25,
        objective=Sizes(30, None, 2000, 50, 0, 0),
        objective_depths=(14, 28, 46, 85, 124, 163), time_repeats=2),
    "paper": Scale(
        "paper",
        # the paper's sizes where the data allow: estimated 3.5-5.5 h on 2 idle cores
        images={"kinect": Sizes(1000, 200, 250, 200, 30, 20),
                "faces": Sizes(300, 100, 2000, 100, 30, 20),
                "fasseg": Sizes(None, None, 2000, 100, 30, 20),
                "stanford": Sizes(None, None, 1000, 100, 30, 26, folds=(0, 1, 2, 3, 4))},
        uci_sets=("letter", "pendigits", "mnist10k", "usps", "satimage", "dna"),
        uci_repeats=5, uci_rows=None, uci_depth=25,
        objective=Sizes(300, None, 5000, 50, 0, 0),
        objective_depths=(14, 28, 46, 85, 124, 163), time_repeats=2),
}

#: The models of Fig. 2, as config overrides, and how each is traced: over depth, or
#: (priority trees) over the node budget of each tree.
METHODS = {
    "tree": ({"jungle.max_width": None}, "depth"),
    "fixed-width-a": ({"jungle.growth": "fixed-width-a"}, "depth"),
    "fixed-width-b": ({"jungle.growth": "fixed-width-b"}, "depth"),
    "priority": ({"jungle.growth": "priority"}, "budget"),
    "jungle": ({}, "depth"),
}
LABELS = {"tree": "standard trees", "fixed-width-a": "fixed-width trees A",
          "fixed-width-b": "fixed-width trees B", "priority": "priority-scheduled trees",
          "jungle": "jungle (LSearch)"}
STYLES = {"tree": "k-o", "fixed-width-a": "-^", "fixed-width-b": "-v", "priority": "-s",
          "jungle": "r-D"}


def arguments(description: str, datasets: tuple[str, ...] = ()) -> argparse.Namespace:
    """The options every figure script takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scale", choices=list(SCALES), default="full")
    parser.add_argument("--quick", action="store_const", const="quick", dest="scale",
                        help="the same as --scale quick (minutes)")
    parser.add_argument("--data", default=None, help="the real data (else $JUNGLESEG_DATA "
                        "or ../shared/data)")
    parser.add_argument("--out", default=None, help="output folder (default docs/paper/<scale>)")
    parser.add_argument("--fresh", action="store_true", help="retrain cached curves")
    if datasets:
        parser.add_argument("--datasets", nargs="+", choices=datasets, default=list(datasets))
    args = parser.parse_args()
    args.out = Path(args.out or REPO / "docs" / "paper" / args.scale)
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def warm_up() -> None:
    """Compile (or load) the kernels before anything is timed."""
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    from _common import warm_up as common

    common()


# --- data ----------------------------------------------------------------------------------

@dataclass
class ImageSet:
    """One image benchmark at one scale: its config and its folds (train, test)."""

    name: str
    config: object
    folds: list
    ignore: tuple
    sizes: Sizes


def _config(name: str, sizes: Sizes, n_dags: int | None = None):
    overrides = {"sampling.samples_per_image": sizes.samples,
                 "jungle.n_candidate_features": sizes.candidates}
    if name in ("kinect", "faces"):
        overrides["sampling.images_per_dag"] = sizes.train
    if name == "kinect":  # as when the figures were recorded (the config has changed since)
        overrides.update({"jungle.n_thresholds": 20, "jungle.max_width": 256})
    if n_dags is not None:
        overrides["jungle.n_estimators"] = n_dags
    return load_config(CONFIGS / f"{'faces' if name == 'objective' else name}.yaml"
                       ).with_overrides(overrides)


@functools.lru_cache(maxsize=4)
def image_set(name: str, scale: str, data: str | None = None, n_dags: int = 3) -> ImageSet:
    """Train and test images of ``kinect``, ``faces`` (synthetic, 8 classes), ``fasseg`` or
    ``stanford`` at ``scale``; the synthetic sets render ``n_dags`` x images per DAG."""
    sizes = SCALES[scale].images[name]
    ignore = KINECT_IGNORE if name == "kinect" else (255,)
    if name in ("kinect", "faces"):
        from jungleseg.datasets.faces import render_faces
        from jungleseg.datasets.kinect import render_frames

        render = render_frames if name == "kinect" else render_faces
        extra = {} if sizes.size is None else {"size": sizes.size}
        train = render(sizes.train * n_dags, seed=0, **extra)
        test = render(sizes.test, seed=1, **extra)
        folds = [(list(train[0]), list(train[1]), list(test[0]), list(test[1]))]
    elif name == "fasseg":
        from jungleseg.datasets import load_benchmark

        train = load_benchmark("fasseg", "train", data, sizes.train)
        test = load_benchmark("fasseg", "test", data, sizes.test)
        folds = [(train.images, train.labels, test.images, test.labels)]
    else:
        from jungleseg.datasets.stanford import kfold_splits, load_stanford, stanford_ids

        splits = [kfold_splits(stanford_ids(data), k=5, seed=0)[f] for f in sizes.folds]
        splits = [(train[:sizes.train], test[:sizes.test]) for train, test in splits]
        wanted = sorted({i for train, test in splits for i in train + test})
        rows = {i: (im, lab) for i, im, lab in load_stanford(data, ids=wanted)}
        folds = [([rows[i][0] for i in train], [rows[i][1] for i in train],
                  [rows[i][0] for i in test], [rows[i][1] for i in test])
                 for train, test in splits]
    return ImageSet(name, _config(name, sizes, n_dags), folds, ignore, sizes)


# --- curves --------------------------------------------------------------------------------

def depth_grid(depth: int, n: int = 14) -> list[int]:
    """Depths at which a curve is read: 1..depth, at most ``n`` of them, spread evenly on a
    log scale."""
    return sorted({int(round(d)) for d in np.geomspace(1, depth, min(n, depth))})


def budget_grid(largest: int, n: int = 14) -> list[int]:
    """Node budgets per tree (odd: a tree has 1 + 2 splits nodes) up to ``largest``."""
    return sorted({int(b) // 2 * 2 + 1 for b in np.geomspace(3, max(largest, 3), n)})


def pruned_models(model, sweep: str, grid: list[int] | None = None):
    """``(point, jungle)`` for each point of the sweep: the model cut to that depth, or
    each tree cut to that node budget (priority trees)."""
    jungle, records = model.jungle_, model.grow_stats_.nodes
    if grid is None:
        largest = max(d.n_nodes for d in jungle.dags)
        grid = depth_grid(jungle.max_depth) if sweep == "depth" else budget_grid(largest)
    for point in grid:
        cut = {"max_depth": point} if sweep == "depth" else {"max_splits": (point - 1) // 2}
        dags = [prune(dag, rec, **cut)[0] for dag, rec in zip(jungle.dags, records)]
        yield point, dataclasses.replace(jungle, dags=dags)


def score_images(jungle, store, labels, ignore) -> float:
    predicted = [segment_prepared(jungle, store, i)[0] for i in range(store.n_images)]
    return evaluate(labels, predicted, jungle.classes, ignore=ignore)


def _key(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def cached(out: Path, fresh: bool, name: str, parts, compute):
    """``compute()`` (a JSON-able value), kept in ``out/cache`` under ``name`` and a hash
    of ``parts``."""
    path = out / "cache" / f"{name}-{_key(*parts)}.json"
    if path.exists() and not fresh:
        return json.loads(path.read_text())
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return value


def image_curve(images: ImageSet, method: str, overrides: dict, sweep: str, args,
                tag: str | None = None) -> list[dict]:
    """Points of one curve on an image benchmark, each averaged over the folds: sweep
    point, total nodes, bytes, maximum feature evaluations per pixel, test mean Jaccard
    and pixel accuracy, and the fit's seconds."""
    config = images.config.with_overrides(overrides)

    def compute():
        per_fold = []
        grid = None
        for train_images, train_labels, test_images, test_labels in images.folds:
            model = config.estimator()
            start = time.perf_counter()
            model.fit(train_images, train_labels)
            seconds = time.perf_counter() - start
            family = model.jungle_.family
            store = family.prepare(test_images, pad=family.point_reach or 0)
            rows = []
            for point, jungle in pruned_models(model, sweep, grid):
                s = score_images(jungle, store, test_labels, images.ignore)
                rows.append({"point": point, "nodes": jungle.node_count, "bytes": jungle.nbytes,
                             "feature_evaluations": jungle.max_feature_evaluations,
                             "jaccard": s.mean_jaccard, "pixel_accuracy": s.pixel_accuracy,
                             "fit_seconds": seconds,
                             "stage_seconds": dict(model.grow_stats_.seconds)})
            grid = [r["point"] for r in rows]  # the same points on every fold
            per_fold.append(rows)
        return [_mean_rows(rows) for rows in zip(*per_fold)]

    rows = cached(args.out, args.fresh, f"{images.name}-{method}",
                  (images.name, images.sizes, config.to_dict(), sweep, len(images.folds)),
                  compute)
    return [{"dataset": images.name, "method": tag or method, "folds": len(images.folds),
             **row} for row in rows]


def _mean_rows(rows) -> dict:
    out = {}
    for key in rows[0]:
        values = [r[key] for r in rows]
        if key == "stage_seconds":
            out[key] = {k: float(np.mean([v[k] for v in values])) for k in values[0]}
        else:
            out[key] = float(np.mean(values)) if key != "point" else values[0]
    return out


# --- output --------------------------------------------------------------------------------

def write_csv(path: Path, rows: list[dict]) -> Path:
    """Every point of a figure, one row each (nested values as JSON)."""
    keys = list(dict.fromkeys(k for row in rows for k in row))
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, keys)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: json.dumps(v) if isinstance(v, (dict, list)) else v
                             for k, v in row.items()})
    return path


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_curves(ax, rows: list[dict], x: str, methods, xlabel: str, title: str,
                y: str = "jaccard", ylabel: str = "test mean Jaccard", log: bool = True) -> None:
    """One line per method (``rows`` with a ``method`` key) of ``y`` against ``x``."""
    for method in methods:
        pts = [(r[x], r[y]) for r in rows if r["method"] == method]
        if pts:
            xs, ys = zip(*sorted(pts))
            ax.plot(xs, ys, STYLES.get(method, "-o"), ms=3, label=LABELS.get(method, method))
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)


def scale_note(args) -> str:
    cores = os.cpu_count()
    return f"scale {args.scale}, {cores} cores"
