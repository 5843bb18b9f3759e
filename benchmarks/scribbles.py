"""Interactive training speed: train on sparse scribbles and segment a 1024x1024 grey image,
against scikit-image's trainable segmentation, in one run (warm JIT, median of repeats).

Ours: the napari widget's default (configs/napari.yaml for a grey layer, 3 DAGs), fit on
the painted pixels, then the whole image segmented from the channels computed for training,
as the widget does (``session.train`` + ``session.segment_stack``). The peer: scikit-
image's documented example (``multiscale_basic_features`` sigma 1-16, ``fit_segmenter`` +
``predict_segmenter`` with a random forest of 50 trees, depth 10, ``max_samples=0.05``),
features included. Each runs once per seed (the jungle's seed, the forest's random_state);
both are scored by mean Jaccard against the full ground truth. The two alternate seed by
seed, so both meet the same moments of a busy machine.

Images: scikit-image's coins resized to 1024x1024 (2 classes; truth from the gallery's
watershed on the Sobel elevation map) and a synthetic cell image with 4 textured classes
(:func:`jungleseg.datasets.microscopy.render_cells`). Run it on an idle machine.

    python benchmarks/scribbles.py [--fraction 0.015] [--seeds 5]
"""
from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results

from jungleseg import evaluate  # noqa: E402
from jungleseg.config import load_preset  # noqa: E402
from jungleseg.datasets.microscopy import render_cells  # noqa: E402
from jungleseg.datasets.scribbles import paint_scribbles  # noqa: E402
from napari_plugin import _session as session  # noqa: E402

SIZE = 1024


def coins() -> tuple[np.ndarray, np.ndarray]:
    """Coins at 1024x1024 and truth 1 = background, 2 = coin."""
    from scipy import ndimage as ndi
    from skimage import data, filters, segmentation

    image = data.coins()
    markers = np.zeros_like(image)
    markers[image < 30], markers[image > 150] = 1, 2
    coin = segmentation.watershed(filters.sobel(image), markers) == 2
    truth = 1 + ndi.binary_fill_holes(coin).astype(np.uint8)
    grey = cv2.resize(image, (SIZE, SIZE), interpolation=cv2.INTER_LINEAR)
    truth = cv2.resize(truth, (SIZE, SIZE), interpolation=cv2.INTER_NEAREST)
    return grey.astype(np.float32) / 255, truth


def ours(image, scribbles, seed):
    """What the widget does: train on the painted slice, segment it from the same channels."""
    model = session.estimator(load_preset("napari"), "grey", 1, 3, 64, 12, 16, seed)
    prepared = session.train(model, image, scribbles, "grey")
    (_, labels, _), = session.segment_stack(model.jungle_, image, prepared=prepared)
    return labels, model.node_count_


def peer(image, scribbles, seed):
    from skimage import feature, future
    from sklearn.ensemble import RandomForestClassifier

    features_func = partial(feature.multiscale_basic_features, intensity=True, edges=False,
                            texture=True, sigma_min=1, sigma_max=16)
    features = features_func(image)
    clf = RandomForestClassifier(n_estimators=50, n_jobs=-1, max_depth=10, max_samples=0.05,
                                 random_state=seed)
    clf = future.fit_segmenter(scribbles, features, clf)
    result = future.predict_segmenter(features, clf)
    return result, sum(t.tree_.node_count for t in clf.estimators_)


def timed(runs, image, scribbles, seeds):
    """Per run: median time and every seed's result. Runs alternate seed by seed, so that
    a busy moment of the machine falls on both; the first call of each (JIT, caches) is
    not timed."""
    for run in runs.values():
        run(image, scribbles, 0)
    seconds = {label: [] for label in runs}
    results = {label: [] for label in runs}
    for seed in seeds:
        for label, run in runs.items():
            start = time.perf_counter()
            results[label].append(run(image, scribbles, seed))
            seconds[label].append(time.perf_counter() - start)
    return results, {label: float(np.median(s)) for label, s in seconds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fraction", type=float, default=0.015,
                        help="share of the pixels painted (default 0.015)")
    parser.add_argument("--seeds", type=int, default=5,
                        help="runs with seeds 0..N-1 (timed; Jaccard as mean and range)")
    args = parser.parse_args()
    images = {"coins 1024x1024 (2 classes)": coins()}
    cells, cell_truth = render_cells(1, seed=0, size=(SIZE, SIZE))
    images["cells 1024x1024 (4 textured classes)"] = (cells[0], cell_truth[0])
    figures: dict[str, dict] = {}
    for name, (image, truth) in images.items():
        scribbles = paint_scribbles(truth, fraction=args.fraction, seed=0)
        classes = np.unique(truth)
        print(f"{name}: {100 * np.mean(scribbles > 0):.2f} % of the pixels painted")
        runs = {"jungle (3 DAGs)": ours, "skimage fit_segmenter": peer}
        results, medians = timed(runs, image, scribbles, range(args.seeds))
        for label in runs:
            jaccard = [evaluate([truth], [labels], classes).mean_jaccard
                       for labels, _ in results[label]]
            print(f"  {label:22s} train + segment {medians[label]:6.3f} s (median)  mean "
                  f"Jaccard {np.mean(jaccard):.3f} (seeds {min(jaccard):.3f}-"
                  f"{max(jaccard):.3f})  nodes {results[label][0][1]}", flush=True)
            figures.setdefault(name, {})[label] = {
                "seconds_median": medians[label], "mean_jaccard": float(np.mean(jaccard)),
                "jaccard_range": [float(min(jaccard)), float(max(jaccard))]}
        print(f"  speed-up {medians['skimage fit_segmenter'] / medians['jungle (3 DAGs)']:.1f}x")
    write_results("scribbles", {"fraction": args.fraction, "seeds": args.seeds,
                                "images": figures})


if __name__ == "__main__":
    main()
