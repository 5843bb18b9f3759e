"""Data-parallel growth: the entries, and the images they sample, are split into shards
held elsewhere (dask workers, :mod:`._dataparallel`); a driver grows the DAGs
level by level from what the shards report, and the model equals :func:`jungleseg.jungle.grow`'s
on all the data in one process, bit for bit (``docs/how-it-works/design.md``, "Data-parallel
training").

Shards hold contiguous ranges of images, and a shard's entries keep their global order,
so each node's entries in entry order are the shards' entries concatenated in shard
order. Per level:

1. each shard groups its entries by node and counts node histograms and sizes; the
   driver sums them (integers: exact);
2. the driver draws every node's candidates (``jungle._grow.draw_all``) and decides, from
   the global node sizes, which node positions feed the threshold subsamples; each shard
   draws those of its own window of positions (``jungle._evaluation.subsample_starts``) and
   evaluates them; the driver puts the responses in the order one process has them and
   draws the thresholds (``jungle._tables._thresholds`` without counting): the same
   responses in the same order, so the same thresholds;
3. each shard counts its entries into integer (node, candidate, threshold, class)
   tables, which a tree reduction sums (:func:`sum_tables`: exact in any order), and the
   driver finalises best thresholds and costs (``jungle._tables.finalise_tables``);
4. the driver runs LSearch or the tree split as one process does, the splits go to the
   shards, and each shard routes its entries. The spread of each split node's responses
   is a float sum in entry order: the shards continue it one after the other (a chain of
   small tasks), so it adds in exactly one process's order.

The driver sees nodes, candidates, thresholds and classes, never pixels or entries.
Shard steps are functions of an immutable :class:`Shard` (a step that moves entries
returns a new one), so that a cluster can keep the states where the data are and run
each step as a task; :class:`InProcess` runs them here (tests, and the reference for a
cluster's executor, which has the same methods).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numba
import numpy as np

from .._workers import TASKS_PER_WORKER, threads, workers_for
from ..features import FeatureFamily, Samples
from ..jungle._assembly import assemble
from ..jungle._criterion import make_phi_table
from ..jungle._dag import DAG
from ..jungle._entries import Entries
from ..jungle._evaluation import (
    evaluate_subsamples,
    split_by_cost,
    subsample_dests,
    subsample_starts,
    wave_entries,
)
from ..jungle._grow import (
    GrowParams,
    GrowStats,
    Progress,
    _grow_levels,
    _Training,
    group_by_node,
    node_histograms,
    route,
)
from ..jungle._spread import spread_mean, spread_of, spread_squares, spread_sums
from ..jungle._tables import (
    _WAVE_BYTES,
    THRESHOLD_SUBSAMPLE,
    _count_pass,
    _offsets,
    _thresholds,
    _waves,
    finalise_tables,
)


@dataclass(frozen=True)
class Shard:
    """One shard's training data: its images' store (tuple form), its samples (image
    indices into that store), its entries in global entry order (``dag``: global DAG
    ids), and the node each entry has reached; after :func:`at_level`, the entries by
    node with each node's histogram, after :func:`routed`, the responses of the split."""

    store: tuple
    samples: Samples
    entries: Entries
    unclamped: bool
    n_classes: int
    entry_node: np.ndarray
    order: np.ndarray | None = None
    start: np.ndarray | None = None
    hist: np.ndarray | None = None
    response: np.ndarray | None = None


@dataclass(frozen=True)
class TableRequest:
    """What a level's shards need to evaluate and count the candidates of node rows
    (``nodes``: the level's global node ids): as ``jungle._tables.split_tables`` takes
    them, with the global node sizes and which rows are active and big."""

    nodes: np.ndarray
    kinds: np.ndarray
    params: np.ndarray  # (rows * candidates, n_params)
    n_drawn: np.ndarray
    streams: np.ndarray
    positions: np.ndarray
    level: int
    seed: int
    size: np.ndarray
    active: np.ndarray
    big: np.ndarray


def new_shard(store: tuple, samples: Samples, entries: Entries, unclamped: bool,
              n_classes: int) -> Shard:
    """A shard at level 0 (entry e at the root of its DAG)."""
    return Shard(store, samples, entries, unclamped, n_classes, entries.dag.astype(np.int64))


