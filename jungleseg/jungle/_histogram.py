"""Split tables of tabular training on bin codes, from histograms of the codes.

:class:`jungleseg.JungleClassifier` trains on uint8 bin codes (:mod:`..features._bins`),
held column by column. The split tables are the same as :func:`._tables.split_tables`
makes (the same candidates, thresholds drawn from the same streams at the same
quantiles, the same counts, so the same model), but built node by node in one task each,
from the codes:

- a candidate's subsample (every code of a node with at most ``n_subsample`` entries,
  else the codes of that many draws) is sorted by counting its codes, a histogram of at
  most 256 bins, and the thresholds are drawn from it (:func:`._tables.quantile_thresholds`);
- a code's place among the candidate's T sorted thresholds is read from a table of the
  codes the subsample spans (the thresholds lie within it), built in one walk along
  codes and thresholds together, so each (entry, candidate) costs one read of a byte
  and one increment of its (threshold bin, class) count, whatever T is; the left
  histogram of every threshold is then the cumulative count (:func:`._tables._finalise`).

Nodes are independent tasks claimed by the workers (:mod:`jungleseg._workers`), and
counts are integers, so the tables do not depend on the thread count.
"""
import numba
import numpy as np
from numba import njit

from .._rng import derive, next_below
from .._workers import claim, run_workers, threads, workers_for
from ._evaluation import THRESHOLD_STREAM
from ._tables import (
    _class_base,
    _columns,
    _finalise,
    _finalise_scratch,
    _layout,
    quantile_thresholds,
)

#: Distinct codes of a column at most (``max_bins`` is at most 256).
N_CODES = 256


def code_tables(nodes, order, start, entry_sample, entry_weight, s_row, label, codes, params,
                n_drawn, seed, dags, positions, level, n_thresholds, n_subsample, P,
                keep_table, min_leaf, phi_table, criterion, table_buffer=None):
    """:func:`._tables.split_tables` of tabular candidates on bin codes.

    ``codes[j, r]`` is the code of column j at row r (a sample's row is ``s_row``); a
    candidate's column is ``params[i, k, 0]``. Returns (thresholds, table, left weights,
    tree costs, best threshold of each candidate, its cost), as ``split_tables`` does.
    With ``keep_table``, the table is a view of ``table_buffer`` (int32) when that is
    large enough: a training reuses one buffer over its merging levels, which spares the
    writing of fresh memory each level (the table is the level's largest array).
    """
    n, n_cand = params.shape[0], params.shape[1]
    n_classes = P.shape[1]
    n_t = int(n_thresholds)
    thresholds = np.full((n, n_cand, n_t), np.nan, np.float32)
    n_thr = np.zeros((n, n_cand), np.int32)
    n_kept = n if keep_table else 0
    shape = (n_kept, n_cand, n_t, n_classes)
    need = n_kept * n_cand * n_t * n_classes
    if table_buffer is not None and table_buffer.size >= need:
        table = table_buffer[:need].reshape(shape)  # zeroed node by node by the workers
    else:
        table = np.empty(shape, np.int32)
    wl = np.zeros((n_kept, n_cand, n_t), np.int64)
    tree_cost = np.full((n_kept, n_cand, n_t), np.inf)
    cand_t = np.full((n, n_cand), -1, np.int64)
    cand_cost = np.full((n, n_cand), np.inf)
    lo = start[nodes]
    size = start[nodes + 1] - lo
    columns = np.ascontiguousarray(params[:, :, 0]).astype(np.int64)
    n_drawn = np.asarray(n_drawn, np.int64)
    with threads(workers_for(int((size * n_drawn).sum()))):
        run_workers(_code_tables_worker, numba.get_num_threads(), lo, size, order, entry_sample,
                    entry_weight, s_row, label, codes, columns, n_drawn, seed, dags,
                    positions, level, int(n_subsample), P, keep_table, table, wl, tree_cost,
                    thresholds, n_thr, cand_t, cand_cost, min_leaf, phi_table, criterion)
    return thresholds, table, wl, tree_cost, cand_t, cand_cost


