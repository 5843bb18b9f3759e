"""Interactive training speed: train on sparse scribbles and segment a 1024x1024 grey image,
against scikit-image's trainable segmentation, in one run (warm JIT, median of repeats).

Ours: the napari widget's default (configs/napari.yaml for a grey layer, 3 DAGs), fit on
the painted pixels, then :func:`jungleseg.segment` of the whole image. The peer: scikit-
image's documented example (``multiscale_basic_features`` sigma 1-16, ``fit_segmenter`` +
``predict_segmenter`` with a random forest of 50 trees, depth 10, ``max_samples=0.05``),
features included. Both are scored by mean Jaccard against the full ground truth.

Images: scikit-image's coins resized to 1024x1024 (2 classes; truth from the gallery's
watershed on the Sobel elevation map) and a synthetic cell image with 4 textured classes
(:func:`jungleseg.datasets.microscopy.render_cells`). Run it on an idle machine.

    python benchmarks/scribbles.py [--fraction 0.015] [--repeats 5]
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
from jungleseg import evaluate, segment  # noqa: E402
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


def ours(image, scribbles):
    model = session.estimator(session.load_preset("napari"), "grey", 1, 3, 64, 12, 16)
    model.fit([image], [scribbles])
    return segment(model.jungle_, image)[0], model.node_count_


def peer(image, scribbles):
    from skimage import feature, future
    from sklearn.ensemble import RandomForestClassifier

    features_func = partial(feature.multiscale_basic_features, intensity=True, edges=False,
                            texture=True, sigma_min=1, sigma_max=16)
    features = features_func(image)
    clf = RandomForestClassifier(n_estimators=50, n_jobs=-1, max_depth=10, max_samples=0.05)
    clf = future.fit_segmenter(scribbles, features, clf)
    result = future.predict_segmenter(features, clf)
    return result, sum(t.tree_.node_count for t in clf.estimators_)


def timed(run, image, scribbles, repeats):
    run(image, scribbles)  # warm up (JIT, caches)
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        labels, nodes = run(image, scribbles)
        seconds.append(time.perf_counter() - start)
    return labels, nodes, float(np.median(seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fraction", type=float, default=0.015,
                        help="share of the pixels painted (default 0.015)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    images = {"coins 1024x1024 (2 classes)": coins()}
    cells, cell_truth = render_cells(1, seed=0, size=(SIZE, SIZE))
    images["cells 1024x1024 (4 textured classes)"] = (cells[0], cell_truth[0])
    for name, (image, truth) in images.items():
        scribbles = paint_scribbles(truth, fraction=args.fraction, seed=0)
        classes = np.unique(truth)
        print(f"{name}: {100 * np.mean(scribbles > 0):.2f} % of the pixels painted")
        results = {}
        for label, run in (("jungle (3 DAGs)", ours), ("skimage fit_segmenter", peer)):
            predicted, nodes, seconds = timed(run, image, scribbles, args.repeats)
            s = evaluate([truth], [predicted], classes)
            results[label] = seconds
            print(f"  {label:22s} train + segment {seconds:6.3f} s  mean Jaccard "
                  f"{s.mean_jaccard:.3f}  pixel acc {100 * s.pixel_accuracy:5.1f} %  "
                  f"nodes {nodes}", flush=True)
        print(f"  speed-up {results['skimage fit_segmenter'] / results['jungle (3 DAGs)']:.1f}x")


if __name__ == "__main__":
    main()
