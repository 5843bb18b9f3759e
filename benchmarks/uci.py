"""The paper's UCI protocol: pool the rows, five random 50/50 splits, 8 DAGs or trees.

Prints, per set and model, test accuracy (mean and standard deviation over the splits), total
nodes and fit time (median), all measured in the same run. JIT compilation is done before any
timing (see ``jit_time.py`` for its cost).

    python benchmarks/uci.py [--data DIR] [--sets letter pendigits] [--repeats 5]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import RandomForestClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import timed_fit, total_nodes, warm_up, write_results  # noqa: E402

from jungleseg import JungleClassifier  # noqa: E402
from jungleseg.datasets.uci import load_uci, paper_splits  # noqa: E402

SETS = ["letter", "pendigits", "satimage", "usps", "dna", "mnist5k"]


def models(n_estimators: int, seed: int) -> dict:
    return {
        "jungle M=128": JungleClassifier(n_estimators, max_width=128, random_state=seed),
        "jungle M=256": JungleClassifier(n_estimators, max_width=256, random_state=seed),
        "our forest": JungleClassifier(n_estimators, max_width=None, random_state=seed),
        "sklearn RF (1 job)": RandomForestClassifier(n_estimators, random_state=seed),
        "sklearn RF (2 jobs)": RandomForestClassifier(n_estimators, random_state=seed, n_jobs=2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="data root or uci folder")
    parser.add_argument("--sets", nargs="+", default=SETS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dags", type=int, default=8)
    args = parser.parse_args()
    warm_up()
    print(f"{'set':10s} {'model':20s} {'accuracy':>15s} {'nodes':>8s} {'fit s':>7s}")
    figures: dict[str, dict] = {}
    for name in args.sets:
        X, y = load_uci(name, args.data)
        results: dict[str, list] = {}
        for r, (train, test) in enumerate(paper_splits(len(y), args.repeats)):
            for label, model in models(args.dags, r).items():
                seconds = timed_fit(model, X[train], y[train])
                accuracy = model.score(X[test], y[test])
                results.setdefault(label, []).append((accuracy, total_nodes(model), seconds))
        for label, rows in results.items():
            acc, nodes, secs = np.array(rows).T
            print(f"{name:10s} {label:20s} {100 * acc.mean():7.2f} +- {100 * acc.std():4.2f} "
                  f"{nodes.mean():8.0f} {np.median(secs):7.3f}")
            figures.setdefault(name, {})[label] = {
                "accuracy_mean": float(acc.mean()), "accuracy_std": float(acc.std()),
                "nodes_mean": float(nodes.mean()), "fit_seconds_median": float(np.median(secs))}
        sys.stdout.flush()
    write_results("uci", {"repeats": args.repeats, "dags": args.dags, "sets": figures})


if __name__ == "__main__":
    main()
