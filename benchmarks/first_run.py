"""First contact: install, first runs with an empty kernel cache, and warm start-up.

Every figure is a whole ``jungleseg`` process (or ``pip``), timed from outside: wall
seconds, and CPU seconds (user + system of the process and its children), which another
load on the machine changes less. An empty Numba cache is a fresh temporary folder given
as ``NUMBA_CACHE_DIR``; "warm" runs reuse the folder the cold runs filled.

1. ``pip install -e .`` into a fresh virtual environment (``--reuse-env``: the running
   interpreter's environment instead, no install), then ``jungleseg demo``, cold, and
   again, warm: the demo's compile share is the difference.
2. Empty cache: ``jungleseg train`` of 1 DAG on 6 generated 240x320 faces, then
   ``jungleseg segment`` of one of them.
3. Warm: ``jungleseg train`` again, ``jungleseg info`` of that model, ``jungleseg segment``
   of one 240x320 image. Cold less warm CPU seconds are the compilation's
   (``compile_cpu``), which the compile notice's estimate is made of
   (``jungleseg._jit.COMPILE_CPU_SECONDS``).

Targets (issue 40, on 2 idle cores): install + cold demo at most 90 s; cold train 30 s;
cold segment 10 s; warm info 0.6 s; warm segment 1.5 s.

    python benchmarks/first_run.py [--reuse-env] [--skip-demo]

Writes ``benchmarks/results/first_run.json``.

``--compare SRC`` measures instead the cold ``train`` and ``segment`` (and the demo, unless
``--skip-demo``) of this checkout and of another source tree ``SRC`` (e.g. ``git archive``
of an earlier commit, unpacked), alternately for ``--rounds`` rounds, both in this
interpreter's environment (``--together``: both at once, to meet the same load); it prints
each run and the medians' ratios, and writes ``first_run_compare.json``. CPU time counts the
process and its children: the process that compiles kernels ahead adds to it.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"install_and_demo": 90.0, "train_cold": 30.0, "segment_cold": 10.0,
           "info_warm": 0.6, "segment_warm": 1.5}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(command: list[str], env: dict, cwd: Path) -> dict:
    """Run ``command`` to completion; its wall and CPU seconds."""
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return {"wall": round(wall, 2), "cpu": round(cpu, 2), "stderr": done.stderr}


def run_together(commands: list, envs: list, cwd: Path) -> list:
    """Run ``commands`` at the same time (each with its environment), so that both meet
    the same load; the wall and CPU seconds of each."""
    start = time.perf_counter()
    procs = [subprocess.Popen(c, env=e, cwd=cwd, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for c, e in zip(commands, envs)]
    figures = {}
    while len(figures) < len(procs):
        pid, status, usage = os.wait4(-1, 0)
        for i, proc in enumerate(procs):
            if proc.pid == pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                figures[i] = {"wall": round(time.perf_counter() - start, 2),
                              "cpu": round(usage.ru_utime + usage.ru_stime, 2)}
    for proc, command in zip(procs, commands):
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed (exit code {proc.returncode})")
    return [figures[i] for i in range(len(procs))]


def fresh_env(folder: Path) -> tuple[Path, dict]:
    """A new virtual environment with ``pip install -e .`` (no extras); its bin folder and
    the install's timing."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    bin_dir = folder / "bin"
    timing = run([str(bin_dir / "pip"), "install", "-q", "-e", str(ROOT)], dict(os.environ),
                 ROOT)
    return bin_dir, timing


def show(name: str, figure: dict, target: float | None = None) -> None:
    verdict = ""
    if target is not None:
        verdict = f"  (target {target:g} s: {'met' if figure['wall'] <= target else 'missed'})"
    print(f"{name:34s} wall {figure['wall']:7.2f} s  cpu {figure['cpu']:7.2f} s{verdict}",
          flush=True)


