"""Growth of an ensemble of DAGs or trees (all DAGs advance one level at a time).

Training data are *entries*: (sample, weight) pairs, concatenated over DAGs, so that
each DAG may have its own samples or bootstrap multiplicities. At each level every
entry sits in one node; the kernels here

1. group entries by node and count class histograms,
2. draw candidate features per splittable node and build, per (node, candidate), the
   left class histogram of every threshold (the only step that reads pixels),
3. pick each node's best tree split, then run LSearch (``_lsearch``) or ClusterSearch
   (``_clustersearch``) per DAG where the level is narrower than twice its parents,
4. route entries to the children.

The tree baselines (``growth``, see ``_baselines``) change step 3 only: fixed-width trees
split a chosen part of each level, priority-scheduled trees keep their open leaves, at
any depth, in one queue (:mod:`._priority`). A priority tree is still stored level by
level: a node's level is its depth, and its children are one level deeper whenever it is
split, so the DAG format needs no other node kind.

Random draws come from streams keyed by (seed, dag, level, node position in its DAG's
level, stream), so the model does not depend on the thread count.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numba
import numpy as np
from numba import njit

from .._rng import derive
from .._workers import TASKS_PER_WORKER, claim, run_workers, threads, workers_for
from ..features._draws import draw_candidates
from ..features._kernels import FAMILY_TABULAR, at_sample, response_at
from ._assembly import level_record
from ._baselines import level_capacity, top_per_dag
from ._criterion import best_candidates, node_costs
from ._dgmml import dgmml_splits
from ._entries import Entries
from ._histogram import code_tables
from ._level_search import METHODS, optimise_level
from ._schedules import level_width
from ._spread import counts_in_spread, node_spread
from ._tables import THRESHOLD_SUBSAMPLE, split_tables

_DRAW_STREAM = 2

#: ``progress(level, n_nodes)``, called after each level (priority growth: each iteration);
#: raising from it stops training.
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
    search: str = "lsearch"  # lsearch, lsearch-stochastic, clustersearch(-alternating)
    cluster_moves: bool = True  # ClusterSearch: exact single moves after Lloyd
    growth: str = "jungle"  # or a tree baseline of _baselines.GROWTHS
    max_nodes: int | None = None  # priority growth: nodes per tree at most
    dgmml: bool = False  # each node's split proposed by dGMML (``_dgmml``), not searched
    seed: int = 0


@dataclass
class GrowStats:
    """Where training time went, the objective after each level or iteration (summed over
    DAGs), per DAG the ``_assembly.NodeRecords`` of its nodes (see ``prune``), and how many
    (sample, candidate) feature evaluations the split tables took."""

    seconds: dict = field(default_factory=lambda: {"features": 0.0, "lsearch": 0.0, "route": 0.0})
    objective: list = field(default_factory=list)
    nodes: list = field(default_factory=list)
    evaluations: int = 0
    merging: list = field(default_factory=list)  # per level: must some DAG merge there?
    table_bytes: list = field(default_factory=list)  # data-parallel: tables summed per wave


@dataclass(frozen=True)
class _Training:
    """The data and parameters every step of growth reads."""

    store: tuple
    samples: object
    entries: Entries
    spec: np.ndarray
    n_params: int
    params: GrowParams
    phi_table: np.ndarray
    unclamped: bool
    dag_ids: np.ndarray  # the global id of each DAG of ``entries`` (keys its random streams)
    merge: tuple  # levels that keep tables and search (LSearch) whatever these DAGs need
    scratch: dict = field(default_factory=dict)  # buffers reused from level to level

    def codes(self) -> np.ndarray | None:
        """:meth:`codes_of` this training's store."""
        return self.codes_of(self.store, self.spec)

    @staticmethod
    def codes_of(store: tuple, spec: np.ndarray) -> np.ndarray | None:
        """A tabular store's bin codes, ``codes[column, row]`` (uint8), which the split
        tables count by histogram (:mod:`._histogram`); None for other stores."""
        if store is None or spec[0] != FAMILY_TABULAR or store[0].dtype != np.uint8:
            return None
        return store[0].reshape(int(spec[1]), -1)


