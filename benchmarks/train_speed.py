"""Training speed: nanoseconds per feature evaluation, seconds per stage, and a peer trained
in the same run, for four workloads.

- ``kinect``: configs/kinect.yaml as issue 14 measured it, 3 DAGs of 200 candidates,
  no smoothing, labels by the most probable part (:data:`_common.KINECT_3_DAGS`; the
  config itself now has 9 deeper, wider DAGs, fewer pixels and thresholds, smooths and
  weighs its labels, for accuracy within 2 minutes), with 1000 rendered frames x 250 foreground
  pixels per DAG, then frames per second segmenting 300 further frames,
  labels only and with probabilities, one at a time (``segment``) and as a stream
  (``segment_frames``);
- ``stanford``: configs/stanford.yaml on the training images of Stanford Background fold 0;
- ``coins``: the napari preset trained on scribbles of the 1024x1024 coins and the whole
  image segmented, as the widget does (``benchmarks/scribbles.py``); then the same again
  after a stroke, as live update does, with the channels kept from the training before
  (against ``fit_segmenter`` on features computed once);
- ``letter``: a :class:`~jungleseg.JungleClassifier` of 8 DAGs, M = 128, on the first
  paper split of letter (10,000 rows).

For each jungle: training seconds and their stages (``prepare``: channels and samples,
``features``: split tables, ``lsearch``, ``route``), the (sample, candidate) feature
evaluations and wall nanoseconds per evaluation (feature stage seconds / evaluations),
and the peak memory of the fit above what the process held before it. The Kinect and
Stanford jungles are fitted twice in a row: the first fit writes memory the process has not
used before, which on some virtual machines costs seconds per gigabyte
(``docs/results/speed.md``); the second reuses what the first freed, as a longer-lived
process would. The peer, timed in the same run and right after: scikit-learn's
RandomForestClassifier with as many trees and depth 20, on scikit-image
``multiscale_basic_features`` (sigma 1-16) at the jungle's training pixels, features
included (the ``fit_segmenter`` pipeline); for the coins also scikit-image's documented
``fit_segmenter`` example of ``scribbles.py`` (train + segment); for letter, scikit-learn's
8-tree forest.

``--threads 1 2`` runs every workload once per thread count (Numba threads and the peer's
``n_jobs``); ``--busy`` keeps one core busy with a competing ``python -c "while True:
pass"`` for the whole run. JIT compilation happens before any timing.

    python benchmarks/train_speed.py [--quick] [--threads 2] [--busy]
                                     [--only kinect stanford coins letter] [--data DIR]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path

import numba
import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from _common import KINECT_3_DAGS, warm_up, write_results  # noqa: E402

from jungleseg import JungleClassifier, sample_pixels  # noqa: E402
from jungleseg.config import load_config  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
WORKLOADS = ("kinect", "stanford", "coins", "letter")
#: Training frames per DAG of the Kinect speed workload (issue 14's "Kinect config" target).
KINECT_FRAMES_PER_DAG = 1000


class PeakMemory:
    """Largest resident set size reached while the ``with`` block runs, above the size at
    its start (polled every 5 ms from /proc)."""

    def __enter__(self):
        self.start = self.peak = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def _poll(self):
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())

    @property
    def megabytes(self) -> float:
        return (self.peak - self.start) / 2**20


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def report_jungle(label: str, seconds: float, model, memory: PeakMemory | None = None) -> dict:
    """Print a jungle's training figures and return them."""
    stats = model.grow_stats_
    stages = " ".join(f"{k} {v:.2f}" for k, v in stats.seconds.items())
    evaluations = stats.evaluations
    ns = 1e9 * stats.seconds["features"] / max(evaluations, 1)
    mem = f"  peak +{memory.megabytes:.0f} MB" if memory is not None else ""
    print(f"  {label:34s} {seconds:8.2f} s  [{stages}]  {evaluations / 1e6:.1f} M "
          f"evaluations, {ns:.1f} ns each  nodes {model.node_count_}{mem}", flush=True)
    figures = {"seconds": seconds, "stage_seconds": dict(stats.seconds),
               "evaluations": int(evaluations), "ns_per_evaluation": ns,
               "nodes": int(model.node_count_)}
    if memory is not None:
        figures["peak_memory_mb"] = memory.megabytes
    return figures


