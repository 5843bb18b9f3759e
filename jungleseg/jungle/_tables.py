"""Split tables: the left class histogram of every (node, candidate, threshold).

Building them is the one step of training that reads data; everything after it
(tree splits, LSearch) is histogram arithmetic (``docs/how-it-works/design.md``, "Training
one level").
A candidate's thresholds are drawn at stratified random quantiles of its responses on a
random subsample of the node's entries, from a stream keyed by (seed, DAG, level, node,
candidate), so the tables do not depend on the thread count.

Evaluation order (:mod:`._evaluation`). A level's entries are visited by sample, every
DAG's entry of a sample in turn (``visit``), which is image order and within an image
pixel order (samples are drawn that way), and every candidate a sample needs is evaluated
while the pixels around it are in cache: sample-major, across all the level's nodes and
DAGs at once, so that each image is brought into cache once per pass however many nodes
and DAGs its samples have reached. Counting stays cheap because it happens apart from
evaluation, node by node, where a node's thresholds and counts are in cache: a count of
the candidate's T sorted thresholds below the response, and one increment. Two passes per level:

1. *Subsamples*: the responses thresholds are drawn from (a node's every response when it
   holds at most ``THRESHOLD_SUBSAMPLE`` entries, which also gives its counts; else that
   many draws per candidate, grouped by entry so each entry evaluates its drawn
   candidates together). Thresholds follow, node by node.
2. *Counting* (nodes with more entries): batches of entries in visit order evaluate all
   their node's candidates into a buffer, grouped by node; then each node counts its rows.

Nodes are processed in *waves* whose buffers stay within ``_WAVE_BYTES`` (or the level's
tables, if larger), so memory stays bounded on wide levels; each wave passes over the
images once more, so waves are few. Counts are integers, so the tables are exact whatever the
order, the batching or the thread count.
"""
import numba
import numpy as np
from numba import njit

from .._rng import advance, derive, next_uniform
from .._workers import TASKS_PER_WORKER, claim, run_workers, threads, workers_for
from ._criterion import best_threshold
from ._evaluation import (
    THRESHOLD_STREAM,
    batch_slots,
    draw_subsamples,
    evaluate_batch,
    evaluate_subsamples,
    split_by_cost,
    wave_entries,
)
from ._radix import insertion_sort, sort_float32

#: Responses per (node, candidate) among which thresholds are drawn (a power of two).
THRESHOLD_SUBSAMPLE = 256
_WAVE_BYTES = 64 << 20  # buffers of one wave of nodes: subsample responses, draws, counts


@njit(cache=True)
def _columns(P, i, column, classes):
    """The classes node i holds (``classes[:ns]``) and each class's compact column."""
    ns = 0
    for c in range(P.shape[1]):
        column[c] = -1
        if P[i, c] > 0:
            column[c] = ns
            classes[ns] = c
            ns += 1
    return ns


@njit(cache=True)
def _finalise(i, counts, layout, ns, classes, n_drawn, n_thr, P, keep_table, table, wl,
              tree_cost, cand_t, cand_cost, left_buf, w_left_buf, parent_buf, costs_buf,
              min_leaf, phi_table, criterion):
    """Node i's left histograms from its bin counts (see :func:`_layout`): each
    candidate's best threshold and cost, and with ``keep_table`` its table (cumulated in
    place when the counts are the table), left weights and tree costs."""
    parent = parent_buf[:ns]
    for c in range(ns):
        parent[c] = P[i, classes[c]]
    for k in range(n_drawn):
        m = n_thr[i, k]
        if m == 0:
            continue
        left = left_buf[:m, :ns]
        w_left = w_left_buf[:m]
        w_left[:] = 0
        for c in range(ns):
            acc = 0
            for t in range(m):
                acc += counts[_at(layout, k, t, c, classes)]
                left[t, c] = acc
                w_left[t] += acc
        costs = costs_buf[:m]
        cand_t[i, k], cand_cost[i, k] = best_threshold(left, w_left, parent, min_leaf,
                                                       phi_table, criterion, costs)
        if keep_table:
            for t in range(m):
                wl[i, k, t] = w_left[t]
                tree_cost[i, k, t] = costs[t]
                for c in range(ns):
                    table[i, k, t, classes[c]] = left[t, c]


