"""The one-time compilation of the Numba kernels: said on screen, timed, and shared
between two processes.

Kernels are compiled on their first call and cached on disk (``cache=True``; Numba's
``__pycache__`` folders, or ``NUMBA_CACHE_DIR``). The first run of a command after an
install or an upgrade pays that once; the command says so on screen, with the time it
takes (``benchmarks/first_run.py`` measures it), rather than leave a silent wait or fold
it into a progress bar's estimate.

Numba compiles on one core (it holds the GIL and a global compiler lock), so a first
training leaves the other cores idle for most of a minute. :func:`compile_ahead` hands
the kernels training needs later (:data:`AHEAD`) to a spawned process, which compiles
them into the cache while this one compiles the kernels needed first; a kernel of that
list, when first called here, waits for the other process and loads its machine code
from the cache. Kernels that may go unused are compiled there at a lowered priority, and
training never waits long for a starved process of lowered priority (:class:`_Ahead`).
"""
from __future__ import annotations

import importlib
import time
from contextlib import contextmanager

#: The kernels every run of a command calls, as (module, name): if one of them has no
#: cached machine code for the installed source, the command compiles. Only those every
#: run calls: a kernel that some runs never call (soft routing's) would stay uncompiled
#: and have the notice said on every run.
KERNELS = {
    "train": [("jungleseg.jungle._grow", "_route_worker"),
              ("jungleseg.jungle._grow", "node_histograms"),
              ("jungleseg.jungle._evaluation", "_evaluate_subsamples_worker"),
              ("jungleseg.jungle._tables", "_thresholds_worker")],
    "segment": [("jungleseg.jungle._predict", "_hard_pixels_worker")],
}
#: CPU seconds the compilation of each command's kernels takes on the machine of
#: ``benchmarks/results/first_run.json`` (an AMD EPYC core): a cold run's CPU time less a
#: warm run's (``compile_cpu`` in ``benchmarks/first_run.py``; the demo's is about their sum).
COMPILE_CPU_SECONDS = {"train": 52, "segment": 5}
#: The processes each command's compilation is spread over: one compiles at a time (Numba
#: holds a global compiler lock), and training has a second one (:func:`compile_ahead`).
COMPILE_PROCESSES = {"train": 2, "segment": 1}


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)


#: About how long each command's compilation takes here, in wall seconds on an idle
#: machine: its CPU seconds over the processes that share it, as far as there are cores.
COMPILE_SECONDS = {command: max(1, round(cpu / min(COMPILE_PROCESSES[command], _cores())))
                   for command, cpu in COMPILE_CPU_SECONDS.items()}


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


