"""Helpers shared by the benchmark scripts."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np

#: The Kinect config as issue 14's targets and the comparisons of issue 18 were set on it:
#: 3 DAGs of width 256 and depth 20, 200 candidates, 20 thresholds, 250 pixels a frame, labels
#: without smoothing or prior power. configs/kinect.yaml has since chosen other settings for
#: accuracy within 2 minutes; benchmarks that compare with those earlier runs keep these.
KINECT_3_DAGS = {"jungle.n_estimators": 3, "jungle.max_width": 256, "jungle.max_depth": 20,
                 "jungle.n_candidate_features": 200, "jungle.n_thresholds": 20,
                 "sampling.samples_per_image": 250, "jungle.smoothing": 0,
                 "jungle.prior_power": 0.0}


def timed_fit(model, X, y) -> float:
    """Fit and return wall seconds."""
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start


def total_nodes(model) -> int:
    """Nodes of a JungleClassifier or of a scikit-learn forest."""
    if hasattr(model, "node_count_"):
        return int(model.node_count_)
    return int(sum(tree.tree_.node_count for tree in model.estimators_))


def scores_by_prior_power(jungle, images, labels, powers, ignore=(255,)) -> dict:
    """{power: scores} of the jungle's labels at each prior power
    (``jungleseg.segmentation.with_inference``), all from one segmentation per image:
    labels come from its probabilities as ``segment``'s own do, and pixels without
    probabilities (a depth model's background) keep the label ``segment`` gave them."""
    from jungleseg import confusion_matrix, scores, segment
    from jungleseg.segmentation import with_inference

    weighed = {power: with_inference(jungle, prior_power=power) for power in powers}
    matrices = dict.fromkeys(powers, 0)
    for image, truth in zip(images, labels):
        plain, proba = segment(jungle, image)
        has_probabilities = proba.any(axis=2)
        for power in powers:
            chosen = weighed[power].label_indices(proba, axis=2)
            labelled = np.where(has_probabilities, jungle.classes[chosen], plain)
            matrices[power] = matrices[power] + confusion_matrix(
                [truth], [labelled], jungle.classes, ignore)
    return {power: scores(matrix) for power, matrix in matrices.items()}


def warm_up() -> None:
    """Compile (or load from cache) every Numba kernel on a tiny problem."""
    from jungleseg import JungleClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    for width in (4, None):
        for criterion in ("entropy", "gini"):
            JungleClassifier(2, max_width=width, criterion=criterion, random_state=0).fit(X, y)


def fit_and_score(model, train_images, train_labels, test_images, test_labels, ignore=(255,)):
    """Fit an image model, segment the test images, and return (scores, fit seconds,
    segmentation seconds)."""
    from jungleseg import evaluate, segment

    fit_seconds = timed_fit(model, list(train_images), list(train_labels))
    start = time.perf_counter()
    predicted = [segment(model.jungle_, im, probabilities=False)[0] for im in test_images]
    seconds = time.perf_counter() - start
    return evaluate(test_labels, predicted, model.classes_, ignore=ignore), fit_seconds, seconds


def write_results(name: str, figures: dict, folder=None):
    """Write a benchmark's figures to ``benchmarks/results/<name>.json`` (the results pages
    of the docs cite these files), with what is needed to judge them: the command, the date,
    the machine (CPU count and model, memory) and its load average at the end of the run.
    ``folder``, else the environment's ``JUNGLESEG_RESULTS``, else ``benchmarks/results/``."""
    import json
    import os
    import platform
    import sys
    from datetime import datetime, timezone
    from pathlib import Path

    # JUNGLESEG_RESULTS sends the figures elsewhere (tests run benchmarks at tiny sizes)
    folder = Path(folder or os.environ.get("JUNGLESEG_RESULTS")
                  or Path(__file__).resolve().parent / "results")
    folder.mkdir(parents=True, exist_ok=True)
    cpu = next((line.split(":", 1)[1].strip() for line in _read_lines("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    memory = next((line.split()[1] for line in _read_lines("/proc/meminfo")
                   if line.startswith("MemTotal")), None)
    record = {
        "benchmark": name,
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
                    "memory_gb": round(int(memory) / 2**20, 1) if memory else None,
                    "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg")
                    else None},
        "figures": figures,
    }
    path = folder / f"{name}.json"
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(record, indent=1) + "\n")
    temporary.replace(path)
    print(f"figures written to {path}")
    return path


def _read_lines(path: str) -> list[str]:
    try:
        with open(path) as file:
            return file.readlines()
    except OSError:
        return []


def mosaic_zarr(path: Path, images: list, size: int, chunk: int):
    """A size x size RGB zarr image tiled from ``images`` (each chunk a grid of them,
    starting at a different image), written chunk by chunk."""
    import zarr

    z = zarr.open_array(str(path), mode="w", shape=(size, size, 3), chunks=(chunk, chunk, 3),
                        dtype=np.uint8)
    h, w = min(im.shape[0] for im in images), min(im.shape[1] for im in images)
    rows, cols = -(-chunk // h), -(-chunk // w)
    for r in range(0, size, chunk):
        for c in range(0, size, chunk):
            k = (r // chunk * 7 + c // chunk) % len(images)
            block = np.concatenate([np.concatenate([images[(k + i * cols + j) % len(images)]
                                                    [:h, :w] for j in range(cols)], axis=1)
                                    for i in range(rows)], axis=0)
            z[r:r + chunk, c:c + chunk] = block[:min(chunk, size - r), :min(chunk, size - c)]
    return z


class TreeRSS:
    """The peak of the resident memory summed over a process (default this one) and all
    its descendants (a CLI's or a LocalCluster's workers), and each one's own peak,
    sampled every 50 ms; ``trace``: the sum every ``every`` seconds (whether it creeps)."""

    def __init__(self, pid: int | None = None, every: float = 30.0):
        import psutil

        self.root, self.every = psutil.Process(pid), every
        self.peak, self.own, self.trace = 0, {}, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        import psutil

        start = last = time.perf_counter()
        while not self._stop.is_set():
            total = 0
            for p in [self.root, *self.root.children(recursive=True)]:
                try:
                    rss = p.memory_info().rss
                    name = " ".join(p.cmdline()[1:3])[:60]
                except psutil.Error:
                    continue
                total += rss
                key = f"{p.pid} {name}"
                self.own[key] = max(self.own.get(key, 0), rss)
            self.peak = max(self.peak, total)
            if time.perf_counter() - last >= self.every:
                last = time.perf_counter()
                self.trace.append((round(last - start), total))
            time.sleep(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
