"""A rooted decision DAG stored as flat parallel arrays (``docs/how-it-works/design.md``,
"The DAG").

Nodes of level d are ``level_start[d]:level_start[d + 1]``. A split node sends a
sample whose feature response is below ``threshold`` to ``left`` and the others to
``right``; both are indices of nodes in the next level. A leaf stores
``left == right == -1 - leaf`` where ``leaf`` indexes ``leaf_value`` (a normalised
class distribution). ``spread`` (optional: models written before it have none) is the
standard deviation of each split node's training responses, the scale of its soft-routing
temperature (0 at leaves, and where all responses were equal: such nodes route hard).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


class ModelError(ValueError):
    """A model's arrays are inconsistent (bad shapes, dtypes, indices or values)."""


_DTYPES = {
    "level_start": np.int32,
    "feature_kind": np.uint8,
    "feature_params": np.float32,
    "threshold": np.float32,
    "left": np.int32,
    "right": np.int32,
    "leaf_value": np.float32,
}


@dataclass(frozen=True, eq=False)
class DAG:
    level_start: np.ndarray
    feature_kind: np.ndarray
    feature_params: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf_value: np.ndarray
    spread: np.ndarray | None = None

    @property
    def n_nodes(self) -> int:
        """Split and leaf nodes."""
        return int(self.left.shape[0])

    @property
    def n_leaves(self) -> int:
        return int(self.leaf_value.shape[0])

    @property
    def depth(self) -> int:
        """Index of the deepest level (a lone root has depth 0)."""
        return int(self.level_start.shape[0]) - 2

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self.arrays().values()))

    def arrays(self) -> dict:
        """The arrays by name (``spread`` only when the DAG has it)."""
        out = {name: getattr(self, name) for name in _DTYPES}
        if self.spread is not None:
            out["spread"] = self.spread
        return out

    def validate(self, n_classes: int, n_params: int, kinds: Sequence[int] | None = None
                 ) -> None:
        """Raise :class:`ModelError` unless every array is safe to hand to a kernel.

        Checks dtypes, shapes, the level structure, that each split node's children
        lie in the next level, that leaf indices are in range and each leaf is used
        once, finite thresholds and parameters, known feature kinds, and leaf
        distributions that are non-negative and sum to one.
        """
        for name, dtype in _DTYPES.items():
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or a.dtype != dtype:
                raise ModelError(f"{name} must be a {np.dtype(dtype).name} array")
        ls = self.level_start
        n = self.left.shape[0]
        if ls.ndim != 1 or ls.shape[0] < 2 or ls[0] != 0 or int(ls[-1]) != n:
            raise ModelError("level_start must run from 0 to the node count")
        if np.any(np.diff(ls.astype(np.int64)) <= 0):
            raise ModelError("every level must hold at least one node")
        if ls[1] != 1:
            raise ModelError("level 0 must hold the root alone")
        for name in ("feature_kind", "threshold", "right"):
            if getattr(self, name).shape != (n,):
                raise ModelError(f"{name} must have shape ({n},)")
        if self.left.ndim != 1:
            raise ModelError("left must be one-dimensional")
        if self.feature_params.shape != (n, n_params):
            raise ModelError(f"feature_params must have shape ({n}, {n_params})")
        lv = self.leaf_value
        if lv.ndim != 2 or lv.shape[1] != n_classes or lv.shape[0] < 1:
            raise ModelError(f"leaf_value must have shape (n_leaves, {n_classes})")
        if not np.all(np.isfinite(lv)) or np.any(lv < 0):
            raise ModelError("leaf distributions must be finite and non-negative")
        if np.any(np.abs(lv.astype(np.float64).sum(axis=1) - 1.0) > 1e-4):
            raise ModelError("leaf distributions must sum to one")
        is_leaf = self.left < 0
        if np.any(is_leaf != (self.right < 0)):
            raise ModelError("a node must be a leaf on both sides or on neither")
        leaf = -1 - self.left[is_leaf].astype(np.int64)
        if np.any(self.right[is_leaf] != self.left[is_leaf]):
            raise ModelError("a leaf must store the same leaf index left and right")
        if leaf.size != lv.shape[0] or np.any(np.sort(leaf) != np.arange(lv.shape[0])):
            raise ModelError("leaf indices must use each leaf_value row exactly once")
        level_of = np.repeat(np.arange(ls.shape[0] - 1), np.diff(ls.astype(np.int64)))
        split = np.flatnonzero(~is_leaf)
        if np.any(~is_leaf[ls[-2]:]):
            raise ModelError("nodes of the last level must be leaves")
        lo = ls[level_of[split] + 1]
        hi = ls[level_of[split] + 2]
        for name in ("left", "right"):
            child = getattr(self, name)[split]
            if np.any(child < lo) or np.any(child >= hi):
                raise ModelError(f"a {name} child index lies outside the next level")
        if not np.all(np.isfinite(self.threshold[split])):
            raise ModelError("thresholds of split nodes must be finite")
        if not np.all(np.isfinite(self.feature_params)):
            raise ModelError("feature parameters must be finite")
        if kinds is not None and not np.all(np.isin(self.feature_kind[split], kinds)):
            raise ModelError("unknown feature kind in a split node")
        if self.spread is not None:
            if (not isinstance(self.spread, np.ndarray) or self.spread.dtype != np.float32
                    or self.spread.shape != (n,)):
                raise ModelError(f"spread must be a float32 array of shape ({n},)")
            if not np.all(np.isfinite(self.spread)) or np.any(self.spread < 0):
                raise ModelError("spread must be finite and non-negative")
        reached = np.zeros(n, bool)
        reached[0] = True
        reached[self.left[split]] = True
        reached[self.right[split]] = True
        if not reached.all():
            raise ModelError("every node other than the root must have a parent")