@njit(cache=True, inline="always")
def quantile_thresholds(sub, state, thr):
    """Thresholds at stratified random quantiles of the sorted, non-constant subsample
    ``sub`` (drawn from ``state``), sorted into ``thr``; as many as ``thr`` holds but no
    more than the subsample has gaps. Returns how many."""
    m = sub.shape[0]
    n_t_k = min(thr.shape[0], m - 1)
    for tt in range(n_t_k):
        state, u = next_uniform(state)
        x = (tt + u) / n_t_k * (m - 1)
        j = min(int(x), m - 2)
        thr[tt] = sub[j] + np.float32(x - j) * (sub[j + 1] - sub[j])
    insertion_sort(thr[:n_t_k])
    return n_t_k


@njit(cache=True, inline="always")
def _layout(offset, n_drawn, n_t, n_classes, in_table):
    """Where a node's count of (candidate k, bin t, class c) lies: ``offset + k * sk + t *
    st + c * sc``. In an LSearch level's table (``in_table``), c is the class itself;
    elsewhere counts are compact, c-major over the node's classes (``_at``)."""
    if in_table:
        return (offset, n_t * n_classes, n_classes, 1, 1)
    return (offset, n_t, 1, n_drawn * n_t, 0)


@njit(cache=True, inline="always")
def _finalise_scratch(n_classes, n_t):
    """One worker's scratch arrays for :func:`_columns` and :func:`_finalise`: class
    columns, the classes a node holds, and per-threshold left histograms, left weights,
    parent histogram and costs."""
    return (np.empty(n_classes, np.int64), np.empty(n_classes, np.int64),
            np.empty((n_t, n_classes), np.int64), np.empty(n_t, np.int64),
            np.empty(n_classes, np.int64), np.empty(n_t))


@njit(cache=True, inline="always")
def _count_scratch(n_cand, n_t):
    """One worker's scratch arrays for :func:`_by_threshold` and :func:`_count_sample`."""
    return np.empty((n_t, n_cand), np.float32), np.empty(n_cand, np.int64)


@njit(cache=True, inline="always")
def _at(layout, k, t, c, classes):
    """Index of (candidate k, bin t, compact class c) in a node's counts."""
    offset, sk, st, sc, full = layout
    return offset + k * sk + t * st + (classes[c] if full else c) * sc


@njit(cache=True, inline="always")
def _by_threshold(thresholds, i, n_k, by_threshold):
    """Node i's thresholds of its first ``n_k`` candidates, threshold-major:
    ``by_threshold[t, k]`` (scratch of at least (T, n_k)), as :func:`_count_sample` reads
    them; left unfilled when it counts along each candidate instead (fewer candidates than
    thresholds)."""
    if n_k < thresholds.shape[2]:
        return
    for t in range(thresholds.shape[2]):
        for k in range(n_k):
            by_threshold[t, k] = thresholds[i, k, t]


@njit(cache=True, inline="always")
def _count_sample(counts, layout, column_base, n_k, thresholds, by_threshold, n_thr, i,
                  responses, base, w, bins):
    """Bin one sample's responses ``responses[base + k]`` and add its weight ``w`` to the
    counts of its class (``column_base``: the class's offset, see :func:`_layout`).

    A response's bin is how many of its candidate's thresholds are <= it, i.e. NumPy's
    ``searchsorted(..., side='right')`` over the sorted thresholds (the unused ones are NaN
    and never count): it goes left of threshold t iff t >= its bin. A count rather than a
    search has no branch to mispredict, and it runs as vector instructions along the
    longer of two loops: across all candidates at once, threshold by threshold
    (``by_threshold``: :func:`_by_threshold`; ``bins``: scratch of at least ``n_k``), when
    there are at least as many candidates as thresholds; else along each candidate's
    thresholds."""
    _, sk, st, _, _ = layout
    values = responses[base:base + n_k]  # sliced from 0: no wraparound tests
    found = bins[:n_k]
    if n_k >= by_threshold.shape[0]:
        found[:] = 0
        for t in range(by_threshold.shape[0]):
            row = by_threshold[t, :n_k]
            for k in range(n_k):
                found[k] += row[k] <= values[k]
    else:
        for k in range(n_k):
            found[k] = 0
            for t in range(thresholds.shape[2]):
                found[k] += thresholds[i, k, t] <= values[k]
    for k in range(n_k):
        if found[k] < n_thr[i, k]:
            counts[column_base + k * sk + found[k] * st] += w


