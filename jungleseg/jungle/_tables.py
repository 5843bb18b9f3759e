"""Split tables: the left class histogram of every (node, candidate, threshold).

Building them is the one step of training that reads data; everything after it
(tree splits, LSearch) is histogram arithmetic (``docs/design.md``, "Training one level").
A candidate's thresholds are drawn at stratified random quantiles of its responses on a
random subsample of the node's entries, from a stream keyed by (seed, DAG, level, node,
candidate), so the tables do not depend on the thread count.
"""
import numpy as np
from numba import njit, prange

from .._rng import derive, next_below, next_uniform
from ..features._kernels import sample_response
from ._criterion import g_of, phi

THRESHOLD_STREAM = 3
#: Responses per (node, candidate) among which thresholds are drawn.
THRESHOLD_SUBSAMPLE = 256
_SCRATCH_CHUNKS = 64  # chunks of split_tables jobs, each with its own scratch arrays


@njit(cache=True)
def best_threshold(left, wl, parent, min_leaf, phi_table, criterion, costs):
    """Best valid threshold of one candidate, from its left histograms ``left[t]``
    (weights ``wl[t]``) and the parent histogram (both may be restricted to the classes
    the parent holds). Writes each threshold's cost ``g(left) + g(right)`` (inf when a
    side keeps fewer than ``min_leaf`` samples) to ``costs``; returns the best (t, cost),
    or (-1, inf)."""
    w_parent = parent.sum()
    best = np.inf
    best_t = -1
    for t in range(wl.shape[0]):
        w = wl[t]
        costs[t] = np.inf
        if w < min_leaf or w_parent - w < min_leaf:
            continue
        s_left = 0.0
        s_right = 0.0
        for c in range(parent.shape[0]):
            s_left += phi(left[t, c], phi_table, criterion)
            s_right += phi(parent[c] - left[t, c], phi_table, criterion)
        cost = g_of(w, s_left, phi_table, criterion) + g_of(w_parent - w, s_right, phi_table,
                                                            criterion)
        costs[t] = cost
        if cost < best:
            best = cost
            best_t = t
    return best_t, best


