"""What every command shares while it runs: Ctrl-C between steps, progress bars, summaries,
the memory budget, and a dask cluster only when one is asked for."""
from __future__ import annotations

import signal
from contextlib import contextmanager

#: The one-line advice when ``--workers``/``--scheduler`` is given without dask.
INSTALL_DISTRIBUTED = 'pip install "jungleseg[distributed]"'


class Interrupted(Exception):
    """Ctrl-C was pressed; raised where the work can stop cleanly, saying what was done."""


class Flag:
    """Set by the first Ctrl-C; read between training levels and images."""

    interrupted = False


@contextmanager
def interruptible():
    """Ctrl-C sets a flag that :func:`stop_if_interrupted` turns into :class:`Interrupted`
    between training levels and images (a KeyboardInterrupt inside a parallel kernel
    leaves Numba in a bad state); a second Ctrl-C interrupts at once."""
    def handler(signum, frame):
        Flag.interrupted = True
        signal.signal(signal.SIGINT, signal.default_int_handler)

    Flag.interrupted = False
    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def stop_if_interrupted(done: str = "nothing was written") -> None:
    """Raise :class:`Interrupted` (saying ``done``) if Ctrl-C was pressed."""
    if Flag.interrupted:
        raise Interrupted(f"interrupted; {done}")


def progress(args, total, desc):
    """A progress bar on standard error, hidden by ``--quiet``; it leaves no line behind."""
    from .._progress import progress_bar

    return progress_bar(total=total, desc=desc, disable=args.quiet)


def say(args, text: str) -> None:
    """A summary line on standard output, unless ``--quiet``."""
    if not args.quiet:
        print(text)


def budget(args) -> int:
    """Bytes the work may add: ``--max-memory`` (the whole process) less what the process
    holds already, or the default budget (a share of what is still available)."""
    from .._memory import default_budget, format_size, parse_size, resident_memory

    if not getattr(args, "max_memory", None):
        return default_budget()
    limit, held = parse_size(args.max_memory), resident_memory()
    if limit <= held:
        raise ValueError(f"--max-memory {args.max_memory} is the whole process's budget, and "
                         f"it holds {format_size(held)} before any work (Python and the "
                         "libraries): give more")
    return limit - held


def wants_cluster(args) -> bool:
    """Whether the command line asks for a dask cluster (``--scheduler``/``--workers``)."""
    return (getattr(args, "scheduler", None) is not None
            or getattr(args, "workers", None) is not None)


def cluster_module(args):
    """:mod:`jungleseg.distributed`, imported only now that a cluster is asked for; a
    ValueError naming the extra to install when dask is missing."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        option = "--scheduler" if args.scheduler is not None else "--workers"
        raise ValueError(f"{option} runs on a dask cluster, and dask is not installed: "
                         f"{INSTALL_DISTRIBUTED}") from None
    from .. import distributed

    return distributed


@contextmanager
def cluster(args):
    """A dask client for ``--scheduler``/``--workers``, or None without them (then
    nothing of dask, nor :mod:`jungleseg.distributed`, is imported)."""
    if not wants_cluster(args):
        yield None
        return
    with cluster_module(args).connect(args.scheduler, args.workers) as client:
        yield client