@njit(cache=True, inline="always")
def _class_base(layout, c, classes):
    offset, _, _, sc, full = layout
    return offset + (classes[c] if full else c) * sc


def _thresholds(a, b, active, big, lo, size, n_drawn, n_sub, val_off, pair_off, pair_dest,
                values, seed, dags, positions, level, count, order, entry_sample,
                entry_weight, label, P, thresholds, n_thr, counts, count_off, keep_table, table,
                wl, tree_cost, cand_t, cand_cost, min_leaf, phi_table, criterion, n_workers):
    """Thresholds of every candidate of node rows ``a:b`` from their subsample responses,
    as the draws made them (stratified random quantiles, no more thresholds than gaps in
    the subsample; none for a candidate constant on it). With ``count``, small nodes,
    whose subsample is every response, are also counted and finalised here, and large
    nodes get zero counts for pass 2; without, only thresholds are drawn (a data-parallel
    driver, :mod:`._sharded`, whose shards count: the arguments after ``count`` but the
    thresholds are then not read)."""
    run_workers(_thresholds_worker, n_workers, a, b, active, big, lo, size, n_drawn, n_sub,
                val_off, pair_off, pair_dest, values, seed, dags, positions, level, count,
                order, entry_sample, entry_weight, label, P, thresholds, n_thr, counts,
                count_off, keep_table, table, wl, tree_cost, cand_t, cand_cost, min_leaf,
                phi_table, criterion, n_workers)


@njit(cache=True, nogil=True)
def _thresholds_worker(a, b, active, big, lo, size, n_drawn, n_sub, val_off, pair_off,
                       pair_dest, values, seed, dags, positions, level, count, order,
                       entry_sample, entry_weight, label, P, thresholds, n_thr, counts,
                       count_off, keep_table, table, wl, tree_cost, cand_t, cand_cost, min_leaf,
                       phi_table, criterion, n_workers, counter):
    """One worker of :func:`_thresholds`: claims tasks from ``counter``."""
    n_cand = thresholds.shape[1]
    n_t = thresholds.shape[2]
    n_classes = P.shape[1]
    flat_table = table.reshape(-1)
    sub_buf = np.empty(n_cand * n_sub, np.float32)
    keys = np.empty(n_sub, np.uint32)
    spare = np.empty(n_sub, np.uint32)
    digit_counts = np.empty(256, np.int64)
    scratch = np.empty(0 if keep_table else n_classes * n_cand * n_t, np.int32)
    column, classes, left_buf, w_left_buf, parent_buf, costs_buf = _finalise_scratch(
        n_classes, n_t)
    by_threshold, bins = _count_scratch(n_cand, n_t)
    while True:
        task = claim(counter)
        if task >= b - a:
            break
        i = a + task
        if not active[i]:
            continue
        n_k = n_drawn[i]
        sz = size[i]
        m = n_sub if big[i] else sz
        subs = sub_buf[:n_k * m]
        if big[i]:  # back to draw order, as the draws made them
            for p in range(pair_off[i], pair_off[i] + n_k * n_sub):
                subs[pair_dest[p]] = values[val_off[i] + p - pair_off[i]]
        else:
            for q in range(sz):
                for k in range(n_k):
                    subs[k * m + q] = values[val_off[i] + q * n_k + k]
        for k in range(n_k):
            sub = subs[k * m:(k + 1) * m]
            sort_float32(sub, keys, spare, digit_counts)
            if sub[0] == sub[m - 1]:
                continue  # constant on the subsample: no useful threshold
            state = derive(seed, dags[i], level, positions[i], (THRESHOLD_STREAM << 32) + k)
            if big[i]:
                state = advance(state, n_sub)  # past the subsample draws
            n_thr[i, k] = quantile_thresholds(sub, state, thresholds[i, k])
        if not count:
            continue
        ns = _columns(P, i, column, classes)
        if keep_table:
            node_counts = flat_table
            layout = _layout(i * n_cand * n_t * n_classes, n_k, n_t, n_classes, True)
        elif big[i]:
            node_counts = counts
            layout = _layout(count_off[i], n_k, n_t, n_classes, False)
        else:
            node_counts = scratch
            layout = _layout(0, n_k, n_t, n_classes, False)
        if not keep_table:
            node_counts[layout[0]:layout[0] + ns * n_k * n_t] = 0
        if big[i]:
            continue  # counted in pass 2
        _by_threshold(thresholds, i, n_k, by_threshold)
        for q in range(sz):
            e = order[lo[i] + q]
            _count_sample(node_counts, layout, _class_base(layout, column[label[
                entry_sample[e]]], classes), n_k, thresholds, by_threshold, n_thr, i,
                values, val_off[i] + q * n_k, entry_weight[e], bins)
        _finalise(i, node_counts, layout, ns, classes, n_k, n_thr, P, keep_table, table,
                  wl, tree_cost, cand_t, cand_cost, left_buf, w_left_buf, parent_buf,
                  costs_buf, min_leaf, phi_table, criterion)


