"""The numbers docs/results/paper.md sets against each of the jungle paper's claims, read from the
CSVs the figure scripts wrote (run them first, or run run_all.py). Writes claims.md.

    python benchmarks/paper/claims.py [--quick | --scale ci|quick|medium|full|paper]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _shared as sh  # noqa: E402
import numpy as np  # noqa: E402


def numeric(rows):
    out = []
    for r in rows:
        row = {}
        for k, v in r.items():
            try:
                row[k] = float(v)
            except (TypeError, ValueError):
                row[k] = v
        out.append(row)
    return out


def curve(rows, dataset, method, y="jaccard"):
    pts = sorted(((r["nodes"], r[y], r) for r in rows
                  if r["dataset"] == dataset and r["method"] == method), key=lambda p: p[0])
    return pts


def first_reaching(pts, target):
    return next((n for n, v, _ in pts if v >= target), None)


def equal_accuracy(rows, dataset, a, b, y="jaccard"):
    """Nodes ``a`` and ``b`` need to first reach the best value both reach."""
    pa, pb = curve(rows, dataset, a, y), curve(rows, dataset, b, y)
    target = min(max(v for _, v, _ in pa), max(v for _, v, _ in pb))
    return target, first_reaching(pa, target), first_reaching(pb, target)


def growth_at_the_end(pts):
    """Best value, last value, and the change over the last third of the curve (log nodes)."""
    nodes = np.array([n for n, _, _ in pts])
    values = np.array([v for _, v, _ in pts])
    cut = np.exp(np.log(nodes[0]) + 2 / 3 * (np.log(nodes[-1]) - np.log(nodes[0])))
    before = values[nodes <= cut][-1]
    return values.max(), values[-1], values[-1] - before


def fig2_lines(rows) -> list[str]:
    lines = ["## Fig. 2: accuracy against nodes", "",
             "| data | curve | best Jaccard | at nodes | last Jaccard | change over the last "
             "third (log nodes) |", "|---|---|---|---|---|---|"]
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        for method in sh.METHODS:
            pts = curve(rows, dataset, method)
            if not pts:
                continue
            best, last, change = growth_at_the_end(pts)
            at = max(pts, key=lambda p: p[1])[0]
            lines.append(f"| {dataset} | {method} | {best:.3f} | {at:.0f} | {last:.3f} | "
                         f"{change:+.3f} |")
    lines += ["", "| data | target (best both reach) | tree nodes | jungle nodes | ratio | "
              "best baseline (best Jaccard) |", "|---|---|---|---|---|---|"]
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        target, tree, jungle = equal_accuracy(rows, dataset, "tree", "jungle")
        baselines = {m: max(v for _, v, _ in curve(rows, dataset, m))
                     for m in ("tree", "fixed-width-a", "fixed-width-b", "priority")}
        best = max(baselines, key=baselines.get)
        ratio = f"{tree / jungle:.1f}x" if tree and jungle else "n/a"
        lines.append(f"| {dataset} | {target:.3f} | {tree:.0f} | {jungle:.0f} | {ratio} | "
                     f"{best} ({baselines[best]:.3f}) |")
    return lines + [""] + equal_nodes_lines(rows, list(sh.METHODS))


def at_nodes(pts, n):
    """A curve's value at ``n`` nodes, linear in log nodes between its two neighbouring
    points; None outside the range the curve was measured over."""
    nodes = np.array([p[0] for p in pts])
    values = np.array([p[1] for p in pts])
    if not nodes[0] <= n <= nodes[-1]:
        return None
    return float(np.interp(np.log(n), np.log(nodes), values))


def equal_nodes_lines(rows, methods, y="jaccard",
                      counts=(100, 300, 1000, 3000, 10000, 30000)) -> list:
    """Each curve's value at the same total node counts, and which curve is highest there."""
    lines = ["### At equal total nodes (interpolated in log nodes between measured points; "
             "blank: outside the curve)", "",
             "| data | nodes | " + " | ".join(methods) + " | highest | highest baseline |",
             "|---|---|" + "---|" * (len(methods) + 2)]
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        for n in counts:
            values = {m: at_nodes(curve(rows, dataset, m, y), n) for m in methods}
            known = {m: v for m, v in values.items() if v is not None}
            if len(known) < 2:
                continue
            base = {m: v for m, v in known.items() if m in sh.METHODS and m != "jungle"}
            lines.append(f"| {dataset} | {n} | " + " | ".join(
                "" if values[m] is None else f"{values[m]:.3f}" for m in methods)
                + f" | {max(known, key=known.get)} | "
                + (max(base, key=base.get) if base else "") + " |")
    return lines + [""]


