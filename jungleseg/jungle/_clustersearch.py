"""ClusterSearch: the jungle paper's second level optimiser (``docs/how-it-works/design.md``,
"ClusterSearch").

Each parent keeps its best tree split, which gives 2 |N_p| *temporary children*, the
parents' left and right histograms. These are grouped into the level's M children by hard
Bregman clustering (Banerjee et al., JMLR 2005): a temporary child with counts ``x``
(total ``w``, distribution ``p = x / w``) costs ``w D(p, mu_j)`` in cluster j, whose centre
``mu_j`` is the count-weighted mean of its members' distributions. With the entropy
criterion ``D`` is the KL divergence ``KL(p || mu)`` (centre second), with Gini the squared
Euclidean distance. Summed over a cluster, these costs are exactly ``g(H_j) - sum g(x)``
(the cluster's Bregman information), so minimising them minimises the level objective
``E = sum_j g(H_j)`` with the splits held fixed.

The clustering starts from LSearch's greedy initialisation (fresh child pairs for the most
energetic parents, the other edges where they raise ``E`` least), then

1. runs Lloyd iterations (assign every temporary child to its cheapest centre, recompute
   the centres) until no assignment changes, refilling a cluster that falls empty with the
   member that costs most where it is (that never raises ``E``);
2. then, optionally, exact single-child moves: Lloyd compares costs against centres that
   the move itself would shift, so its fixed points can still be improved by moving one
   temporary child (Hartigan's rule). A move is LSearch's branch step, which computes the
   exact change of ``E``. Every such fixed point is also a Lloyd fixed point.

The ``alternate`` variant then gives every parent the split that suits the clusters its
edges enter (LSearch's split step) and clusters again, until a round changes no split.
Every step lowers ``E`` or leaves it unchanged; nothing is random, so the result depends on
the tables alone. The state is LSearch's (see ``_lsearch``); only histograms move.
"""
import math

import numpy as np
from numba import njit

from ._criterion import GINI
from ._lsearch import (
    _REL_GAIN,
    _move,
    branch_step,
    class_support,
    greedy_init,
    scan_orders,
    split_step,
)

#: Lloyd iterations (and rounds of exact moves) per clustering at most.
MAX_ITERATIONS = 100


@njit(cache=True)
def _centres(H, nH, criterion):
    """Per cluster the centre's terms: log2 of its distribution (entropy; -inf for an
    absent class) or its distribution and squared norm (Gini)."""
    m, n_classes = H.shape
    mu = np.zeros((m, n_classes))
    norm = np.zeros(m)
    for j in range(m):
        if nH[j] == 0:
            continue
        for c in range(n_classes):
            q = H[j, c] / nH[j]
            if criterion == GINI:
                mu[j, c] = q
                norm[j] += q * q
            else:
                mu[j, c] = math.log2(q) if H[j, c] > 0 else -np.inf
    return mu, norm


@njit(cache=True)
def divergence(x, w, supp, ns, j, nH, mu, norm, criterion):
    """``w D(x / w, mu_j)``: the cost of a temporary child with counts ``x`` (nonzero only
    on ``supp[:ns]``) in cluster j; inf for an empty cluster, or (KL) when the child has a
    class the cluster lacks."""
    if nH[j] == 0:
        return np.inf
    acc = 0.0
    if criterion == GINI:
        for q in range(ns):
            c = supp[q]
            acc += x[c] * x[c] / w - 2.0 * x[c] * mu[j, c]
        return max(acc + w * norm[j], 0.0)
    log_w = math.log2(w)
    for q in range(ns):
        c = supp[q]
        if x[c] > 0:
            if mu[j, c] == -np.inf:
                return np.inf
            acc += x[c] * (math.log2(x[c]) - log_w - mu[j, c])
    return max(acc, 0.0)


@njit(cache=True)
def _temporary(i, side, P, L, wl, wP, k, t):
    """Counts and size of parent i's left (side 0) or right temporary child."""
    w = wl[i, k[i], t[i]]
    if side == 0:
        return L[i], w
    return P[i] - L[i], wP[i] - w


@njit(cache=True)
def _members(l, r, m):
    count = np.zeros(m, np.int64)
    for i in range(l.shape[0]):
        count[l[i]] += 1
        count[r[i]] += 1
    return count