def report_peer(label: str, features: float, fit: float, extra: str = "") -> dict:
    """Print a peer's seconds and return them."""
    print(f"  {label:34s} {features + fit:8.2f} s  [features {features:.2f} fit "
          f"{fit:.2f}]{extra}", flush=True)
    return {"seconds": features + fit, "feature_seconds": features, "fit_seconds": fit}


def skimage_features(image, channel_axis=None):
    from skimage.feature import multiscale_basic_features

    return multiscale_basic_features(image, channel_axis=channel_axis, sigma_min=1,
                                     sigma_max=16)


def peer_forest(images, samples, n_trees: int, threads: int, seed: int,
                channel_axis=None) -> tuple[float, float]:
    """(feature seconds, fit seconds) of the scikit-image + scikit-learn pipeline at
    ``samples`` (only their images' features are computed)."""
    from sklearn.ensemble import RandomForestClassifier

    start = time.perf_counter()
    rows = []
    for i in np.unique(samples.image):
        pick = samples.image == i
        f = skimage_features(images[i], channel_axis)
        rows.append(f[samples.row[pick], samples.col[pick]])
    X = np.concatenate(rows)
    y = np.concatenate([samples.label[samples.image == i] for i in np.unique(samples.image)])
    features = time.perf_counter() - start
    start = time.perf_counter()
    RandomForestClassifier(n_trees, max_depth=20, n_jobs=threads, random_state=seed).fit(X, y)
    return features, time.perf_counter() - start


def training_pixels(model, labels):
    """The pixels ``model.fit`` sampled (same call, same seed)."""
    ignore = set(int(v) for v in model.ignore)
    if model.features.name == "depth":
        ignore.add(int(model.background))
    return sample_pixels(labels, model.classes_, model.sampling, model.samples_per_image,
                         tuple(ignore), model._seed())


def image_workload(name, config, images, labels, threads, channel_axis=None):
    """Train the jungle twice and the peer; print the figures and record them in
    :data:`FIGURES` under the workload and thread count."""
    config.with_overrides({"sampling.images_per_dag": None, "jungle.max_depth": 4}
                          ).estimator().fit(images[:2], labels[:2])  # JIT warm-up
    model = config.estimator()
    with PeakMemory() as memory:
        start = time.perf_counter()
        model.fit(images, labels)
        seconds = time.perf_counter() - start
    figures = record(name, threads)
    figures["jungle"] = report_jungle(f"jungle ({threads} thr)", seconds, model, memory)
    again = config.estimator()  # right away, before the freed memory goes back to the host
    start = time.perf_counter()
    again.fit(images, labels)
    seconds_again = time.perf_counter() - start
    figures["jungle_again"] = report_jungle("  again, on memory used before", seconds_again,
                                            again)
    samples = training_pixels(model, labels)
    features, fit = peer_forest(images, samples, model.n_estimators, threads, 0, channel_axis)
    figures["peer"] = report_peer(f"peer RF({model.n_estimators}, depth 20) ({threads} thr)",
                                  features, fit, f"  {len(samples)} pixels")
    figures["peer"]["pixels"] = len(samples)
    print(f"  jungle / peer time: {seconds / (features + fit):.2f} "
          f"(again: {seconds_again / (features + fit):.2f})", flush=True)
    figures["jungle_over_peer_time"] = seconds / (features + fit)
    figures["jungle_again_over_peer_time"] = seconds_again / (features + fit)
    return model


def kinect(args, threads):
    from jungleseg.datasets.kinect import render_frames

    config = load_config(CONFIGS / "kinect.yaml").with_overrides(KINECT_3_DAGS)
    per_dag = 100 if args.quick else KINECT_FRAMES_PER_DAG
    n = per_dag * config.jungle_params["n_estimators"]
    if "kinect" not in CACHE:
        CACHE["kinect"] = render_frames(n, seed=0)
    depth, labels = CACHE["kinect"]
    config = config.with_overrides({"sampling.images_per_dag": per_dag})
    print(f"kinect: {n} frames 320x240, {per_dag} per DAG", flush=True)
    model = image_workload("kinect", config, list(depth), list(labels), threads)
    figures = record("kinect", threads)
    figures["frames"], figures["frames_per_dag"] = n, per_dag
    figures["segment"] = frames_per_second(
        model.jungle_, render_frames(100 if args.quick else 300, seed=1)[0])


def drain(results) -> None:
    """Take every result of an iterator and keep none."""
    deque(results, maxlen=0)


