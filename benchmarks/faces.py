"""Faces: synthetic 8-class faces (configs/faces.yaml) and FASSEG (configs/fasseg.yaml:
train on V2 train + V3 train, test on V2 test). Prints mean Jaccard, pixel accuracy, nodes and
fit time for the jungle and our forest (same features, grown to the same depth).

    python benchmarks/faces.py [--data DIR] [--sets faces fasseg] [--preset NAME]
        [--models jungle forest]

``--preset fasseg_context --models jungle`` scores the accurate FASSEG preset
(configs/fasseg_context.yaml) instead of configs/fasseg.yaml; its figures go to
``faces_<preset>.json`` so they do not replace the plain presets' ``faces.json``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fit_and_score, warm_up, write_results  # noqa: E402

from jungleseg.config import load_config  # noqa: E402
from jungleseg.datasets import load_benchmark  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
#: The models compared: the config's jungle, and our forest (the same with unbounded width).
MODELS = {"jungle": {}, "forest": {"jungle.max_width": None}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--sets", nargs="+", default=["faces", "fasseg"])
    parser.add_argument("--faces-train", type=int, default=900)
    parser.add_argument("--faces-test", type=int, default=100)
    parser.add_argument("--preset", default=None, metavar="NAME",
                        help="configs/NAME.yaml for FASSEG (e.g. fasseg_context)")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    args = parser.parse_args()
    warm_up()
    figures = {}
    for name in args.sets:
        data = None if name == "faces" else args.data
        train = load_benchmark(name, "train", data, args.faces_train if name == "faces" else None)
        test = load_benchmark(name, "test", data, args.faces_test if name == "faces" else None)
        preset = args.preset if name == "fasseg" and args.preset else name
        config = load_config(CONFIGS / f"{preset}.yaml")
        for model_name in args.models:
            model = config.with_overrides(MODELS[model_name]).estimator()
            s, fit, _ = fit_and_score(model, train.images, train.labels, test.images,
                                      test.labels)
            print(f"{name:7s} {model_name:7s} mean Jaccard {s.mean_jaccard:.3f}  pixel acc "
                  f"{100 * s.pixel_accuracy:5.1f} %  nodes {model.node_count_:7d}  fit {fit:6.1f} s"
                  f"  ({len(train.images)} train / {len(test.images)} test images)  per class "
                  f"{np.round(s.per_class_jaccard, 2).tolist()}", flush=True)
            figures.setdefault(name, {})[model_name] = {
                "mean_jaccard": s.mean_jaccard, "pixel_accuracy": s.pixel_accuracy,
                "preset": preset, "nodes": int(model.node_count_), "fit_seconds": fit,
                "train_images": len(train.images), "test_images": len(test.images),
                "per_class_jaccard": [None if np.isnan(v) else float(v)
                                      for v in s.per_class_jaccard]}
    write_results(f"faces_{args.preset}" if args.preset else "faces", {"sets": figures})


if __name__ == "__main__":
    main()
