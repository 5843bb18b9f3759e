"""Dynamic scheduling for Numba kernels on several threads, sized for a shared machine.

A fixed share of the work per thread (as Numba's ``prange`` hands out) lets a thread
that another process keeps off its core hold up the whole loop. Kernels here are
workers, each run on its own thread (:func:`run_workers`), that claim tasks from a
shared counter until none are left (:func:`claim`): a slowed thread simply claims fewer.
They are compiled without ``parallel=True``, whose compilation costs several times the
kernel's own. Tasks write disjoint outputs, so results never depend on which
worker ran what. Work too small to repay waking a second thread runs on the calling
thread alone (:func:`workers_for`). Regions too short for a slowed thread's share to
amortise its wait at the region's closing barrier run on no more threads than other
processes have lately left cores free (:func:`free_cores`), and so do the filter threads
below: a thread on a core that another process holds would hold them up.

Threads that finish a region wait for the next one passively (``OMP_WAIT_POLICY``, unless
the caller set it): OpenMP's default spins for a while, and on a machine whose cores are
all taken a spinning thread takes CPU time from the thread that still has work. This only
takes effect if Numba's OpenMP runtime starts after this import, as it does when
jungleseg's kernels are the first parallel code to run.

Image filters (OpenCV, NumPy) release the GIL, so independent filters of one image run on
Python threads (:func:`thread_map`), as many as Numba may use and cores are free: one
setting bounds both.
Those threads are kept between calls: starting a pool's threads costs several times what
handing them work does.

Items too small for a parallel region each, such as the frames of a depth stream, run one
per Python thread instead (:func:`ordered_map`), each on one Numba thread: no thread is
woken per item, and results still come in order.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait

import numba
import numpy as np
from numba import njit, types
from numba.extending import intrinsic

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

#: Feature evaluations (or comparable steps, such as split-node visits) below which a
#: parallel region costs more than it saves: waking a sleeping thread costs about 0.1 ms,
#: the time of some 10,000 evaluations. Regions just above it gain from a second thread
#: on an idle machine and lose nothing measurable with a busy core
#: (``docs/results/speed.md``).
SERIAL_WORK = 20_000
#: Work from which a region uses every thread even while other processes hold cores: each
#: thread's share then outweighs the wait for a slowed thread at the closing barrier.
SHARED_WORK = 400_000
#: Tasks per worker: enough that a slowed thread's share moves to the others.
TASKS_PER_WORKER = 8
#: Arrays from this size on are faulted into memory on every thread (:func:`fresh_array`).
FRESH_BYTES = 64 << 20
_PAGE_BYTES = 4096
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
_MACHINE_CORES = max(os.cpu_count() or 1, _CORES)  # all that /proc/stat's first line sums
_PROC_STAT = "/proc/stat"  # Linux: first line "cpu user nice system idle iowait irq ..."
_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
#: Least seconds between the readings :func:`free_cores` compares.
_FREE_CORES_WINDOW = 0.1
#: (time.monotonic() of the last check, its _cpu_times reading or None, free cores)
_cpu_reading = (-np.inf, None, _CORES)

_POOLS: dict[int, ThreadPoolExecutor] = {}  # kept thread pools by size, for thread_map
_POOLS_LOCK = threading.Lock()
if hasattr(os, "register_at_fork"):  # POSIX: a forked child has none of the threads
    os.register_at_fork(after_in_child=_POOLS.clear)


@intrinsic
def claim(typingctx, counter):
    """Atomically increment ``counter[0]`` (an int64 array) and return its old value: the
    index of the next unclaimed task."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None
    sig = types.int64(counter)

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        one = context.get_constant(types.int64, 1)
        return builder.atomic_rmw("add", array.data, one, "monotonic")

    return sig, codegen


def workers_for(work: float) -> int:
    """Workers for a parallel region of this much work: 1 below :data:`SERIAL_WORK`,
    Numba's current thread count from :data:`SHARED_WORK`, and in between no more than
    the cores that other processes have lately left free (:func:`free_cores`)."""
    if work < SERIAL_WORK:
        return 1
    n = numba.get_num_threads()
    return n if work >= SHARED_WORK or n == 1 else min(n, free_cores())