def compare(peer: Path, rounds: int, demo: bool, together: bool = False) -> None:
    """Cold runs of this checkout and of the source tree ``peer``, alternately (or, with
    ``together``, at the same time: on a machine whose load changes from minute to
    minute, both then meet the same load)."""
    import statistics

    trees = {"this": ROOT, "peer": peer.resolve()}
    runs: dict = {name: {} for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        faces = tmp / "faces"
        subprocess.run([sys.executable, "-m", "jungleseg.cli", "generate", "faces", "--n", "6",
                        "--out", str(faces), "--quiet"], check=True, cwd=tmp)
        image = sorted((faces / "images").iterdir())[0]
        jungleseg = [sys.executable, "-m", "jungleseg.cli"]
        for r in range(rounds):
            jobs = {}  # (step, name) -> (command, environment)
            for name, tree in trees.items():
                env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
                model = tmp / f"{name}{r}.h5"
                steps = {"train_cold": ["train", str(ROOT / "configs" / "faces.yaml"), "--data",
                                        str(faces), "--set", "jungle.n_estimators=1", "--out",
                                        str(model)],
                         "segment_cold": ["segment", str(model), str(image), "--out",
                                          str(tmp / f"{name}{r}.png")]}
                if demo:
                    steps["demo_cold"] = ["demo", "--out", str(tmp / f"demo-{name}{r}")]
                for step, command in steps.items():
                    cache = tmp / f"cache-{name}-{step}-{r}"  # empty: a first run
                    jobs[step, name] = (jungleseg + command + ["--quiet"],
                                        dict(env, NUMBA_CACHE_DIR=str(cache)))
            for step in dict.fromkeys(step for step, _ in jobs):
                names = list(trees)
                if together:
                    figures = run_together([jobs[step, n][0] for n in names],
                                           [jobs[step, n][1] for n in names], tmp)
                else:
                    figures = [run(*jobs[step, n], tmp) for n in names]
                for name, figure in zip(names, figures):
                    figure.pop("stderr", None)
                    runs[name].setdefault(step, []).append(figure)
                    show(f"{step} round {r + 1}, {name}", figure)
    figures = {"peer": str(peer), "rounds": rounds, "together": together, "runs": runs,
               "ratios": {}}
    for step in runs["this"]:
        ratio = {k: round(statistics.median(f[k] for f in runs["this"][step])
                          / statistics.median(f[k] for f in runs["peer"][step]), 3)
                 for k in ("wall", "cpu")}
        figures["ratios"][step] = ratio
        print(f"{step:14s} this / peer: wall {ratio['wall']:.2f}, cpu {ratio['cpu']:.2f} "
              "(medians)")
    print(f"wrote {write_results('first_run_compare', figures)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reuse-env", action="store_true",
                        help="use this interpreter's environment, no fresh install")
    parser.add_argument("--skip-demo", action="store_true", help="leave out the demo runs")
    parser.add_argument("--compare", metavar="SRC", type=Path,
                        help="cold runs of this checkout against the source tree SRC")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of --compare")
    parser.add_argument("--together", action="store_true",
                        help="--compare runs both at the same time (a machine under load)")
    args = parser.parse_args()
    if args.compare:
        compare(args.compare, args.rounds, not args.skip_demo, args.together)
        return
    figures: dict = {"cores": os.cpu_count(), "load_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cache = tmp / "numba-cache"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
        if args.reuse_env:
            bin_dir = Path(sys.executable).parent
        else:
            bin_dir, figures["install"] = fresh_env(tmp / "venv")
            show("pip install -e . (fresh venv)", figures["install"])
        jungleseg = [str(bin_dir / "jungleseg")]
        if not args.skip_demo:
            demo_cache = tmp / "demo-cache"  # its own: the runs below start empty too
            demo_env = dict(env, NUMBA_CACHE_DIR=str(demo_cache))
            cold = run(jungleseg + ["demo", "--out", str(tmp / "demo")], demo_env, tmp)
            warm = run(jungleseg + ["demo", "--out", str(tmp / "demo2")], demo_env, tmp)
            figures["demo_cold"], figures["demo_warm"] = cold, warm
            figures["compile_share"] = round(max(cold["wall"] - warm["wall"], 0) / cold["wall"], 3)
            show("jungleseg demo, empty cache", cold)
            show("jungleseg demo, warm", warm)
            print(f"{'demo compile share':34s} {100 * figures['compile_share']:.0f} % of the "
                  f"cold run's wall time ({cold['wall'] - warm['wall']:.1f} s)")
            if "install" in figures:
                total = {k: round(figures["install"][k] + cold[k], 2) for k in ("wall", "cpu")}
                figures["install_and_demo"] = total
                show("install + cold demo", total, TARGETS["install_and_demo"])
        faces, model = tmp / "faces", tmp / "faces.h5"
        run(jungleseg + ["generate", "faces", "--n", "6", "--out", str(faces), "--quiet"],
            env, tmp)
        image = sorted((faces / "images").iterdir())[0]
        figures["train_cold"] = run(
            jungleseg + ["train", str(ROOT / "configs" / "faces.yaml"), "--data", str(faces),
                         "--set", "jungle.n_estimators=1", "--out", str(model)], env, tmp)
        show("train 1 DAG, 6 faces, empty cache", figures["train_cold"], TARGETS["train_cold"])
        figures["train_warm"] = run(
            jungleseg + ["train", str(ROOT / "configs" / "faces.yaml"), "--data", str(faces),
                         "--set", "jungle.n_estimators=1", "--out", str(tmp / "again.h5")],
            env, tmp)
        show("train 1 DAG, 6 faces, warm", figures["train_warm"])
        segment_cache = dict(env, NUMBA_CACHE_DIR=str(tmp / "segment-cache"))
        figures["segment_cold"] = run(
            jungleseg + ["segment", str(model), str(image), "--out", str(tmp / "cold")],
            segment_cache, tmp)
        show("segment 1 image, empty cache", figures["segment_cold"], TARGETS["segment_cold"])
        for _ in range(2):  # the second of each is the figure: files in the OS cache
            figures["info_warm"] = run(jungleseg + ["info", str(model)], env, tmp)
            figures["segment_warm"] = run(
                jungleseg + ["segment", str(model), str(image), "--out", str(tmp / "warm")],
                segment_cache, tmp)
        show("info, warm", figures["info_warm"], TARGETS["info_warm"])
        show("segment 1 image (240x320), warm", figures["segment_warm"],
             TARGETS["segment_warm"])
        # CPU seconds of compiling (jungleseg._jit.COMPILE_CPU_SECONDS): cold less warm
        figures["compile_cpu"] = {c: round(figures[f"{c}_cold"]["cpu"]
                                           - figures[f"{c}_warm"]["cpu"], 1)
                                  for c in ("train", "segment")}
        print(f"{'compiling, CPU seconds':34s} {figures['compile_cpu']}")
        figures["compile_notice"] = [line for line in figures["train_cold"]["stderr"].splitlines()
                                     if line.startswith("compiling kernels")]
    figures["load_after"] = os.getloadavg()[0]
    for figure in figures.values():
        if isinstance(figure, dict):
            figure.pop("stderr", None)
    path = write_results("first_run", {"targets": TARGETS, **figures})
    print(f"machine load (1 min) {figures['load_before']:.1f} before, "
          f"{figures['load_after']:.1f} after; wrote {path}")


if __name__ == "__main__":
    main()