@dataclass(frozen=True)
class _Splits:
    """The best tree split of each evaluated node (rows), and its split tables if kept."""

    nodes: np.ndarray
    dags: np.ndarray
    kinds: np.ndarray
    params: np.ndarray
    thresholds: np.ndarray
    best_k: np.ndarray
    best_t: np.ndarray
    best_cost: np.ndarray
    table: np.ndarray
    wl: np.ndarray
    tree_cost: np.ndarray

    def subset(self, rows) -> _Splits:
        n = self.nodes.shape[0]
        return _Splits(*(a[rows] if a.shape[0] == n else a  # tables not kept: no rows
                         for a in (self.nodes, self.dags, self.kinds, self.params,
                                   self.thresholds, self.best_k, self.best_t, self.best_cost,
                                   self.table, self.wl, self.tree_cost)))

    def chosen(self, k, t) -> tuple:
        """(kind, parameters, threshold) of each row's split (k, t)."""
        rows = np.arange(self.nodes.size)
        return self.kinds[rows, k], self.params[rows, k], self.thresholds[rows, k, t]


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


@njit(cache=True, nogil=True)
def node_histograms(order, start, entry_sample, entry_weight, label, n_classes):
    """Weighted class histogram of every node."""
    n_nodes = start.shape[0] - 1
    hist = np.zeros((n_nodes, n_classes), np.int64)
    for i in range(n_nodes):
        for q in range(start[i], start[i + 1]):
            e = order[q]
            hist[i, label[entry_sample[e]]] += entry_weight[e]
    return hist


@njit(cache=True, nogil=True)
def draw_all(spec, seed, dags, positions, level, n_candidates, n_params):
    """Candidate features of every splittable node, each from its own stream."""
    n = dags.shape[0]
    kinds = np.zeros((n, n_candidates), np.uint8)
    params = np.zeros((n, n_candidates, n_params), np.float32)
    n_drawn = np.zeros(n, np.int64)
    for i in range(n):
        state = derive(seed, dags[i], level, positions[i], _DRAW_STREAM << 32)
        n_drawn[i] = draw_candidates(spec, state, kinds[i], params[i])
    return kinds, params, n_drawn


def route(entry_node, node_row, entry_sample, s_image, s_row, s_col, store, unclamped, kind,
          params, threshold, left, right, n_workers):
    """Send each entry of a split node (``node_row[node]``: its row in the split arrays, -1
    if it did not split) to its left or right child (global ids); other entries retire
    (-1). Entries are visited in entry order, image by image; where an entry goes depends
    on its own response only. Also returns each routed entry's response (NaN for others),
    from which :func:`._spread.node_spread` measures each split node's spread, and NaN
    for those :func:`._spread.counts_in_spread` leaves out of it."""
    n = entry_node.shape[0]
    new_node = np.full(n, -1, np.int64)
    response = np.full(n, np.nan, np.float32)
    run_workers(_route_worker, n_workers, entry_node, node_row, entry_sample, s_image, s_row,
                s_col, store, unclamped, kind, params, threshold, left, right,
                min(n, n_workers * TASKS_PER_WORKER), new_node, response)
    return new_node, response


@njit(cache=True, nogil=True)
def _route_worker(entry_node, node_row, entry_sample, s_image, s_row, s_col, store, unclamped,
                  kind, params, threshold, left, right, n_tasks, new_node, response, counter):
    """One worker of :func:`route`: claims ranges of entries from ``counter``."""
    pixels, _, _, _, _, _, integral, integral_offset = store
    n = entry_node.shape[0]
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
            if counts_in_spread(kind[i], v, threshold[i]):
                response[e] = v


