"""The two evaluation passes of the split tables (:mod:`._tables`), in sample order.

A level's entries are visited by sample (every DAG's entry of a sample in turn), which is
image order and within an image pixel order, and each entry evaluates every candidate it
needs at once (:func:`jungleseg.features._kernels.response_rows`), so that an image is
brought into cache once per pass however many nodes and DAGs its samples have reached.
Pass 1 evaluates the subsamples thresholds are drawn from; pass 2 evaluates large nodes'
entries in batches, grouped by node for counting. Every parallel loop here claims its tasks
(:mod:`jungleseg._workers`), and tasks write disjoint outputs.
"""
import numpy as np
from numba import njit

from .._rng import derive, next_below
from .._workers import TASKS_PER_WORKER, claim, run_workers
from ..features._kernels import (
    KIND_BOX_ABSDIFF,
    KIND_DEPTH,
    KIND_VALUE,
    at_sample,
    colour_responses,
    depth_responses,
    drawn_depth_responses,
    response_rows,
)

THRESHOLD_STREAM = 3  # key separating the threshold draws' stream from the others


@njit(cache=True)
def wave_entries(order, lo, size, active, a, b, entry_row, entry_pos, visit):
    """The entries of node rows ``a:b`` in the order of ``visit`` (a permutation of all
    entries, :attr:`._entries.Entries.in_sample_order`), with each one's row and position
    in its node (``entry_row`` and ``entry_pos`` are scratch, -1 outside the wave)."""
    n = 0
    for i in range(a, b):
        if active[i]:
            for q in range(size[i]):
                e = order[lo[i] + q]
                entry_row[e] = i
                entry_pos[e] = q
            n += size[i]
    entries = np.empty(n, np.int64)
    rows = np.empty(n, np.int64)
    pos = np.empty(n, np.int64)
    x = 0
    for v in range(visit.shape[0]):
        e = visit[v]
        if entry_row[e] >= 0:
            entries[x] = e
            rows[x] = entry_row[e]
            pos[x] = entry_pos[e]
            entry_row[e] = -1
            x += 1
    return entries, rows, pos


@njit(cache=True)
def split_by_cost(cost, n_tasks):
    """Boundaries of ``n_tasks`` consecutive ranges of ``cost`` with about equal sums."""
    total = 0
    for x in range(cost.shape[0]):
        total += cost[x]
    bounds = np.empty(n_tasks + 1, np.int64)
    bounds[0] = 0
    acc = 0
    task = 1
    for x in range(cost.shape[0]):
        acc += cost[x]
        while task < n_tasks and acc * n_tasks >= total * task:
            bounds[task] = x + 1
            task += 1
    while task <= n_tasks:
        bounds[task] = cost.shape[0]
        task += 1
    return bounds


def draw_subsamples(big_rows, size, n_drawn, seed, dags, positions, level, n_sub,
                    pos_off, pair_off, pair_start, pair_dest, n_workers):
    """For each node with more than ``n_sub`` entries, the subsample draws of all its
    candidates grouped by entry: entry q's draws are ``pair_start[pos_off + q]`` to
    ``pair_start[pos_off + q + 1]``, and ``pair_dest`` says which (candidate, draw) each
    one is: ``k * n_sub + draw``, n_sub a power of two."""
    zero = np.zeros(size.shape[0], np.int64)
    subsample_starts(big_rows, size, zero, size, n_drawn, seed, dags, positions, level, n_sub,
                     pos_off, pair_start, n_workers)
    subsample_dests(big_rows, size, zero, size, n_drawn, seed, dags, positions, level, n_sub,
                    pos_off, pair_off, pair_start, pair_dest, n_workers)


def subsample_starts(big_rows, size, first, node_size, n_drawn, seed, dags, positions, level,
                     n_sub, pos_off, pair_start, n_workers):
    """How many of its node's subsample draws (of all candidates) fall on each entry of
    a window: the ``size[i]`` entries from position ``first[i]`` of node row i, which
    holds ``node_size[i]`` entries (a whole node, or a shard's part of it, see
    :mod:`._sharded`); cumulated, so that window entry q's draws are ``pair_start[pos_off
    + q]`` to ``pair_start[pos_off + q + 1]``."""
    run_workers(_subsample_starts_worker, n_workers, big_rows, size, first, node_size, n_drawn,
                seed, dags, positions, level, n_sub, pos_off, pair_start, n_workers)


