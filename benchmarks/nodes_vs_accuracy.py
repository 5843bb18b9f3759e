"""Accuracy against total nodes on UCI sets (the paper's Fig. 5 view).

Jungles of 8 DAGs (several widths M and depths, ``doubling`` schedule) against our forest of
8 trees (several depths), same features and objective, averaged over 50/50 splits. Prints every
point, then for each forest point the best jungle with no more nodes, and the named check:
an 8-DAG jungle (M = 64, depth 12) against an 8-tree forest of depth 8. Writes a PNG per set.

    python benchmarks/nodes_vs_accuracy.py [--data DIR] [--sets letter pendigits] [--out DIR]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import warm_up, write_results  # noqa: E402

from jungleseg import JungleClassifier  # noqa: E402
from jungleseg.datasets.uci import load_uci, paper_splits  # noqa: E402

WIDTHS = [16, 32, 64, 128, 256]
JUNGLE_DEPTHS = [6, 7, 8, 9, 10, 12, 14, 17, 20, 25]
FOREST_DEPTHS = [4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16, 20, None]


def evaluate(make, X, y, splits):
    acc, nodes = [], []
    for r, (train, test) in enumerate(splits):
        model = make(r).fit(X[train], y[train])
        acc.append(model.score(X[test], y[test]))
        nodes.append(model.node_count_)
    return float(np.mean(nodes)), float(np.mean(acc))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--sets", nargs="+", default=["letter", "pendigits"])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs/images"))
    args = parser.parse_args()
    warm_up()
    figures = {"repeats": args.repeats, "sets": {}}
    for name in args.sets:
        X, y = load_uci(name, args.data)
        splits = paper_splits(len(y), args.repeats)
        forest = {}
        for depth in FOREST_DEPTHS:
            forest[depth] = evaluate(lambda r, d=depth: JungleClassifier(
                8, max_width=None, max_depth=d, random_state=r), X, y, splits)
            print(f"{name} forest depth {depth}: nodes {forest[depth][0]:8.0f} "
                  f"accuracy {100 * forest[depth][1]:.2f}")
        jungle = {}
        for width in WIDTHS:
            for depth in JUNGLE_DEPTHS:
                if 2 ** depth <= width:
                    continue
                jungle[width, depth] = evaluate(lambda r, m=width, d=depth: JungleClassifier(
                    8, max_width=m, max_depth=d, random_state=r), X, y, splits)
                print(f"{name} jungle M={width} depth {depth}: nodes "
                      f"{jungle[width, depth][0]:8.0f} accuracy "
                      f"{100 * jungle[width, depth][1]:.2f}")
        print(f"\n{name}: each forest point against the best jungle with no more nodes")
        worst = np.inf
        for depth, (nodes, acc) in forest.items():
            fits = [(a, n, key) for key, (n, a) in jungle.items() if n <= nodes]
            if not fits:
                print(f"  forest depth {depth}: {nodes:.0f} nodes, no jungle that small")
                continue
            best_acc, best_nodes, key = max(fits)
            worst = min(worst, best_acc - acc)
            print(f"  forest depth {depth}: {nodes:8.0f} nodes {100 * acc:6.2f} | "
                  f"jungle M={key[0]} depth {key[1]}: {best_nodes:8.0f} nodes "
                  f"{100 * best_acc:6.2f} ({100 * (best_acc - acc):+.2f})")
        print(f"  smallest margin (jungle - forest): {100 * worst:+.2f} points")
        figures["sets"][name] = {
            "forest": [{"depth": d, "nodes": n, "accuracy": a} for d, (n, a) in forest.items()],
            "jungle": [{"width": m, "depth": d, "nodes": n, "accuracy": a}
                       for (m, d), (n, a) in jungle.items()],
            "smallest_margin_accuracy": worst if np.isfinite(worst) else None}
        j_nodes, j_acc = jungle[64, 12]
        f_nodes, f_acc = forest[8]
        print(f"  named check: jungle M=64 depth 12: {j_nodes:.0f} nodes {100 * j_acc:.2f} vs "
              f"forest depth 8: {f_nodes:.0f} nodes {100 * f_acc:.2f}")
        # both have at most 511 nodes per DAG, but a forest's pure leaves stop early
        smaller = [(d, n, a) for (m, d), (n, a) in jungle.items() if m == 64 and n <= f_nodes]
        if smaller:
            d, n, a = max(smaller)
            print(f"  deepest M=64 jungle with no more nodes than that forest: depth {d}: "
                  f"{n:.0f} nodes {100 * a:.2f} ({100 * (a - f_acc):+.2f})")
        figures["sets"][name]["named_check"] = {
            "jungle_m64_depth12": {"nodes": j_nodes, "accuracy": j_acc},
            "forest_depth8": {"nodes": f_nodes, "accuracy": f_acc}}
        print()
        fig, ax = plt.subplots(figsize=(6.5, 4.5))
        f_pts = np.array(list(forest.values()))
        ax.plot(f_pts[:, 0], 100 * f_pts[:, 1], "k-o", label="forest (8 trees), depth 4..full")
        for width in WIDTHS:
            pts = np.array([v for (m, _), v in jungle.items() if m == width])
            if len(pts):
                ax.plot(pts[:, 0], 100 * pts[:, 1], "-s", ms=4, label=f"jungle (8 DAGs), M={width}")
        ax.set_xscale("log")
        ax.set_xlabel("total nodes")
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(f"{name}: accuracy against model size ({args.repeats} random 50/50 splits)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = Path(args.out) / f"nodes_vs_accuracy_{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
        print(f"wrote {path}")
    write_results("nodes_vs_accuracy", figures)


if __name__ == "__main__":
    main()
