"""``jungleseg info``, ``presets``, ``generate`` and ``demo``, and :data:`COMMANDS`: what
each subcommand runs."""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ._evaluate import cmd_evaluate
from ._outputs import save_or_rescue, writable_folder
from ._run import say
from ._segment import cmd_segment
from ._train import cmd_train, train_model, with_metadata


def _swatch(rgb) -> str:
    return "#{:02x}{:02x}{:02x}".format(*(int(v) for v in rgb))


def cmd_info(args: argparse.Namespace) -> int:
    """Describe a model file: its size, its classes with their names and colours, its
    features and training parameters."""
    from ..export import info_dict, info_lines
    from ..io import load_model

    model = load_model(args.model)
    info = {**model.summary(), "c_export": info_dict(model)}
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"{args.model}: {info['dags']} DAGs, depth {info['depth']}, {info['nodes']} nodes, "
          f"{info['bytes']} bytes")
    colours = info["metadata"].get("class_colours") or {}
    print("classes (value, name, colour):")
    for value, name in info["classes"].items():
        colour = colours.get(value)
        print(f"  {value:>5s}  {name}" + (f"  {_swatch(colour)}" if colour else ""))
    print("features: " + json.dumps(info["features"]))
    print("training: " + json.dumps(info["training"]))
    print("\n".join(info_lines(model)))
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    """List the shipped presets with what each is for."""
    from ._presets import preset_table

    print("presets ('jungleseg train NAME ...'):")
    print(preset_table())
    return 0


def refuse_stale_files(out: Path, subfolders: list[str], n: int) -> None:
    """Refuse an ``--out`` whose sub-folders hold files that writing ``n`` items
    (``000000.png`` ...) would leave beside them: a training run would read both sets."""
    written = {f"{i:06d}.png" for i in range(n)}
    for sub in subfolders:
        folder = out / sub
        stale = sorted(p.name for p in folder.iterdir()
                       if p.name not in written and not p.name.startswith(".")
                       ) if folder.is_dir() else []
        if stale:
            raise ValueError(f"--out {out}: {folder} already holds {len(stale)} other "
                             f"file{'s' if len(stale) > 1 else ''} ({', '.join(stale[:3])}"
                             f"{', ...' if len(stale) > 3 else ''}) that would be mixed with "
                             "the new ones: give a new or empty folder")


def cmd_generate(args: argparse.Namespace) -> int:
    """Render a synthetic data set to a folder."""
    try:
        height, width = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size {args.size!r}: expected HEIGHTxWIDTH, e.g. 240x320") from None
    if args.n < 1:
        raise ValueError(f"--n must be at least 1, got {args.n}")
    out = writable_folder(args.out, "--out")
    refuse_stale_files(out, ["depth" if args.what == "kinect" else "images", "labels"], args.n)
    if args.what == "kinect":
        from ..datasets.kinect import render_frames, save_frames

        depth, labels = render_frames(args.n, seed=args.seed, size=(height, width))
        save_frames(args.out, depth, labels, seed=args.seed)
    else:
        from ..datasets.faces import render_faces, save_faces

        images, labels = render_faces(args.n, seed=args.seed, size=(height, width))
        save_faces(args.out, images, labels)
    say(args, f"wrote {args.n} {args.what} images to {args.out}")
    return 0


#: What ``jungleseg demo`` scores with seed 0 (configs/demo.yaml), to tell a good run.
DEMO_EXPECTED = {"mean_jaccard": 0.249, "pixel_accuracy": 0.626}


def cmd_demo(args: argparse.Namespace) -> int:
    """Synthetic faces: train with ``configs/demo.yaml``, save, evaluate, and draw a few
    segmentations beside their pictures and truth (``examples.png``)."""
    from .._jit import announce_compile, segmenting_next
    from ..config import load_preset
    from ..datasets import load_benchmark
    from ..datasets._imageset import colourise, contact_sheet
    from ..datasets.faces import CLASS_COLOURS, CLASS_NAMES
    from ..evaluate import evaluate_jungle, plot_confusion
    from ..io import load_model
    from ..segmentation import segment

    out = writable_folder(args.out, "--out")
    start = time.perf_counter()
    announce_compile("train", "segment", quiet=args.quiet)
    config = load_preset("demo").with_overrides({"seed": args.seed})
    say(args, "rendering synthetic faces (8 classes: background, skin, hair, eyebrows, eyes, "
              "nose, lips, inner mouth) ...")
    train = load_benchmark(config.dataset, "train", n=120)
    test = load_benchmark(config.dataset, "test", n=30)
    estimator = config.estimator()
    say(args, "training a 3-DAG jungle on 120 faces ...")
    with segmenting_next():  # a first run compiles the segmentation kernel meanwhile
        seconds = train_model(estimator, train, args)
    model_path = save_or_rescue(with_metadata(estimator, train, "faces"),
                                out / "faces-jungle.h5")
    jungle = load_model(model_path)
    scores, result = evaluate_jungle(jungle, test.images, test.labels, not args.quiet)
    plot_confusion(scores.confusion, jungle.class_names, out / "confusion.png")
    (out / "scores.json").write_text(json.dumps(result, indent=2))
    panels = [[(image, f"test face {i}"), (colourise(truth, CLASS_COLOURS), "truth"),
               (colourise(segment(jungle, image)[0], CLASS_COLOURS), "jungle")]
              for i, (image, truth) in enumerate(zip(test.images[:4], test.labels[:4]))]
    contact_sheet(panels, out / "examples.png", legend=(CLASS_NAMES, CLASS_COLOURS))
    per_class = result["per_class_jaccard"]
    say(args, f"trained in {seconds:.1f} s: {jungle.node_count} nodes, {jungle.nbytes} bytes; "
              f"test mean Jaccard {result['mean_jaccard']:.3f}, pixel accuracy "
              f"{100 * result['pixel_accuracy']:.1f} % (background "
              f"{per_class['background']:.2f}, skin {per_class['skin']:.2f}, hair "
              f"{per_class['hair']:.2f})")
    say(args, f"a good result: with seed 0, mean Jaccard {DEMO_EXPECTED['mean_jaccard']:.3f} "
              f"and pixel accuracy {100 * DEMO_EXPECTED['pixel_accuracy']:.1f} %; background, "
              "skin and hair are found where they are large, while the small parts "
              "(eyebrows, eyes, nose, lips) are mostly missed by a model this small (3 DAGs, "
              "80 faces each). Far lower scores mean something is wrong.")
    say(args, f"wrote {out}/: examples.png (test faces | truth | jungle, with a legend), "
              f"faces-jungle.h5 (the model), scores.json, confusion.png; "
              f"{time.perf_counter() - start:.0f} s")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write a model as C (:func:`jungleseg.export.export_c`) and say what it holds and needs."""
    from ..export._command import run_export

    return run_export(args)


#: What each subcommand runs (the parser is built in :mod:`._parser`, one function each).
COMMANDS = {"train": cmd_train, "segment": cmd_segment, "evaluate": cmd_evaluate,
            "info": cmd_info, "presets": cmd_presets, "generate": cmd_generate,
            "demo": cmd_demo, "export": cmd_export}
