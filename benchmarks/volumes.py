"""3-D volumes: the volume model against the 2-D slice-by-slice model and scikit-image.

Accuracy: synthetic anisotropic cell volumes (:mod:`jungleseg.datasets.cells3d`, 0.3 x
0.1 x 0.1 um voxels), the plain one and the variant whose structures are thin in z,
painted on three slices (1 % of each slice, :func:`~jungleseg.datasets.cells3d.paint_slices`).
Every model trains on the same strokes and is scored by mean Jaccard over the whole volume:

- 3-D: ``configs/volume.yaml`` (probes up to 1 um along every axis);
- 2-D: the same preset on single slices (``ColourFeatures``, grey, the same offsets,
  scales and jungle in pixels of the slice), trained on the painted slices as images and
  segmenting the volume slice by slice;
- peer: scikit-image's trainable segmentation in 3-D (``multiscale_basic_features`` with
  sigma 1-8 voxels, ``fit_segmenter`` + ``predict_segmenter``, a random forest of 50 trees,
  depth 10, ``max_samples=0.05``, as in its gallery example). On the large volume without
  the texture (Hessian eigenvalue) features: with them, its features and their
  temporaries outgrow the 24 GB machine (the process was killed).

Speed: the same on a 256 x 512 x 512 volume, train + segment timed end to end (channels,
training, traversal, labels), the jungle before and after the peer in the same run (its
best time is reported). Run it on an idle machine.

    python benchmarks/volumes.py [--size 256 512 512] [--accuracy-size 64 256 256] [--seeds 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from _common import write_results  # noqa: E402

from jungleseg import ColourFeatures, evaluate, segment, segment_prepared  # noqa: E402
from jungleseg.config import load_preset  # noqa: E402
from jungleseg.datasets.cells3d import (  # noqa: E402
    CLASS_NAMES,
    MEMBRANE,
    NUCLEUS,
    paint_slices,
    render_cell_volume,
)

CLASSES = np.arange(1, len(CLASS_NAMES) + 1)


def volume_model(seed: int):
    return load_preset("volume").estimator().set_params(random_state=seed)


def slice_model(seed: int):
    """The volume preset translated to single slices (pixels of the in-plane spacing)."""
    model = volume_model(seed)
    family = model.features
    pixel = family.spacing[1]
    planar = ColourFeatures(max_offset=int(round(family.max_offset / pixel)),
                            kinds=list(family.kinds), input="grey",
                            smoothing_scales=[s / pixel for s in family.smoothing_scales],
                            gradient=family.gradient, centred=family.centred,
                            filters=list(family.filters),
                            filter_scales=[s / pixel for s in family.filter_scales])
    return model.set_params(features=planar)


def painted(truth: np.ndarray, seed: int) -> np.ndarray:
    """Strokes on three slices, as a user paints them where structures show: within four
    slices of the first and last quartile of the depth, the slice with the most membrane,
    and near the middle the one with the most nucleus."""
    depth = truth.shape[0]
    chosen = []
    for quartile, structure in ((depth // 4, MEMBRANE), (depth // 2, NUCLEUS),
                                (3 * depth // 4, MEMBRANE)):
        near = np.arange(max(quartile - 4, 0), min(quartile + 5, depth))
        chosen.append(int(near[np.argmax((truth[near] == structure).sum(axis=(1, 2)))]))
    return paint_slices(truth, chosen, 0.01, seed)


def run_volume(volume, paint, seed):
    """Train on the painted volume and segment it from the channels computed for
    training, as the napari widget does."""
    start = time.perf_counter()
    model = volume_model(seed)
    store = model.features.prepare([volume])
    model.fit([volume], [paint], store=store)
    labels, _ = segment_prepared(model.jungle_, store)
    return labels, time.perf_counter() - start


def run_slices(volume, paint, seed):
    start = time.perf_counter()
    model = slice_model(seed)
    slices = [z for z in range(volume.shape[0]) if paint[z].any()]
    model.fit([volume[z] for z in slices], [paint[z] for z in slices])
    labels = np.stack([segment(model.jungle_, plane)[0] for plane in volume])
    return labels, time.perf_counter() - start


def run_peer(volume, paint, seed, texture=True):
    from functools import partial

    from skimage.feature import multiscale_basic_features
    from skimage.future import fit_segmenter, predict_segmenter
    from sklearn.ensemble import RandomForestClassifier

    start = time.perf_counter()
    features = partial(multiscale_basic_features, intensity=True, edges=True, texture=texture,
                       sigma_min=1, sigma_max=8, channel_axis=None)(volume)
    forest = RandomForestClassifier(n_estimators=50, n_jobs=-1, max_depth=10,
                                    max_samples=0.05, random_state=seed)
    forest = fit_segmenter(paint, features, forest)
    labels = predict_segmenter(features, forest)
    return labels, time.perf_counter() - start


def jaccard(truth, labels) -> float:
    return evaluate([truth], [labels], CLASSES).mean_jaccard


def warm_up() -> None:
    volume, truth = render_cell_volume((16, 128, 128), seed=0)
    paint = painted(truth, 0)
    run_volume(volume, paint, 0)
    run_slices(volume, paint, 0)


def accuracy(shape, seeds: int, peer: bool) -> dict:
    """Print and return the mean Jaccard of every model, plain and thin in z."""
    figures = {"shape": list(shape), "seeds": seeds}
    print(f"accuracy: {shape} voxels, painted on 3 slices, mean Jaccard over the volume")
    for thin in (False, True):
        rows = {"3-D": [], "2-D slices": [], "peer": []}
        for seed in range(seeds):
            volume, truth = render_cell_volume(shape, seed=seed, thin=thin)
            paint = painted(truth, seed)
            runs = [("3-D", run_volume), ("2-D slices", run_slices)]
            runs += [("peer", run_peer)] if peer else []
            for name, run in runs:
                labels, seconds = run(volume, paint, seed)
                rows[name].append((jaccard(truth, labels), seconds))
        print(f"  {'thin in z' if thin else 'plain'}:")
        for name, values in rows.items():
            if values:
                j = np.array([v[0] for v in values])
                t = np.array([v[1] for v in values])
                print(f"    {name:10s} Jaccard {j.mean():.3f} ({j.min():.3f}-{j.max():.3f}), "
                      f"median {np.median(t):.2f} s")
                figures.setdefault("thin_in_z" if thin else "plain", {})[name] = {
                    "mean_jaccard": float(j.mean()), "min_jaccard": float(j.min()),
                    "max_jaccard": float(j.max()), "median_seconds": float(np.median(t)),
                    "jaccard_per_seed": j.tolist(), "seconds_per_seed": t.tolist()}
    return figures


def speed(shape, peer: bool) -> dict:
    """Print and return train + segment seconds of the jungle (twice) and the peer."""
    volume, truth = render_cell_volume(shape, seed=0)
    paint = painted(truth, 0)
    print(f"speed: {shape} voxels ({volume.size / 1e6:.0f} M), train + segment, "
          f"{(paint > 0).sum()} painted voxels; load average {os.getloadavg()[0]:.1f}")
    figures = {"shape": list(shape), "painted_voxels": int((paint > 0).sum()),
               "load_average_at_start": os.getloadavg()[0]}
    times = []
    labels, seconds = run_volume(volume, paint, 0)
    times.append(seconds)
    figures["jungle_seconds"], figures["jungle_jaccard"] = seconds, jaccard(truth, labels)
    print(f"  jungle 3-D: {seconds:.2f} s, Jaccard {jaccard(truth, labels):.3f}", flush=True)
    if peer:  # the 3-D Hessian at 4 scales of 67 M voxels does not fit in 24 GB
        peer_labels, peer_seconds = run_peer(volume, paint, 0, texture=False)
        print(f"  peer (no texture features): {peer_seconds:.2f} s, Jaccard "
              f"{jaccard(truth, peer_labels):.3f}", flush=True)
        figures["peer_no_texture_seconds"] = peer_seconds
        figures["peer_no_texture_jaccard"] = jaccard(truth, peer_labels)
    labels, seconds = run_volume(volume, paint, 0)
    times.append(seconds)
    print(f"  jungle 3-D again: {seconds:.2f} s; best {min(times):.2f} s"
          + (f", {peer_seconds / min(times):.1f}x the peer's speed" if peer else ""))
    figures["jungle_again_seconds"] = seconds
    figures["jungle_best_seconds"] = min(times)
    if peer:
        figures["speed_up_over_peer"] = peer_seconds / min(times)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, nargs=3, default=(256, 512, 512))
    parser.add_argument("--accuracy-size", type=int, nargs=3, default=(64, 256, 256))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--no-peer", action="store_true", help="skip scikit-image")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-accuracy", action="store_true")
    args = parser.parse_args()
    warm_up()
    print(f"2 cores; load average {os.getloadavg()[0]:.1f} at the start (a shared machine "
          "inflates every time)")
    figures = {"load_average_at_start": os.getloadavg()[0]}
    if not args.skip_accuracy:
        figures["accuracy"] = accuracy(tuple(args.accuracy_size), args.seeds, not args.no_peer)
    if not args.skip_speed:
        figures["speed"] = speed(tuple(args.size), not args.no_peer)
    write_results("volumes", figures)


if __name__ == "__main__":
    main()
