"""The paper's figure scripts (benchmarks/paper/) at the ``ci`` scale: each runs, and its CSV
has every curve with the right points. The full run is a benchmark, not a test."""
import csv
import json
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

PAPER = Path(__file__).resolve().parents[2] / "benchmarks" / "paper"
CURVES = {"tree", "fixed-width-a", "fixed-width-b", "priority", "jungle"}


#: Arguments of the scripts beyond ``--scale ci --out``, the same wherever they are run.
ARGS = {script: ["--datasets", "kinect", "faces"] for script in ("fig2.py", "memory.py")}


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    """``paper(script, monkeypatch, *extra)``: the folder the figure script has written to,
    run there at most once per process. Each test makes the figures it reads itself, so the
    tests pass in any order and on any pytest-xdist worker (``-n 2`` without ``--dist
    loadfile`` splits the module's tests between processes, each with its own folder); the
    folder's curve cache lets a script reuse the curves of another run before it."""
    out = tmp_path_factory.mktemp("paper")
    done = set()

    def make(script, monkeypatch, *extra) -> Path:
        if script not in done:
            monkeypatch.setattr(sys, "argv", [script, "--scale", "ci", "--out", str(out),
                                              *ARGS.get(script, ()), *extra])
            monkeypatch.syspath_prepend(str(PAPER))
            runpy.run_path(str(PAPER / script), run_name="__main__")
            done.add(script)
        return out

    return make


def run(paper, script, *extra, monkeypatch):
    """The rows of the CSV of a figure script, checking that it drew its figure."""
    out = paper(script, monkeypatch, *extra)
    assert (out / script.replace(".py", ".png")).stat().st_size > 10_000
    with open(out / script.replace(".py", ".csv"), newline="") as handle:
        return list(csv.DictReader(handle))


def curves(rows, key="method"):
    out = {}
    for r in rows:
        out.setdefault((r["dataset"], r[key]), []).append(r)
    return out


def assert_monotone(points, column="nodes"):
    """Along a curve (cut deeper or with a larger budget) the model only grows."""
    order = sorted(points, key=lambda r: float(r["point"]))
    sizes = [float(r[column]) for r in order]
    assert np.all(np.diff(sizes) >= 0), sizes
    assert sizes[-1] > sizes[0]


def test_fig2_and_memory(paper, monkeypatch):
    rows = run(paper, "fig2.py", monkeypatch=monkeypatch)
    found = curves(rows)
    assert set(found) == {(d, m) for d in ("kinect", "faces") for m in CURVES}
    for (dataset, method), points in found.items():
        assert len(points) >= 4
        assert_monotone(points)
        assert_monotone(points, "bytes")
        for r in points:
            assert 0 <= float(r["jaccard"]) <= 1 and float(r["feature_evaluations"]) >= 3
        if method != "tree":  # the bounded models: 3 DAGs of at most 8 nodes a level
            depth = max(float(r["point"]) for r in points) if method != "priority" else None
            if depth is not None:
                assert max(float(r["nodes"]) for r in points) <= 3 * (1 + 8 * depth)
    first = {m: min(found["kinect", m], key=lambda r: float(r["point"])) for m in CURVES}
    assert float(first["tree"]["nodes"]) == 9  # depth 1: a root and two leaves, 3 times
    memory = run(paper, "memory.py", monkeypatch=monkeypatch)
    assert {(r["dataset"], r["method"]) for r in memory} == set(found)
    for r in memory:
        best = max(float(p["jaccard"]) for p in found[r["dataset"], r["method"]])
        assert float(r["best_jaccard"]) == pytest.approx(best)


def test_fig3(paper, monkeypatch):
    rows = run(paper, "fig3.py", monkeypatch=monkeypatch)
    found = curves(rows)
    names = {m for _, m in found}
    assert names == {"1 tree", "1 DAG", "3 trees", "3 DAGs", "9 trees", "9 DAGs",
                     "jungle M=4", "jungle M=8"}
    for points in found.values():
        assert_monotone(points)
    nine = max(float(r["nodes"]) for r in found["kinect", "9 DAGs"])
    one = max(float(r["nodes"]) for r in found["kinect", "1 DAG"])
    assert nine > 3 * one  # nine DAGs, each on its own frames


def test_objective_table(paper, monkeypatch):
    out = paper("objective_table.py", monkeypatch)
    with open(out / "objective_table.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    variants = {r["variant"] for r in rows}
    assert len(variants) == 4 and len(rows) == 4 * 2
    for name in variants:
        values = [float(r["objective_per_sample"]) for r in rows if r["variant"] == name]
        assert values[0] > values[1] > 0  # deeper: lower training objective
        for r in rows:
            assert len(json.loads(r["per_dag"])) == 3
    assert "ClusterSearch - LSearch" in (out / "objective_table.md").read_text()


def test_fig5(paper, monkeypatch, data_root):
    rows = run(paper, "fig5.py", "--data", str(data_root), monkeypatch=monkeypatch)
    found = curves(rows)
    assert {m for _, m in found} == CURVES | {"jungle M=64"}
    for points in found.values():
        assert_monotone(points)
        assert all(0 < float(r["accuracy"]) <= 1 for r in points)


def test_claims_read_every_csv(paper, monkeypatch):
    for script in ("fig2.py", "memory.py", "fig3.py", "objective_table.py"):  # what it reads
        out = paper(script, monkeypatch)
    paper("claims.py", monkeypatch)
    text = (out / "claims.md").read_text()
    for section in ("## Fig. 2", "## Fig. 3", "## memory", "## Objective table"):
        assert section in text
    assert "| kinect | tree |" in text
    # Fig. 2's five curves and Fig. 3's six ensembles read at equal node counts (blank where
    # 100 nodes lies outside a curve): the values, then the highest curve and baseline
    fig2, fig3 = text.split("## Fig. 3")[0], text.split("## Fig. 3")[1].split("## Fig. 5")[0]
    for section, n_curves in ((fig2, 5), (fig3, 6)):
        lines = section.splitlines()
        at = [i for i, line in enumerate(lines) if line.startswith("| kinect | 100 |")]
        assert len(at) == 1
        header = next(lines[i] for i in range(at[0], -1, -1) if lines[i].startswith("| data |"))
        names = [c.strip() for c in header.split("|")[1:-1]][2:2 + n_curves]
        row = [c.strip() for c in lines[at[0]].split("|")[1:-1]]
        assert len(row) == 2 + n_curves + 2
        values = {name: float(v) for name, v in zip(names, row[2:2 + n_curves]) if v}
        assert len(values) >= 2 and all(0 <= v <= 1 for v in values.values())
        assert row[-2] == max(values, key=values.get)