@njit(cache=True, nogil=True)
def _subsample_starts_worker(big_rows, size, first, node_size, n_drawn, seed, dags, positions,
                             level, n_sub, pos_off, pair_start, n_workers, counter):
    """One worker of :func:`subsample_starts`: claims tasks from ``counter``."""
    while True:
        t = claim(counter)
        if t >= big_rows.shape[0]:
            break
        i = big_rows[t]
        sz = size[i]
        starts = pair_start[pos_off[i]:pos_off[i] + sz + 1]
        starts[:] = 0
        for k in range(n_drawn[i]):
            state = derive(seed, dags[i], level, positions[i], (THRESHOLD_STREAM << 32) + k)
            for _r in range(n_sub):
                state, j = next_below(state, node_size[i])
                if first[i] <= j < first[i] + sz:
                    starts[j - first[i] + 1] += 1
        for q in range(sz):
            starts[q + 1] += starts[q]


def subsample_dests(big_rows, size, first, node_size, n_drawn, seed, dags, positions, level,
                    n_sub, pos_off, pair_off, pair_start, pair_dest, n_workers):
    """Which (candidate k, draw r) each draw of a window (:func:`subsample_starts`) is,
    ``k * n_sub + r``, grouped by entry: ``pair_dest[pair_off[i] + p]`` for node row i's
    p-th draw."""
    run_workers(_subsample_dests_worker, n_workers, big_rows, size, first, node_size, n_drawn,
                seed, dags, positions, level, n_sub, pos_off, pair_off, pair_start, pair_dest,
                n_workers)


@njit(cache=True, nogil=True)
def _subsample_dests_worker(big_rows, size, first, node_size, n_drawn, seed, dags, positions,
                            level, n_sub, pos_off, pair_off, pair_start, pair_dest, n_workers,
                            counter):
    """One worker of :func:`subsample_dests`: claims tasks from ``counter``."""
    largest = 0
    for t in range(big_rows.shape[0]):
        largest = max(largest, size[big_rows[t]])
    cursor = np.empty(largest, np.int64)
    while True:
        t = claim(counter)
        if t >= big_rows.shape[0]:
            break
        i = big_rows[t]
        sz = size[i]
        cursor[:sz] = pair_start[pos_off[i]:pos_off[i] + sz]
        for k in range(n_drawn[i]):
            state = derive(seed, dags[i], level, positions[i], (THRESHOLD_STREAM << 32) + k)
            for r in range(n_sub):
                state, j = next_below(state, node_size[i])
                if first[i] <= j < first[i] + sz:
                    pair_dest[pair_off[i] + cursor[j - first[i]]] = k * n_sub + r
                    cursor[j - first[i]] += 1


def evaluate_subsamples(entries, rows, pos, bounds, big, n_drawn, val_off, pos_off, pair_off,
                         pair_start, pair_dest, shift, entry_sample, s_image, s_row, s_col, store,
                         unclamped, kinds, params, values, n_workers):
    """Pass 1: the responses thresholds are drawn from, entry by entry in visit order;
    a small node's entry q writes all its candidates at ``val_off + q * n_drawn``, a large
    node's entry its drawn pairs at ``val_off + pair``. Candidate k of node row i has
    parameters ``params[i * n_candidates + k]``."""
    run_workers(_evaluate_subsamples_worker, n_workers, entries, rows, pos, bounds, big,
                n_drawn, val_off, pos_off, pair_off, pair_start, pair_dest, shift, entry_sample,
                s_image, s_row, s_col, store, unclamped, kinds, params, values, n_workers)


@njit(cache=True, nogil=True)
def _evaluate_subsamples_worker(entries, rows, pos, bounds, big, n_drawn, val_off, pos_off,
                                pair_off, pair_start, pair_dest, shift, entry_sample, s_image,
                                s_row, s_col, store, unclamped, kinds, params, values,
                                n_workers, counter):
    """One worker of :func:`evaluate_subsamples`: claims tasks from ``counter``."""
    pixels, _, _, _, _, _, integral, integral_offset = store
    every = np.arange(kinds.shape[1])
    widest = kinds.shape[1]  # most responses of one entry: the scratch's size
    for x in range(entries.shape[0]):
        if big[rows[x]]:
            at = pos_off[rows[x]] + pos[x]
            widest = max(widest, pair_start[at + 1] - pair_start[at])
    scratch = np.empty(4 * widest, np.int64)
    gathered = np.empty(4 * widest, np.float32)
    while True:
        task = claim(counter)
        if task >= bounds.shape[0] - 1:
            break
        for x in range(bounds[task], bounds[task + 1]):
            i = rows[x]
            q = pos[x]
            first = last = 0
            if big[i]:
                first = pair_off[i] + pair_start[pos_off[i] + q]
                last = pair_off[i] + pair_start[pos_off[i] + q + 1]
                if first == last:
                    continue  # none of its node's draws fell on this entry
            s = entry_sample[entries[x]]
            at = at_sample(store, s_image[s], s_row[s], s_col[s])
            if big[i]:
                drawn = pair_dest[first:last]
                at_value = val_off[i] + first - pair_off[i]
                if kinds[i, 0] == KIND_DEPTH:
                    drawn_depth_responses(params, i * kinds.shape[1], drawn, shift, pixels,
                                          at, values, at_value, scratch, gathered)
                elif KIND_VALUE <= kinds[i, 0] <= KIND_BOX_ABSDIFF:
                    colour_responses(kinds, params, i, drawn, shift, pixels, integral,
                                     integral_offset, at, unclamped, values, at_value,
                                     scratch)
                else:
                    response_rows(kinds, params, i, drawn, shift, pixels, integral,
                                  integral_offset, at, unclamped, values, at_value)
            else:
                _every_response(kinds, params, i, n_drawn[i], every, pixels, integral,
                                integral_offset, at, unclamped, values,
                                val_off[i] + q * n_drawn[i], scratch)


