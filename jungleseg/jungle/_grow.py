"""Level-wise growth of an ensemble of DAGs (all DAGs advance one level at a time).

Training data are *entries*: (sample, weight) pairs, concatenated over DAGs, so that
each DAG may have its own samples or bootstrap multiplicities. At each level every
entry sits in one node; the kernels here

1. group entries by node and count class histograms,
2. draw candidate features per splittable node and build, per (node, candidate), the
   left class histogram of every threshold (the only step that reads pixels),
3. pick each node's best tree split, then run LSearch per DAG where the level is
   narrower than twice its parents (``_lsearch``),
4. route entries to the children.

Random draws come from streams keyed by (seed, dag, level, node position in its DAG's
level, stream), so the model does not depend on the thread count.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numba
import numpy as np
from numba import njit, prange

from .._rng import derive
from .._workers import TASKS_PER_WORKER, claim, threads, workers_for
from ..features import FeatureFamily, Samples
from ..features._kernels import at_sample, draw_candidates, response_at
from ._criterion import make_phi_table
from ._dag import DAG
from ._entries import Entries
from ._lsearch import optimise_level
from ._schedules import level_width
from ._tables import THRESHOLD_SUBSAMPLE, best_candidates, split_tables

_DRAW_STREAM = 2

#: ``progress(level, n_nodes)``, called after each level; raising from it stops training.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class GrowParams:
    """Everything the level-wise trainer needs besides data (see JungleClassifier)."""

    n_classes: int
    max_width: int | None = 256
    schedule: str = "doubling"
    max_depth: int = 20
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    criterion: int = 0
    n_candidates: int = 16
    n_thresholds: int = 16
    lsearch_steps: int = 250
    stochastic: bool = False
    seed: int = 0


@dataclass
class GrowStats:
    """Where training time went, the objective per level (summed over DAGs), and how many
    (sample, candidate) feature evaluations the split tables took."""

    seconds: dict = field(default_factory=lambda: {"features": 0.0, "lsearch": 0.0, "route": 0.0})
    objective: list = field(default_factory=list)
    evaluations: int = 0


@njit(cache=True)
def group_by_node(entry_node, n_nodes):
    """Counting sort of entries by node: node i holds ``order[start[i]:start[i + 1]]``.

    Entries with node -1 (retired at a leaf) are left out.
    """
    start = np.zeros(n_nodes + 1, np.int64)
    for e in range(entry_node.shape[0]):
        if entry_node[e] >= 0:
            start[entry_node[e] + 1] += 1
    for i in range(n_nodes):
        start[i + 1] += start[i]
    fill = start[:-1].copy()
    order = np.empty(start[n_nodes], np.int64)
    for e in range(entry_node.shape[0]):
        node = entry_node[e]
        if node >= 0:
            order[fill[node]] = e
            fill[node] += 1
    return order, start


@njit(parallel=True, cache=True, nogil=True)
def node_histograms(order, start, entry_sample, entry_weight, label, n_classes):
    """Weighted class histogram of every node."""
    n_nodes = start.shape[0] - 1
    hist = np.zeros((n_nodes, n_classes), np.int64)
    for i in prange(n_nodes):
        for q in range(start[i], start[i + 1]):
            e = order[q]
            hist[i, label[entry_sample[e]]] += entry_weight[e]
    return hist


@njit(parallel=True, cache=True, nogil=True)
def draw_all(spec, seed, dags, positions, level, n_candidates, n_params):
    """Candidate features of every splittable node, each from its own stream."""
    n = dags.shape[0]
    kinds = np.zeros((n, n_candidates), np.uint8)
    params = np.zeros((n, n_candidates, n_params), np.float32)
    n_drawn = np.zeros(n, np.int64)
    for i in prange(n):
        state = derive(seed, dags[i], level, positions[i], _DRAW_STREAM << 32)
        n_drawn[i] = draw_candidates(spec, state, kinds[i], params[i])
    return kinds, params, n_drawn


@njit(parallel=True, cache=True, nogil=True)
def route(entry_node, node_row, entry_sample, s_image, s_row, s_col, store, unclamped, kind,
          params, threshold, left, right, n_workers):
    """Send each entry of a split node (``node_row[node]``: its row in the split arrays, -1
    if it did not split) to its left or right child (global ids); other entries retire
    (-1). Entries are visited in entry order, image by image; where an entry goes depends
    on its own response only."""
    pixels, _, _, _, _, _, integral, integral_offset = store
    n = entry_node.shape[0]
    new_node = np.full(n, -1, np.int64)
    n_tasks = min(n, n_workers * TASKS_PER_WORKER)
    counter = np.zeros(1, np.int64)
    for _ in prange(n_workers):
        while True:
            task = claim(counter)
            if task >= n_tasks:
                break
            for e in range(task * n // n_tasks, (task + 1) * n // n_tasks):
                if entry_node[e] < 0 or node_row[entry_node[e]] < 0:
                    continue
                i = node_row[entry_node[e]]
                s = entry_sample[e]
                v = response_at(kind[i], params, i, pixels, integral, integral_offset,
                                at_sample(store, s_image[s], s_row[s], s_col[s]), unclamped)
                new_node[e] = left[i] if v < threshold[i] else right[i]
    return new_node


def grow(store: tuple, samples: Samples, family: FeatureFamily, entries: Entries,
         params: GrowParams, progress: Progress | None = None, unclamped: bool = False) -> tuple[list[DAG], GrowStats]:
    """Grow one DAG per DAG of ``entries``, level by level.

    ``samples`` has ``image, row, col`` and ``label`` (0..n_classes-1) arrays;
    ``store`` is an ImageStore tuple and ``family`` the feature family that drew it.
    ``progress(level, n_nodes)`` is called after each level; an exception it raises stops
    training (how a GUI cancels). ``unclamped`` reads probes without clamping them to the
    image: only for families whose candidates are point kinds (``point_reach`` not None)
    on a store padded at least that far.
    """
    p = params
    spec, n_params = family.spec(), family.n_params
    entry_sample, entry_weight, entry_dag = entries.sample, entries.weight, entries.dag
    n_dags = entries.n_dags
    label = samples.label
    max_weight = int(np.bincount(entry_dag, weights=entry_weight).max())
    if max_weight >= 2**31:
        raise ValueError("a DAG's total sample weight must stay below 2^31")
    phi_table = make_phi_table(max_weight, p.criterion)
    stats = GrowStats()
    entry_node = entry_dag.astype(np.int64)  # level 0: node g is the root of DAG g
    node_dag = np.arange(n_dags, dtype=np.int64)
    levels = []
    for depth in range(p.max_depth + 1):
        t0 = time.perf_counter()
        n_nodes = node_dag.shape[0]
        order, start = group_by_node(entry_node, n_nodes)
        with threads(workers_for(order.shape[0])):
            hist = node_histograms(order, start, entry_sample, entry_weight, label, p.n_classes)
        weight = hist.sum(axis=1)
        splittable = (
            (depth < p.max_depth)
            & (weight >= max(p.min_samples_split, 2 * p.min_samples_leaf))
            & ((hist > 0).sum(axis=1) > 1)
        )
        level = {"dag": node_dag, "hist": hist, "split": np.zeros(n_nodes, bool)}
        levels.append(level)
        nodes = np.flatnonzero(splittable)
        if nodes.size == 0:
            break
        dag_first = np.searchsorted(node_dag, np.arange(n_dags))
        positions = nodes - dag_first[node_dag[nodes]]
        dags = node_dag[nodes]
        with threads(workers_for(nodes.size * p.n_candidates * 64)):
            kinds, cand_params, n_drawn = draw_all(spec, p.seed, dags, positions, depth,
                                                   p.n_candidates, n_params)
        n_children = level_width(p.schedule, p.max_width, depth + 1)
        most_parents = int(np.bincount(dags, minlength=n_dags).max())
        keep_table = n_children < 2 * most_parents  # some DAG must merge: LSearch
        thresholds, table, wl, tree_cost, cand_t, cand_cost = split_tables(
            nodes, order, start, entry_sample, entry_weight, samples.image, samples.row,
            samples.col, label, store, unclamped, kinds, cand_params, n_drawn, p.seed, dags,
            positions, depth, p.n_thresholds, THRESHOLD_SUBSAMPLE, hist[nodes], keep_table,
            p.min_samples_leaf, phi_table, p.criterion)
        sizes = start[nodes + 1] - start[nodes]
        stats.evaluations += int((sizes * n_drawn)[sizes >= 2].sum())
        best_k, best_t, best_cost = best_candidates(cand_t, cand_cost)
        ok = np.isfinite(best_cost)
        if not ok.all():  # no valid split: these nodes stay leaves
            nodes, dags, kinds, cand_params, thresholds, best_k, best_t, best_cost = (
                a[ok] for a in (nodes, dags, kinds, cand_params, thresholds, best_k, best_t,
                                best_cost))
            if keep_table:  # in place: no second copy of the largest arrays
                table, wl, tree_cost = (_kept_rows(a, ok) for a in (table, wl, tree_cost))
        t1 = time.perf_counter()
        stats.seconds["features"] += t1 - t0
        if nodes.size == 0:
            break
        dag_start = np.searchsorted(dags, np.arange(n_dags + 1))
        n_children = min(n_children, 2 * int(np.diff(dag_start).max()))
        if keep_table:
            with threads(workers_for(table.size)):
                k, t, left, right, energy = optimise_level(
                    dag_start, np.arange(n_dags, dtype=np.int64), n_children, table, wl,
                    tree_cost, hist[nodes], best_k, best_t, p.lsearch_steps,
                    p.stochastic, p.seed, depth, phi_table, p.criterion, numba.get_num_threads())
            stats.objective.append(float(energy.sum()))
        else:  # a tree level: every parent gets two children of its own
            local = np.arange(nodes.size) - dag_start[dags]
            k, t, left, right = best_k, best_t, 2 * local, 2 * local + 1
            stats.objective.append(float(best_cost.sum()))
        del table, wl, tree_cost  # the largest arrays: gone before the next level's
        t2 = time.perf_counter()
        stats.seconds["lsearch"] += t2 - t1
        # children that received samples, numbered by (dag, child) in the next level
        keys = np.concatenate([dags * n_children + left, dags * n_children + right])
        used = np.unique(keys)
        left_id = np.searchsorted(used, dags * n_children + left)
        right_id = np.searchsorted(used, dags * n_children + right)
        rows = np.arange(nodes.size)
        kind_chosen = kinds[rows, k]
        params_chosen = cand_params[rows, k]
        thr_chosen = thresholds[rows, k, t]
        node_row = np.full(n_nodes, -1, np.int64)
        node_row[nodes] = rows
        with threads(workers_for(entry_node.shape[0])):
            entry_node = route(entry_node, node_row, entry_sample, samples.image, samples.row,
                               samples.col, store, unclamped, kind_chosen, params_chosen,
                               thr_chosen, left_id, right_id, numba.get_num_threads())
        level["split"][nodes] = True
        level.update(nodes=nodes, kind=kind_chosen, params=params_chosen,
                     threshold=thr_chosen, left=left_id, right=right_id)
        node_dag = used // n_children
        stats.seconds["route"] += time.perf_counter() - t2
        if progress is not None:
            progress(depth, int(used.size))
    return _assemble(levels, n_dags, n_params, p.n_classes), stats


def _kept_rows(array: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``array[keep]`` for a boolean ``keep``, moved to the front of ``array`` in place."""
    for j, i in enumerate(np.flatnonzero(keep)):
        if i != j:
            array[j] = array[i]
    return array[:int(keep.sum())]


