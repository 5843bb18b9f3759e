"""From what growth recorded level by level to the flat arrays of each DAG.

A *level record* is a dict of per-node arrays for one level of every DAG (nodes sorted by
DAG): ``dag``, ``hist`` (class counts), ``split``, ``gain``, ``round`` and ``rank`` (see
:class:`NodeRecords`), and for the split nodes ``nodes`` (their indices in the level),
``kind``, ``params``, ``threshold``, ``left`` and ``right`` (indices in the next level)
and ``spread`` (of the node's training responses, see ``_spread.node_spread``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._dag import DAG


@dataclass
class NodeRecords:
    """What training knew about each node of one DAG, in the DAG's node order."""

    counts: np.ndarray  # (n_nodes, n_classes) int64: weighted training class counts
    gain: np.ndarray  # objective reduction of the best tree split; NaN if none was sought
    split_round: np.ndarray  # level (priority: iteration) in which it split; -1: a leaf
    split_rank: np.ndarray  # how many of the DAG's splits came before it; -1: a leaf


def level_record(node_dag, hist) -> dict:
    """A level record of these nodes, none split yet."""
    n = node_dag.shape[0]
    return {"dag": node_dag, "hist": hist, "split": np.zeros(n, bool),
            "gain": np.full(n, np.nan), "round": np.full(n, -1, np.int64),
            "rank": np.full(n, -1, np.int64)}


def depth_levels(nodes: dict, splits: dict | None) -> list[dict]:
    """Level records of trees grown in any order, from per-node arrays (``dag``,
    ``depth``, ``position``, ``hist``, ``gain``; node ids are indices) and per-split
    arrays (``node``, ``kind``, ``params``, ``threshold``, ``left``, ``right`` as node
    ids, ``round``, ``rank``): level d holds the nodes of depth d, by tree, then
    position."""
    n = nodes["dag"].shape[0]
    place = np.lexsort((nodes["position"], nodes["dag"], nodes["depth"]))
    index = np.empty(n, np.int64)  # each node's index within its level
    level_first = np.searchsorted(nodes["depth"][place], np.arange(nodes["depth"].max() + 2))
    index[place] = np.arange(n) - level_first[nodes["depth"][place]]
    levels = []
    for d in range(level_first.shape[0] - 1):
        ids = place[level_first[d]:level_first[d + 1]]
        level = level_record(nodes["dag"][ids], nodes["hist"][ids])
        level["gain"] = nodes["gain"][ids]
        levels.append(level)
        if splits is None:
            continue
        mine = np.flatnonzero(nodes["depth"][splits["node"]] == d)
        if mine.size == 0:
            continue
        mine = mine[np.argsort(index[splits["node"][mine]])]
        at = index[splits["node"][mine]]
        level["split"][at] = True
        level["round"][at] = splits["round"][mine]
        level["rank"][at] = splits["rank"][mine]
        level.update(nodes=at, kind=splits["kind"][mine], params=splits["params"][mine],
                     threshold=splits["threshold"][mine], left=index[splits["left"][mine]],
                     right=index[splits["right"][mine]], spread=splits["spread"][mine])
    return levels


def assemble(levels: list[dict], n_dags: int, n_params: int,
              n_classes: int) -> tuple[list[DAG], list[NodeRecords]]:
    """Per-DAG flat arrays from the per-level records (global ids -> DAG-local ids), and
    per DAG the record of each node in the same order."""
    firsts = [np.searchsorted(lev["dag"], np.arange(n_dags + 1)) for lev in levels]
    dags = []
    records = []
    for g in range(n_dags):
        counts = [int(f[g + 1] - f[g]) for f in firsts]
        while counts and counts[-1] == 0:
            counts.pop()
        level_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        n_nodes = int(level_start[-1])
        kind = np.zeros(n_nodes, np.uint8)
        prm = np.zeros((n_nodes, n_params), np.float32)
        threshold = np.zeros(n_nodes, np.float32)
        spread = np.zeros(n_nodes, np.float32)
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
                spread[local] = lev["spread"][sel]
                left[local] = lev["left"][sel] + child_base
                right[local] = lev["right"][sel] + child_base
        leaf_value = _leaf_values(np.concatenate(leaf_hists))
        dags.append(DAG(level_start, kind, prm, threshold, left, right, leaf_value, spread))
        records.append(NodeRecords(*(
            np.concatenate([levels[d][name][int(firsts[d][g]):int(firsts[d][g + 1])]
                            for d in range(len(counts))])
            for name in ("hist", "gain", "round", "rank"))))
    return dags, records


def _leaf_values(counts: np.ndarray) -> np.ndarray:
    hists = counts.astype(np.float64)
    return (hists / hists.sum(axis=1, keepdims=True)).astype(np.float32)


def prune(dag: DAG, records: NodeRecords, max_depth: int | None = None,
          max_splits: int | None = None) -> tuple[DAG, NodeRecords]:
    """The DAG growth would have made had it stopped earlier, and its node records.

    ``max_depth``: no split at that level or below (as training with that ``max_depth``);
    ``max_splits``: only the DAG's first splits (a priority tree with ``max_nodes = 1 + 2
    max_splits``). Nodes no longer reached are dropped; nodes whose split is undone
    become leaves with the distribution of their training counts. ``dag`` must be as
    growth made it (``records`` from the same fit, no prior correction).
    """
    n = dag.n_nodes
    depth = np.repeat(np.arange(dag.level_start.shape[0] - 1), np.diff(dag.level_start))
    split = records.split_round >= 0
    if max_depth is not None:
        split &= depth < max_depth
    if max_splits is not None:
        split &= records.split_rank < max_splits
    reached = np.zeros(n, bool)
    reached[0] = True
    for d in range(dag.level_start.shape[0] - 2):
        lo, hi = int(dag.level_start[d]), int(dag.level_start[d + 1])
        parents = lo + np.flatnonzero(reached[lo:hi] & split[lo:hi])
        reached[dag.left[parents]] = True
        reached[dag.right[parents]] = True
    keep = np.flatnonzero(reached)
    new_id = np.full(n, -1, np.int64)
    new_id[keep] = np.arange(keep.size)
    per_level = np.bincount(depth[keep], minlength=dag.level_start.shape[0] - 1)
    per_level = per_level[:np.flatnonzero(per_level)[-1] + 1]
    level_start = np.concatenate([[0], np.cumsum(per_level)]).astype(np.int32)
    is_split = split[keep]
    leaf = np.cumsum(~is_split) - 1
    left = np.where(is_split, new_id[dag.left[keep]], -1 - leaf).astype(np.int32)
    right = np.where(is_split, new_id[dag.right[keep]], -1 - leaf).astype(np.int32)
    zero = np.zeros(1, dag.threshold.dtype)[0]
    pruned = DAG(level_start, np.where(is_split, dag.feature_kind[keep], 0).astype(np.uint8),
                 np.where(is_split[:, None], dag.feature_params[keep], 0).astype(np.float32),
                 np.where(is_split, dag.threshold[keep], zero).astype(np.float32), left, right,
                 _leaf_values(records.counts[keep][~is_split]),
                 None if dag.spread is None else
                 np.where(is_split, dag.spread[keep], zero).astype(np.float32))
    return pruned, NodeRecords(records.counts[keep], records.gain[keep],
                               np.where(is_split, records.split_round[keep], -1),
                               np.where(is_split, records.split_rank[keep], -1))
