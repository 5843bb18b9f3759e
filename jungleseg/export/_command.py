"""``jungleseg export``: the subcommand's options and what it runs."""
from __future__ import annotations

import argparse


def add_export_command(subparsers, parents: list) -> argparse.ArgumentParser:
    """Add ``export MODEL --format c --out DIR [--variant] [--name]`` to the command
    line's subparsers (``parents``: the options every subcommand shares)."""
    p = subparsers.add_parser("export", parents=parents,
                              help="write a model as dependency-free C for small devices")
    p.add_argument("model", help="model file (.h5)")
    p.add_argument("--format", choices=["c"], default="c", help="output language (C99)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for NAME.h and NAME.c")
    p.add_argument("--variant", choices=["float", "quantised"], default="float",
                   help="float32 (the same labels as Python) or integers only (smaller)")
    p.add_argument("--threshold-bits", type=int, choices=[16, 8], default=16,
                   help="quantised tabular models: bits per threshold (8: half the node "
                        "bytes, exact for whole-number columns spanning up to 254)")
    p.add_argument("--name", default="jungle", metavar="PREFIX",
                   help="prefix of the files and C names (default: jungle)")
    return p


def run_export(args: argparse.Namespace) -> int:
    """Load the model, write the C files, print what they hold and need."""
    from ..io import load_model
    from . import compiled_size, export_c, find_compiler, summary_lines

    jungle = load_model(args.model)
    info = export_c(jungle, args.out, name=args.name, variant=args.variant,
                    threshold_bits=args.threshold_bits)
    quiet = getattr(args, "quiet", False)
    if not quiet:
        for line in summary_lines(info):
            print(line)
        if find_compiler():
            measured = compiled_size(next(f for f in info["files"] if f.endswith(".c")))
            print(f"compiled with -Os: {measured['flash']} bytes of flash (text {measured['text']}"
                  f" + data {measured['data']}), at most {measured['stack']} bytes of stack")
    return 0