def free_cores() -> int:
    """The cores this process may use that other processes left free lately (at least 1).

    Linux counts every core's busy time in ``/proc/stat``; less this process's own CPU
    time, over the same wall time, that is how many cores the rest of the machine kept
    busy on average, spread over all its cores (of which this process may use some).
    Readings at least ``_FREE_CORES_WINDOW`` seconds apart update the figure, so a
    competing process shows within a window or two of its start, and the file is read at
    most once a window. A core counts as taken from a quarter of its time on: a thread
    there would be descheduled often enough to hold up its region's closing barrier.
    Before the first window, and where the counts cannot be read (not Linux), every core
    is free."""
    global _cpu_reading
    checked, before, free = _cpu_reading
    at = time.monotonic()
    if at - checked < _FREE_CORES_WINDOW:
        return free
    now = _cpu_times()
    if now is None:
        free = _CORES
    elif before is not None:
        others = ((now[1] - before[1]) - (now[2] - before[2])) / (now[0] - before[0])
        free = max(1, _CORES - int(others * _CORES / _MACHINE_CORES + 0.75))
    _cpu_reading = (at, now, free)  # a missing file too is tried once a window only
    return free


def _cpu_times() -> tuple[float, float, float] | None:
    """(wall seconds, seconds of busy time summed over the machine's cores, this process's
    CPU seconds), or None where ``/proc/stat`` cannot be read."""
    try:
        with open(_PROC_STAT) as f:
            ticks = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    busy = sum(ticks) - ticks[3] - ticks[4]  # all but idle and waiting for I/O
    return time.monotonic(), busy / _TICKS_PER_SECOND, time.process_time()


def fresh_array(n: int, dtype) -> np.ndarray:
    """``numpy.empty(n, dtype)``, its pages brought into memory by every Numba thread
    when it holds at least :data:`FRESH_BYTES`.

    The first write to a page the process has not used costs a page fault, and on a
    virtual machine the host backing the page too: several seconds per gigabyte on some.
    Filling a training store of gigabytes image by image pays that on one thread; here
    the threads pay it together (as many as cores are free), first, and the fill then
    writes memory in place. The values are left undefined, as ``numpy.empty`` leaves
    them."""
    array = np.empty(n, dtype)
    if array.nbytes < FRESH_BYTES or numba.get_num_threads() == 1:
        return array
    workers = min(numba.get_num_threads(), free_cores())
    if workers > 1:
        _touch_pages(array.reshape(-1).view(np.uint8), workers)
    return array


def _touch_pages(raw, n_workers):
    """Write a 0 byte into every page of ``raw``, in page ranges the workers claim."""
    run_workers(_touch_pages_worker, n_workers, raw, n_workers * TASKS_PER_WORKER)