def frames_per_second(jungle, frames) -> dict:
    """Segmentation speed of whole depth frames, labels only and with probabilities, best
    of three passes (depth conversion, foreground and labelling included): one frame at a
    time (``segment``, each frame's traversal on every thread) and as a stream
    (``segment_frames``, frames on threads at once).

    Each result is dropped as the next comes, as a loop over a camera's frames would drop
    it. Kept, 300 frames' probabilities take 2.9 GB of memory that the process has not used
    before, and the time to write it (seconds per GB on some virtual machines) would be
    measured instead of the segmentation."""
    from jungleseg import segment, segment_frames

    segment(jungle, frames[0])
    fg = float(np.mean([np.count_nonzero(f) for f in frames]))
    ways = {"one at a time": lambda p: drain(segment(jungle, f, probabilities=p)
                                             for f in frames),
            "as a stream": lambda p: drain(segment_frames(jungle, frames, probabilities=p))}
    figures = {"frames": len(frames), "foreground_pixels": fg}
    for probabilities in (False, True):
        rates = {}
        for way, run in ways.items():
            best = np.inf
            for _ in range(3):
                start = time.perf_counter()
                run(probabilities)
                best = min(best, time.perf_counter() - start)
            rates[way] = len(frames) / best
        what = "with probabilities" if probabilities else "labels only"
        print(f"  segment {len(frames)} frames ({fg:.0f} foreground px), {what}: "
              + ", ".join(f"{rate:.0f} frames/s {way}" for way, rate in rates.items()),
              flush=True)
        figures["with_probabilities" if probabilities else "labels_only"] = {
            f"frames_per_second_{way.replace(' ', '_')}": rate for way, rate in rates.items()}
    return figures


def stanford(args, threads):
    from jungleseg.datasets.stanford import kfold_splits, load_stanford

    if "stanford" not in CACHE:
        data = load_stanford(args.data)
        train_ids = set(kfold_splits([i for i, _, _ in data], k=5, seed=0)[0][0])
        train = [(im, lab) for i, im, lab in data if i in train_ids]
        CACHE["stanford"] = train[:50] if args.quick else train
    train = CACHE["stanford"]
    print(f"stanford fold 0: {len(train)} training images", flush=True)
    record("stanford", threads)["images"] = len(train)
    image_workload("stanford", load_config(CONFIGS / "stanford.yaml"),
                   [im for im, _ in train], [lab for _, lab in train], threads, channel_axis=-1)


def coins(args, threads):
    import scribbles

    from jungleseg.datasets.scribbles import paint_scribbles

    if "coins" not in CACHE:
        image, truth = scribbles.coins()
        CACHE["coins"] = image, paint_scribbles(truth, fraction=0.015, seed=0)
    image, painted = CACHE["coins"]
    repeats = 3 if args.quick else 7
    print(f"coins 1024x1024: {100 * np.mean(painted > 0):.2f} % painted, median of "
          f"{repeats}", flush=True)
    from jungleseg.config import load_preset
    from napari_plugin import _session as session

    def jungle(seed, kept=None):
        model = session.estimator(load_preset("napari"), "grey", 1, 3, 64, 12, 16, seed)
        start = time.perf_counter()
        prepared = session.train(model, image, painted, "grey", channels=kept)
        trained = time.perf_counter()
        list(session.segment_stack(model.jungle_, image, prepared=prepared))
        return model, trained - start, time.perf_counter() - trained

    def documented_peer(seed, features=None):
        from skimage import future
        from sklearn.ensemble import RandomForestClassifier

        start = time.perf_counter()
        features = skimage_features(image) if features is None else features
        clf = RandomForestClassifier(n_estimators=50, n_jobs=threads, max_depth=10,
                                     max_samples=0.05, random_state=seed)
        clf = future.fit_segmenter(painted, features, clf)
        future.predict_segmenter(features, clf)
        return time.perf_counter() - start

    jungle(0)
    documented_peer(0)
    runs, peers = [], []
    for seed in range(repeats):  # alternating, so a busy moment falls on both
        runs.append(jungle(seed))
        peers.append(documented_peer(seed))
    model = runs[0][0]
    train = float(np.median([r[1] for r in runs]))
    segment = float(np.median([r[2] for r in runs]))
    figures = record("coins", threads)
    figures.update(painted_percent=100 * float(np.mean(painted > 0)), repeats=repeats)
    figures["jungle_train"] = report_jungle(f"jungle train ({threads} thr)", train, model)
    total = float(np.median([r[1] + r[2] for r in runs]))
    print(f"  {'jungle train + segment':34s} {total:8.3f} s  (segment {segment:.3f} s)")
    peer = float(np.median(peers))
    print(f"  {'skimage fit_segmenter (50, depth 10)':34s} {peer:8.3f} s  (train + segment)")
    print(f"  speed-up over fit_segmenter: {peer / total:.1f}x", flush=True)
    figures.update(jungle_train_segment_seconds=total, jungle_segment_seconds=segment,
                   fit_segmenter_seconds=peer, speed_up_over_fit_segmenter=peer / total)
    kept, peer_features = {}, skimage_features(image)  # what the first stroke computed
    jungle(0, kept)
    strokes = [(jungle(seed, kept), documented_peer(seed, peer_features))
                for seed in range(repeats)]
    after = float(np.median([r[1] + r[2] for r, _ in strokes]))
    peer_after = float(np.median([p for _, p in strokes]))
    print(f"  {'after a stroke (channels kept)':34s} {after:8.3f} s  against fit_segmenter "
          f"on kept features {peer_after:.3f} s: {peer_after / after:.1f}x", flush=True)
    figures.update(after_stroke_seconds=after, fit_segmenter_kept_features_seconds=peer_after,
                   speed_up_after_stroke=peer_after / after)
    samples = training_pixels(model, [painted])
    features, fit = peer_forest([image], samples, 3, threads, 0)
    figures["peer"] = report_peer(f"peer RF(3, depth 20) ({threads} thr)", features, fit,
                                  f"  {len(samples)} pixels")
    figures["peer"]["pixels"] = len(samples)


