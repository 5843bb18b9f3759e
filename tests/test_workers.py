"""Dynamic scheduling: every task is claimed exactly once, whatever the worker count; Python
threads for filters run within the same thread budget."""
import os
import subprocess
import sys
import threading
import time

import numba
import numpy as np
import pytest
from numba import njit, prange

from jungleseg import _workers
from jungleseg._workers import (
    SERIAL_WORK,
    SHARED_WORK,
    _pool,
    claim,
    free_cores,
    fresh_array,
    ordered_map,
    thread_map,
    threads,
    workers_for,
)


@njit(parallel=True)
def _claim_all(n_tasks, n_workers, claimed, counter):
    for _ in prange(n_workers):
        while True:
            task = claim(counter)
            if task >= n_tasks:
                break
            claimed[task] += 1


def test_every_task_is_claimed_once():
    for n_workers in (1, 2, 5):
        claimed = np.zeros(1000, np.int64)
        counter = np.zeros(1, np.int64)
        _claim_all(1000, n_workers, claimed, counter)
        assert np.all(claimed == 1)
        assert counter[0] == 1000 + n_workers  # each worker's last claim found none


@pytest.fixture
def every_core_free(monkeypatch):
    """Thread counts as on an idle machine, whatever else runs while the tests do."""
    monkeypatch.setattr(_workers, "free_cores", lambda: 64)


def test_small_work_runs_on_one_thread_and_short_regions_on_the_free_cores(monkeypatch):
    assert workers_for(SERIAL_WORK - 1) == 1
    monkeypatch.setattr(_workers, "free_cores", lambda: 1)
    with threads(2):
        assert workers_for(SERIAL_WORK) == 1
        assert workers_for(SHARED_WORK - 1) == 1
        assert workers_for(SHARED_WORK) == numba.get_num_threads()  # large: every thread
    monkeypatch.setattr(_workers, "free_cores", lambda: 64)
    assert workers_for(SERIAL_WORK) == numba.get_num_threads()
    before = numba.get_num_threads()
    with threads(1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before


def test_free_cores_counts_the_cores_other_processes_kept_busy(monkeypatch):
    readings = iter([(0.0, 10.0, 5.0),   # (wall s, machine's busy core s, own CPU s)
                     (1.0, 11.0, 6.0),   # all the busy time was this process's
                     (2.0, 13.0, 6.5),   # others kept 1.5 cores busy
                     (3.0, 13.5, 6.7),   # others 0.3 of a core: a quarter or more
                     (4.0, 13.7, 6.8),   # others 0.1
                     (5.0, 18.7, 6.8),   # others 5 cores: still 1 for this process
                     None])              # unreadable
    monkeypatch.setattr(_workers, "_cpu_times", lambda: next(readings))
    monkeypatch.setattr(_workers, "_CORES", 4)
    monkeypatch.setattr(_workers, "_MACHINE_CORES", 4)
    monkeypatch.setattr(_workers, "_FREE_CORES_WINDOW", 0.0)
    monkeypatch.setattr(_workers, "_cpu_reading", (-np.inf, None, 4))
    assert [free_cores() for _ in range(7)] == [4, 4, 2, 3, 4, 1, 4]


def test_free_cores_spreads_the_load_over_every_core_of_the_machine(monkeypatch):
    # this process may use 2 of the machine's 8 cores; others keep 4 busy: 1 of its 2
    readings = iter([(0.0, 0.0, 0.0), (1.0, 4.0, 0.0), (2.0, 4.8, 0.0)])
    monkeypatch.setattr(_workers, "_cpu_times", lambda: next(readings))
    monkeypatch.setattr(_workers, "_CORES", 2)
    monkeypatch.setattr(_workers, "_MACHINE_CORES", 8)
    monkeypatch.setattr(_workers, "_FREE_CORES_WINDOW", 0.0)
    monkeypatch.setattr(_workers, "_cpu_reading", (-np.inf, None, 2))
    assert [free_cores() for _ in range(3)] == [2, 1, 2]  # then 0.8 busy: 0.2 of its 2


def test_cpu_times_reads_the_busy_time_of_every_core(monkeypatch, tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n")
    monkeypatch.setattr(_workers, "_PROC_STAT", str(stat))
    monkeypatch.setattr(_workers, "_TICKS_PER_SECOND", 100)
    assert _workers._cpu_times()[1] == 1.5  # 150 ticks neither idle nor waiting for I/O
    monkeypatch.setattr(_workers, "_PROC_STAT", str(tmp_path / "missing"))
    assert _workers._cpu_times() is None
    monkeypatch.setattr(_workers, "_cpu_reading", (-np.inf, None, 1))
    assert free_cores() == _workers._CORES  # no counts (not Linux): every core


def test_free_cores_reads_the_machine_once_a_window(monkeypatch):
    reads = []

    def cpu_times():
        reads.append(time.monotonic())
        return reads[-1], 0.0, 0.0

    monkeypatch.setattr(_workers, "_cpu_times", cpu_times)
    monkeypatch.setattr(_workers, "_cpu_reading", (-np.inf, None, 1))
    monkeypatch.setattr(_workers, "_FREE_CORES_WINDOW", 60.0)
    for _ in range(5):
        free_cores()
    assert len(reads) == 1
    # where there are no counts (not Linux), the missing file too is tried once a window
    monkeypatch.setattr(_workers, "_cpu_times", lambda: reads.append(None))
    monkeypatch.setattr(_workers, "_cpu_reading", (-np.inf, None, 1))
    assert [free_cores() for _ in range(5)] == [_workers._CORES] * 5
    assert reads[1:] == [None]


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="needs Linux's /proc/stat")
def test_free_cores_sees_other_processes_take_the_cores(monkeypatch):
    all_cores = _workers._CORES
    cores = min(all_cores, 4)  # as if the machine had that many (the rest stay free)
    monkeypatch.setattr(_workers, "_CORES", cores)
    monkeypatch.setattr(_workers, "_MACHINE_CORES", cores)
    _workers._cpu_reading = (-np.inf, None, cores)
    assert free_cores() == cores  # before the first window
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(cores)]
    try:
        time.sleep(0.5)  # started
        free_cores()
        time.sleep(2 * _workers._FREE_CORES_WINDOW)  # a window of every core taken
        assert free_cores() == 1
    finally:
        for process in spinning:
            process.kill()
            process.wait()
        _workers._cpu_reading = (-np.inf, None, all_cores)  # later readings start a window afresh


