"""End-to-end segmentation throughput on Stanford Background images (320x240 colour), in one
run: the 3-DAG jungle of configs/stanford.yaml (or ``--config stanford_context``, its
auto-context chain) against the scikit-image peer
(``multiscale_basic_features`` sigma 1-16 + a 100-tree random forest). Both include feature
computation; both use the machine's cores; each is timed as the best of three passes over
the test images. Run it on an otherwise idle machine.

    python benchmarks/throughput.py [--data DIR] [--train 100] [--test 40] [--skip-peer]
                                    [--config stanford] [--set features.max_box=8 ...]
"""
from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import warm_up, write_results  # noqa: E402

from jungleseg import segment  # noqa: E402
from jungleseg.config import load_config, parse_overrides  # noqa: E402
from jungleseg.datasets.stanford import load_stanford  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def best_of(repeats: int, run) -> float:
    """The shortest of ``repeats`` timed runs, in seconds (the least disturbed one)."""
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return min(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--train", type=int, default=100)
    parser.add_argument("--test", type=int, default=40)
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--config", default="stanford", choices=["stanford", "stanford_context"],
                        help="the preset whose jungle is timed (default stanford)")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="override the preset's keys")
    args = parser.parse_args()
    warm_up()
    rows = load_stanford(args.data)
    train, test = rows[:args.train], rows[args.train:args.train + args.test]
    images = [im for _, im, _ in test]
    pixels = sum(im.shape[0] * im.shape[1] for im in images)
    overrides = {"sampling.samples_per_image": 500, **parse_overrides(args.set)}
    model = load_config(CONFIGS / f"{args.config}.yaml").with_overrides(overrides).estimator()
    model.fit([im for _, im, _ in train], [lab for _, _, lab in train])
    segment(model.jungle_, images[0])
    ours = pixels / best_of(3, lambda: [segment(model.jungle_, im) for im in images]) / 1e6
    print(f"jungle: {len(model.jungle_.dags)} DAGs, depth {model.jungle_.max_depth}, "
          f"{model.node_count_} nodes: {ours:.2f} Mpx/s end to end", flush=True)
    figures = {"config": args.config, "images": len(images), "megapixels": pixels / 1e6,
               "jungle": {"mpx_per_s": ours, "nodes": int(model.node_count_)}}
    if args.skip_peer:
        write_results(_results_name(args.config), figures)
        return

    from skimage.feature import multiscale_basic_features
    from sklearn.ensemble import RandomForestClassifier

    features = partial(multiscale_basic_features, channel_axis=-1, sigma_min=1, sigma_max=16)
    rng = np.random.default_rng(0)
    X, y = [], []
    for _, im, lab in train:
        f = features(im)
        f = f.reshape(-1, f.shape[-1])
        pick = rng.choice(np.flatnonzero(lab.ravel() != 255), 250, replace=False)
        X.append(f[pick])
        y.append(lab.ravel()[pick])
    forest = RandomForestClassifier(100, n_jobs=-1, random_state=0).fit(np.concatenate(X),
                                                                       np.concatenate(y))

    def run_peer():
        for im in images:
            f = features(im)
            forest.predict(f.reshape(-1, f.shape[-1]))

    peer = pixels / best_of(3, run_peer) / 1e6
    print(f"peer: skimage features + RF(100): {peer:.2f} Mpx/s end to end")
    print(f"jungle / peer: {ours / peer:.1f}x")
    figures["peer (skimage features + RF(100))"] = {"mpx_per_s": peer}
    figures["jungle / peer"] = ours / peer
    write_results(_results_name(args.config), figures)


def _results_name(config: str) -> str:
    """benchmarks/results/throughput.json for stanford.yaml, throughput_<config>.json else."""
    return "throughput" if config == "stanford" else f"throughput_{config}"


if __name__ == "__main__":
    main()
