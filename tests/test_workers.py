"""Dynamic scheduling: every task is claimed exactly once, whatever the worker count; Python
threads for filters run within the same thread budget."""
import threading
import time

import numba
import numpy as np
import pytest
from numba import njit, prange

from jungleseg._workers import SERIAL_WORK, _pool, claim, thread_map, threads, workers_for


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


def test_small_work_runs_on_one_thread():
    assert workers_for(SERIAL_WORK - 1) == 1
    assert workers_for(SERIAL_WORK) == numba.get_num_threads()
    before = numba.get_num_threads()
    with threads(1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before


def test_thread_map_keeps_order_and_stays_within_the_thread_budget():
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


def test_thread_map_keeps_its_threads_and_never_waits_for_a_helper_that_has_not_started():
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
