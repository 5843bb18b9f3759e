"""Fig. 3 of the jungle paper: (a, b) ensembles of 1, 3 and 9 standard trees against 1, 3
and 9 jungle DAGs on Kinect (synthetic bodies), each tree or DAG on its own frames, accuracy
against total nodes and against the most feature evaluations per pixel; (c, d) jungles of
width M = 128, 256 and 512 on the synthetic faces, against total nodes and against depth.

Writes fig3.png and fig3.csv (every point) to the output folder.

    python benchmarks/paper/fig3.py [--quick | --scale ci|quick|medium|full|paper]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _shared as sh  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402


def label(n: int, method: str) -> str:
    kind = "tree" if method == "tree" else "DAG"
    return f"{n} {kind}{'s' if n > 1 else ''}"


def ensembles(args) -> list[dict]:
    scale = sh.SCALES[args.scale]
    rows = []
    for n in scale.ensembles:
        images = sh.image_set("kinect", args.scale, args.data, n_dags=n)
        sizes = images.sizes
        for method, overrides in (("tree", {"jungle.max_width": None,
                                            "jungle.max_depth": sizes.tree_depth}),
                                  ("jungle", {"jungle.max_width": scale.width,
                                              "jungle.max_depth": sizes.depth})):
            overrides = {"jungle.max_width": scale.width, "jungle.max_depth": sizes.depth,
                         **overrides}  # the keys of Fig. 2's curves: its 3-DAG runs are reused
            curve = sh.image_curve(images, method, overrides, "depth", args, tag=method)
            rows += [{**r, "method": label(n, method),
                      "n_estimators": n, "model": method} for r in curve]
        print(f"kinect: {n} trees and DAGs done", flush=True)
    return rows


def widths(args) -> list[dict]:
    scale = sh.SCALES[args.scale]
    images = sh.image_set("faces", args.scale, args.data)
    rows = []
    for m in scale.widths:
        depth = images.sizes.depth * (3 if m == min(scale.widths) else 2) // 2
        overrides = {"jungle.max_width": m, "jungle.max_depth": depth}
        curve = sh.image_curve(images, "jungle", overrides, "depth", args, tag=f"jungle M={m}")
        rows += [{**r, "width": m} for r in curve]
        print(f"faces: M={m} done", flush=True)
    return rows


def main() -> None:
    args = sh.arguments(__doc__.splitlines()[0])
    sh.warm_up()
    left, right = ensembles(args), widths(args)
    rows = left + right
    sh.write_csv(args.out / "fig3.csv", rows)
    fig, axes = plt.subplots(1, 4, figsize=(19, 4.6))
    for n in sh.SCALES[args.scale].ensembles:
        sh.STYLES[label(n, "tree")], sh.STYLES[label(n, "jungle")] = "--o", "-D"
    methods = list(dict.fromkeys(r["method"] for r in left))
    sh.plot_curves(axes[0], left, "nodes", methods, "total nodes",
                   "(a) Kinect: 1, 3, 9 trees or DAGs")
    sh.plot_curves(axes[1], left, "feature_evaluations", methods,
                   "max feature evaluations per pixel", "(b) Kinect: 1, 3, 9 trees or DAGs",
                   log=False)
    methods = list(dict.fromkeys(r["method"] for r in right))
    sh.plot_curves(axes[2], right, "nodes", methods, "total nodes (3 DAGs)",
                   "(c) faces: width M")
    sh.plot_curves(axes[3], right, "point", methods, "depth", "(d) faces: width M", log=False)
    for ax in axes[[0, 2]]:
        ax.legend(fontsize=8)
    fig.suptitle(f"Fig. 3: ensemble size and width ({sh.scale_note(args)})", fontsize=11)
    print(f"wrote {sh.save(fig, args.out / 'fig3.png')} and {args.out / 'fig3.csv'}")


if __name__ == "__main__":
    main()