def _assemble(levels: list[dict], n_dags: int, n_params: int, n_classes: int) -> list[DAG]:
    """Per-DAG flat arrays from the per-level records (global ids -> DAG-local ids)."""
    firsts = [np.searchsorted(lev["dag"], np.arange(n_dags + 1)) for lev in levels]
    dags = []
    for g in range(n_dags):
        counts = [int(f[g + 1] - f[g]) for f in firsts]
        while counts and counts[-1] == 0:
            counts.pop()
        level_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        n_nodes = int(level_start[-1])
        kind = np.zeros(n_nodes, np.uint8)
        prm = np.zeros((n_nodes, n_params), np.float32)
        threshold = np.zeros(n_nodes, np.float32)
        left = np.zeros(n_nodes, np.int32)
        right = np.zeros(n_nodes, np.int32)
        leaf_hists = []
        n_leaves = 0
        for d in range(len(counts)):
            lev, lo, hi = levels[d], int(firsts[d][g]), int(firsts[d][g + 1])
            base = int(level_start[d])
            split = lev["split"][lo:hi]
            leaves = np.flatnonzero(~split)
            leaf_ids = n_leaves + np.arange(leaves.size)
            left[base + leaves] = -1 - leaf_ids
            right[base + leaves] = -1 - leaf_ids
            leaf_hists.append(lev["hist"][lo + leaves])
            n_leaves += leaves.size
            if split.any():
                sel = (lev["nodes"] >= lo) & (lev["nodes"] < hi)
                local = lev["nodes"][sel] - lo + base
                child_base = int(level_start[d + 1]) - int(firsts[d + 1][g])
                kind[local] = lev["kind"][sel]
                prm[local] = lev["params"][sel]
                threshold[local] = lev["threshold"][sel]
                left[local] = lev["left"][sel] + child_base
                right[local] = lev["right"][sel] + child_base
        hists = np.concatenate(leaf_hists).astype(np.float64)
        leaf_value = (hists / hists.sum(axis=1, keepdims=True)).astype(np.float32)
        dags.append(DAG(level_start, kind, prm, threshold, left, right, leaf_value))
    return dags