@njit(cache=True, nogil=True)
def _code_tables_worker(lo, size, order, entry_sample, entry_weight, s_row, label, codes,
                        columns, n_drawn, seed, dags, positions, level, n_sub, P, keep_table,
                        table, wl, tree_cost, thresholds, n_thr, cand_t, cand_cost, min_leaf,
                        phi_table, criterion, counter):
    """One worker of :func:`code_tables`: claims nodes from ``counter``."""
    n, n_cand, n_t = thresholds.shape
    n_classes = P.shape[1]
    flat_table = table.reshape(-1)
    largest = 0
    for i in range(n):
        largest = max(largest, size[i])
    row = np.empty(largest, np.int64)
    base = np.empty(largest, np.int64)
    weight = np.empty(largest, np.int64)
    code = np.empty(largest, np.uint8)
    sub = np.empty(n_sub, np.float32)  # a subsample: at most n_sub codes
    histogram = np.zeros(N_CODES, np.int64)
    place = np.empty(N_CODES, np.int64)
    scratch = np.empty(0 if keep_table else n_classes * n_cand * n_t, np.int32)
    column, classes, left_buf, w_left_buf, parent_buf, costs_buf = _finalise_scratch(
        n_classes, n_t)
    while True:
        i = claim(counter)
        if i >= n:
            break
        sz = size[i]
        n_k = n_drawn[i]
        block = n_cand * n_t * n_classes
        if keep_table:
            flat_table[i * block:(i + 1) * block] = 0
        if sz < 2 or n_k == 0:
            continue
        ns = _columns(P, i, column, classes)
        if keep_table:
            counts = flat_table
            layout = _layout(i * block, n_k, n_t, n_classes, True)
        else:
            counts = scratch
            layout = _layout(0, n_k, n_t, n_classes, False)
            counts[:ns * n_k * n_t] = 0
        _, sk, st, _, _ = layout
        for q in range(sz):
            e = order[lo[i] + q]
            s = entry_sample[e]
            row[q] = s_row[s]
            base[q] = _class_base(layout, column[label[s]], classes)
            weight[q] = entry_weight[e]
        big = sz > n_sub
        m = n_sub if big else sz
        for k in range(n_k):
            values = codes[columns[i, k]]
            for q in range(sz):
                code[q] = values[row[q]]
            state = derive(seed, dags[i], level, positions[i], (THRESHOLD_STREAM << 32) + k)
            first = N_CODES
            last = -1
            if big:  # the draws of split_tables' subsample, from the same stream
                for _r in range(n_sub):
                    state, j = next_below(state, sz)
                    c = code[j]
                    histogram[c] += 1
                    first = min(first, c)
                    last = max(last, c)
            else:
                for q in range(sz):
                    c = code[q]
                    histogram[c] += 1
                    first = min(first, c)
                    last = max(last, c)
            x = 0
            for c in range(first, last + 1):  # the sorted subsample, from its codes' counts
                for _ in range(histogram[c]):
                    sub[x] = c
                    x += 1
                histogram[c] = 0
            if first == last:
                continue  # constant on the subsample: no useful threshold
            thr = thresholds[i, k]
            n_t_k = quantile_thresholds(sub[:m], state, thr)
            n_thr[i, k] = n_t_k
            p = 0
            for c in range(first, last + 1):  # thresholds <= c: a code's bin among them
                while p < n_t_k and thr[p] <= c:
                    p += 1
                place[c] = p
            offset = k * sk
            for q in range(sz):
                c = code[q]
                if c <= last:  # above the subsample, a code is right of every threshold
                    b = place[c] if c >= first else 0
                    if b < n_t_k:
                        counts[base[q] + offset + b * st] += weight[q]
        _finalise(i, counts, layout, ns, classes, n_k, n_thr, P, keep_table, table, wl,
                  tree_cost, cand_t, cand_cost, left_buf, w_left_buf, parent_buf, costs_buf,
                  min_leaf, phi_table, criterion)