def at_level(shard: Shard, n_nodes: int) -> Shard:
    """The shard with its entries grouped by node and each node's histogram."""
    order, start = group_by_node(shard.entry_node, n_nodes)
    with threads(workers_for(order.shape[0])):
        hist = node_histograms(order, start, shard.entries.sample, shard.entries.weight,
                               shard.samples.label, shard.n_classes)
    return dataclasses.replace(shard, order=order, start=start, hist=hist, response=None)


def histograms(shard: Shard) -> tuple[np.ndarray, np.ndarray]:
    """Each node's class histogram and entry count on this shard."""
    return shard.hist, np.diff(shard.start)


def dag_weights(shard: Shard, n_dags: int) -> np.ndarray:
    """Total entry weight per DAG on this shard."""
    return np.bincount(shard.entries.dag, weights=shard.entries.weight,
                       minlength=n_dags).astype(np.int64)


def _window(shard: Shard, req: TableRequest, rows: np.ndarray) -> tuple:
    """This shard's entry count of each node row, and its entries of ``rows`` (a mask)
    in sample order with their rows and positions (``jungle._evaluation.wave_entries``)."""
    lo = shard.start[req.nodes]
    size = shard.start[req.nodes + 1] - lo
    entry_row = np.full(shard.entry_node.shape[0], -1, np.int64)
    entry_pos = np.empty(shard.entry_node.shape[0], np.int64)
    return size, wave_entries(shard.order, lo, size, rows & (size > 0), 0, req.nodes.size,
                              entry_row, entry_pos, shard.entries.in_sample_order)


def subsamples(shard: Shard, first: np.ndarray, req: TableRequest) -> tuple:
    """This shard's part of every threshold subsample: for a small node, every
    candidate's response at each of its entries; for a big one, the draws that fall on
    its window (``first[i]`` is the global position of its first entry of node row i).
    Returns (responses, each big draw's (candidate, draw) code, values and draws per
    row), laid out as ``jungle._tables.split_tables`` lays out the whole node."""
    n = req.nodes.size
    size, (entries, e_rows, e_pos) = _window(shard, req, req.active)
    big_rows = np.flatnonzero(req.big & (size > 0))
    pos_off = _offsets(size + 1, big_rows, n)
    pair_start = np.empty(int((size[big_rows] + 1).sum()), np.int64)
    s = shard.samples
    with threads(workers_for(THRESHOLD_SUBSAMPLE * req.n_drawn[big_rows].sum())):
        workers = numba.get_num_threads()
        subsample_starts(big_rows, size, first, req.size, req.n_drawn, req.seed, req.streams,
                         req.positions, req.level, THRESHOLD_SUBSAMPLE, pos_off, pair_start,
                         workers)
        n_pairs = np.zeros(n, np.int64)
        n_pairs[big_rows] = pair_start[pos_off[big_rows] + size[big_rows]]
        pair_off = _offsets(n_pairs, big_rows, n)
        pair_dest = np.empty(int(n_pairs.sum()), np.int32)
        subsample_dests(big_rows, size, first, req.size, req.n_drawn, req.seed, req.streams,
                        req.positions, req.level, THRESHOLD_SUBSAMPLE, pos_off, pair_off,
                        pair_start, pair_dest, workers)
    n_values = np.where(req.big, n_pairs, np.where(req.active, size, 0) * req.n_drawn)
    val_off = _offsets(n_values, np.arange(n), n)
    values = np.empty(int(n_values.sum()), np.float32)
    is_big = req.big[e_rows]
    cost = req.n_drawn[e_rows]
    at = pos_off[e_rows[is_big]] + e_pos[is_big]
    cost[is_big] = pair_start[at + 1] - pair_start[at]
    with threads(workers_for(values.size)):
        workers = numba.get_num_threads()
        evaluate_subsamples(entries, e_rows, e_pos, split_by_cost(cost, workers *
                                                                  TASKS_PER_WORKER),
                            req.big, req.n_drawn, val_off, pos_off, pair_off, pair_start,
                            pair_dest, THRESHOLD_SUBSAMPLE.bit_length() - 1,
                            shard.entries.sample, s.image, s.row, s.col, shard.store,
                            shard.unclamped, req.kinds, req.params, values, workers)
    return values, pair_dest, n_values, n_pairs


