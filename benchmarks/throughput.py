"""End-to-end segmentation throughput on Stanford Background images (320x240 colour), in one
run: the 3-DAG jungle of configs/stanford.yaml (or ``--config stanford_context``, its
auto-context chain) against the scikit-image peer
(``multiscale_basic_features`` sigma 1-16 + a 100-tree random forest). Both include feature
computation; both use the machine's cores; each is timed as the best of three passes over
the test images. Run it on an otherwise idle machine.

``--versus KEY=VALUE ...`` also fits the preset with these overrides and times both jungles
in turn in the same passes, with their CPU seconds (all threads) and the ratio: what a
change of the preset costs segmentation, comparable on a loaded machine.

    python benchmarks/throughput.py [--data DIR] [--train 100] [--test 40] [--skip-peer]
                                    [--config stanford] [--set features.max_box=8 ...]
                                    [--versus jungle.n_estimators=4 ...]
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
    return best_in_turn(repeats, [run])[0][0]


def best_in_turn(repeats: int, runs: list) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of each run, each the shortest of ``repeats``, the runs timed
    one after the other in every repeat so that the machine's load hits them alike; CPU
    seconds are the process's, all threads."""
    best = [(np.inf, np.inf)] * len(runs)
    for _ in range(repeats):
        for k, run in enumerate(runs):
            wall, cpu = time.perf_counter(), time.process_time()
            run()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[k] = (min(best[k][0], wall), min(best[k][1], cpu))
    return best


def fitted(config: str, overrides: dict, train: list):
    """The preset's estimator with the overrides (500 pixels an image unless they say),
    fitted on the (id, image, labels) rows ``train``."""
    overrides = {"sampling.samples_per_image": 500, **overrides}
    model = load_config(CONFIGS / f"{config}.yaml").with_overrides(overrides).estimator()
    return model.fit([im for _, im, _ in train], [lab for _, _, lab in train])


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
    parser.add_argument("--versus", nargs="*", default=None, metavar="KEY=VALUE",
                        help="also time the preset with these overrides (on top of --set), "
                             "in turn with it, CPU seconds included")
    args = parser.parse_args()
    warm_up()
    rows = load_stanford(args.data)
    train, test = rows[:args.train], rows[args.train:args.train + args.test]
    images = [im for _, im, _ in test]
    pixels = sum(im.shape[0] * im.shape[1] for im in images)
    overrides = parse_overrides(args.set)
    models = {"jungle": fitted(args.config, overrides, train)}
    if args.versus is not None:
        models["versus"] = fitted(args.config, {**overrides, **parse_overrides(args.versus)},
                                  train)
    figures = {"config": args.config, "images": len(images), "megapixels": pixels / 1e6}
    for model in models.values():
        segment(model.jungle_, images[0])
    timed = best_in_turn(3, [partial(_segment_all, model.jungle_, images)
                             for model in models.values()])
    for (name, model), (wall, cpu) in zip(models.items(), timed):
        print(f"{name}: {len(model.jungle_.dags)} DAGs, depth {model.jungle_.max_depth}, "
              f"{model.node_count_} nodes: {pixels / wall / 1e6:.2f} Mpx/s end to end, "
              f"{cpu:.2f} CPU s", flush=True)
        figures[name] = {"mpx_per_s": pixels / wall / 1e6, "cpu_s": cpu,
                         "nodes": int(model.node_count_)}
    if args.versus is not None:
        figures["versus"]["overrides"] = args.versus
        figures["versus / jungle CPU"] = timed[1][1] / timed[0][1]
        print(f"versus / jungle: {figures['versus / jungle CPU']:.3f}x the CPU seconds")
    ours = figures["jungle"]["mpx_per_s"]
    if args.skip_peer:
        write_results(_results_name(args.config, args.versus is not None), figures)
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
    write_results(_results_name(args.config, args.versus is not None), figures)


def _segment_all(jungle, images) -> None:
    for im in images:
        segment(jungle, im)


def _results_name(config: str, versus: bool) -> str:
    """benchmarks/results/throughput.json for stanford.yaml, throughput_<config>.json else;
    ``_versus`` added to the name for a run with ``--versus``."""
    name = "throughput" if config == "stanford" else f"throughput_{config}"
    return f"{name}_versus" if versus else name


if __name__ == "__main__":
    main()
