"""Priority-scheduled tree growth, the paper's third baseline (``growth="priority"``,
``docs/how-it-works/design.md``, "Baselines"): one queue of open leaves at any depth, built on the
steps of level-wise growth (:mod:`._grow`)."""
from __future__ import annotations

import time

import numpy as np

from ._assembly import depth_levels
from ._baselines import PriorityQueue
from ._criterion import node_costs
from ._grow import (
    GrowStats,
    _best_splits,
    _Grouped,
    _route,
    _splittable,
    _Training,
    group_by_node,
    node_histograms,
)


def grow_priority(tr: _Training, stats: GrowStats, progress) -> list[dict]:
    """Priority-scheduled trees: each iteration splits the queued leaves of largest
    reduction, at most M per tree (``_baselines``); returns per-depth level records.

    Nodes get global ids in creation order; each also has a depth and a position (its
    index among the nodes of its tree and depth, in creation order), which key its random
    draws as in level-wise growth. Children are created in (tree, depth, position) order
    of their parents, so with M unlimited this grows the standard tree.
    """
    p = tr.params
    entry_sample, entry_weight = tr.entries.sample, tr.entries.weight
    n_dags = tr.entries.n_dags
    entry_node = tr.entries.dag.astype(np.int64)
    new = {"dag": np.arange(n_dags, dtype=np.int64), "depth": np.zeros(n_dags, np.int64),
           "position": np.zeros(n_dags, np.int64)}  # the nodes created last iteration
    created = {}  # (dag, depth) -> nodes created so far
    record = {name: [] for name in ("dag", "depth", "position", "hist", "gain")}
    splits = {name: [] for name in ("node", "kind", "params", "threshold", "left", "right",
                                    "round", "rank", "spread")}
    queue = PriorityQueue()
    n_nodes = np.ones(n_dags, np.int64)
    n_split = np.zeros(n_dags, np.int64)
    first, n_total = 0, n_dags
    for iteration in range(1 << 30):
        t0 = time.perf_counter()
        order, start = group_by_node(entry_node, n_total)
        hist = node_histograms(order, start[first:], entry_sample, entry_weight,
                               tr.samples.label, p.n_classes)
        energy = node_costs(hist, tr.phi_table, p.criterion)
        if iteration == 0:
            objective = float(energy.sum())  # later: lowered by each split's reduction
        gain = np.full(hist.shape[0], np.nan)
        splittable = _splittable(p, hist, new["depth"])
        for depth in np.unique(new["depth"][splittable]):
            rows = np.flatnonzero(splittable & (new["depth"] == depth))
            sp = _best_splits(tr, stats, first + rows, new["dag"][rows],
                              new["position"][rows], int(depth), _Grouped(tr, order, start),
                              hist[rows], False)
            rows = sp.nodes - first
            gain[rows] = energy[rows] - sp.best_cost
            kind, params, threshold = sp.chosen(sp.best_k, sp.best_t)
            queue.push(node=sp.nodes, dag=sp.dags, depth=new["depth"][rows],
                       position=new["position"][rows], reduction=gain[rows], kind=kind,
                       params=params, threshold=threshold)
        for name in ("dag", "depth", "position"):
            record[name].append(new[name])
        record["hist"].append(hist)
        record["gain"].append(gain)
        retired = np.zeros(n_total + 1, bool)  # the new leaves (index -1: already retired)
        retired[first:n_total] = np.isnan(gain)
        entry_node[retired[entry_node]] = -1
        t1 = time.perf_counter()
        stats.seconds["features"] += t1 - t0
        room = None if p.max_nodes is None else np.maximum(p.max_nodes - n_nodes, 0) // 2
        capacity = room if p.max_width is None else (
            p.max_width if room is None else np.minimum(room, p.max_width))
        batch = queue.pop(capacity)
        if not batch or batch["node"].size == 0:
            break
        b = batch["node"].size
        dag_start = np.searchsorted(batch["dag"], np.arange(n_dags + 1))
        splits["rank"].append(n_split[batch["dag"]] + np.arange(b) - dag_start[batch["dag"]])
        splits["round"].append(np.full(b, iteration, np.int64))
        n_split += np.diff(dag_start)
        n_nodes += 2 * np.diff(dag_start)
        objective -= batch["reduction"].sum()
        stats.objective.append(float(objective))
        # children in (tree, depth, position) order of their parents
        by_place = np.lexsort((batch["position"], batch["depth"], batch["dag"]))
        child_dag = np.repeat(batch["dag"][by_place], 2)
        child_depth = np.repeat(batch["depth"][by_place] + 1, 2)
        child_position = np.empty(2 * b, np.int64)
        for q in range(2 * b):
            key = (int(child_dag[q]), int(child_depth[q]))
            child_position[q] = created.get(key, 0)
            created[key] = child_position[q] + 1
        left = np.empty(b, np.int64)
        right = np.empty(b, np.int64)
        left[by_place] = n_total + 2 * np.arange(b)
        right[by_place] = n_total + 2 * np.arange(b) + 1
        moved, spread = _route(tr, entry_node, n_total, batch["node"], batch["kind"],
                               batch["params"], batch["threshold"], left, right, order, start)
        entry_node = np.where(moved >= 0, moved, entry_node)
        for name in ("node", "kind", "params", "threshold"):
            splits[name].append(batch[name])
        splits["spread"].append(spread)
        splits["left"].append(left)
        splits["right"].append(right)
        new = {"dag": child_dag, "depth": child_depth, "position": child_position}
        first, n_total = n_total, n_total + 2 * b
        stats.seconds["route"] += time.perf_counter() - t1
        if progress is not None:
            progress(iteration, int(n_nodes.sum()))
    return depth_levels({k: np.concatenate(v) for k, v in record.items()},
                         {k: np.concatenate(v) for k, v in splits.items()} if splits["node"]
                         else None)
