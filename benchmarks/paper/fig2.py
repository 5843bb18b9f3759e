"""Fig. 2 of the jungle paper: test accuracy against model size (a-c) and against the most
feature evaluations a pixel needs (d-f), for standard trees, the fixed-width tree baselines
A and B, priority-scheduled trees and jungles (LSearch), 3 trees or DAGs each, on Kinect
(synthetic bodies), faces (synthetic 8-class faces and FASSEG) and Stanford Background.

Writes fig2.png and fig2.csv (every point of every curve) to the output folder.

    python benchmarks/paper/fig2.py [--quick | --scale ci|quick|medium|full|paper]
                                    [--datasets kinect ...]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _shared as sh  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

DATASETS = ("kinect", "faces", "fasseg", "stanford")
TITLES = {"kinect": "Kinect (synthetic bodies, 31 parts)", "faces": "faces (synthetic, 8 classes)",
          "fasseg": "FASSEG (6 classes)", "stanford": "Stanford Background (8 classes)"}
PANELS = {"kinect": "ad", "faces": "be", "fasseg": ("b'", "e'"), "stanford": "cf"}


def curves(name: str, args, width: int | None = None) -> list[dict]:
    """Every Fig. 2 curve on one benchmark (M = ``width``, default the scale's)."""
    images = sh.image_set(name, args.scale, args.data)
    sizes = images.sizes
    width = width or sh.SCALES[args.scale].width
    rows = []
    for method, (overrides, sweep) in sh.METHODS.items():
        overrides = {"jungle.max_width": width, "jungle.max_depth": sizes.depth, **overrides}
        if method == "tree":
            overrides["jungle.max_depth"] = sizes.tree_depth
        if method == "priority":  # as deep as it likes, as large as the standard trees
            n_dags = images.config.jungle_params.get("n_estimators", 3)
            largest = max(r["nodes"] for r in rows if r["method"] == "tree") / n_dags
            overrides.update({"jungle.max_depth": 2 * sizes.tree_depth,
                              "jungle.max_nodes": int(largest)})
        rows += sh.image_curve(images, method, overrides, sweep, args)
        print(f"{name}: {method} done", flush=True)
    return rows


def main() -> None:
    args = sh.arguments(__doc__.splitlines()[0], DATASETS)
    sh.warm_up()
    rows = []
    for name in args.datasets:
        rows += curves(name, args)
    sh.write_csv(args.out / "fig2.csv", rows)
    fig, axes = plt.subplots(2, len(args.datasets), figsize=(4.6 * len(args.datasets), 8),
                             squeeze=False)
    for col, name in enumerate(args.datasets):
        mine = [r for r in rows if r["dataset"] == name]
        top, bottom = PANELS[name]
        sh.plot_curves(axes[0, col], mine, "nodes", sh.METHODS, "total nodes (3 trees/DAGs)",
                       f"({top}) {TITLES[name]}")
        sh.plot_curves(axes[1, col], mine, "feature_evaluations", sh.METHODS,
                       "max feature evaluations per pixel", f"({bottom}) {TITLES[name]}",
                       log=False)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"Fig. 2: accuracy against model size ({sh.scale_note(args)})", fontsize=11)
    print(f"wrote {sh.save(fig, args.out / 'fig2.png')} and {args.out / 'fig2.csv'}")


if __name__ == "__main__":
    main()