def _best_splits(tr: _Training, stats: GrowStats, nodes, dags, positions, depth: int,
                 level: _Grouped, P, keep_table: bool) -> _Splits:
    """Draw candidates for ``nodes`` (global ids of ``level``) of level ``depth``, build
    their split tables and keep each node's best split; nodes without a valid split are
    left out (they stay leaves)."""
    p = tr.params
    streams = tr.dag_ids[dags]  # random streams are keyed by the global DAG id
    with threads(workers_for(nodes.size * p.n_candidates * 64)):
        kinds, cand_params, n_drawn = draw_all(tr.spec, p.seed, streams, positions, depth,
                                               p.n_candidates, tr.n_params)
    if p.dgmml:
        return _proposed_splits(tr, stats, nodes, dags, level.order, level.start, P,
                                keep_table, kinds, cand_params, n_drawn)
    thresholds, table, wl, tree_cost, cand_t, cand_cost = level.tables(
        nodes, streams, positions, depth, P, keep_table, kinds, cand_params, n_drawn)
    sizes = level.sizes(nodes)
    stats.evaluations += int((sizes * n_drawn)[sizes >= 2].sum())
    best_k, best_t, best_cost = best_candidates(cand_t, cand_cost)
    ok = np.isfinite(best_cost)
    if keep_table and not ok.all():  # in place: no second copy of the largest arrays
        table, wl, tree_cost = (_kept_rows(a, ok) for a in (table, wl, tree_cost))
    splits = _Splits(nodes, dags, kinds, cand_params, thresholds, best_k, best_t, best_cost,
                     table, wl, tree_cost)
    return splits if ok.all() else splits.subset(ok)


def _proposed_splits(tr: _Training, stats: GrowStats, nodes, dags, order, start, P,
                     keep_table: bool, kinds, cand_params, n_drawn) -> _Splits:
    """:func:`_best_splits` with dGMML's proposals: each node keeps one candidate and one
    threshold, and its table (kept for LSearch) holds that split's left histogram."""
    p, s = tr.params, tr.samples
    with threads(workers_for(int((start[nodes + 1] - start[nodes]).sum()) * p.n_candidates)):
        k, tau, left, wl, cost = dgmml_splits(
            nodes, order, start, tr.entries.sample, tr.entries.weight, s.image, s.row, s.col,
            s.label, tr.store, tr.unclamped, kinds,
            np.ascontiguousarray(cand_params).reshape(nodes.size * p.n_candidates, -1),
            n_drawn, P, p.min_samples_leaf, tr.phi_table, p.criterion)
    sizes = start[nodes + 1] - start[nodes]
    stats.evaluations += int((sizes * n_drawn)[sizes >= 2].sum())
    rows, kk, kept = np.arange(nodes.size), np.maximum(k, 0), int(keep_table) * nodes.size
    splits = _Splits(nodes, dags, kinds[rows, kk][:, None], cand_params[rows, kk][:, None],
                     tau.reshape(-1, 1, 1), 0 * rows, 0 * rows, cost,
                     left.astype(np.int32).reshape(-1, 1, 1, P.shape[1])[:kept],
                     wl.reshape(-1, 1, 1)[:kept], cost.reshape(-1, 1, 1)[:kept])
    return splits.subset(np.isfinite(cost))


class _Grouped:
    """A level's entries in this process, grouped by node (:func:`group_by_node`)."""

    def __init__(self, tr: _Training, order: np.ndarray, start: np.ndarray):
        self.tr, self.order, self.start = tr, order, start

    def sizes(self, nodes: np.ndarray) -> np.ndarray:
        """Entries of each of ``nodes``."""
        return self.start[nodes + 1] - self.start[nodes]

    def tables(self, nodes, streams, positions, depth: int, P, keep_table: bool, kinds,
               cand_params, n_drawn) -> tuple:
        """:func:`._tables.split_tables` of ``nodes``, whose candidates are drawn."""
        tr, p, s = self.tr, self.tr.params, self.tr.samples
        codes = tr.codes()
        if codes is not None:
            need = nodes.size * kinds.shape[1] * p.n_thresholds * p.n_classes * keep_table
            if tr.scratch.get("table", np.empty(0)).size < need:
                tr.scratch["table"] = np.empty(need, np.int32)
            return code_tables(nodes, self.order, self.start, tr.entries.sample,
                               tr.entries.weight, s.row, s.label, codes, cand_params, n_drawn,
                               p.seed, streams, positions, depth, p.n_thresholds,
                               THRESHOLD_SUBSAMPLE, P, keep_table, p.min_samples_leaf,
                               tr.phi_table, p.criterion, tr.scratch.get("table"))
        return split_tables(nodes, self.order, self.start, tr.entries.sample,
                            tr.entries.weight, tr.entries.in_sample_order, s.image, s.row,
                            s.col, s.label, tr.store, tr.unclamped, kinds, cand_params,
                            n_drawn, p.seed, streams, positions, depth, p.n_thresholds,
                            THRESHOLD_SUBSAMPLE, P, keep_table, p.min_samples_leaf,
                            tr.phi_table, p.criterion)


