"""Model size at the best accuracy, and at equal accuracy: 3 standard trees against 3 jungle
DAGs (and the tree baselines) on each image benchmark of Fig. 2, from Fig. 2's curves.

For each curve: its best test Jaccard and the bytes and nodes of that model; and the
smallest model of each curve that reaches the best Jaccard both standard trees and jungles
reach (the first point at or above it, no interpolation). Writes memory.csv and memory.png.

    python benchmarks/paper/memory.py [--quick | --scale ci|quick|medium|full|paper]
                                      [--datasets ...]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _shared as sh  # noqa: E402
import fig2  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def summary(rows: list[dict]) -> list[dict]:
    """Per method: the best point, and the first point reaching the common target."""
    by_method = {m: sorted((r for r in rows if r["method"] == m), key=lambda r: r["nodes"])
                 for m in sh.METHODS}
    target = min(max(r["jaccard"] for r in by_method[m]) for m in ("tree", "jungle"))
    out = []
    for method, pts in by_method.items():
        best = max(pts, key=lambda r: r["jaccard"])
        reach = next((r for r in pts if r["jaccard"] >= target), None)
        out.append({"dataset": pts[0]["dataset"], "method": method,
                    "best_jaccard": best["jaccard"], "best_nodes": best["nodes"],
                    "best_mb": best["bytes"] / 1e6, "target_jaccard": target,
                    "nodes_at_target": None if reach is None else reach["nodes"],
                    "mb_at_target": None if reach is None else reach["bytes"] / 1e6})
    return out


def main() -> None:
    args = sh.arguments(__doc__.splitlines()[0], fig2.DATASETS)
    sh.warm_up()
    rows = []
    for name in args.datasets:
        rows += summary(fig2.curves(name, args))
    sh.write_csv(args.out / "memory.csv", rows)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    x = np.arange(len(args.datasets))
    step = 0.8 / len(sh.METHODS)
    for i, method in enumerate(sh.METHODS):
        mine = {r["dataset"]: r for r in rows if r["method"] == method}
        for ax, key in zip(axes, ("best_mb", "mb_at_target")):
            values = [mine[d][key] or np.nan for d in args.datasets]
            ax.bar(x + (i - len(sh.METHODS) / 2 + 0.5) * step, values, step,
                   label=sh.LABELS[method])
    for ax, title in zip(axes, ("at each model's best test Jaccard",
                                "smallest model reaching the best Jaccard both trees and "
                                "jungles reach")):
        ax.set_xticks(x, args.datasets)
        ax.set_yscale("log")
        ax.set_ylabel("model size (MB, 3 trees/DAGs)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Memory ({sh.scale_note(args)})", fontsize=11)
    for r in rows:
        print(f"{r['dataset']:9s} {r['method']:14s} best J {r['best_jaccard']:.3f} at "
              f"{r['best_mb']:8.3f} MB ({r['best_nodes']:.0f} nodes); reaching "
              f"{r['target_jaccard']:.3f}: {r['mb_at_target'] or float('nan'):8.3f} MB")
    print(f"wrote {sh.save(fig, args.out / 'memory.png')} and {args.out / 'memory.csv'}")


if __name__ == "__main__":
    main()