@njit(parallel=True, cache=True, nogil=True)
def split_tables(nodes, order, start, entry_sample, entry_weight, s_image, s_row, s_col,
                 label, store, unclamped, kinds, params, n_drawn, seed, dags, positions,
                 level, n_thresholds, n_subsample, P, keep_table, min_leaf, phi_table,
                 criterion):
    """Left class histograms of every (node, candidate, threshold).

    A candidate's thresholds are drawn at stratified random quantiles of its responses
    on a random subsample of the node's entries (no more thresholds than gaps in the
    subsample); a sample goes left when its response is below the threshold.
    Returns (thresholds, table, left weights, tree costs, best threshold of each
    candidate, its cost). Tree levels need only the best threshold, so the tables
    (left histograms, weights and the tree cost of each threshold) are allocated and
    filled only when ``keep_table`` is set (LSearch levels). Counting is done over the
    classes the node holds only.
    """
    n = nodes.shape[0]
    n_cand = kinds.shape[1]
    n_classes = P.shape[1]
    thresholds = np.full((n, n_cand, n_thresholds), np.nan, np.float32)
    n_kept = n if keep_table else 0
    table = np.zeros((n_kept, n_cand, n_thresholds, n_classes), np.int32)
    wl = np.zeros((n_kept, n_cand, n_thresholds), np.int64)
    tree_cost = np.full((n_kept, n_cand, n_thresholds), np.inf)
    cand_t = np.full((n, n_cand), -1, np.int64)
    cand_cost = np.full((n, n_cand), np.inf)
    largest = 0
    for i in range(n):
        largest = max(largest, start[nodes[i] + 1] - start[nodes[i]])
    n_jobs = n * n_cand
    n_chunks = min(n_jobs, _SCRATCH_CHUNKS)
    for chunk in prange(n_chunks):
        # scratch arrays once per chunk of jobs, not per job: many jobs are small nodes
        resp_buf = np.empty(largest, np.float32)
        sub_buf = np.empty(min(largest, max(n_subsample, 1)), np.float32)
        column = np.empty(n_classes, np.int64)
        classes = np.empty(n_classes, np.int64)
        bins_buf = np.empty((n_thresholds + 1, n_classes), np.int64)
        left_buf = np.empty((n_thresholds, n_classes), np.int64)
        w_left_buf = np.empty(n_thresholds, np.int64)
        parent_buf = np.empty(n_classes, np.int64)
        costs_buf = np.empty(n_thresholds)
        for job in range(chunk * n_jobs // n_chunks, (chunk + 1) * n_jobs // n_chunks):
            i = job // n_cand
            k = job % n_cand
            lo = start[nodes[i]]
            size = start[nodes[i] + 1] - lo
            if k >= n_drawn[i] or size < 2:
                continue
            kind = kinds[i, k]
            prm = params[i, k]
            resp = resp_buf[:size]
            for q in range(size):
                s = entry_sample[order[lo + q]]
                resp[q] = sample_response(kind, prm, store, s_image[s], s_row[s], s_col[s],
                                          unclamped)
            state = derive(seed, dags[i], level, positions[i], (THRESHOLD_STREAM << 32) + k)
            if size <= n_subsample:
                sub = sub_buf[:size]
                sub[:] = resp
            else:
                sub = sub_buf[:n_subsample]
                for q in range(n_subsample):
                    state, j = next_below(state, size)
                    sub[q] = resp[j]
            sub.sort()
            m = sub.shape[0]
            if sub[0] == sub[m - 1]:
                continue  # constant on the subsample: no useful threshold
            n_thr = min(n_thresholds, m - 1)
            thr = thresholds[i, k, :n_thr]
            for tt in range(n_thr):
                state, u = next_uniform(state)
                x = (tt + u) / n_thr * (m - 1)
                q = min(int(x), m - 2)
                thr[tt] = sub[q] + np.float32(x - q) * (sub[q + 1] - sub[q])
            thr.sort()
            # the node's classes, and each class's column in the compact counts
            ns = 0
            for c in range(n_classes):
                column[c] = -1
                if P[i, c] > 0:
                    column[c] = ns
                    classes[ns] = c
                    ns += 1
            bins = bins_buf[:n_thr + 1, :ns]
            bins[:] = 0
            for q in range(size):
                e = order[lo + q]
                bins[np.searchsorted(thr, resp[q], side="right"),
                     column[label[entry_sample[e]]]] += entry_weight[e]
            left = left_buf[:n_thr, :ns]
            w_left = w_left_buf[:n_thr]
            w_left[:] = 0
            parent = parent_buf[:ns]
            for c in range(ns):
                parent[c] = P[i, classes[c]]
                acc = 0
                for tt in range(n_thr):
                    acc += bins[tt, c]
                    left[tt, c] = acc
                    w_left[tt] += acc
            costs = costs_buf[:n_thr]
            cand_t[i, k], cand_cost[i, k] = best_threshold(left, w_left, parent, min_leaf,
                                                           phi_table, criterion, costs)
            if keep_table:
                for tt in range(n_thr):
                    wl[i, k, tt] = w_left[tt]
                    tree_cost[i, k, tt] = costs[tt]
                    for c in range(ns):
                        table[i, k, tt, classes[c]] = left[tt, c]
    return thresholds, table, wl, tree_cost, cand_t, cand_cost


@njit(cache=True)
def best_candidates(cand_t, cand_cost):
    """Each node's best (candidate, threshold): the first of least cost."""
    n = cand_t.shape[0]
    best_k = np.full(n, -1, np.int64)
    best_t = np.full(n, -1, np.int64)
    best = np.full(n, np.inf)
    for i in range(n):
        for k in range(cand_t.shape[1]):
            if cand_cost[i, k] < best[i]:
                best[i] = cand_cost[i, k]
                best_k[i] = k
                best_t[i] = cand_t[i, k]
    return best_k, best_t, best