class _Local:
    """Level-wise growth's data in this process: which node each entry has reached."""

    def __init__(self, tr: _Training):
        self.tr = tr
        self.entry_node = tr.entries.dag.astype(np.int64)  # level 0: node g is DAG g's root
        self.level: _Grouped | None = None

    def histograms(self, n_nodes: int) -> tuple[np.ndarray, _Grouped]:
        """The class histogram of each of the level's nodes, and its entries by node."""
        tr = self.tr
        order, start = group_by_node(self.entry_node, n_nodes)
        with threads(workers_for(order.shape[0])):
            hist = node_histograms(order, start, tr.entries.sample, tr.entries.weight,
                                   tr.samples.label, tr.params.n_classes)
        self.level = _Grouped(tr, order, start)
        return hist, self.level

    def route(self, n_nodes: int, nodes, kind, params, threshold, left, right) -> np.ndarray:
        """Send the entries of the split ``nodes`` to their children (next level ids);
        returns each split node's spread."""
        self.entry_node, spread = _route(self.tr, self.entry_node, n_nodes, nodes, kind,
                                         params, threshold, left, right, self.level.order,
                                         self.level.start)
        return spread


def _kept_rows(array: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``array[keep]`` for a boolean ``keep``, moved to the front of ``array`` in place."""
    for j, i in enumerate(np.flatnonzero(keep)):
        if i != j:
            array[j] = array[i]
    return array[:int(keep.sum())]


def _route(tr: _Training, entry_node, n_nodes: int, nodes, kind, params, threshold, left,
           right, order, start):
    """New node of every entry of ``nodes`` (global ids below ``n_nodes``; ``order`` and
    ``start`` group the entries by node); -1 for all other entries. And the spread of each
    node's training responses (:func:`node_spread`); zeros on bin codes, whose spread a
    tabular model does not keep (its thresholds become raw values)."""
    node_row = np.full(n_nodes, -1, np.int64)
    node_row[nodes] = np.arange(nodes.size)
    s = tr.samples
    with threads(workers_for(entry_node.shape[0])):
        moved, response = route(entry_node, node_row, tr.entries.sample, s.image, s.row,
                                s.col, tr.store, tr.unclamped, kind, params, threshold, left,
                                right, numba.get_num_threads())
        if tr.codes() is not None:
            return moved, np.zeros(nodes.size, np.float32)
        return moved, node_spread(order, start, nodes, response, tr.entries.weight)


def _search_level(tr: _Training, sp: _Splits, P, dag_start, n_children: int, depth: int):
    """Splits and edges of a merging level: LSearch or ClusterSearch per DAG."""
    p = tr.params
    with threads(workers_for(sp.table.size)):
        return optimise_level(dag_start, tr.dag_ids,
                              n_children, sp.table, sp.wl, sp.tree_cost, P, sp.best_k,
                              sp.best_t, p.lsearch_steps, METHODS[p.search], p.cluster_moves,
                              p.seed, depth, tr.phi_table, p.criterion, numba.get_num_threads())


def _splittable(p: GrowParams, hist, depth) -> np.ndarray:
    weight = hist.sum(axis=1)
    return ((depth < p.max_depth)
            & (weight >= max(p.min_samples_split, 2 * p.min_samples_leaf))
            & ((hist > 0).sum(axis=1) > 1))


def _grow_levels(tr: _Training, stats: GrowStats, progress, data: _Local) -> list[dict]:
    """Jungles, standard trees and fixed-width trees: every DAG grows one level a step,
    on ``data``: the entries in this process (:class:`_Local`) or on shards, which hold
    what a level reads of them (:class:`._sharded.ShardedData`)."""
    p = tr.params
    n_dags = tr.dag_ids.size
    node_dag = np.arange(n_dags, dtype=np.int64)
    n_split = np.zeros(n_dags, np.int64)  # splits so far, per DAG
    levels = []
    for depth in range(p.max_depth + 1):
        t0 = time.perf_counter()
        n_nodes = node_dag.shape[0]
        hist, grouped = data.histograms(n_nodes)
        level = level_record(node_dag, hist)
        levels.append(level)
        nodes = np.flatnonzero(_splittable(p, hist, depth))
        n_children = level_width(p.schedule, p.max_width, depth + 1)
        energy = node_costs(hist, tr.phi_table, p.criterion)
        if p.growth == "fixed-width-a":  # only the most energetic leaves are split
            nodes = nodes[top_per_dag(energy[nodes], node_dag[nodes], level_capacity(n_children))]
        if nodes.size == 0:
            break
        dag_first = np.searchsorted(node_dag, np.arange(n_dags))
        dags = node_dag[nodes]
        most_parents = int(np.bincount(dags, minlength=n_dags).max())
        must_merge = p.growth == "jungle" and n_children < 2 * most_parents
        stats.merging.append(must_merge)
        keep_table = must_merge or (p.growth == "jungle" and depth < len(tr.merge)
                                    and tr.merge[depth])
        sp = _best_splits(tr, stats, nodes, dags, nodes - dag_first[dags], depth, grouped,
                          hist[nodes], keep_table)
        level["gain"][sp.nodes] = energy[sp.nodes] - sp.best_cost
        if p.growth == "fixed-width-b":  # only the splits that gain most are kept
            sp = sp.subset(top_per_dag(level["gain"][sp.nodes], sp.dags,
                                       level_capacity(n_children)))
        t1 = time.perf_counter()
        stats.seconds["features"] += t1 - t0
        if sp.nodes.size == 0:
            break
        dag_start = np.searchsorted(sp.dags, np.arange(n_dags + 1))
        n_children = min(n_children, 2 * int(np.diff(dag_start).max()))
        local = np.arange(sp.nodes.size) - dag_start[sp.dags]
        if keep_table:
            k, t, left, right, energy = _search_level(tr, sp, hist[sp.nodes], dag_start,
                                                      n_children, depth)
            stats.objective.append(float(energy.sum()))
        else:  # a tree level: every parent gets two children of its own
            k, t, left, right = sp.best_k, sp.best_t, 2 * local, 2 * local + 1
            stats.objective.append(float(sp.best_cost.sum()))
        sp = dataclasses.replace(sp, table=sp.table[:0], wl=sp.wl[:0],
                                 tree_cost=sp.tree_cost[:0])  # freed before the next level
        t2 = time.perf_counter()
        stats.seconds["lsearch"] += t2 - t1
        # children that received samples, numbered by (dag, child) in the next level
        keys = np.concatenate([sp.dags * n_children + left, sp.dags * n_children + right])
        used = np.unique(keys)
        left_id = np.searchsorted(used, sp.dags * n_children + left)
        right_id = np.searchsorted(used, sp.dags * n_children + right)
        kind_chosen, params_chosen, thr_chosen = sp.chosen(k, t)
        spread = data.route(n_nodes, sp.nodes, kind_chosen, params_chosen, thr_chosen,
                            left_id, right_id)
        level["split"][sp.nodes] = True
        level["round"][sp.nodes] = depth
        level["rank"][sp.nodes] = n_split[sp.dags] + local
        n_split += np.diff(dag_start)
        level.update(nodes=sp.nodes, kind=kind_chosen, params=params_chosen,
                     threshold=thr_chosen, left=left_id, right=right_id, spread=spread)
        node_dag = used // n_children
        stats.seconds["route"] += time.perf_counter() - t2
        if progress is not None:
            progress(depth, int(used.size))
    return levels
