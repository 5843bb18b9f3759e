"""Run every figure of the jungle paper at one scale, each script in its own process, and
write how long each took (run_all.csv). ``--quick`` takes minutes, ``--scale medium`` about
an hour and ``--scale full`` (every Stanford fold and objective depth) at most 2 hours on
2 cores; ``--scale paper``, the paper's own sizes where the data allow, takes several hours
(docs/results/paper.md, "Wall time").

    python benchmarks/paper/run_all.py [--quick | --scale ci|quick|medium|full|paper] [--data DIR]
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _shared as sh  # noqa: E402

SCRIPTS = ("fig2.py", "memory.py", "fig3.py", "objective_table.py", "fig5.py", "train_time.py",
           "claims.py")


def main() -> None:
    args = sh.arguments(__doc__.splitlines()[0])
    here = Path(__file__).resolve().parent
    common = ["--scale", args.scale, "--out", str(args.out)]
    if args.data:
        common += ["--data", args.data]
    if args.fresh:
        common += ["--fresh"]
    rows = []
    start = time.perf_counter()
    for script in SCRIPTS:
        began = time.perf_counter()
        subprocess.run([sys.executable, str(here / script), *common], check=True)
        rows.append({"script": script, "seconds": time.perf_counter() - began})
        print(f"== {script}: {rows[-1]['seconds']:.0f} s", flush=True)
    rows.append({"script": "total", "seconds": time.perf_counter() - start})
    sh.write_csv(args.out / "run_all.csv", rows)
    print(f"all figures in {rows[-1]['seconds']:.0f} s; wrote {args.out / 'run_all.csv'}")


if __name__ == "__main__":
    main()