@njit(cache=True, inline="always")
def _every_response(kinds, params, i, n_k, every, pixels, integral, integral_offset, at,
                    unclamped, out, start, scratch):
    """Responses of node row i's first ``n_k`` candidates at one sample, written to
    ``out[start:]``: depth candidates (a depth family draws nothing else) through
    :func:`depth_responses`, whose divisions vectorise, colour candidates (point and box
    kinds) through :func:`colour_responses`, whose probe reads overlap (``scratch``: the
    integers either works in), others through :func:`response_rows`."""
    kind = kinds[i, 0]
    if kind == KIND_DEPTH:
        depth_responses(params, i * kinds.shape[1], n_k, pixels, at, out, start, scratch)
    elif KIND_VALUE <= kind <= KIND_BOX_ABSDIFF:
        colour_responses(kinds, params, i, every[:n_k], 0, pixels, integral, integral_offset,
                         at, unclamped, out, start, scratch)
    else:
        response_rows(kinds, params, i, every[:n_k], 0, pixels, integral, integral_offset, at,
                      unclamped, out, start)


@njit(cache=True)
def batch_slots(batch, rows, big_rows, row_rank):
    """Pass 2 rows of one batch (wave entry indices, in visit order) grouped by node:
    ``slot_start[rank]`` to ``slot_start[rank + 1]`` are the slots of the wave's large node
    of that rank; ``slots`` says which wave entry each slot holds, ``slot_of`` which slot
    each batch entry has."""
    n_big = big_rows.shape[0]
    slot_start = np.zeros(n_big + 1, np.int64)
    for x in batch:
        slot_start[row_rank[rows[x]] + 1] += 1
    for t in range(n_big):
        slot_start[t + 1] += slot_start[t]
    fill = slot_start[:-1].copy()
    slots = np.empty(batch.shape[0], np.int64)
    slot_of = np.empty(batch.shape[0], np.int64)
    for y in range(batch.shape[0]):
        t = row_rank[rows[batch[y]]]
        slots[fill[t]] = batch[y]
        slot_of[y] = fill[t]
        fill[t] += 1
    return slots, slot_of, slot_start


def evaluate_batch(batch, slot_of, entries, rows, n_drawn, stride, entry_sample, s_image,
                    s_row, s_col, store, unclamped, kinds, params, buffer, n_workers):
    """Pass 2 evaluation, in visit order: every candidate of each batch entry, written at
    ``buffer[slot * stride:]``."""
    run_workers(_evaluate_batch_worker, n_workers, batch, slot_of, entries, rows, n_drawn,
                stride, entry_sample, s_image, s_row, s_col, store, unclamped, kinds, params,
                buffer, n_workers)


@njit(cache=True, nogil=True)
def _evaluate_batch_worker(batch, slot_of, entries, rows, n_drawn, stride, entry_sample,
                           s_image, s_row, s_col, store, unclamped, kinds, params, buffer,
                           n_workers, counter):
    """One worker of :func:`evaluate_batch`: claims tasks from ``counter``."""
    pixels, _, _, _, _, _, integral, integral_offset = store
    every = np.arange(kinds.shape[1])
    n = batch.shape[0]
    n_tasks = min(n, n_workers * TASKS_PER_WORKER)
    scratch = np.empty(4 * kinds.shape[1], np.int64)
    while True:
        task = claim(counter)
        if task >= n_tasks:
            break
        for y in range(task * n // n_tasks, (task + 1) * n // n_tasks):
            x = batch[y]
            i = rows[x]
            s = entry_sample[entries[x]]
            _every_response(kinds, params, i, n_drawn[i], every, pixels, integral,
                            integral_offset, at_sample(store, s_image[s], s_row[s], s_col[s]),
                            unclamped, buffer, slot_of[y] * stride, scratch)
