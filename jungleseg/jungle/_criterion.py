"""Split objectives on integer class histograms.

The training objective of a level is ``E = sum_j g(H_j)`` over the child histograms
``H_j``, with ``g(h) = |h| * impurity(h)``. Both criteria are written as
``g(n, S)`` of the total ``n = sum_c h_c`` and a sum ``S = sum_c phi(h_c)`` of per-class
terms, so that adding a parent's histogram to a child changes ``S`` only in the classes
the parent has. LSearch relies on this to make a move cost O(classes present), not
O(classes).

- entropy (bits): ``phi(h) = h log2 h``, ``g = phi(n) - S``
- Gini:            ``phi(h) = h^2``,      ``g = n - S / n``
- Hellinger (iHD, Akash et al., IJCAI 2019, against the uniform class distribution):
  ``phi(h) = sqrt(h)``, ``g = sqrt(n) S``. A split's inter-node Hellinger distance
  ``iHD = sum_t pi_t D_H^2(P_t || U) = 1 - sum_t g(H_t) / (N sqrt(C))``, so minimising the
  sum of ``g`` over the children maximises iHD. The reference U is uniform, not the parent's
  class distribution as in the paper: with the parent's prior each class's term is weighted
  by the square root of its share, so a rare class hardly counts; with U every class counts
  alike (the point of a skew-insensitive criterion), and ``g`` depends on the histogram
  alone, so it decomposes over children exactly and LSearch's moves use it as they use
  entropy (``docs/how-it-works/criteria.md``).

``dgmml`` is not a histogram objective: it proposes each node's split from the response
moments (``_dgmml``), and everything that compares histograms then uses entropy.

``phi`` of integer counts is read from a table built once per fit (it falls back to
computing for counts beyond the table), which makes the terms both cheap and exactly
reproducible.
"""
import math

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

ENTROPY = 0
GINI = 1
HELLINGER = 2
#: Histogram objectives by name; ``dgmml`` proposes splits and scores them with entropy.
CRITERIA = {"entropy": ENTROPY, "gini": GINI, "hellinger": HELLINGER, "dgmml": ENTROPY}

_TABLE_LIMIT = 1 << 22


@njit(cache=True)
def _phi_direct(h, criterion):
    if criterion == GINI:
        return float(h) * float(h)
    if criterion == HELLINGER:
        return math.sqrt(float(max(h, 0)))
    if h <= 0:
        return 0.0
    return float(h) * math.log2(float(h))


@njit(cache=True)
def phi_table(size, criterion):
    """Table of ``phi(h)`` for h in [0, size)."""
    table = np.empty(size, np.float64)
    for h in range(size):
        table[h] = _phi_direct(h, criterion)
    return table


@njit(cache=True)
def phi(h, table, criterion):
    """Per-class term of a count ``h``."""
    if h < table.shape[0]:
        return table[h]
    return _phi_direct(h, criterion)


@njit(cache=True)
def g_of(n, s, table, criterion):
    """Weighted impurity ``|h| * impurity(h)`` from ``n`` and ``S``."""
    if n <= 0:
        return 0.0
    if criterion == GINI:
        return float(n) - s / float(n)
    if criterion == HELLINGER:
        return math.sqrt(float(n)) * s
    return phi(n, table, criterion) - s


@njit(cache=True)
def hist_cost(hist, table, criterion):
    """``g`` of one histogram."""
    n = 0
    s = 0.0
    for c in range(hist.shape[0]):
        n += hist[c]
        s += phi(hist[c], table, criterion)
    return g_of(n, s, table, criterion)


@njit(cache=True)
def node_costs(hists, table, criterion):
    """``g`` of every row of ``hists`` (the energy ``|S| H(S)`` of each node)."""
    out = np.empty(hists.shape[0])
    for i in range(hists.shape[0]):
        out[i] = hist_cost(hists[i], table, criterion)
    return out


def criterion_code(name: str) -> int:
    """Integer code of the histogram objective of a criterion name (see :data:`CRITERIA`)."""
    try:
        return CRITERIA[name]
    except KeyError:
        raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {name!r}") from None


def make_phi_table(max_count: int, criterion: int) -> np.ndarray:
    """Table of per-class terms for counts up to ``max_count`` (capped in size)."""
    return phi_table(int(min(max_count + 1, _TABLE_LIMIT)), criterion)


def impurity(hist: ArrayLike, criterion: str = "entropy") -> float:
    """Impurity of one class histogram: entropy in bits, Gini, or for Hellinger
    ``sum_c sqrt(h_c / n)`` (1 when pure, sqrt(C) when uniform; see the module notes).

    >>> impurity([5, 5], "gini")
    0.5
    """
    hist = np.asarray(hist, dtype=np.int64)
    n = int(hist.sum())
    if n == 0:
        return 0.0
    code = criterion_code(criterion)
    return hist_cost(hist, make_phi_table(n, code), code) / n


def split_gain(left: ArrayLike, right: ArrayLike, criterion: str = "entropy") -> float:
    """Decrease in impurity per sample when a node splits into ``left`` and ``right``."""
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    n_left, n_right = int(left.sum()), int(right.sum())
    n = n_left + n_right
    return impurity(left + right, criterion) - (
        n_left * impurity(left, criterion) + n_right * impurity(right, criterion)
    ) / n


@njit(cache=True)
def best_threshold(left, wl, parent, min_leaf, phi_table, criterion, costs):
    """Best valid threshold of one candidate, from its left histograms ``left[t]``
    (weights ``wl[t]``) and the parent histogram (both may be restricted to the classes
    the parent holds). Writes each threshold's cost ``g(left) + g(right)`` (inf when a
    side keeps fewer than ``min_leaf`` samples) to ``costs``; returns the best (t, cost),
    or (-1, inf). Counts are not negative, so a threshold whose left weight equals the
    previous one's has the same left histogram, hence the same cost: it is copied, not
    computed again (no sample between two thresholds; many, on few distinct values)."""
    w_parent = parent.sum()
    best = np.inf
    best_t = -1
    for t in range(wl.shape[0]):
        w = wl[t]
        if t > 0 and w == wl[t - 1]:
            costs[t] = costs[t - 1]  # not better than the best so far: it was compared
            continue
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