def test_thread_map_and_fresh_arrays_use_only_the_free_cores(monkeypatch):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs two threads")
    touched = []
    monkeypatch.setattr(_workers, "_touch_pages", lambda raw, n: touched.append(n))
    monkeypatch.setattr(_workers, "free_cores", lambda: 1)
    with threads(2):
        idents = thread_map(lambda _: (time.sleep(0.01), threading.get_ident())[1], range(6))
        assert set(idents) == {threading.get_ident()}
        fresh_array(_workers.FRESH_BYTES, np.uint8)
        assert touched == []
        monkeypatch.setattr(_workers, "free_cores", lambda: 2)
        fresh_array(_workers.FRESH_BYTES, np.uint8)
        assert touched == [2]


def test_thread_map_keeps_order_and_stays_within_the_thread_budget(every_core_free):
    def slow_square(x):
        time.sleep(0.02)  # each item outlasts a thread's start: items spread over threads
        return x * x, threading.get_ident()

    with threads(1):
        one = thread_map(slow_square, range(6))
    assert [r for r, _ in one] == [x * x for x in range(6)]
    assert {t for _, t in one} == {threading.get_ident()}  # on the calling thread
    if numba.config.NUMBA_NUM_THREADS >= 2:
        with threads(2):
            two = thread_map(slow_square, range(6))
        assert [r for r, _ in two] == [x * x for x in range(6)]
        assert len({t for _, t in two}) == 2


def test_thread_map_keeps_its_threads_and_never_waits_for_a_helper_that_has_not_started(
        every_core_free):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs two threads")

    def ident(_):
        time.sleep(0.01)
        return threading.get_ident()

    with threads(2):
        first = set(thread_map(ident, range(6)))
        second = set(thread_map(ident, range(6)))
        nested = thread_map(lambda x: thread_map(lambda y: x * 10 + y, range(3)), range(4))
        assert len(first) == 2 and threading.get_ident() in first  # the caller works too
        assert first == second  # the same kept helper
        assert nested == [[x * 10 + y for y in range(3)] for x in range(4)]
        release = threading.Event()
        stuck = _pool(1).submit(release.wait, 30)  # the helper is held, as a busy core would
        try:
            started = time.perf_counter()
            alone = thread_map(ident, range(4))
            assert time.perf_counter() - started < 10
            assert set(alone) == {threading.get_ident()}  # the caller took every item
        finally:
            release.set()
            stuck.result()