@njit(cache=True, nogil=True)
def _touch_pages_worker(raw, n_tasks, counter):
    n_pages = (raw.shape[0] + _PAGE_BYTES - 1) // _PAGE_BYTES
    while True:
        task = claim(counter)
        if task >= n_tasks:
            break
        for page in range(task * n_pages // n_tasks, (task + 1) * n_pages // n_tasks):
            raw[page * _PAGE_BYTES] = 0


@contextlib.contextmanager
def threads(n: int):
    """Run Numba's parallel regions inside the block on ``n`` threads (then restore): one
    thread never wakes the others."""
    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(before)


def thread_map(function: Callable, items: Iterable) -> list:
    """``[function(x) for x in items]``, run on as many Python threads as Numba's current
    thread count and the free cores allow (the calling thread alone for one). For calls
    that release the GIL (OpenCV filters, large NumPy operations) writing disjoint
    outputs: the results do not depend on the thread count.

    The calling thread works too: it and the kept helper threads claim items in turn, and
    once none are left it waits only for helpers that have started. A helper that another
    process keeps off its core claims nothing and is not waited for, and a call from inside
    ``function`` cannot wait on itself."""
    items = list(items)
    n = min(numba.get_num_threads(), len(items))
    if n > 1:
        n = min(n, free_cores())
    if n <= 1:
        return [function(x) for x in items]
    results = [None] * len(items)
    claimed = itertools.count()  # next() is atomic under the GIL

    def work() -> None:
        for i in iter(claimed.__next__, None):
            if i >= len(items):
                return
            results[i] = function(items[i])

    helpers = [_pool(n - 1).submit(work) for _ in range(n - 1)]
    try:
        work()
    finally:
        for helper in helpers:
            if not helper.cancel():  # started: it may hold an item
                helper.result()
    return results


def bands(n: int, size: int) -> list[slice]:
    """``range(n)`` cut into slices of at most ``size``: work items for :func:`thread_map`
    over the slices or columns of a volume.

    Examples
    --------
    >>> bands(10, 4)
    [slice(0, 4, None), slice(4, 8, None), slice(8, 10, None)]
    """
    return [slice(start, min(start + size, n)) for start in range(0, n, size)]


def run_workers(worker: Callable, n_workers: int, *args) -> list:
    """Run ``worker(*args, counter)`` on ``n_workers`` threads, the calling one and kept
    helpers, and return what each that ran returned.

    ``worker`` is a Numba kernel compiled with ``nogil=True`` but without
    ``parallel=True`` (whose compilation costs several times the kernel's own): it claims
    tasks from ``counter`` (:func:`claim`) until none are left, as a worker of a parallel
    region here does, so its results do not depend on how many threads ran it. A helper
    that has not started once the calling thread runs out of tasks is not waited for."""
    counter = np.zeros(1, np.int64)
    if n_workers <= 1:
        return [worker(*args, counter)]
    helpers = [_pool(n_workers - 1).submit(worker, *args, counter)
               for _ in range(n_workers - 1)]
    results = [worker(*args, counter)]
    for helper in helpers:
        if not helper.cancel():  # started: it may hold a task
            results.append(helper.result())
    return results


def ordered_map(function: Callable, items: Iterable,
                stop: Callable[[], bool] | None = None) -> Iterator:
    """``function(x)`` for each of ``items`` (any iterable, read as it goes), yielded in
    order; with Numba's current thread count n above 1, computed on n kept Python threads,
    each running Numba's kernels on one thread (n x 1 threads in all).

    For many calls each too short to repay a parallel region (waking a thread costs
    about 0.1 ms), when ``function`` releases the GIL for most of its time (Numba
    kernels, large NumPy operations). At most 2 n items are in flight, so a stream never
    waits on its slowest item for long, nor is read far ahead. ``stop``, if given, is
    asked before each item is read: once it says True no further item is read, and the
    results of those already begun are still yielded. An exception raised by
    ``function`` is raised where its item's result would be yielded. When the iteration
    ends early (an exception, or the caller closing it), items not yet begun are dropped
    and those running are waited for: nothing goes on in the background.
    """
    if stop is not None:
        items = _until(stop, items)
    n = numba.get_num_threads()
    if n <= 1:
        yield from map(function, items)
        return

    def on_one_thread(x):
        with threads(1):
            return function(x)

    pool, pending = _pool(n), deque()
    try:
        for x in items:
            pending.append(pool.submit(on_one_thread, x))
            if len(pending) >= 2 * n:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        wait(pending)


def _until(stop: Callable[[], bool], items: Iterable) -> Iterator:
    """``items`` for as long as ``stop()``, asked before each item is read, says False."""
    iterator = iter(items)
    while not stop():
        try:
            yield next(iterator)
        except StopIteration:
            return


def _pool(n: int) -> ThreadPoolExecutor:
    """The kept pool of ``n`` helper threads, started on first use."""
    with _POOLS_LOCK:
        if n not in _POOLS:
            _POOLS[n] = ThreadPoolExecutor(n, thread_name_prefix=f"jungleseg-{n}")
        return _POOLS[n]
