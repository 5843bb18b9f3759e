"""What ``jungleseg export`` runs (its options are in :mod:`jungleseg.cli._parser`)."""
from __future__ import annotations

import argparse


def run_export(args: argparse.Namespace) -> int:
    """Load the model, write the C files, print what they hold and need."""
    from ..io import load_model
    from . import compiled_size, export_c, find_compiler, summary_lines

    jungle = load_model(args.model)
    info = export_c(jungle, args.out, name=args.name, variant=args.variant,
                    threshold_bits=args.threshold_bits, style=args.style)
    quiet = getattr(args, "quiet", False)
    if not quiet:
        for line in summary_lines(info):
            print(line)
        if find_compiler():
            measured = compiled_size(next(f for f in info["files"] if f.endswith(".c")))
            print(f"compiled with -Os: {measured['flash']} bytes of flash (text {measured['text']}"
                  f" + data {measured['data']}), at most {measured['stack']} bytes of stack")
    return 0