#: Kernels a spawned process compiles ahead of their first call in training, each with the
#: argument types training calls it with: ``iN``/``uN``/``fN``/``b1`` are Numba's scalar
#: types of N bytes, ``:d`` makes a C-contiguous array of d dimensions, and ``store`` is
#: the store tuple's type (:meth:`ImageStore.as_tuple`), taken from the training's own
#: store: uint8 codes with uint32 integral images for colour features (every stage of
#: auto-context included), float32 values with float64 ones for depth and volume features,
#: so a training compiles each kernel for one store type only. The first three are needed once
#: the first level's candidates are evaluated; the level search only where DAGs merge.
#: ``tests/test_jit.py`` checks these against what a training compiles.
AHEAD = {
    ("jungleseg.jungle._tables", "_thresholds_worker"):
        "i8 i8 b1:1 b1:1 i8:1 i8:1 i8:1 i8 i8:1 i8:1 i4:1 f4:1 i8 i8:1 i8:1 i8 b1 i8:1 i8:1 "
        "i8:1 i4:1 i8:2 f4:3 i4:2 i4:1 i8:1 b1 i4:4 i8:3 f8:3 i8:2 f8:2 i8 f8:1 i8 i8 i8:1",
    ("jungleseg.jungle._evaluation", "_evaluate_batch_worker"):
        "i8:1 i8:1 i8:1 i8:1 i8:1 i8 i8:1 i4:1 i4:1 i4:1 store b1 u1:2 f4:2 f4:1 i8 i8:1",
    ("jungleseg.jungle._tables", "_count_batch_worker"):
        "i8:1 i8:1 i8:1 i8:1 i8:1 i8 f4:1 f4:3 i4:2 i8:1 i8:1 i4:1 i8:2 i4:1 i8:1 b1 b1 i4:4 "
        "i8:3 f8:3 i8:2 f8:2 i8 f8:1 i8 i8 i8:1",
    ("jungleseg.jungle._level_search", "_optimise_level_worker"):
        "i8:1 i8:1 i8 i4:4 i8:3 f8:3 i8:2 i8:1 i8:1 i8 i8 b1 i8 i8 f8:1 i8 i8:1 i8:1 i8:1 "
        "i8:1 f8:1 i8:1",
}
_LEVEL_SEARCH = ("jungleseg.jungle._level_search", "_optimise_level_worker")
#: What a tabular training on bin codes (:class:`jungleseg.JungleClassifier`) compiles
#: ahead instead of the image kernels of :data:`AHEAD`: its split tables (counted from
#: code histograms, :mod:`jungleseg.jungle._histogram`) and the level search.
TABULAR_AHEAD = {
    ("jungleseg.jungle._histogram", "_code_tables_worker"):
        "i8:1 i8:1 i8:1 i8:1 i8:1 i4:1 i4:1 u1:2 i8:2 i8:1 i8 i8:1 i8:1 i8 i8 i8:2 b1 i4:4 "
        "i8:3 f8:3 f4:3 i4:2 i8:2 f8:2 i8 f8:1 i8 i8:1",
    _LEVEL_SEARCH: AHEAD[_LEVEL_SEARCH],
}
#: The traversal kernel of segmentation, compiled ahead too inside
#: :func:`segmenting_next` (the demo segments right after training).
SEGMENT_AHEAD = {
    ("jungleseg.jungle._predict", "_hard_pixels_worker"):
        "i8:1 i8:1 u1:1 f4:2 f4:1 i4:1 i4:1 f4:2 store i8 i8:1 i8 f4:1 f4:2 i4:1 i8 i8:1",
}
_segment_next = False


@contextmanager
def segmenting_next():
    """Trainings in this block have :func:`compile_ahead` compile the segmentation
    kernel too (:data:`SEGMENT_AHEAD`), for a caller that segments next."""
    global _segment_next
    _segment_next = True
    try:
        yield
    finally:
        _segment_next = False


def argument_types(spec: str, store_type) -> tuple:
    """The Numba types of a kernel's arguments written as in :data:`AHEAD`."""
    from numba.core import types

    scalars = {"i4": types.int32, "i8": types.int64, "u1": types.uint8,
               "f4": types.float32, "f8": types.float64, "b1": types.boolean}
    out = []
    for word in spec.split():
        name, _, ndim = word.partition(":")
        if word == "store":
            out.append(store_type)
        else:
            out.append(types.Array(scalars[name], int(ndim), "C") if ndim else scalars[name])
    return tuple(out)


def _kernel(module: str, name: str):
    return getattr(importlib.import_module(module), name)


def _compile_kernels(kernels: list, store_type, folder: str, lower: bool = True) -> None:
    """In the spawned process: compile each (index, (module, name)) of ``kernels`` for its
    :data:`AHEAD` types into the cache, then write ``<folder>/<index>.done``, whatever
    happened (the training process compiles a kernel itself if it finds no code); stop
    when the training process has ended. With ``lower``, from the level search on at a
    lowered priority: it may go unused (DAGs that never fill a level), so it takes spare
    cycles only, until training waits for it (:class:`_Ahead`)."""
    import os
    from pathlib import Path

    parent = os.getppid()
    for i, key in kernels:
        if os.getppid() != parent:  # the training process is gone: nobody to compile for
            break
        if lower and key == _LEVEL_SEARCH and hasattr(os, "nice"):
            os.nice(LOWERED)
            lower = False
        try:
            _kernel(*key).compile(argument_types(
                {**AHEAD, **TABULAR_AHEAD, **SEGMENT_AHEAD}[key], store_type))
        except Exception:  # noqa: BLE001,S110 - the training process compiles it then
            pass
        (Path(folder) / f"{i}.done").touch()