def counts(shard: Shard, req: TableRequest, thresholds: np.ndarray, n_thr: np.ndarray
           ) -> np.ndarray:
    """This shard's (node row, candidate, threshold bin, class) counts: the weight of its
    entries of each class whose response falls in each bin of the thresholds (int32,
    left histograms once cumulated over bins; :func:`sum_tables` adds shards')."""
    n, n_cand, n_t = thresholds.shape
    table = np.zeros((n, n_cand, n_t, shard.n_classes), np.int32)
    _, (entries, e_rows, _) = _window(shard, req, (n_thr > 0).any(axis=1))
    rows = np.unique(e_rows)
    if rows.size == 0:
        return table
    stride = int(req.n_drawn[rows].max())
    buffer = np.empty(max(stride, min(entries.size * stride, _WAVE_BYTES // 4)), np.float32)
    s, none = shard.samples, np.zeros(0, np.int64)
    _count_pass(np.arange(entries.size), rows, entries, e_rows, buffer, req.n_drawn,
                shard.entries.sample, shard.entries.weight, s.image, s.row, s.col, s.label,
                shard.store, shard.unclamped, req.kinds, req.params, thresholds, n_thr,
                shard.hist[req.nodes], np.zeros(0, np.int32), none, False, True, table,
                np.zeros((0, n_cand, n_t), np.int64), np.zeros((0, n_cand, n_t)),
                np.zeros((0, n_cand), np.int64), np.zeros((0, n_cand)), 1, np.zeros(1), 0)
    return table


def sum_tables(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One step of the tree reduction of count tables."""
    return a + b


def routed(shard: Shard, split: tuple) -> Shard:
    """The shard with its entries of the split nodes sent to their children (``split``:
    the level's node count and, per split node, its global id, kind, parameters,
    threshold and children), keeping each routed entry's response."""
    n_nodes, nodes, kind, params, threshold, left, right = split
    node_row = np.full(n_nodes, -1, np.int64)
    node_row[nodes] = np.arange(nodes.size)
    s = shard.samples
    with threads(workers_for(shard.entry_node.shape[0])):
        moved, response = route(shard.entry_node, node_row, shard.entries.sample, s.image,
                                s.row, s.col, shard.store, shard.unclamped, kind, params,
                                threshold, left, right, numba.get_num_threads())
    return dataclasses.replace(shard, entry_node=moved, response=response)


def spread_step(shard: Shard, sums: tuple, nodes: np.ndarray, mean: np.ndarray | None
                ) -> tuple:
    """Continue the spread sums of the split ``nodes`` over this shard's entries: (weight,
    weighted responses) without ``mean``, else (weight, weighted squared deviations)."""
    w, acc = (a.copy() for a in sums)
    args = (shard.order, shard.start, nodes, shard.response, shard.entries.weight)
    if mean is None:
        spread_sums(*args, w, acc)
    else:  # the weights were summed by the first chain
        spread_squares(*args, mean, acc)
    return w, acc


class InProcess:
    """Shards held in this process, each step run in turn: the executor of tests, and
    the interface a cluster's executor has (``jungleseg._dataparallel``)."""

    def __init__(self, states: list[Shard]):
        self.states = list(states)

    def update(self, step, *args) -> None:
        """Replace every shard's state by ``step(state, *args)``."""
        self.states = [step(state, *args) for state in self.states]

    def each(self, step, *args) -> list:
        """``step(state, *args)`` of every shard (handles for :meth:`gather`)."""
        return [step(state, *args) for state in self.states]

    def each_with(self, step, per_shard: list, *args) -> list:
        """``step(state, per_shard[s], *args)`` of every shard s."""
        return [step(state, mine, *args) for state, mine in zip(self.states, per_shard)]

    def chain(self, step, first, *args):
        """``step(state, value, *args)`` shard after shard, each on the value the shard
        before returned, from ``first``."""
        value = first
        for state in self.states:
            value = step(state, value, *args)
        return value

    def share(self, value):
        """``value`` where every shard's step can read it."""
        return value

    def total(self, handles: list):
        """The sum of the handles' tables, added pairwise (a tree reduction)."""
        while len(handles) > 1:
            handles = [sum_tables(handles[j], handles[j + 1]) if j + 1 < len(handles)
                       else handles[j] for j in range(0, len(handles), 2)]
        return handles[0]

    def gather(self, handles):
        """The values of handles."""
        return handles


class ShardedData:
    """Level-wise growth's data (as ``jungle._grow._Local``) on the shards of an executor
    (:class:`InProcess` or a cluster's)."""

    def __init__(self, shards, tr: _Training):
        self.shards, self.tr = shards, tr
        self.shard_sizes: np.ndarray | None = None  # (shards, nodes): entries of the level
        self.table_bytes: list[int] = []

    def histograms(self, n_nodes: int) -> tuple[np.ndarray, ShardedData]:
        """The level's node histograms, summed over shards."""
        self.shards.update(at_level, n_nodes)
        parts = self.shards.gather(self.shards.each(histograms))
        self.shard_sizes = np.stack([size for _, size in parts])
        return np.sum([hist for hist, _ in parts], axis=0, dtype=np.int64), self

    def sizes(self, nodes: np.ndarray) -> np.ndarray:
        """Entries of each of ``nodes``, over all shards."""
        return self.shard_sizes[:, nodes].sum(axis=0)

    def tables(self, nodes, streams, positions, depth: int, P, keep_table: bool, kinds,
               cand_params, n_drawn) -> tuple:
        """``jungle._tables.split_tables`` of ``nodes`` from the shards, in waves of rows
        whose tables stay within a budget (an LSearch level: one wave)."""
        p = self.tr.params
        n, n_cand = kinds.shape[:2]
        n_t = int(p.n_thresholds)
        size = self.sizes(nodes)
        n_drawn = np.asarray(n_drawn, np.int64)
        per_row = 4 * n_cand * n_t * (P.shape[1] + 2) + 8 * n_cand * THRESHOLD_SUBSAMPLE
        n_kept = n if keep_table else 0
        out = (np.full((n, n_cand, n_t), np.nan, np.float32),
               np.zeros((n_kept, n_cand, n_t, P.shape[1]), np.int32),
               np.zeros((n_kept, n_cand, n_t), np.int64), np.full((n_kept, n_cand, n_t), np.inf),
               np.full((n, n_cand), -1, np.int64), np.full((n, n_cand), np.inf))
        budget = _WAVE_BYTES if not keep_table else max(_WAVE_BYTES, per_row * n)
        for a, b in _waves(np.full(n, per_row), budget):
            req = TableRequest(nodes[a:b], kinds[a:b], np.ascontiguousarray(
                cand_params[a:b]).reshape((b - a) * n_cand, -1), n_drawn[a:b], streams[a:b],
                positions[a:b], depth, p.seed, size[a:b],
                (size[a:b] >= 2) & (n_drawn[a:b] > 0),
                (size[a:b] >= 2) & (n_drawn[a:b] > 0) & (size[a:b] > THRESHOLD_SUBSAMPLE))
            for whole, part in zip(out, self._wave(req, P[a:b], keep_table)):
                if whole.shape[0]:
                    whole[a:b] = part
        return out

    def _wave(self, req: TableRequest, P, keep_table: bool) -> tuple:
        p, tr, n = self.tr.params, self.tr, req.nodes.size
        n_cand, n_t = req.kinds.shape[1], int(p.n_thresholds)
        shared = self.shards.share(req)
        mine = self.shard_sizes[:, req.nodes]
        first = np.cumsum(mine, axis=0) - mine  # each shard's first position in each node
        parts = self.shards.gather(self.shards.each_with(subsamples, list(first), shared))
        values, pair_dest, val_off, pair_off = _in_node_order(parts, req.big)
        thresholds = np.full((n, n_cand, n_t), np.nan, np.float32)
        n_thr = np.zeros((n, n_cand), np.int32)
        i64, none = np.zeros(0, np.int64), np.zeros((0, n_cand, n_t, P.shape[1]), np.int32)
        cand_t = np.full((n, n_cand), -1, np.int64)
        cand_cost = np.full((n, n_cand), np.inf)
        with threads(workers_for(values.size)):
            _thresholds(0, n, req.active, req.big, i64, req.size, req.n_drawn,
                        THRESHOLD_SUBSAMPLE, val_off, pair_off, pair_dest, values, req.seed,
                        req.streams, req.positions, req.level, False, i64, i64, i64,
                        np.zeros(0, np.int32), P, thresholds, n_thr, np.zeros(0, np.int32),
                        i64, True, none, none[:, :, :, 0].astype(np.int64),
                        none[:, :, :, 0].astype(np.float64), cand_t, cand_cost,
                        p.min_samples_leaf, tr.phi_table, p.criterion, numba.get_num_threads())
        bins = self.shards.share((thresholds, n_thr))
        table = self.shards.gather(self.shards.total(self.shards.each(_counts, shared, bins)))
        self.table_bytes.append(table.nbytes * len(self.shards.states))  # every shard's part
        kept = n if keep_table else 0
        wl = np.zeros((kept, n_cand, n_t), np.int64)
        tree_cost = np.full((kept, n_cand, n_t), np.inf)
        with threads(workers_for(table.size)):
            finalise_tables(table, req.n_drawn, n_thr, P, keep_table, table[:kept], wl,
                            tree_cost, cand_t, cand_cost, p.min_samples_leaf, tr.phi_table,
                            p.criterion, numba.get_num_threads())
        return thresholds, table[:kept], wl, tree_cost, cand_t, cand_cost

    def route(self, n_nodes: int, nodes, kind, params, threshold, left, right) -> np.ndarray:
        """Route every shard's entries of the split ``nodes``; returns the nodes'
        spreads, summed shard after shard in entry order."""
        self.shards.update(routed, self.shards.share((n_nodes, nodes, kind, params,
                                                      threshold, left, right)))
        zero = np.zeros(nodes.size)
        w, total = self.shards.gather(self.shards.chain(spread_step, (zero, zero), nodes,
                                                        None))
        mean = spread_mean(w, total)
        w, square = self.shards.gather(self.shards.chain(spread_step, (w, zero), nodes, mean))
        return spread_of(w, square)


def _counts(shard: Shard, req: TableRequest, bins: tuple) -> np.ndarray:
    return counts(shard, req, *bins)


def _in_node_order(parts: list, big: np.ndarray) -> tuple:
    """The shards' subsample responses and big draws' codes in the order one process
    holds them (node row by row, within a row shard by shard), with each row's offsets."""
    n_values = np.stack([p[2] for p in parts])
    n_pairs = np.stack([p[3] for p in parts])
    n = big.size
    out = []
    for amounts, rows, k, dtype in ((n_values, np.arange(n), 0, np.float32),
                                    (n_pairs, np.flatnonzero(big), 1, np.int32)):
        offsets = _offsets(amounts.sum(axis=0), rows, n)
        before = np.cumsum(amounts, axis=0) - amounts  # earlier shards' share of each row
        whole = np.empty(int(amounts.sum()), dtype)
        for s, part in enumerate(parts):
            own = _offsets(amounts[s], np.arange(n), n)
            whole[np.arange(part[k].size) + np.repeat(offsets + before[s] - own, amounts[s])] \
                = part[k]
        out += [whole, offsets]
    values, val_off, pair_dest, pair_off = out
    return values, pair_dest, val_off, pair_off


def grow_sharded(shards, family: FeatureFamily, params: GrowParams, n_dags: int,
                 progress: Progress | None = None) -> tuple[list[DAG], GrowStats]:
    """Grow the DAGs of the entries of ``shards`` (an executor of :class:`Shard` states,
    :class:`InProcess` or a cluster's), equal bit for bit to :func:`jungleseg.jungle.grow` on all
    the data in one process. Level-wise growth only: jungles (LSearch, ClusterSearch)
    and trees; priority growth and dGMML raise ValueError."""
    if params.growth == "priority" or params.dgmml:
        raise ValueError("data-parallel training grows level by level: growth 'priority' "
                         "and dGMML splits are not supported; use DAGs as tasks")
    weights = np.sum(shards.gather(shards.each(dag_weights, n_dags)), axis=0)
    if (weights == 0).any():
        raise ValueError("every DAG needs at least one training sample")
    if int(weights.max()) >= 2**31:
        raise ValueError("a DAG's total sample weight must stay below 2^31")
    tr = _Training(None, None, None, family.spec(), family.n_params, params,
                   make_phi_table(int(weights.max()), params.criterion), False,
                   np.arange(n_dags, dtype=np.int64), ())
    stats = GrowStats()
    data = ShardedData(shards, tr)
    levels = _grow_levels(tr, stats, progress, data)
    stats.table_bytes = data.table_bytes
    dags, stats.nodes = assemble(levels, n_dags, family.n_params, params.n_classes)
    return dags, stats
