"""The ``jungleseg`` command."""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def _demo(args: argparse.Namespace) -> int:
    """Train a jungle and a forest of the same size on synthetic data and compare them."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import train_test_split

    from . import JungleClassifier

    X, y = make_classification(n_samples=args.samples, n_features=20, n_informative=12,
                               n_classes=8, n_clusters_per_class=2, random_state=args.seed)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5,
                                                        random_state=args.seed)
    models = {
        "jungle (8 DAGs, M=64, depth 14)": JungleClassifier(8, max_width=64, max_depth=14,
                                                            random_state=args.seed),
        "forest (8 trees, depth 9)": JungleClassifier(8, max_width=None, max_depth=9,
                                                      random_state=args.seed),
    }
    print(f"synthetic data: {len(y_train)} training and {len(y_test)} test rows, "
          f"{X.shape[1]} features, 8 classes")
    for name, model in models.items():
        start = time.perf_counter()
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        print(f"{name:34s} accuracy {model.score(X_test, y_test):.3f}  nodes "
              f"{model.node_count_:6d}  bytes {model.model_bytes_:8d}  fit {seconds:.2f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jungleseg", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="train on synthetic data and report accuracy and size")
    demo.add_argument("--samples", type=int, default=20000)
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(run=_demo)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, OSError) as err:
        print(f"jungleseg: error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