def _count_batch(slots, slot_start, big_rows, entries, n_drawn, stride, buffer, thresholds,
                 n_thr, entry_sample, entry_weight, label, P, counts, count_off, last,
                 keep_table, table, wl, tree_cost, cand_t, cand_cost, min_leaf, phi_table,
                 criterion, n_workers):
    """Pass 2 counting, node by node: bin and count the batch's responses; after the
    ``last`` batch, finalise the node."""
    run_workers(_count_batch_worker, n_workers, slots, slot_start, big_rows, entries, n_drawn,
                stride, buffer, thresholds, n_thr, entry_sample, entry_weight, label, P, counts,
                count_off, last, keep_table, table, wl, tree_cost, cand_t, cand_cost, min_leaf,
                phi_table, criterion, n_workers)


@njit(cache=True, nogil=True)
def _count_batch_worker(slots, slot_start, big_rows, entries, n_drawn, stride, buffer,
                        thresholds, n_thr, entry_sample, entry_weight, label, P, counts,
                        count_off, last, keep_table, table, wl, tree_cost, cand_t, cand_cost,
                        min_leaf, phi_table, criterion, n_workers, counter):
    """One worker of :func:`_count_batch`: claims tasks from ``counter``."""
    n_cand = thresholds.shape[1]
    n_t = thresholds.shape[2]
    n_classes = P.shape[1]
    flat_table = table.reshape(-1)
    column, classes, left_buf, w_left_buf, parent_buf, costs_buf = _finalise_scratch(
        n_classes, n_t)
    by_threshold, bins = _count_scratch(n_cand, n_t)
    while True:
        t = claim(counter)
        if t >= big_rows.shape[0]:
            break
        if slot_start[t] == slot_start[t + 1] and not last:
            continue
        i = big_rows[t]
        n_k = n_drawn[i]
        ns = _columns(P, i, column, classes)
        node_counts = flat_table if keep_table else counts
        layout = _layout(i * n_cand * n_t * n_classes if keep_table else count_off[i], n_k,
                         n_t, n_classes, keep_table)
        _by_threshold(thresholds, i, n_k, by_threshold)
        for slot in range(slot_start[t], slot_start[t + 1]):
            e = entries[slots[slot]]
            _count_sample(node_counts, layout, _class_base(layout, column[label[
                entry_sample[e]]], classes), n_k, thresholds, by_threshold, n_thr, i,
                buffer, slot * stride, entry_weight[e], bins)
        if last:
            _finalise(i, node_counts, layout, ns, classes, n_k, n_thr, P, keep_table,
                      table, wl, tree_cost, cand_t, cand_cost, left_buf, w_left_buf,
                      parent_buf, costs_buf, min_leaf, phi_table, criterion)


def finalise_tables(counts, n_drawn, n_thr, P, keep_table, table, wl, tree_cost, cand_t,
                    cand_cost, min_leaf, phi_table, criterion, n_workers):
    """Best thresholds and costs of every node row from its bin counts ``counts[i, k, t,
    c]`` (as a data-parallel level sums them, :mod:`._sharded`); with ``keep_table``,
    ``table`` is ``counts``, cumulated in place into left histograms, with left weights
    and tree costs."""
    run_workers(_finalise_tables_worker, n_workers, counts, n_drawn, n_thr, P, keep_table,
                table, wl, tree_cost, cand_t, cand_cost, min_leaf, phi_table, criterion,
                n_workers)