def letter(args, threads):
    from sklearn.ensemble import RandomForestClassifier

    from jungleseg.datasets.uci import load_uci, paper_splits

    X, y = load_uci("letter", args.data)
    train, _ = paper_splits(len(y), 1)[0]
    X, y = X[train], y[train]
    repeats = 3 if args.quick else 7
    print(f"letter: {len(y)} rows, 8 DAGs, M=128, median of {repeats}", flush=True)
    jungle_s, peer_s, model = [], [], None
    for seed in range(repeats):
        model = JungleClassifier(8, max_width=128, random_state=seed)
        start = time.perf_counter()
        model.fit(X, y)
        jungle_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        RandomForestClassifier(8, n_jobs=threads, random_state=seed).fit(X, y)
        peer_s.append(time.perf_counter() - start)
    figures = record("letter", threads)
    figures.update(rows=len(y), repeats=repeats)
    figures["jungle"] = report_jungle(f"jungle ({threads} thr)", float(np.median(jungle_s)),
                                      model)
    figures["peer"] = report_peer(f"sklearn RF(8) ({threads} thr)", 0.0,
                                  float(np.median(peer_s)))
    print(f"  jungle / peer time: {np.median(jungle_s) / np.median(peer_s):.2f}", flush=True)
    figures["jungle_over_peer_time"] = float(np.median(jungle_s) / np.median(peer_s))


CACHE: dict = {}
#: The printed figures, {workload: {"threads_<n>": figures}}, for the results file.
FIGURES: dict = {}


def record(workload: str, threads: int) -> dict:
    """The figures of one workload at one thread count, to fill in."""
    return FIGURES.setdefault(workload, {}).setdefault(f"threads_{threads}", {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="kinect 100 frames per DAG, stanford 50 images, fewer repeats")
    parser.add_argument("--threads", type=int, nargs="+", default=[numba.config.NUMBA_NUM_THREADS],
                        help="thread counts to run every workload with (default: all cores)")
    parser.add_argument("--busy", action="store_true",
                        help='run a competing `python -c "while True: pass"` throughout')
    parser.add_argument("--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    parser.add_argument("--data", default=None, help="data root (default $JUNGLESEG_DATA)")
    args = parser.parse_args()
    warm_up()
    busy = (subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy
            else None)
    print(f"Numba threading layer {numba.threading_layer()}, {os.cpu_count()} cores"
          + (", one competing busy process" if busy else ""), flush=True)
    try:
        for name in args.only:
            for threads in args.threads:
                numba.set_num_threads(threads)
                globals()[name](args, threads)
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    write_results("train_speed_quick" if args.quick else "train_speed", {
        "threading_layer": numba.threading_layer(), "busy": args.busy,
        "quick": args.quick, "workloads": FIGURES})


if __name__ == "__main__":
    main()
