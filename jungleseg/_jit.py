"""Whether a command's Numba kernels still have to be compiled, to say so before it starts.

Kernels are compiled on their first call and cached on disk (``cache=True``; Numba's
``__pycache__`` folders, or ``NUMBA_CACHE_DIR``). The first run of a command after an
install or an upgrade pays that once; the command says so on screen, with the time it
takes (``benchmarks/first_run.py`` measures it), rather than leave a silent wait or fold
it into a progress bar's estimate.
"""
from __future__ import annotations

import importlib
import time
from contextlib import contextmanager

#: The kernels every run of a command calls, as (module, name): if one of them has no
#: cached machine code for the installed source, the command compiles.
KERNELS = {
    "train": [("jungleseg.jungle._grow", "_route_worker"),
              ("jungleseg.jungle._grow", "node_histograms"),
              ("jungleseg.jungle._evaluation", "_evaluate_subsamples_worker"),
              ("jungleseg.jungle._tables", "_thresholds_worker")],
    "segment": [("jungleseg.jungle._predict", "_predict_pixels_worker")],
}
#: About how long the compilation of each command's kernels takes, in seconds of one core
#: (``benchmarks/first_run.py``).
COMPILE_SECONDS = {"train": 60, "segment": 13}


def _compiled(module: str, name: str) -> bool:
    """Whether the kernel has cached code for its current source (True when unknown)."""
    kernel = getattr(importlib.import_module(module), name)
    try:
        return bool(kernel._cache._cache_file._load_index())
    except (AttributeError, OSError, EOFError, ValueError):  # Numba's cache layout changed
        return True


def to_compile(*commands: str) -> list[str]:
    """Those of ``commands`` (keys of :data:`KERNELS`) whose kernels are not compiled yet."""
    return [c for c in commands if not all(_compiled(*k) for k in KERNELS[c])]


def compile_notice(*commands: str) -> str | None:
    """``compiling kernels, first run only (about N s)`` if the kernels of ``commands``
    are not compiled yet, else None."""
    pending = to_compile(*commands)
    if not pending:
        return None
    seconds = sum(COMPILE_SECONDS[c] for c in pending)
    return f"compiling kernels, first run only (about {seconds} s) ..."


def announce_compile(*commands: str, quiet: bool = False) -> None:
    """Print :func:`compile_notice` to standard error, unless ``quiet`` or compiled."""
    import sys

    notice = None if quiet else compile_notice(*commands)
    if notice:
        print(notice, file=sys.stderr, flush=True)


@contextmanager
def compile_timer():
    """Count the seconds spent compiling kernels (not loading them from the cache) while
    the block runs, on any thread: ``with compile_timer() as timer: ...``, then
    ``timer.seconds``; so that a speed figure can leave the one-time compilation out."""
    from numba.core import event

    class Timer(event.Listener):
        seconds = 0.0
        _depth = 0  # compiles nest (a kernel compiles what it calls); time the outermost

        def on_start(self, ev):
            if self._depth == 0:
                self._start = time.perf_counter()
            self._depth += 1

        def on_end(self, ev):
            self._depth -= 1
            if self._depth == 0:
                self.seconds += time.perf_counter() - self._start

    timer = Timer()
    with event.install_listener("numba:compile", timer):
        yield timer
