"""The ``jungleseg`` command line's parser: one function per subcommand adds its options
(each with help text that gives its default) and ends its ``--help`` with examples; the
commands themselves are in the other modules of :mod:`jungleseg.cli`."""
from __future__ import annotations

import argparse
import sys
import textwrap

from ._outputs import OUT_RULE, error

DESCRIPTION = ("Decision jungles for image segmentation: train, segment, evaluate, describe "
               "a model, list the presets, generate synthetic data, run the demo.")


class _Parser(argparse.ArgumentParser):
    """Usage errors on one line, like every other error, with exit code 2."""

    def error(self, message: str):
        error(f"{message} (see '{self.prog} --help')")
        sys.exit(2)


class _ListPresets(argparse.Action):
    """``--list-presets``: print what ``jungleseg presets`` prints and exit, like ``--help``
    (so the subcommand's required arguments are not asked for)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from ._commands import cmd_presets

        cmd_presets(namespace)
        parser.exit()


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def _common(p) -> None:
    p.add_argument("--quiet", action="store_true",
                   help="hide progress bars and notes; results and errors still print "
                        "(default: off)")


def _memory(p) -> None:
    p.add_argument("--max-memory", metavar="SIZE",
                   help="memory budget of the whole process, e.g. 8GB (default: 80%% of the "
                        "memory available at the start); larger images are segmented in "
                        "tiles, larger trainings are refused")


def _cluster(p) -> None:
    extra = 'needs the distributed extra: pip install "jungleseg[distributed]"'
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"run on the dask cluster of this scheduler, e.g. tcp://host:8786 "
                        f"(default: this process; {extra})")
    p.add_argument("--workers", type=int, metavar="N",
                   help=f"run on a new local dask cluster of N worker processes (default: "
                        f"this process; {extra})")


def _folders(p) -> None:
    p.add_argument("--images", metavar="DIR",
                   help="folder of your own images (or volumes) (default: none; a benchmark)")
    p.add_argument("--labels", metavar="DIR",
                   help="folder of their label files, paired with the images by name "
                        "(default: none)")


def add_train(sub) -> None:
    """``jungleseg train``."""
    p = sub.add_parser(
        "train", help="train a jungle from a preset or config file",
        description="Train a jungle with a preset (by name, see 'jungleseg presets') or a "
                    "config file, on a benchmark's training part or on your own folders of "
                    "images and labels paired by name; save the model (HDF5).",
        epilog=_examples(
            "jungleseg train stanford --images photos/ --labels labels/ --out mine.h5",
            "jungleseg train kinect --data kinect-train/ --out kinect.h5 "
            "--set jungle.n_estimators=2 jungle.max_depth=12"))
    p.add_argument("config", help="a preset's name (e.g. stanford, faces, kinect, napari; "
                                  "'jungleseg presets' lists them) or a YAML config file")
    p.add_argument("--list-presets", action=_ListPresets,
                   help="list the presets, each with what it is for, and exit (the same "
                        "table as 'jungleseg presets')")
    p.add_argument("--out", required=True, metavar="FILE",
                   help=f"model file to write, NAME.h5 (required; {OUT_RULE})")
    p.add_argument("--data", metavar="DIR",
                   help="a folder holding images/ and labels/, a folder from 'jungleseg "
                        "generate', or the real data sets' folder (default: $JUNGLESEG_DATA, "
                        "else ../shared/data; synthetic sets are rendered)")
    _folders(p)
    p.add_argument("--classes", nargs="+", metavar="CLASS",
                   help="class names and colours: VALUE:NAME[:COLOUR] items (COLOUR #rrggbb "
                        "or r,g,b), or a classes.yaml/classes.txt file (default: classes.yaml "
                        "or classes.txt beside or in the labels folder, else a palette PNG's "
                        "colours, else the class numbers and tab20 colours)")
    p.add_argument("--n", type=int, metavar="N",
                   help="use only the first N training images (default: all)")
    p.add_argument("--set", action="extend", nargs="+", metavar="KEY=VALUE",
                   help="override config values, e.g. --set jungle.max_width=128 seed=1 "
                        "(repeatable; default: the config's values)")
    p.add_argument("--data-parallel", action="store_true",
                   help="on a cluster, train every DAG on the images sharded over the "
                        "workers (each keeps only its shard's channels) instead of one "
                        "task per DAG; the same model (default: off)")
    _memory(p)
    _cluster(p)
    _common(p)


def add_segment(sub) -> None:
    """``jungleseg segment``."""
    p = sub.add_parser(
        "segment", help="segment image files or folders",
        description="Segment image files and folders (volume files with a volume model); "
                    "write palette label PNGs in the model's class colours (label TIFFs for "
                    "volumes, or zarr), and class probabilities on request.",
        epilog=_examples("jungleseg segment mine.h5 photos/ --out labels/",
                         "jungleseg segment mine.h5 photo.jpg --out photo-labels.png "
                         "--probabilities"))
    p.add_argument("model", help="model file (.h5) written by 'jungleseg train'")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="image files (PNG, JPEG, TIFF, NPY, zarr) or folders of them")
    p.add_argument("--out", required=True, metavar="PATH",
                   help="folder for <name>.png label files (<name>.tif for volumes), or "
                        f"NAME.png, NAME.tif or NAME.zarr for one image (required; {OUT_RULE})")
    p.add_argument("--tile", type=int, metavar="N",
                   help="segment in N x N tiles (N^3 for volumes) (default: tiles above a "
                        "size and by the memory budget)")
    p.add_argument("--probabilities", action="store_true",
                   help="also write <name>_proba.npy, the class probabilities (default: off)")
    p.add_argument("--smoothing", type=int, metavar="R",
                   help="average probabilities over a (2R+1)^2 box (default: the model's)")
    p.add_argument("--soft", type=float, metavar="F",
                   help="soft routing factor, 0 is hard (default: the model's own)")
    p.add_argument("--soft-epsilon", type=float, metavar="E",
                   help="soft routing: a split whose minor share is at most E steps hard "
                        "(default: the model's own)")
    p.add_argument("--prior-power", type=float, metavar="P",
                   help="labels favour rarer classes: probability / training share ** P, P in "
                        "[0, 1], 0 picks the most probable class (default: the model's own)")
    p.add_argument("--fail-fast", action="store_true",
                   help="stop at the first bad image (default: report it and go on)")
    _memory(p)
    _cluster(p)
    _common(p)


def add_evaluate(sub) -> None:
    """``jungleseg evaluate``."""
    p = sub.add_parser(
        "evaluate", help="score a model on a benchmark's test part or on your own folders",
        description="Score a model (per-class Jaccard, mean Jaccard, pixel accuracy) on a "
                    "benchmark's test part or on your own images and labels; print the "
                    "scores, write them as JSON on request, and draw the confusion matrix.",
        epilog=_examples("jungleseg evaluate mine.h5 --data my-test/        # images/, labels/",
                         "jungleseg evaluate kinect.h5 --dataset kinect --data kinect-test/ "
                         "--json scores.json"))
    p.add_argument("model", help="model file (.h5) written by 'jungleseg train'")
    p.add_argument("--dataset", choices=["kinect", "faces", "fasseg", "stanford"],
                   help="score on this benchmark's test part (default: none; give your own "
                        "--data DIR with images/ and labels/, or --images and --labels)")
    p.add_argument("--data", metavar="DIR",
                   help="a folder holding images/ and labels/, a folder from 'jungleseg "
                        "generate', or the real data sets' folder (default: $JUNGLESEG_DATA, "
                        "else ../shared/data; synthetic sets are rendered)")
    _folders(p)
    p.add_argument("--n", type=int, metavar="N",
                   help="use only the first N test images (default: all)")
    p.add_argument("--json", metavar="FILE",
                   help=f"also write the scores as JSON to this file (default: none; "
                        f"{OUT_RULE})")
    p.add_argument("--confusion", metavar="FILE",
                   help="confusion-matrix PNG, counts and both normalisations (default: "
                        f"MODEL.confusion.png beside the model; {OUT_RULE})")
    p.add_argument("--allow-class-mismatch", action="store_true",
                   help="score a model whose classes or class names differ from the "
                        "benchmark's (default: refused)")
    p.add_argument("--fail-fast", action="store_true",
                   help="stop at the first bad image (default: report it and go on)")
    _cluster(p)
    _common(p)


def add_info(sub) -> None:
    """``jungleseg info``."""
    p = sub.add_parser("info", help="describe a model file",
                       description="Describe a model file: its DAGs, nodes, size, classes "
                                   "with their names and colours, features and training.",
                       epilog=_examples("jungleseg info mine.h5",
                                        "jungleseg info mine.h5 --json"))
    p.add_argument("model", help="model file (.h5)")
    p.add_argument("--json", action="store_true",
                   help="print everything as JSON (default: a few readable lines)")
    _common(p)


def add_presets(sub) -> None:
    """``jungleseg presets``."""
    p = sub.add_parser("presets", help="list the shipped presets and what each is for",
                       description="List the presets that ship with jungleseg, each with "
                                   "what it is for; 'jungleseg train NAME' uses one.",
                       epilog=_examples("jungleseg presets",
                                        "jungleseg train stanford --data my-photos/ "
                                        "--out mine.h5"))
    _common(p)


def add_generate(sub) -> None:
    """``jungleseg generate``."""
    p = sub.add_parser("generate", help="render synthetic benchmark data",
                       description="Render a synthetic data set (depth frames of bodies, or "
                                   "faces) to a folder that 'train --data' and 'evaluate "
                                   "--data' read.",
                       epilog=_examples("jungleseg generate kinect --n 200 --out kinect-train",
                                        "jungleseg generate faces --n 50 --size 120x160 "
                                        "--out faces --seed 1"))
    p.add_argument("what", choices=["kinect", "faces"],
                   help="kinect: depth frames with 31 body parts; faces: RGB faces, 8 classes")
    p.add_argument("--n", type=int, required=True, help="how many images (required)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help=f"folder to write (required; {OUT_RULE})")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--size", default="240x320", metavar="HxW",
                   help="image size HEIGHTxWIDTH (default: 240x320)")
    _common(p)


def add_demo(sub) -> None:
    """``jungleseg demo``."""
    p = sub.add_parser("demo", help="train and evaluate on synthetic faces, write results",
                       description="Render synthetic faces, train a 3-DAG jungle, evaluate "
                                   "it and draw its segmentations beside the truth.",
                       epilog=_examples("jungleseg demo", "jungleseg demo --out demo --seed 1"))
    p.add_argument("--out", default="jungleseg-demo", metavar="DIR",
                   help=f"folder for the results (default: jungleseg-demo; {OUT_RULE})")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    _common(p)


def add_export(sub) -> None:
    """``jungleseg export``."""
    p = sub.add_parser("export", help="write a model as dependency-free C for small devices",
                       description="Write a model as a C99 source and header with no heap "
                                   "and no libc beyond stdint.h and string.h: tabular "
                                   "jungles and forests, depth-frame models, and colour or "
                                   "grey models (see the guide 'Deploying to a device').",
                       epilog=_examples("jungleseg export mine.h5 --format c --out c-model",
                                        "jungleseg export mine.h5 --out c-model --variant "
                                        "quantised --name body"))
    p.add_argument("model", help="model file (.h5)")
    p.add_argument("--format", choices=["c"], default="c",
                   help="output language (default: c, C99)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help=f"folder for NAME.h and NAME.c (required; {OUT_RULE})")
    p.add_argument("--variant", choices=["float", "quantised"], default="float",
                   help="float: float32, the same labels as Python; quantised: integers "
                        "only, smaller (default: float)")
    p.add_argument("--threshold-bits", type=int, choices=[16, 8], default=16,
                   help="quantised tabular models: bits per threshold; 8 halves the node "
                        "bytes, exact for whole-number columns spanning up to 254 "
                        "(default: 16)")
    p.add_argument("--style", choices=["tables", "inline"], default="tables",
                   help="tabular models: packed tables and a loop (least flash), or one "
                        "branch of code per node (faster, more flash) (default: tables)")
    p.add_argument("--name", default="jungle", metavar="PREFIX",
                   help="prefix of the files and C names (default: jungle)")
    _common(p)


#: One function per subcommand, in the order ``--help`` lists them.
SUBCOMMANDS = [add_train, add_segment, add_evaluate, add_info, add_presets, add_generate,
               add_demo, add_export]


def build_parser() -> argparse.ArgumentParser:
    """The ``jungleseg`` parser; ``args.command`` names the subcommand to run."""
    from .._version import __version__

    parser = _Parser(prog="jungleseg", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"jungleseg {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser,
                                metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(_Subparsers(sub))
    return parser


class _Subparsers:
    """Subparsers whose every parser shows its description and examples as written."""

    def __init__(self, sub):
        self.sub = sub

    def add_parser(self, name, description: str = "", **kw):
        return self.sub.add_parser(name, formatter_class=argparse.RawDescriptionHelpFormatter,
                                   description=textwrap.fill(description, 79), **kw)
