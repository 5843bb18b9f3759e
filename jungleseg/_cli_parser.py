"""The ``jungleseg`` command line's parser: its subcommands and options (the commands
themselves are in :mod:`.cli`)."""
from __future__ import annotations

import argparse
import sys

DESCRIPTION = ("Decision jungles for image segmentation: train, segment, evaluate, describe "
               "a model, generate synthetic data, run the demo.")


def error(text: str) -> None:
    """Report an error on one line of standard error, as every command does."""
    print(f"jungleseg: error: {text}", file=sys.stderr, flush=True)


class _Parser(argparse.ArgumentParser):
    """Usage errors on one line, like every other error, with exit code 2."""

    def error(self, message: str):
        error(f"{message} (see '{self.prog} --help')")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    """The ``jungleseg`` parser; ``args.command`` names the subcommand to run."""
    from ._version import __version__

    parser = _Parser(prog="jungleseg", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"jungleseg {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no progress bars or summaries")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    memory = argparse.ArgumentParser(add_help=False)
    memory.add_argument("--max-memory", metavar="SIZE",
                        help="memory budget of the whole process, e.g. 8GB (default: 80 %% of the "
                             "memory available at the start); larger images are segmented in tiles, larger "
                             "trainings are refused")

    cluster = argparse.ArgumentParser(add_help=False)
    cluster.add_argument("--scheduler", metavar="ADDRESS",
                         help="run on the dask cluster of this scheduler, e.g. tcp://host:8786")
    cluster.add_argument("--workers", type=int, metavar="N",
                         help="run on a new local dask cluster of N worker processes")
    data = argparse.ArgumentParser(add_help=False)
    data.add_argument("--images", metavar="DIR", help="folder of your own images (or volumes)")
    data.add_argument("--labels", metavar="DIR",
                      help="folder of their label files, paired with the images by name")

    def add(name, *parents, **kw):
        return sub.add_parser(name, parents=[common, *parents], **kw)

    p = add("train", memory, cluster, data, help="train a jungle from a config file")
    p.add_argument("config")
    p.add_argument("--out", required=True, help="model file to write (.h5)")
    p.add_argument("--data", help="data folder (real sets), a folder from 'generate', or "
                                  "one holding images/ and labels/")
    p.add_argument("--n", type=int, help="use only the first N training images")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a config value, e.g. --set jungle.max_width=128")
    p.add_argument("--data-parallel", action="store_true",
                   help="on a cluster, train every DAG on the images sharded over the "
                        "workers (each keeps only its shard's channels) instead of one "
                        "task per DAG; the same model")

    p = add("segment", memory, cluster, help="segment image files or folders")
    p.add_argument("model")
    p.add_argument("inputs", nargs="+")
    p.add_argument("--out", required=True, help="folder for <name>.png label files (<name>.tif "
                   "for volumes), or NAME.png, NAME.tif or NAME.zarr for one image")
    p.add_argument("--tile", type=int, metavar="N", help="segment in N x N tiles (N^3 for "
                   "volumes); default: tiles above a size and by the memory budget")
    p.add_argument("--probabilities", action="store_true", help="also write <name>_proba.npy")
    p.add_argument("--smoothing", type=int, metavar="R",
                   help="average probabilities over a (2R+1)^2 box (default: the model's)")
    p.add_argument("--soft", type=float, metavar="F",
                   help="soft routing factor (0: hard; default: the model's own)")
    p.add_argument("--soft-epsilon", type=float, metavar="E",
                   help="soft routing: a split whose minor share is at most E steps hard")
    p.add_argument("--prior-power", type=float, metavar="P",
                   help="labels favour rarer classes: probability / training share ** P, P in "
                        "[0, 1] (0: the most probable class; default: the model's own)")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first bad image")

    p = add("evaluate", cluster, data,
            help="Jaccard of a model on a benchmark's test part or on your own folders")
    p.add_argument("model")
    p.add_argument("--dataset")
    p.add_argument("--data", help="data folder, or one holding images/ and labels/")
    p.add_argument("--n", type=int, help="use only the first N test images")
    p.add_argument("--json", help="write the scores as JSON to this file")
    p.add_argument("--confusion", help="confusion-matrix PNG (default: beside the model)")
    p.add_argument("--allow-class-mismatch", action="store_true",
                   help="score a model whose classes or class names differ from the dataset's")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first bad image")

    p = add("info", help="describe a model file")
    p.add_argument("model")
    p.add_argument("--json", action="store_true")

    from .export import add_export_command
    add_export_command(sub, [common])

    p = add("generate", help="render synthetic benchmark data")
    p.add_argument("what", choices=["kinect", "faces"])
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", default="240x320", help="HEIGHTxWIDTH")

    p = add("demo", help="train and evaluate on synthetic faces, write results")
    p.add_argument("--out", default="jungleseg-demo")
    p.add_argument("--seed", type=int, default=0)
    return parser
