"""Training time of 3 standard trees against 3 jungle DAGs (LSearch and ClusterSearch) on
the same data, features and depth, for Kinect and the synthetic faces at the chosen scale.

Runs alternate model by model, best of the scale's repeats (a shared machine slows all
alike); stage times come from the fastest run. Writes train_time.csv and train_time.png.

    python benchmarks/paper/train_time.py [--quick | --scale ci|quick|medium|full|paper]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _shared as sh  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

MODELS = {"3 trees": {"jungle.max_width": None},
          "3 DAGs (LSearch)": {"jungle.search": "lsearch"},
          "3 DAGs (ClusterSearch)": {"jungle.search": "clustersearch"}}


def main() -> None:
    args = sh.arguments(__doc__.splitlines()[0], ("kinect", "faces"))
    scale = sh.SCALES[args.scale]
    sh.warm_up()
    rows = []
    for name in args.datasets:
        images = sh.image_set(name, args.scale, args.data)
        train_images, train_labels = images.folds[0][:2]
        depth = images.sizes.tree_depth
        runs = {label: [] for label in MODELS}
        for _ in range(scale.time_repeats):
            for label, overrides in MODELS.items():
                model = images.config.with_overrides({
                    "jungle.max_width": scale.width, "jungle.max_depth": depth,
                    **overrides}).estimator()
                start = time.perf_counter()
                model.fit(train_images, train_labels)
                runs[label].append((time.perf_counter() - start, model))
                print(f"{name} {label}: {runs[label][-1][0]:.1f} s", flush=True)
        for label, results in runs.items():
            seconds, model = min(results, key=lambda r: r[0])
            rows.append({"dataset": name, "model": label, "depth": depth,
                         "seconds": seconds, "all_seconds": [r[0] for r in results],
                         "nodes": model.node_count_, "samples": model.n_samples_,
                         **{f"{k}_seconds": v for k, v in model.grow_stats_.seconds.items()}})
    sh.write_csv(args.out / "train_time.csv", rows)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = np.arange(len(args.datasets))
    for i, label in enumerate(MODELS):
        mine = {r["dataset"]: r for r in rows if r["model"] == label}
        ax.bar(x + (i - 1) * 0.27, [mine[d]["seconds"] for d in args.datasets], 0.27,
               label=label)
    ax.set_xticks(x, args.datasets)
    ax.set_ylabel("training seconds (best of runs)")
    ax.legend(fontsize=8)
    ax.set_title(f"Training time, same data and depth ({sh.scale_note(args)}, shared machine)",
                 fontsize=10)
    for r in rows:
        print(f"{r['dataset']:7s} {r['model']:24s} {r['seconds']:7.1f} s  nodes {r['nodes']}")
    print(f"wrote {sh.save(fig, args.out / 'train_time.png')} and {args.out / 'train_time.csv'}")


if __name__ == "__main__":
    main()
