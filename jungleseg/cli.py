"""The ``jungleseg`` command: train, segment, evaluate, info, generate, demo.

Every command exits 0 on success and otherwise prints one line ``jungleseg: error: ...``
to standard error and exits 1 (2 for a malformed command line).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".npy"}


def _progress(args, total, desc):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=args.quiet, leave=False)


def _say(args, text: str) -> None:
    if not args.quiet:
        print(text)


def _train_model(estimator, split, args):
    bar = _progress(args, estimator.max_depth or None, "training (levels)")
    start = time.perf_counter()
    try:
        estimator.fit(split.images, split.labels, progress=lambda level, nodes: bar.update(1))
    finally:
        bar.close()
    return time.perf_counter() - start


def _with_metadata(estimator, split):
    classes = [int(c) for c in estimator.classes_]
    jungle = estimator.jungle_
    jungle.metadata.update(
        class_names={str(c): split.class_names.get(c, str(c)) for c in classes},
        class_colours={str(c): split.class_colours.get(c, [255, 255, 255]) for c in classes})
    return jungle


def cmd_train(args) -> int:
    from .config import load_config, parse_overrides
    from .datasets import load_benchmark
    from .io import save_model

    config = load_config(args.config).with_overrides(parse_overrides(args.set))
    if config.dataset == "uci" or config.dataset is None:
        raise ValueError(f"{args.config}: 'jungleseg train' trains on images; this config is "
                         f"for {config.dataset!r} (use benchmarks/uci.py for tabular sets)")
    split = load_benchmark(config.dataset, "train", args.data, args.n)
    estimator = config.estimator()
    seconds = _train_model(estimator, split, args)
    save_model(_with_metadata(estimator, split), args.out)
    _say(args, f"trained on {len(split.images)} images in {seconds:.1f} s: "
               f"{estimator.node_count_} nodes, {estimator.model_bytes_} bytes -> {args.out}")
    return 0


def _read_image(path: Path, family) -> np.ndarray:
    import cv2

    from .features import DepthFeatures

    if path.suffix.lower() == ".npy":
        return np.load(path, allow_pickle=False)
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise ValueError(f"{path}: cannot read this image")
    if isinstance(family, DepthFeatures):
        if image.ndim != 2:
            raise ValueError(f"{path}: a depth image must have one channel, got {image.shape}")
        return image
    if image.ndim == 3:
        code = cv2.COLOR_BGRA2RGB if image.shape[2] == 4 else cv2.COLOR_BGR2RGB
        image = cv2.cvtColor(image, code)
    if getattr(family, "input", None) == "grey" and image.ndim == 3:
        raise ValueError(f"{path}: the model reads grey images; this one has "
                         f"{image.shape[2]} channels")
    if getattr(family, "input", None) == "rgb" and image.ndim != 3:
        raise ValueError(f"{path}: the model reads RGB images; this one is grey")
    return image


def _inputs(paths) -> list[Path]:
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(f for f in p.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES)
        elif p.is_file():
            files.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    if not files:
        raise ValueError("no images found in the inputs")
    return files


def cmd_segment(args) -> int:
    import cv2

    from .io import load_model
    from .segmentation import segment

    jungle = load_model(args.model)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = _inputs(args.inputs)
    bar = _progress(args, len(files), "segmenting")
    pixels, start = 0, time.perf_counter()
    for path in files:
        image = _read_image(path, jungle.family)
        labels, proba = segment(jungle, image, smoothing=args.smoothing,
                               probabilities=args.probabilities)
        dtype = np.uint8 if labels.max(initial=0) < 256 else np.uint16
        cv2.imwrite(str(out / f"{path.stem}.png"), labels.astype(dtype))
        if args.probabilities:
            np.save(out / f"{path.stem}_proba.npy", proba)
        pixels += labels.size
        bar.update(1)
    bar.close()
    seconds = time.perf_counter() - start
    _say(args, f"segmented {len(files)} images ({pixels / seconds / 1e6:.2f} Mpx/s) -> {out}")
    return 0


def _confusion_png(confusion, names, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    counts = confusion[:, :len(names)].astype(float)
    rows = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    fig = Figure(figsize=(1.5 + 0.4 * len(names), 1.2 + 0.4 * len(names)))
    ax = fig.add_subplot()
    ax.imshow(rows, cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(len(names)), names, rotation=90, fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title("confusion (rows normalised)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def cmd_evaluate(args) -> int:
    from .datasets import load_benchmark
    from .evaluate import evaluate_jungle
    from .io import load_model

    jungle = load_model(args.model)
    split = load_benchmark(args.dataset, "test", args.data, args.n)
    scores, result = evaluate_jungle(jungle, split.images, split.labels, not args.quiet)
    names = jungle.class_names
    confusion_path = Path(args.confusion or Path(args.model).with_suffix(".confusion.png"))
    _confusion_png(scores.confusion, names, confusion_path)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    if not args.quiet:
        width = max(len(n) for n in names)
        for name, value in result["per_class_jaccard"].items():
            print(f"  {name:{width}s}  {value:.3f}")
        print(f"mean Jaccard {result['mean_jaccard']:.3f}  pixel accuracy "
              f"{100 * result['pixel_accuracy']:.1f} %  nodes {result['nodes']}  bytes "
              f"{result['bytes']}  (confusion matrix: {confusion_path})")
    return 0


def cmd_info(args) -> int:
    from .io import load_model

    info = load_model(args.model).summary()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"{args.model}: {info['dags']} DAGs, depth {info['depth']}, {info['nodes']} nodes, "
          f"{info['bytes']} bytes")
    print("classes: " + ", ".join(f"{k} {v}" for k, v in info["classes"].items()))
    print("features: " + json.dumps(info["features"]))
    print("training: " + json.dumps(info["training"]))
    return 0


def cmd_generate(args) -> int:
    height, width = (int(v) for v in args.size.lower().split("x"))
    if args.what == "kinect":
        from .datasets.kinect import render_frames, save_frames

        depth, labels = render_frames(args.n, seed=args.seed, size=(height, width))
        save_frames(args.out, depth, labels, seed=args.seed)
    else:
        from .datasets.faces import render_faces, save_faces

        images, labels = render_faces(args.n, seed=args.seed, size=(height, width))
        save_faces(args.out, images, labels)
    _say(args, f"wrote {args.n} {args.what} images to {args.out}")
    return 0


def cmd_demo(args) -> int:
    """Synthetic faces: train with ``configs/demo.yaml``, save, evaluate, and write a few
    segmentations to look at."""
    import cv2

    from .config import load_preset
    from .datasets import load_benchmark
    from .datasets.faces import CLASS_COLOURS
    from .evaluate import evaluate_jungle
    from .io import load_model, save_model
    from .segmentation import segment

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    config = load_preset("demo").with_overrides({"seed": args.seed})
    _say(args, "rendering synthetic faces (8 classes) ...")
    train = load_benchmark(config.dataset, "train", n=120)
    test = load_benchmark(config.dataset, "test", n=30)
    estimator = config.estimator()
    _say(args, "training a 3-DAG jungle (the first run also compiles the kernels) ...")
    seconds = _train_model(estimator, train, args)
    model_path = save_model(_with_metadata(estimator, train), out / "faces-jungle.h5")
    jungle = load_model(model_path)
    scores, result = evaluate_jungle(jungle, test.images, test.labels, not args.quiet)
    _confusion_png(scores.confusion, jungle.class_names, out / "confusion.png")
    (out / "scores.json").write_text(json.dumps(result, indent=2))
    for i in range(4):
        image, truth = test.images[i], test.labels[i]
        predicted = segment(jungle, image)[0]
        panel = np.concatenate([image, CLASS_COLOURS[truth], CLASS_COLOURS[predicted]], axis=1)
        cv2.imwrite(str(out / f"example_{i}.png"), cv2.cvtColor(panel, cv2.COLOR_RGB2BGR))
    _say(args, f"trained in {seconds:.1f} s: {jungle.node_count} nodes, {jungle.nbytes} bytes; "
               f"test mean Jaccard {result['mean_jaccard']:.3f}, pixel accuracy "
               f"{100 * result['pixel_accuracy']:.1f} %")
    _say(args, f"wrote {out}/: faces-jungle.h5 (model), scores.json, confusion.png, "
               f"example_0..3.png (image | truth | jungle); {time.perf_counter() - start:.0f} s")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jungleseg", description=__doc__.splitlines()[0])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no progress bars or summaries")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name, **kw):
        return sub.add_parser(name, parents=[common], **kw)


    p = add("train", help="train a jungle from a config file")
    p.add_argument("config")
    p.add_argument("--out", required=True, help="model file to write (.h5)")
    p.add_argument("--data", help="data folder (real sets) or a folder from 'generate'")
    p.add_argument("--n", type=int, help="use only the first N training images")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a config value, e.g. --set jungle.max_width=128")
    p.set_defaults(run=cmd_train)

    p = add("segment", help="segment image files or folders")
    p.add_argument("model")
    p.add_argument("inputs", nargs="+")
    p.add_argument("--out", required=True)
    p.add_argument("--probabilities", action="store_true", help="also write <name>_proba.npy")
    p.add_argument("--smoothing", type=int, default=None, metavar="R",
                   help="average probabilities over a (2R+1)^2 box before labelling "
                        "(default: the model's own)")
    p.set_defaults(run=cmd_segment)

    p = add("evaluate", help="Jaccard of a model on a benchmark's test part")
    p.add_argument("model")
    p.add_argument("--dataset", required=True)
    p.add_argument("--data")
    p.add_argument("--n", type=int, help="use only the first N test images")
    p.add_argument("--json", help="write the scores as JSON to this file")
    p.add_argument("--confusion", help="confusion-matrix PNG (default: beside the model)")
    p.set_defaults(run=cmd_evaluate)

    p = add("info", help="describe a model file")
    p.add_argument("model")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_info)

    p = add("generate", help="render synthetic benchmark data")
    p.add_argument("what", choices=["kinect", "faces"])
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", default="240x320", help="HEIGHTxWIDTH")
    p.set_defaults(run=cmd_generate)

    p = add("demo", help="train and evaluate on synthetic faces, write results")
    p.add_argument("--out", default="jungleseg-demo")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    from .jungle import ModelError

    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, OSError, KeyError, ModelError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"jungleseg: error: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
