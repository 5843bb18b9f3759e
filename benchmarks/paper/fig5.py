"""Fig. 5 of the jungle paper: test accuracy against total nodes on UCI sets (letter,
pendigits, mnist10k, usps, satimage, dna), 8 trees or DAGs, the paper's protocol (rows
pooled, random 50/50 splits, accuracy averaged over the splits): standard trees, the tree
baselines and jungles of width 64 and 256, with the same features and objective.

Writes fig5.png and fig5.csv (every point) to the output folder.

    python benchmarks/paper/fig5.py [--quick | --scale ci|quick|medium|full|paper] [--data DIR]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _shared as sh  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jungleseg import JungleClassifier  # noqa: E402
from jungleseg.datasets.uci import load_uci, paper_splits  # noqa: E402

N_DAGS = 8
JUNGLE_64 = "jungle M=64"


def methods(width: int, depth: int) -> dict:
    """Estimator parameters and sweep of each curve."""
    out = {}
    for method, (overrides, sweep) in sh.METHODS.items():
        params = {"max_width": width, "max_depth": depth,
                  **{k.split(".")[1]: v for k, v in overrides.items()}}
        out[method] = (params, sweep)
    out[JUNGLE_64] = ({"max_width": 64, "max_depth": depth}, "depth")
    return out


def curve(name, X, y, splits, params, sweep, args):
    def compute():
        per_split, grid = [], None
        for r, (train, test) in enumerate(splits):
            model = JungleClassifier(N_DAGS, random_state=r, **params)
            start = time.perf_counter()
            model.fit(X[train], y[train])
            seconds = time.perf_counter() - start
            store, samples = model.jungle_.family.prepare(X[test])
            rows = []
            for point, jungle in sh.pruned_models(model, sweep, grid):
                predicted = jungle.classes[np.argmax(jungle.predict_proba(store, samples), 1)]
                rows.append({"point": point, "nodes": jungle.node_count, "bytes": jungle.nbytes,
                             "feature_evaluations": jungle.max_feature_evaluations,
                             "accuracy": float(np.mean(predicted == y[test])),
                             "fit_seconds": seconds})
            grid = [row["point"] for row in rows]
            per_split.append(rows)
        return [sh._mean_rows(rows) for rows in zip(*per_split)]

    return sh.cached(args.out, args.fresh, f"uci-{name}",
                     (name, len(y), len(splits), params, sweep), compute)


def main() -> None:
    args = sh.arguments(__doc__.splitlines()[0])
    scale = sh.SCALES[args.scale]
    sh.warm_up()
    rows = []
    for name in scale.uci_sets:
        X, y = load_uci(name, args.data)
        if scale.uci_rows is not None and len(y) > scale.uci_rows:
            keep = np.random.default_rng(0).permutation(len(y))[:scale.uci_rows]
            X, y = X[np.sort(keep)], y[np.sort(keep)]
        splits = paper_splits(len(y), scale.uci_repeats)
        curves = methods(scale.width, scale.uci_depth)
        for method, (params, sweep) in curves.items():
            if method == "priority":
                largest = max(r["nodes"] for r in rows
                              if r["dataset"] == name and r["method"] == "tree")
                params = {**params, "max_depth": 2 * scale.uci_depth,
                          "max_nodes": int(largest / N_DAGS)}
            rows += [{"dataset": name, "method": method, "splits": len(splits), **r}
                     for r in curve(name, X, y, splits, params, sweep, args)]
        print(f"{name} done", flush=True)
    sh.write_csv(args.out / "fig5.csv", rows)
    sets = list(scale.uci_sets)
    columns = min(3, len(sets))
    fig, axes = plt.subplots((len(sets) + columns - 1) // columns, columns,
                             figsize=(5 * columns, 4 * ((len(sets) + columns - 1) // columns)),
                             squeeze=False)
    sh.STYLES[JUNGLE_64] = "m-D"
    for ax, name in zip(axes.flat, sets):
        sh.plot_curves(ax, [r for r in rows if r["dataset"] == name], "nodes",
                       list(methods(0, 0)), "total nodes (8 trees/DAGs)", name, y="accuracy",
                       ylabel="test accuracy")
    for ax in list(axes.flat)[len(sets):]:
        ax.axis("off")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"Fig. 5: UCI, accuracy against model size ({sh.scale_note(args)})",
                 fontsize=11)
    print(f"wrote {sh.save(fig, args.out / 'fig5.png')} and {args.out / 'fig5.csv'}")


if __name__ == "__main__":
    main()
