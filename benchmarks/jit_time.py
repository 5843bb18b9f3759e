"""One-time JIT compile time of the trainer and predictor: cold, and loaded from the cache.

Runs a tiny fit and predict in fresh processes with an empty Numba cache folder (cold), then
again with the same folder (from the cache), and prints the time of the first fit+predict
minus that of a second one in the same process.

    python benchmarks/jit_time.py
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results

SCRIPT = """
import time, numpy as np
t0 = time.perf_counter()
from jungleseg import JungleClassifier
rng = np.random.default_rng(0)
X = rng.normal(size=(500, 6)); y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
def run():
    t = time.perf_counter()
    for width in (8, None):
        JungleClassifier(2, max_width=width, random_state=0).fit(X, y).predict(X)
    return time.perf_counter() - t
first = run(); second = run()
print(first - second)
"""


def main() -> None:
    keys = {"cold (empty cache)": "cold_seconds", "from the cache": "cached_seconds"}
    figures = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold (empty cache)", "from the cache"):
            out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, check=True,
                                 capture_output=True, text=True).stdout
            print(f"JIT {label}: {float(out):.2f} s")
            figures[keys[label]] = float(out)
    write_results("jit_time", figures)


if __name__ == "__main__":
    main()