#: The niceness the process compiling ahead adds for kernels that may go unused.
LOWERED = 10
#: While training waits for a kernel compiled at that lowered priority, the process is
#: starved (the machine is busy) when it gets less than this share of a core over
#: :data:`STARVED_WINDOW` seconds: then one at training's priority takes over, losing
#: what the starved one had done of its kernel. On an idle machine it gets a whole core.
STARVED_SHARE = 0.25
STARVED_WINDOW = 1.0


def _cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user and system) of process ``pid`` so far; None where unknown (no
    ``/proc``, or the process is gone)."""
    import os

    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class _Ahead:
    """The process compiling ahead (:func:`compile_ahead`): ``kernels`` (module, name) for
    ``store_type``, each ``<folder>/<index>.done`` once compiled. A process cannot raise
    its priority again once lowered, so when training waits for a kernel compiled at the
    lowered priority and that process is starved, :meth:`promote` replaces it by one at
    training's priority for what is left: training never sits idle while a lowered
    process compiles on a busy machine, and on an idle one (where a lowered process gets
    a free core) waits for it as for any other."""

    def __init__(self, kernels: list, store_type, folder: str):
        self.kernels, self.store_type, self.folder = kernels, store_type, folder
        self.lowered_from = next((i for i, key in enumerate(kernels) if key == _LEVEL_SEARCH),
                                 len(kernels))
        self.process = self._start(list(enumerate(kernels)), lower=True)

    def _start(self, todo: list, lower: bool):
        """The process for ``todo``; lowered from its first line when its first kernel is
        the lowered one, so that importing Numba does not compete with training either."""
        import pickle
        import subprocess
        import sys

        first = lower and bool(todo) and todo[0][1] == _LEVEL_SEARCH
        nice = f"import os\nif hasattr(os, 'nice'):\n    os.nice({LOWERED})\n" if first else ""
        process = subprocess.Popen([sys.executable, "-c", f"{nice}from jungleseg._jit import "
                                    f"_compile_from_stdin; _compile_from_stdin({self.folder!r})"],
                                   stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        process.stdin.write(pickle.dumps((todo, self.store_type, lower and not first)))
        process.stdin.close()
        return process

    def poll(self):
        return self.process.poll()

    def lowered(self, index: int) -> bool:
        """Whether the kernel at ``index`` is compiled at the lowered priority, and the
        process has lowered it (it compiles in order: the kernel before has its marker)."""
        from pathlib import Path

        return index >= self.lowered_from and (
            self.lowered_from == 0
            or (Path(self.folder) / f"{self.lowered_from - 1}.done").exists())

    def promote(self) -> None:
        """Stop the lowered process; start one at training's priority for the kernels
        that have no marker yet."""
        from pathlib import Path

        todo = [(i, key) for i, key in enumerate(self.kernels)
                if not (Path(self.folder) / f"{i}.done").exists()]
        _kill(self.process)
        self.lowered_from = len(self.kernels)
        self.process = self._start(todo, lower=False)


def _starved(process, since: tuple) -> tuple[bool, tuple]:
    """Whether ``process`` got less than :data:`STARVED_SHARE` of a core since ``since``
    ((monotonic time, its CPU seconds) then), once :data:`STARVED_WINDOW` has passed
    (unknown CPU seconds count as starved); and the new starting point."""
    now = (time.monotonic(), _cpu_seconds(process.process.pid))
    if now[0] - since[0] < STARVED_WINDOW:
        return False, since
    if now[1] is None or since[1] is None:
        return True, now
    return now[1] - since[1] < STARVED_SHARE * (now[0] - since[0]), now


def _wait_then_compile(kernel, marker, process, index: int = 0) -> None:
    """Make ``kernel``'s first compile here wait until ``process`` (a Popen, or the
    :class:`_Ahead` that compiles it as kernel ``index``) has compiled it (its ``marker``
    file exists) or ended, so that it loads the machine code from the cache instead of
    compiling it twice; other argument types compile as usual. A kernel the process
    compiles at a lowered priority is waited for only while the process is not starved
    (:meth:`_Ahead.promote`)."""
    compile_for_args = kernel._compile_for_args

    def waiting(*args, **kwargs):
        since = None
        while not marker.exists() and process.poll() is None:
            if isinstance(process, _Ahead) and process.lowered(index):
                since = since or (time.monotonic(), _cpu_seconds(process.process.pid))
                starved, since = _starved(process, since)
                if starved:
                    process.promote()
            time.sleep(0.1)
        kernel.__dict__.pop("_compile_for_args", None)
        return compile_for_args(*args, **kwargs)

    kernel._compile_for_args = waiting  # Numba's dispatcher looks it up on the object


def _kill(process) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()


def _stop(ahead, folder) -> None:
    import shutil

    _kill(getattr(ahead, "process", ahead))
    shutil.rmtree(folder, ignore_errors=True)


#: The process compiling ahead for each store type, kept so that the trainings that follow
#: in this process (a napari session's, one per stroke) wait for it rather than start one
#: each: a kernel that training never calls (the level search, where DAGs never merge)
#: is not cached until that process ends.
_RUNNING: dict = {}


def compile_ahead(store: tuple, params, tabular: bool = False):
    """Start a process compiling the :data:`AHEAD` kernels (with ``tabular``, a training
    on bin codes: :data:`TABULAR_AHEAD`) for this store's types (the
    level search only if the DAGs of these ``GrowParams`` may merge), if some are not in
    the cache and this is not itself a worker process of a pool; returns it
    (an :class:`_Ahead`, stopped when this process exits), or None when there is
    nothing to compile, or ``JUNGLESEG_COMPILE_AHEAD=0``. While that process runs,
    later trainings in this process that need no other kernels get it back instead of
    starting another.

    A new interpreter (``python -c``), not :mod:`multiprocessing`: its spawn would
    import the caller's main script again, which a script without an
    ``if __name__ == "__main__"`` guard cannot bear."""
    import atexit
    import multiprocessing
    import os
    import tempfile
    from pathlib import Path

    import numba
    import numpy as np

    from .jungle._schedules import level_widths

    if (os.environ.get("JUNGLESEG_COMPILE_AHEAD", "1") == "0"
            or multiprocessing.parent_process() is not None):  # a dask worker, say
        return None
    widths = level_widths(params.schedule, params.max_width, params.max_depth + 1)
    may_merge = params.growth == "jungle" and bool(np.any(widths[1:] < 2 * widths[:-1]))
    ahead = TABULAR_AHEAD if tabular else AHEAD
    kernels = [key for key in [*ahead, *(SEGMENT_AHEAD if _segment_next else ())]
               if (may_merge or key != _LEVEL_SEARCH) and not _compiled(*key)]
    if not kernels:
        return None
    store_type = numba.typeof(store)
    running = _RUNNING.get(store_type)
    if running is not None and running.poll() is None and set(kernels) <= set(running.kernels):
        return running  # an earlier training's process is still at it: its waits stand
    folder = tempfile.mkdtemp(prefix="jungleseg-compile-")
    try:
        ahead = _Ahead(kernels, store_type, folder)
    except (OSError, ValueError, TypeError):  # no interpreter to start: compile here
        return None
    _RUNNING[store_type] = ahead
    atexit.register(_stop, ahead, folder)
    for i, key in enumerate(kernels):
        _wait_then_compile(_kernel(*key), Path(folder) / f"{i}.done", ahead, i)
    return ahead


def _compile_from_stdin(folder: str) -> None:
    """The process :func:`compile_ahead` starts: its kernels and store type come pickled
    on standard input."""
    import pickle
    import sys

    kernels, store_type, lower = pickle.load(sys.stdin.buffer)
    _compile_kernels(kernels, store_type, folder, lower)