def fig3_lines(rows) -> list[str]:
    lines = ["## Fig. 3", "", "| curve | best Jaccard | at nodes | at depth |", "|---|---|---|---|"]
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        for method in dict.fromkeys(r["method"] for r in rows if r["dataset"] == dataset):
            pts = curve(rows, dataset, method)
            n, v, r = max(pts, key=lambda p: p[1])
            lines.append(f"| {dataset} {method} | {v:.3f} | {n:.0f} | {r['point']:.0f} |")
    widths = [m for m in dict.fromkeys(r["method"] for r in rows) if m.startswith("jungle M=")]
    if widths:
        lines += ["", "Each width's last point within the largest node count every width reaches:"]
        cap = min(max(n for n, _, _ in curve(rows, "faces", m)) for m in widths)
        for m in widths:
            pts = [(n, v, r) for n, v, r in curve(rows, "faces", m) if n <= cap]
            n, v, r = pts[-1]
            lines.append(f"- {m}: {v:.3f} with {n:.0f} nodes at depth {r['point']:.0f}")
        lines += [""] + equal_nodes_lines([r for r in rows if r["method"] in widths], widths,
                                          counts=(300, 1000, 3000, 6000, 10000, 20000))
        lines += ["Depth at which each width first reaches a Jaccard (blank: never):", "",
                  "| Jaccard | " + " | ".join(widths) + " |", "|---|" + "---|" * len(widths)]
        top = min(max(v for _, v, _ in curve(rows, "faces", m)) for m in widths)
        for target in np.linspace(top / 2, top, 4):
            depths = [next((r["point"] for _, v, r in sorted(
                curve(rows, "faces", m), key=lambda p: p[2]["point"]) if v >= target), None)
                for m in widths]
            lines.append(f"| {target:.3f} | " + " | ".join(
                "" if d is None else f"{d:.0f}" for d in depths) + " |")
    ensembles = [m for m in dict.fromkeys(r["method"] for r in rows if r["dataset"] == "kinect")]
    if ensembles:
        lines += [""] + equal_nodes_lines([r for r in rows if r["dataset"] == "kinect"],
                                          ensembles)
    return lines + [""]


def fig5_lines(rows) -> list[str]:
    lines = ["## Fig. 5: UCI", "", "| set | best accuracy: trees | jungle | jungle M=64 | "
             "target | nodes: trees | jungle | jungle M=64 |", "|---|---|---|---|---|---|---|---|"]
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        best = {m: max(v for _, v, _ in curve(rows, dataset, m, "accuracy"))
                for m in ("tree", "jungle", "jungle M=64")}
        target = min(best.values())
        need = {m: first_reaching(curve(rows, dataset, m, "accuracy"), target) for m in best}
        lines.append(f"| {dataset} | {best['tree']:.4f} | {best['jungle']:.4f} | "
                     f"{best['jungle M=64']:.4f} | {target:.4f} | {need['tree']:.0f} | "
                     f"{need['jungle']:.0f} | {need['jungle M=64']:.0f} |")
    return lines + [""] + equal_nodes_lines(rows, [*sh.METHODS, "jungle M=64"], "accuracy",
                                            (300, 1000, 3000, 10000))


def main() -> None:
    args = sh.arguments(__doc__.splitlines()[0])
    lines = [f"# Claim numbers ({args.scale} scale)", ""]
    for name, make in (("fig2", fig2_lines), ("fig3", fig3_lines), ("fig5", fig5_lines)):
        path = args.out / f"{name}.csv"
        if path.exists():
            lines += make(numeric(sh.read_csv(path)))
    for name in ("memory", "train_time"):
        path = args.out / f"{name}.csv"
        if path.exists():
            rows = sh.read_csv(path)
            lines += [f"## {name}", "", "| " + " | ".join(rows[0]) + " |",
                      "|" + "---|" * len(rows[0])]
            lines += ["| " + " | ".join(_short(v) for v in r.values()) + " |" for r in rows]
            lines.append("")
    table = args.out / "objective_table.md"
    if table.exists():
        lines += ["## Objective table", "", table.read_text()]
    (args.out / "claims.md").write_text("\n".join(lines))
    print("\n".join(lines))


def _short(value: str) -> str:
    try:
        number = float(value)
    except ValueError:
        return value if len(value) < 40 else value[:37] + "..."
    return f"{number:.4g}"


if __name__ == "__main__":
    main()