@njit(cache=True)
def lloyd_iteration(P, wP, supp, nsupp, wl, k, t, l, r, L, H, nH, S, f, phi_table, criterion):
    """One Lloyd iteration: every temporary child to its cheapest centre (ties and
    near-ties keep the current cluster), centres recomputed, then empty clusters refilled
    one by one with the member of a shared cluster that costs most where it is, while that
    cost is positive. Returns the number of temporary children that moved."""
    n = P.shape[0]
    m = H.shape[0]
    mu, norm = _centres(H, nH, criterion)
    target = np.empty((n, 2), np.int64)
    for i in range(n):
        for side in range(2):
            x, w = _temporary(i, side, P, L, wl, wP, k, t)
            own = l[i] if side == 0 else r[i]
            best_j = own
            best = divergence(x, w, supp[i], nsupp[i], own, nH, mu, norm, criterion)
            for j in range(m):
                d = divergence(x, w, supp[i], nsupp[i], j, nH, mu, norm, criterion)
                if d < best - _REL_GAIN * (1.0 + best):
                    best = d
                    best_j = j
            target[i, side] = best_j
    moved = 0
    for i in range(n):
        for side in range(2):
            edges = l if side == 0 else r
            if target[i, side] == edges[i]:
                continue
            x, w = _temporary(i, side, P, L, wl, wP, k, t)
            _move(H, nH, S, f, edges[i], x, w, -1, supp[i], nsupp[i], phi_table, criterion)
            _move(H, nH, S, f, target[i, side], x, w, 1, supp[i], nsupp[i], phi_table,
                  criterion)
            edges[i] = target[i, side]
            moved += 1
    members = _members(l, r, m)
    for empty in range(m):
        if members[empty] > 0:
            continue
        mu, norm = _centres(H, nH, criterion)
        worst = 0.0
        worst_i = -1
        worst_side = 0
        for i in range(n):
            for side in range(2):
                own = l[i] if side == 0 else r[i]
                if members[own] < 2:
                    continue
                x, w = _temporary(i, side, P, L, wl, wP, k, t)
                d = divergence(x, w, supp[i], nsupp[i], own, nH, mu, norm, criterion)
                if d > worst + _REL_GAIN * (1.0 + worst):
                    worst = d
                    worst_i = i
                    worst_side = side
        if worst_i < 0:
            break  # every shared cluster holds identical distributions: leave it empty
        edges = l if worst_side == 0 else r
        x, w = _temporary(worst_i, worst_side, P, L, wl, wP, k, t)
        _move(H, nH, S, f, edges[worst_i], x, w, -1, supp[worst_i], nsupp[worst_i], phi_table,
              criterion)
        _move(H, nH, S, f, empty, x, w, 1, supp[worst_i], nsupp[worst_i], phi_table, criterion)
        members[edges[worst_i]] -= 1
        members[empty] += 1
        edges[worst_i] = empty
        moved += 1
    return moved


@njit(cache=True)
def exact_move_sweep(P, wP, supp, nsupp, wl, k, t, l, r, L, H, nH, S, f, phi_table, criterion):
    """Move each temporary child in turn to the cluster that lowers ``E`` most (LSearch's
    branch step, exact); returns the number of moves."""
    moved = 0
    for i in range(P.shape[0]):
        for side in range(2):
            if branch_step(i, side, P, wP, supp, nsupp, wl, k, t, l, r, L, H, nH, S, f,
                           phi_table, criterion) < 0.0:
                moved += 1
    return moved


@njit(cache=True)
def _record(trace, at, value):
    if trace.shape[0] > at:
        trace[at] = value
    return at + 1


@njit(cache=True)
def cluster(P, wP, supp, nsupp, wl, k, t, l, r, L, H, nH, S, f, exact_moves, phi_table,
            criterion, trace, at):
    """Cluster the temporary children from the current assignment: Lloyd iterations to a
    fixed point, then (``exact_moves``) exact single moves until none gains, repeated while
    the moves change anything. ``E`` after every iteration or sweep goes to ``trace`` from
    position ``at``; returns (total moves, next trace position)."""
    total = 0
    for _ in range(MAX_ITERATIONS):
        for _ in range(MAX_ITERATIONS):
            moved = lloyd_iteration(P, wP, supp, nsupp, wl, k, t, l, r, L, H, nH, S, f,
                                    phi_table, criterion)
            at = _record(trace, at, f.sum())
            total += moved
            if moved == 0:
                break
        if not exact_moves:
            break
        swept = 0
        for _ in range(MAX_ITERATIONS):
            moved = exact_move_sweep(P, wP, supp, nsupp, wl, k, t, l, r, L, H, nH, S, f,
                                     phi_table, criterion)
            at = _record(trace, at, f.sum())
            swept += moved
            if moved == 0:
                break
        total += swept
        if swept == 0:
            break
    return total, at


@njit(cache=True)
def clustersearch(table, wl, tree_cost, P, best_k, best_t, n_children, max_rounds, alternate,
                  exact_moves, phi_table, criterion, trace):
    """Optimise one level of one DAG by clustering its temporary children.

    ``alternate``: after each clustering, a split step for every parent (edges fixed), then
    cluster again; at most ``max_rounds`` rounds, fewer when a round changes no split. When
    ``trace`` is non-empty, ``E`` after the greedy start and after every Lloyd iteration,
    sweep of exact moves and sweep of split steps is written to it (for tests).

    Returns (k, t, l, r, E, rounds).
    """
    n = P.shape[0]
    wP = np.empty(n, np.int64)
    for i in range(n):
        wP[i] = P[i].sum()
    supp, nsupp = class_support(P)
    k = best_k.copy()
    t = best_t.copy()
    l, r, L, H, nH, S, f = greedy_init(table, wl, P, wP, supp, nsupp, k, t, n_children,
                                       phi_table, criterion)
    if n_children >= 2 * n:  # every parent has its own pair: a tree level
        return k, t, l, r, f.sum(), 0
    at = _record(trace, 0, f.sum())
    _, at = cluster(P, wP, supp, nsupp, wl, k, t, l, r, L, H, nH, S, f, exact_moves, phi_table,
                    criterion, trace, at)
    rounds = 1
    if alternate:
        cand_order, n_scan = scan_orders(tree_cost, wl)
        while rounds < max_rounds:
            changed = 0
            for i in range(n):
                k0 = k[i]
                t0 = t[i]
                split_step(i, table, wl, tree_cost, cand_order, n_scan, P, wP, supp, nsupp, k,
                           t, l, r, L, H, nH, S, f, phi_table, criterion)
                if k[i] != k0 or t[i] != t0:
                    changed += 1
            at = _record(trace, at, f.sum())
            if changed == 0:
                break
            _, at = cluster(P, wP, supp, nsupp, wl, k, t, l, r, L, H, nH, S, f, exact_moves,
                            phi_table, criterion, trace, at)
            rounds += 1
    return k, t, l, r, f.sum(), rounds
