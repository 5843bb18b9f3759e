"""The split tables' evaluation passes: waves, task ranges, subsample draws and slots.
(The tables they build are checked against a plain loop in ``test_tables.py``.)"""
import numpy as np
import pytest

from jungleseg.jungle._evaluation import (
    batch_slots,
    draw_subsamples,
    split_by_cost,
    wave_entries,
)


def test_wave_entries_lists_the_active_rows_entries_in_visit_order():
    rng = np.random.default_rng(0)
    node_of = rng.integers(0, 4, 50)
    order = np.argsort(node_of, kind="stable")
    size = np.bincount(node_of, minlength=4)
    lo = np.concatenate([[0], np.cumsum(size)[:-1]])
    active = np.array([True, False, True, True])
    row, pos = np.full(50, -1, np.int64), np.full(50, -1, np.int64)
    for visit in (np.arange(50), rng.permutation(50)):
        entries, rows, positions = wave_entries(order, lo, size, active, 1, 4, row, pos, visit)
        wanted = (node_of >= 1) & active[node_of]  # rows 1..3, active only
        np.testing.assert_array_equal(entries, visit[wanted[visit]])  # in visit order
        np.testing.assert_array_equal(rows, node_of[entries])
        for e, r, q in zip(entries, rows, positions):
            assert order[lo[r] + q] == e  # position q within its node
        assert (row == -1).all()  # the scratch is left clean for the next wave


@pytest.mark.parametrize("n_tasks", [1, 3, 8])
def test_split_by_cost_gives_consecutive_ranges_of_about_equal_cost(n_tasks):
    cost = np.array([5, 1, 1, 1, 9, 2, 2, 3, 1, 4], np.int64)
    bounds = split_by_cost(cost, n_tasks)
    assert bounds[0] == 0 and bounds[-1] == cost.size and len(bounds) == n_tasks + 1
    assert (np.diff(bounds) >= 0).all()
    sums = [cost[a:b].sum() for a, b in zip(bounds[:-1], bounds[1:])]
    assert sum(sums) == cost.sum()
    assert max(sums) <= cost.sum() / n_tasks + cost.max()


def test_subsample_draws_do_not_depend_on_the_worker_count():
    size = np.array([600, 10, 300], np.int64)
    big_rows = np.array([0, 2], np.int64)
    n_drawn = np.array([3, 3, 2], np.int64)
    n_sub = 8
    pos_off = np.array([0, 0, 601], np.int64)
    pair_off = np.array([0, 0, 3 * n_sub], np.int64)

    def draw(workers):
        start = np.zeros(1000, np.int64)
        dest = np.full((3 + 2) * n_sub, -1, np.int64)
        draw_subsamples(big_rows, size, n_drawn, 7, np.zeros(3, np.int64), np.arange(3), 2,
                        n_sub, pos_off, pair_off, start, dest, workers)
        return start, dest

    start, dest = draw(1)
    for other, theirs in zip((start, dest), draw(2)):
        np.testing.assert_array_equal(other, theirs)
    # each (candidate, draw) of node 0 appears exactly once among its entries' pairs
    np.testing.assert_array_equal(np.sort(dest[:3 * n_sub]), np.arange(3 * n_sub))
    starts0 = start[0:601]
    assert starts0[-1] == 3 * n_sub and (np.diff(starts0) >= 0).all()


def test_batch_slots_group_a_batch_by_node_keeping_entry_order():
    rows = np.array([2, 0, 2, 1, 0, 2], np.int64)  # node row of each wave entry
    big_rows = np.array([0, 2], np.int64)
    row_rank = np.array([0, -1, 1], np.int64)
    batch = np.array([0, 1, 2, 4, 5], np.int64)  # entry 3 is in a small node
    slots, slot_of, slot_start = batch_slots(batch, rows, big_rows, row_rank)
    np.testing.assert_array_equal(slot_start, [0, 2, 5])
    np.testing.assert_array_equal(slots, [1, 4, 0, 2, 5])  # node row 0 first, then 2
    np.testing.assert_array_equal(slots[slot_of], batch)
