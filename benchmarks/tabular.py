"""Tabular fits: jungle fit time against scikit-learn's forest, and test accuracy, on UCI sets.

For each set and each of the paper's random 50/50 splits: a
:class:`~jungleseg.JungleClassifier` of 8 DAGs, M = 128, and scikit-learn's 8-tree
``RandomForestClassifier`` are fitted one right after the other (interleaved, same seed,
same rows, same thread count), so that the ratio of their fit times holds on a loaded
machine. Prints and writes, per set, the median fit seconds of both (wall, and CPU: user +
system of all the process's threads), their ratios, and the
jungle's test accuracy (mean and standard deviation over the splits).

The figures go under ``--label`` (default ``current``) into
``benchmarks/results/tabular.json``; other labels already in the file are kept, so a run on
an earlier commit (``--label before``) and one on this commit sit side by side. Each label
also records the machine's 1-minute load average at its end: other work on the machine slows
both fits, which the ratio partly cancels.

    python benchmarks/tabular.py [--sets letter pendigits] [--splits 5] [--label current]
                                 [--max-bins 256 | none] [--data DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numba
import numpy as np
from sklearn.ensemble import RandomForestClassifier

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from _common import warm_up  # noqa: E402

from jungleseg import JungleClassifier  # noqa: E402
from jungleseg.datasets.uci import load_uci, paper_splits  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "tabular.json"


def measure(name: str, data: str | None, n_splits: int, max_bins: int | None) -> dict:
    """Fit times (jungle and peer, interleaved) and test accuracies of one set."""
    X, y = load_uci(name, data)
    threads = numba.get_num_threads()
    jungle_s, peer_s, jungle_cpu, peer_cpu, accuracy, peer_accuracy = [], [], [], [], [], []
    for seed, (train, test) in enumerate(paper_splits(len(y), n_splits)):
        jungle = JungleClassifier(8, max_width=128, random_state=seed, **_bins_param(max_bins))
        start, cpu = time.perf_counter(), time.process_time()
        jungle.fit(X[train], y[train])
        jungle_s.append(time.perf_counter() - start)
        jungle_cpu.append(time.process_time() - cpu)
        peer = RandomForestClassifier(8, n_jobs=threads, random_state=seed)
        start, cpu = time.perf_counter(), time.process_time()
        peer.fit(X[train], y[train])
        peer_s.append(time.perf_counter() - start)
        peer_cpu.append(time.process_time() - cpu)
        accuracy.append(float(jungle.score(X[test], y[test])))
        peer_accuracy.append(float(peer.score(X[test], y[test])))
    result = {
        "max_bins": max_bins, "rows_train": int(len(train)), "splits": n_splits,
        "threads": threads,
        "jungle_fit_s": float(np.median(jungle_s)), "sklearn_rf_fit_s": float(np.median(peer_s)),
        "fit_ratio": float(np.median(jungle_s) / np.median(peer_s)),
        "jungle_fit_cpu_s": float(np.median(jungle_cpu)),
        "sklearn_rf_fit_cpu_s": float(np.median(peer_cpu)),
        "fit_cpu_ratio": float(np.median(jungle_cpu) / np.median(peer_cpu)),
        "accuracy_mean": float(np.mean(accuracy)), "accuracy_std": float(np.std(accuracy)),
        "accuracy_per_split": accuracy,
        "sklearn_rf_accuracy_mean": float(np.mean(peer_accuracy)),
    }
    print(f"{name:10s} jungle {result['jungle_fit_s']:.3f} s, sklearn RF(8) "
          f"{result['sklearn_rf_fit_s']:.3f} s, ratio {result['fit_ratio']:.2f} (CPU "
          f"{result['jungle_fit_cpu_s']:.3f} s / {result['sklearn_rf_fit_cpu_s']:.3f} s, ratio "
          f"{result['fit_cpu_ratio']:.2f}); accuracy "
          f"{100 * result['accuracy_mean']:.2f} +- {100 * result['accuracy_std']:.2f} "
          f"(RF {100 * result['sklearn_rf_accuracy_mean']:.2f})", flush=True)
    return result


def _bins_param(max_bins: int | None) -> dict:
    """``max_bins`` as a JungleClassifier keyword, none when the default (256) is used (so
    that this script also runs on versions without binning)."""
    return {} if max_bins == 256 else {"max_bins": max_bins}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["letter", "pendigits"])
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--label", default="current",
                        help="key the figures are stored under in the results file")
    parser.add_argument("--max-bins", type=lambda s: None if s == "none" else int(s),
                        default=256, help="bins per column, or 'none' for raw values")
    parser.add_argument("--data", default=None, help="data root or uci folder")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    warm_up()
    print(f"{os.cpu_count()} cores, {numba.get_num_threads()} Numba threads; fit times are "
          "medians over the splits, jungle and peer interleaved", flush=True)
    figures = {name: measure(name, args.data, args.splits, args.max_bins) for name in args.sets}
    results = json.loads(args.output.read_text()) if args.output.exists() else {}
    results[args.label] = {**figures, "load_average_1min": os.getloadavg()[0]}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.output.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=2) + "\n")
    tmp.replace(args.output)


if __name__ == "__main__":
    main()
