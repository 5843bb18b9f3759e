"""The ``jungleseg`` command: train, segment, evaluate, info, presets, generate, demo.

The parser (:mod:`._parser`, one function per subcommand), the commands (:mod:`._train`,
:mod:`._segment`, :mod:`._evaluate`, :mod:`._commands`) and what they write
(:mod:`._outputs`) live in this package; nothing of dask is imported unless
``--scheduler`` or ``--workers`` asks for a cluster.

Exit codes: 0 success; 1 an error, reported on one line ``jungleseg: error: ...`` naming
the file or key, always at the start of a line (batch commands report each bad file on
its own line, finish the others and end with a count); 2 a malformed command line (one
line too); 130 interrupted (Ctrl-C: training stops between levels, nothing is written;
segmenting stops between files and between the tiles of a large image, leaving no
half-written label file, or on a cluster at once, its tasks cancelled).
"""
from __future__ import annotations

import os
import sys

from ._outputs import LineTracker, error
from ._parser import build_parser
from ._run import Interrupted, interruptible

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    from ..jungle import ModelError
    from ._commands import COMMANDS

    args = build_parser().parse_args(argv)
    run = COMMANDS[args.command]
    stderr = sys.stderr
    sys.stderr = LineTracker(stderr)  # errors start on a line of their own after a bar
    try:
        with interruptible():
            return run(args)
    except Interrupted as err:
        error(str(err))
        return 130
    except KeyboardInterrupt:  # a second Ctrl-C, or one outside the checked places
        error("interrupted")
        return 130
    except BrokenPipeError:  # the reader left (``| head``): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (ValueError, OSError, KeyError, MemoryError, ModelError) as err:
        first, *rest = str(err).splitlines() or [type(err).__name__]
        error(first)
        for line in rest if getattr(err, "listing", False) else ():
            print(line, file=sys.stderr)
        return 1
    finally:
        sys.stderr = stderr
