"""The jungle paper's objective table: training objective per sample of LSearch against
ClusterSearch on faces, 3 DAGs of width ``min(256, 2^D)``, read at the depths where one
full-width DAG has 2047, 5631, 10239, 20223, 30207 and 40191 nodes (D = 14, 28, 46, 85,
124, 163).

The objective at depth D is ``sum |S| H(S)`` (entropy in bits) over the leaves the DAG has
when cut at D, divided by its training samples, averaged over the 3 DAGs. Besides LSearch
and ClusterSearch (Lloyd iterations, then exact single moves), two ablations:
ClusterSearch with Lloyd iterations only, and ClusterSearch alternating with split steps.
Writes objective_table.csv, .md and .png to the output folder.

    python benchmarks/paper/objective_table.py [--quick | --scale ci|quick|medium|full|paper]
"""
from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _shared as sh  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jungleseg.jungle._criterion import ENTROPY, make_phi_table, node_costs  # noqa: E402

PAPER_DEPTHS = (14, 28, 46, 85, 124, 163)
PAPER = {"lsearch": (0.735, 0.596, 0.514, 0.423, 0.375, 0.343),
         "clustersearch": (0.739, 0.605, 0.524, 0.432, 0.382, 0.351)}
VARIANTS = {"lsearch": ({"jungle.search": "lsearch"}, True),
            "clustersearch": ({"jungle.search": "clustersearch"}, True),
            "clustersearch, Lloyd only": ({"jungle.search": "clustersearch"}, False),
            "clustersearch-alternating": ({"jungle.search": "clustersearch-alternating"}, True)}


def objective_by_depth(dag, records, depths) -> tuple[list[float], list[int]]:
    """Per depth D: the objective per sample of the DAG cut at D, and its nodes."""
    depth = np.repeat(np.arange(dag.level_start.shape[0] - 1), np.diff(dag.level_start))
    phi = make_phi_table(int(records.counts[0].sum()), ENTROPY)
    cost = node_costs(records.counts, phi, ENTROPY)
    leaf = records.split_round < 0
    n = records.counts[0].sum()
    out, nodes = [], []
    for d in depths:
        out.append(float(cost[(depth == d) | ((depth < d) & leaf)].sum() / n))
        nodes.append(int((depth <= d).sum()))
    return out, nodes


def run(args) -> list[dict]:
    scale = sh.SCALES[args.scale]
    sizes = scale.objective
    depths = scale.objective_depths
    from jungleseg.datasets.faces import render_faces

    extra = {} if sizes.size is None else {"size": sizes.size}
    images, labels = render_faces(3 * sizes.train, seed=0, **extra)
    base = sh._config("objective", sizes).with_overrides({
        "jungle.max_width": 256 if args.scale != "ci" else 8, "jungle.schedule": "doubling",
        "jungle.max_depth": max(depths), "sampling.strategy": "random"})
    rows = []
    for name, (overrides, moves) in VARIANTS.items():
        config = base.with_overrides(overrides)

        def compute(config=config, moves=moves):
            model = config.estimator()
            if not moves:  # the ablation: GrowParams.cluster_moves is not a public parameter
                plain = type(model)._grow_params
                model._grow_params = lambda *a: dataclasses.replace(plain(model, *a),
                                                                    cluster_moves=False)
            start = time.perf_counter()
            model.fit(list(images), list(labels))
            seconds = time.perf_counter() - start
            per_dag = [objective_by_depth(d, r, depths)
                       for d, r in zip(model.jungle_.dags, model.grow_stats_.nodes)]
            return [{"depth": d, "objective_per_sample": float(np.mean([o[i] for o, _ in per_dag])),
                     "per_dag": [o[i] for o, _ in per_dag],
                     "nodes_per_dag": float(np.mean([n[i] for _, n in per_dag])),
                     "fit_seconds": seconds, "samples_per_dag": int(
                         model.grow_stats_.nodes[0].counts[0].sum())}
                    for i, d in enumerate(depths)]

        result = sh.cached(args.out, args.fresh, f"objective-{name}",
                           (sizes, config.to_dict(), moves, depths), compute)
        rows += [{"variant": name, **r} for r in result]
        print(f"objective table: {name} done ({result[0]['fit_seconds']:.0f} s)", flush=True)
    return rows


def markdown(rows, depths) -> str:
    lines = ["| variant | " + " | ".join(f"D={d}" for d in depths) + " |",
             "|---|" + "---|" * len(depths)]
    by = {(r["variant"], r["depth"]): r for r in rows}
    for name in VARIANTS:
        lines.append(f"| {name} | " + " | ".join(
            f"{by[name, d]['objective_per_sample']:.4f}" for d in depths) + " |")
    lines.append("| nodes per DAG (LSearch) | " + " | ".join(
        f"{by['lsearch', d]['nodes_per_dag']:.0f}" for d in depths) + " |")
    lines.append("| nodes per full-width DAG | " + " | ".join(
        str(sum(min(256, 2 ** k) for k in range(d + 1))) for d in depths) + " |")

    def gap(d):
        ls, cs = (by[v, d]["objective_per_sample"] for v in ("lsearch", "clustersearch"))
        return f"{100 * (cs / ls - 1):+.2f} %" if ls > 0 else "n/a (pure)"

    lines.append("| ClusterSearch - LSearch | " + " | ".join(gap(d) for d in depths) + " |")
    for name, values in PAPER.items():
        paper = dict(zip(PAPER_DEPTHS, values))
        lines.append(f"| paper: {name} | " + " | ".join(
            f"{paper[d]:.3f}" if d in paper else "" for d in depths) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    args = sh.arguments(__doc__.splitlines()[0])
    sh.warm_up()
    rows = run(args)
    depths = sh.SCALES[args.scale].objective_depths
    sh.write_csv(args.out / "objective_table.csv", rows)
    table = markdown(rows, depths)
    (args.out / "objective_table.md").write_text(table)
    print(table)
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for name in VARIANTS:
        pts = [(r["depth"], r["objective_per_sample"]) for r in rows if r["variant"] == name]
        ax.plot(*zip(*pts), "-o", ms=3, label=name)
    for name, values in PAPER.items():
        ax.plot(PAPER_DEPTHS, values, ":x", label=f"paper: {name}")
    ax.set_xlabel("depth D")
    ax.set_ylabel("training objective per sample (bits)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"faces, 3 DAGs, min(256, 2^D) ({sh.scale_note(args)})", fontsize=10)
    print(f"wrote {sh.save(fig, args.out / 'objective_table.png')}")


if __name__ == "__main__":
    main()