@njit(cache=True, nogil=True)
def _finalise_tables_worker(counts, n_drawn, n_thr, P, keep_table, table, wl, tree_cost, cand_t,
                            cand_cost, min_leaf, phi_table, criterion, n_workers, counter):
    """One worker of :func:`finalise_tables`: claims tasks from ``counter``."""
    n_cand, n_t, n_classes = counts.shape[1], counts.shape[2], counts.shape[3]
    flat = counts.reshape(-1)
    column, classes, left_buf, w_left_buf, parent_buf, costs_buf = _finalise_scratch(
        n_classes, n_t)
    while True:
        i = claim(counter)
        if i >= counts.shape[0]:
            break
        ns = _columns(P, i, column, classes)
        layout = _layout(i * n_cand * n_t * n_classes, n_drawn[i], n_t, n_classes, True)
        _finalise(i, flat, layout, ns, classes, n_drawn[i], n_thr, P, keep_table, table,
                  wl, tree_cost, cand_t, cand_cost, left_buf, w_left_buf, parent_buf,
                  costs_buf, min_leaf, phi_table, criterion)


def _waves(nbytes: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Consecutive node rows whose buffers stay within ``budget`` bytes (at least one row
    each)."""
    waves, first, total = [], 0, 0
    for i, size in enumerate(nbytes.tolist()):
        if total and total + size > budget:
            waves.append((first, i))
            first, total = i, 0
        total += size
    if first < nbytes.size:
        waves.append((first, nbytes.size))
    return waves


def split_tables(nodes, order, start, entry_sample, entry_weight, visit, s_image, s_row,
                 s_col, label, store, unclamped, kinds, params, n_drawn, seed, dags, positions,
                 level, n_thresholds, n_subsample, P, keep_table, min_leaf, phi_table,
                 criterion):
    """Left class histograms of every (node, candidate, threshold); the passes visit the
    entries in the order of ``visit`` (:attr:`._entries.Entries.in_sample_order`).

    A candidate's thresholds are drawn at stratified random quantiles of its responses
    on a random subsample of the node's entries (no more thresholds than gaps in the
    subsample); a sample goes left when its response is below the threshold.
    Returns (thresholds, table, left weights, tree costs, best threshold of each
    candidate, its cost). Tree levels need only the best threshold, so the tables
    (left histograms, weights and the tree cost of each threshold) are allocated and
    filled only when ``keep_table`` is set (LSearch levels). Counting is done over the
    classes the node holds only.
    """
    n, n_cand = kinds.shape[0], kinds.shape[1]
    n_classes = P.shape[1]
    n_t = int(n_thresholds)
    n_sub = int(n_subsample)
    shift = n_sub.bit_length() - 1
    if n_sub < 1 or n_sub != 1 << shift:
        raise ValueError(f"n_subsample must be a power of two, got {n_sub}")
    thresholds = np.full((n, n_cand, n_t), np.nan, np.float32)
    n_thr = np.zeros((n, n_cand), np.int32)
    n_kept = n if keep_table else 0
    table = np.zeros((n_kept, n_cand, n_t, n_classes), np.int32)
    wl = np.zeros((n_kept, n_cand, n_t), np.int64)
    tree_cost = np.full((n_kept, n_cand, n_t), np.inf)
    cand_t = np.full((n, n_cand), -1, np.int64)
    cand_cost = np.full((n, n_cand), np.inf)
    params = np.ascontiguousarray(params).reshape(n * n_cand, -1)  # row i * n_cand + k
    lo = start[nodes]
    size = start[nodes + 1] - lo
    n_drawn = np.asarray(n_drawn, np.int64)
    active = (size >= 2) & (n_drawn > 0)
    big = active & (size > n_sub)
    n_values = np.where(active, np.minimum(size, n_sub), 0) * n_drawn
    n_counts = np.where(big & (not keep_table), (P > 0).sum(axis=1) * n_drawn * n_t, 0)
    nbytes = 4 * n_values + big * (4 * n_values + 8 * (size + 1)) + 4 * n_counts + 24 * size
    entry_row = np.full(entry_sample.shape[0], -1, np.int64)
    entry_pos = np.empty(entry_sample.shape[0], np.int64)
    # an LSearch level's tables dwarf the buffers of all its nodes: one wave then
    for a, b in _waves(nbytes, max(_WAVE_BYTES, table.nbytes)):
        rows = np.arange(a, b)
        big_rows = rows[big[a:b]]
        val_off = _offsets(n_values, rows, n)
        pair_off = _offsets(n_values, big_rows, n)
        pos_off = _offsets(size + 1, big_rows, n)
        count_off = _offsets(n_counts, big_rows, n)
        values = np.empty(int(n_values[rows].sum()), np.float32)
        pair_start = np.empty(int((size[big_rows] + 1).sum()), np.int64)
        pair_dest = np.empty(int(n_values[big_rows].sum()), np.int32)
        counts = np.empty(int(n_counts[big_rows].sum()), np.int32)
        entries, e_rows, e_pos = wave_entries(order, lo, size, active, a, b, entry_row,
                                               entry_pos, visit)
        with threads(workers_for(n_sub * n_drawn[big_rows].sum())):
            draw_subsamples(big_rows, size, n_drawn, seed, dags, positions, level, n_sub,
                             pos_off, pair_off, pair_start, pair_dest,
                             numba.get_num_threads())
        is_big = big[e_rows]
        cost = n_drawn[e_rows]
        at = pos_off[e_rows[is_big]] + e_pos[is_big]
        cost[is_big] = pair_start[at + 1] - pair_start[at]
        with threads(workers_for(values.size)):
            workers = numba.get_num_threads()
            bounds = split_by_cost(cost, workers * TASKS_PER_WORKER)
            evaluate_subsamples(entries, e_rows, e_pos, bounds, big, n_drawn, val_off,
                                 pos_off, pair_off, pair_start, pair_dest, shift, entry_sample,
                                 s_image,
                                 s_row, s_col, store, unclamped, kinds, params, values, workers)
            _thresholds(a, b, active, big, lo, size, n_drawn, n_sub, val_off, pair_off,
                        pair_dest, values, seed, dags, positions, level, True, order,
                        entry_sample, entry_weight, label, P, thresholds, n_thr, counts, count_off,
                        keep_table, table, wl, tree_cost, cand_t, cand_cost, min_leaf,
                        phi_table, criterion, workers)
        if big_rows.size == 0:
            continue
        del pair_start, pair_dest
        _count_pass(np.flatnonzero(is_big), big_rows, entries, e_rows, values, n_drawn,
                    entry_sample, entry_weight, s_image, s_row, s_col, label, store, unclamped,
                    kinds, params, thresholds, n_thr, P, counts, count_off, True, keep_table,
                    table, wl, tree_cost, cand_t, cand_cost, min_leaf, phi_table, criterion)
    return thresholds, table, wl, tree_cost, cand_t, cand_cost


def _count_pass(in_big, big_rows, entries, e_rows, buffer, n_drawn, entry_sample,
                entry_weight, s_image, s_row, s_col, label, store, unclamped, kinds, params,
                thresholds, n_thr, P, counts, count_off, finalise, keep_table, table, wl,
                tree_cost, cand_t, cand_cost, min_leaf, phi_table, criterion) -> None:
    """Pass 2: the wave entries ``in_big`` (of nodes ``big_rows``, in visit order) evaluate
    every candidate of their node in batches that fill ``buffer``, and are counted, node
    by node, into ``counts`` (or with ``keep_table`` into ``table``, whole classes); with
    ``finalise``, each node's best thresholds and costs follow its last batch."""
    n = kinds.shape[0]
    stride = int(n_drawn[big_rows].max())
    capacity = max(1, buffer.size // stride)
    row_rank = np.zeros(n, np.int64)
    row_rank[big_rows] = np.arange(big_rows.size)
    n_batches = -(-in_big.size // capacity)
    for bt in range(n_batches):
        batch = in_big[bt * capacity:(bt + 1) * capacity]
        slots, slot_of, slot_start = batch_slots(batch, e_rows, big_rows, row_rank)
        with threads(workers_for(batch.size * stride)):
            workers = numba.get_num_threads()
            evaluate_batch(batch, slot_of, entries, e_rows, n_drawn, stride, entry_sample,
                           s_image, s_row, s_col, store, unclamped, kinds, params, buffer,
                           workers)
            _count_batch(slots, slot_start, big_rows, entries, n_drawn, stride, buffer,
                         thresholds, n_thr, entry_sample, entry_weight, label, P, counts,
                         count_off, finalise and bt == n_batches - 1, keep_table, table, wl,
                         tree_cost, cand_t, cand_cost, min_leaf, phi_table, criterion, workers)


def _offsets(amounts: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Per node row, where its share of a buffer holding ``amounts[rows]`` one after the
    other starts (0 for rows not in ``rows``)."""
    offsets = np.zeros(n, np.int64)
    offsets[rows] = np.cumsum(amounts[rows]) - amounts[rows]
    return offsets

