"""Which leaves a tree baseline splits (``docs/how-it-works/design.md``, "Baselines").

The jungle paper compares DAGs with three ways of growing trees of bounded size, all with
the same features and objective as the jungle (:func:`jungleseg.jungle.grow` calls these):

- ``fixed-width-a``: at each level, split only the ``M/2`` leaves of largest energy
  ``|S| H(S)``; the others stay leaves for good. A level then holds at most ``M`` nodes.
- ``fixed-width-b``: find every leaf's best split, keep the ``M/2`` that lower the
  objective most; the others stay leaves.
- ``priority``: all open leaves, at any depth, wait in one queue ordered by the objective
  reduction of their best split (found once, when the leaf is created); each iteration
  splits the top ``M``, and the leaves left unsplit stay queued with their split. Growth
  stops when the queue is empty or a tree reaches ``max_nodes`` (its last batch is cut to
  fit). With ``M`` unlimited every queued leaf splits at once: a standard tree.

``M/2`` per level (the level width of the schedule, halved) makes a fixed-width level as
large as a jungle level of width ``M``. Each function works per DAG; ties go to the
earlier node (lower depth, then lower position in its level), so growth is deterministic.
"""
from __future__ import annotations

import numpy as np

GROWTHS = ("jungle", "fixed-width-a", "fixed-width-b", "priority")


def top_per_dag(score: np.ndarray, dag: np.ndarray, capacity, tiebreak=None) -> np.ndarray:
    """Indices (ascending) of the at most ``capacity`` highest scores of each DAG.

    ``score`` and ``dag`` are per node; ``capacity`` is a number or an array per DAG
    (None: unlimited). Ties go to the node that comes first in ``tiebreak`` order
    (default: index order).

    >>> top_per_dag(np.array([3., 1., 2., 5.]), np.array([0, 0, 0, 1]), 2)
    array([0, 2, 3])
    """
    n = score.shape[0]
    if capacity is None or n == 0:
        return np.arange(n)
    key = np.arange(n) if tiebreak is None else np.asarray(tiebreak)
    ranked = np.lexsort((key, -score, dag))  # by DAG, then best score, then tie-break
    first = np.searchsorted(dag[ranked], dag[ranked], side="left")
    rank = np.arange(n) - first
    allowed = capacity if np.isscalar(capacity) else np.asarray(capacity)[dag[ranked]]
    return np.sort(ranked[rank < allowed])


def level_capacity(width: int) -> int:
    """Splits a fixed-width level may make when the next level may hold ``width`` nodes."""
    return width // 2


class PriorityQueue:
    """The open leaves of priority-scheduled trees, with the best split found for each.

    Rows are leaves; ``push`` adds them with their DAG, depth, position in their level,
    objective reduction and a split description (any per-row arrays), ``pop`` removes and
    returns the batch to split now.
    """

    def __init__(self) -> None:
        self.rows: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return 0 if not self.rows else int(self.rows["node"].shape[0])

    def push(self, **rows: np.ndarray) -> None:
        """Add leaves: ``node, dag, depth, position, reduction`` and the split's arrays."""
        if not self.rows:
            self.rows = {k: np.asarray(v) for k, v in rows.items()}
        else:
            self.rows = {k: np.concatenate([self.rows[k], np.asarray(rows[k])])
                         for k in self.rows}

    def pop(self, capacity) -> dict[str, np.ndarray]:
        """Remove and return, per DAG, the at most ``capacity`` leaves of largest reduction
        (``capacity``: a number, an array per DAG, or None for all), in priority order
        within each DAG: DAG, then reduction (largest first), depth, position."""
        q = self.rows
        if not q:
            return {}
        tiebreak = np.lexsort((q["position"], q["depth"]))
        order_key = np.empty(len(self), np.int64)
        order_key[tiebreak] = np.arange(len(self))
        chosen = top_per_dag(q["reduction"], q["dag"], capacity, order_key)
        batch = {k: v[chosen] for k, v in q.items()}
        keep = np.ones(len(self), bool)
        keep[chosen] = False
        self.rows = {k: v[keep] for k, v in q.items()}
        ranked = np.lexsort((order_key[chosen], -batch["reduction"], batch["dag"]))
        return {k: v[ranked] for k, v in batch.items()}