def test_ordered_map_keeps_order_runs_each_item_on_one_numba_thread_and_reads_ahead_little():
    read = []

    def items():
        for x in range(12):
            read.append(x)
            yield x

    def work(x):
        time.sleep(0.01 * (x % 3))  # later items may finish first
        return x * x, numba.get_num_threads(), threading.get_ident()

    for n in (1, 2):
        if n > numba.config.NUMBA_NUM_THREADS:
            continue
        read.clear()
        with threads(n):
            stream = ordered_map(work, items())
            first = next(stream)
            assert len(read) <= 2 * n  # read only a few items ahead
            results = [first, *stream]
        assert [r for r, _, _ in results] == [x * x for x in range(12)]
        assert {t for _, t, _ in results} == {1}  # n Python threads x 1 Numba thread
        idents = {i for _, _, i in results}
        if n == 1:
            assert idents == {threading.get_ident()}  # on the calling thread
        else:
            assert len(idents) == n and threading.get_ident() not in idents


def test_ordered_map_raises_where_the_failing_item_comes_and_drops_the_rest():
    started = []

    def work(x):
        started.append(x)
        if x == 3:
            raise ValueError("item 3 is bad")
        return x

    with threads(min(2, numba.config.NUMBA_NUM_THREADS)):
        got = []
        with pytest.raises(ValueError, match="item 3 is bad"):
            for x in ordered_map(work, range(100)):
                got.append(x)
    assert got == [0, 1, 2]
    time.sleep(0.05)  # let a started item finish
    assert max(started) < 10  # the items after the window were never run


def test_ordered_map_stops_reading_when_told_and_yields_what_it_began():
    read, stopped = [], threading.Event()

    def items():
        for x in range(1000):
            read.append(x)
            yield x

    def work(x):
        if x == 5:
            stopped.set()  # as a Ctrl-C during item 5 would
        time.sleep(0.002)
        return x

    with threads(min(2, numba.config.NUMBA_NUM_THREADS)):
        got = list(ordered_map(work, items(), stop=stopped.is_set))
    assert 5 in got and got == list(range(len(got)))  # in order, every item begun
    assert len(got) == len(read) < 20  # nothing read after the stop, and nothing dropped


def test_fresh_arrays_are_faulted_in_on_every_thread_and_stores_in_them_hold_the_same(
        every_core_free):
    import jungleseg._workers as workers
    from jungleseg.features import ColourFeatures

    touched = []
    touch = workers._touch_pages

    def recording_touch(raw, n_workers):
        touched.append((raw.size, n_workers))
        touch(raw, n_workers)
        raw[::workers._PAGE_BYTES] = 7  # garbage the fill must overwrite (checked below)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers, "_touch_pages", recording_touch)
        patch.setattr(workers, "FRESH_BYTES", 1 << 16)
        with threads(2):
            small = workers.fresh_array(100, np.float32)
            large = workers.fresh_array(50_000, np.float64)
            images = [np.random.default_rng(0).random((120, 90, 3)).astype(np.float32)]
            family = ColourFeatures(max_offset=4)
            touched_store = family.prepare(images)
        with threads(1):
            serial = workers.fresh_array(50_000, np.float64)
    assert small.shape == (100,) and small.dtype == np.float32
    assert large.shape == (50_000,) and large.dtype == np.float64 and serial.size == 50_000
    # the large array, then the store's pixels and its integral images (box kinds)
    assert touched == [(400_000, 2), (120 * 90 * 3 * 4, 2), (121 * 91 * 3 * 8, 2)]
    plain = family.prepare(images)  # FRESH_BYTES as shipped: this store is not touched
    np.testing.assert_array_equal(touched_store.pixels, plain.pixels)  # the fill wrote it all
    np.testing.assert_array_equal(touched_store.integral, plain.integral)
    raw = np.full(3 * workers._PAGE_BYTES + 5, 9, np.uint8)
    workers._touch_pages(raw, 2)  # the compiled kernel: one 0 byte at each page's start
    assert np.flatnonzero(raw == 0).tolist() == [0, 4096, 8192, 12288]


def test_bands_cover_the_range_once_in_order():
    from jungleseg._workers import bands

    for n, size in [(10, 4), (8, 4), (3, 16), (0, 4), (1, 1)]:
        cut = bands(n, size)
        assert [i for band in cut for i in range(n)[band]] == list(range(n))
        assert all(0 < band.stop - band.start <= size for band in cut)
