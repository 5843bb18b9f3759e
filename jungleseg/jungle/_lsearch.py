"""LSearch: optimise the splits and out-edges of one DAG level
(``docs/how-it-works/design.md``, "Training one level").

Inputs per level of one DAG: ``n`` parents, each with a table of candidate left
histograms ``table[i, k, t, :]`` (candidate feature k, threshold t) and its histogram
``P[i]``; and ``M`` children. The state is, per parent, a chosen split (k_i, t_i) and
two edges (l_i, r_i); per child, its histogram ``H[j]`` with total ``nH[j]``, the
per-class sum ``S[j]`` and the cost ``f[j] = g(nH[j], S[j])`` (see ``_criterion``).
Split steps and branch steps only move histograms: no sample is touched here.

A candidate (k, t) is valid when both sides hold at least ``min_leaf`` samples; its
tree cost ``tree_cost[i, k, t] = g(left) + g(right)`` is inf otherwise. Every parent
passed in has at least one valid candidate.

Both objectives are concave and positively homogeneous, hence superadditive:
``g(a + b) >= g(a) + g(b)``. Two exact prunings follow. A split step scans candidates
by increasing tree cost and stops once ``g(A) + g(B) + tree_cost`` (a lower bound of
the cost with the children's other contents A, B) reaches the best found; it never
scans invalid candidates, nor a threshold that leaves the same samples left as the one
before it (:func:`scan_order`). A long scan computes the costs of every candidate it
may still reach at once, in memory order, rather than one at a time as it reaches them,
with the same arithmetic, so the same choices. A branch
step skips an edge whose child costs no more with it than without it plus its own
cost, since no other child can do better than that. Steps whose inputs have not
changed since they last changed nothing are skipped as well (see ``lsearch``).
"""
import numpy as np
from numba import njit

from .._rng import next_below
from ._criterion import g_of, phi
from ._radix import argsort_float64

# A move must gain more than this fraction of the costs it compares: rounding cannot
# then make two equivalent states each look better than the other (a move cycle).
_REL_GAIN = 1e-12
#: A split step computes the costs of the first candidates it scans one by one, and those
#: of every candidate it may still reach at once when its scan goes on past them.
_ONE_BY_ONE = 4


@njit(cache=True)
def class_support(P):
    """Per parent, the classes it holds (``supp[i, :nsupp[i]]``)."""
    n, n_classes = P.shape
    supp = np.zeros((n, n_classes), np.int64)
    nsupp = np.zeros(n, np.int64)
    for i in range(n):
        for c in range(n_classes):
            if P[i, c] > 0:
                supp[i, nsupp[i]] = c
                nsupp[i] += 1
    return supp, nsupp


@njit(cache=True)
def _child_s(H, j, phi_table, criterion):
    s = 0.0
    for c in range(H.shape[1]):
        s += phi(H[j, c], phi_table, criterion)
    return s


@njit(cache=True)
def _s_after(H, S, j, x, sign, supp, ns, phi_table, criterion):
    """``S[j]`` after adding ``sign * x`` (x nonzero only on ``supp[:ns]``) to child j."""
    s = S[j]
    for q in range(ns):
        c = supp[q]
        s += phi(H[j, c] + sign * x[c], phi_table, criterion) - phi(H[j, c], phi_table, criterion)
    return s


@njit(cache=True)
def _move(H, nH, S, f, j, x, w, sign, supp, ns, phi_table, criterion):
    """Add ``sign * x`` (weight ``w``) to child j and refresh its S and cost from scratch."""
    for q in range(ns):
        c = supp[q]
        H[j, c] += sign * x[c]
    nH[j] += sign * w
    S[j] = _child_s(H, j, phi_table, criterion)
    f[j] = g_of(nH[j], S[j], phi_table, criterion)


@njit(cache=True)
def _best_child(H, nH, S, f, x, w, supp, ns, skip, phi_table, criterion):
    """Child that adding ``x`` raises the cost least (excluding ``skip``), and that rise.

    Each child's ``S`` after the addition (:func:`_s_after`) is summed class by class over
    all children at once: the same terms in the same order per child, independent across
    children, so the processor overlaps them."""
    m = H.shape[0]
    s = S.copy()
    for q in range(ns):
        c = supp[q]
        xc = x[c]
        for j in range(m):
            s[j] += phi(H[j, c] + xc, phi_table, criterion) - phi(H[j, c], phi_table, criterion)
    best = np.inf
    best_j = -1
    for j in range(m):
        if j == skip:
            continue
        d = g_of(nH[j] + w, s[j], phi_table, criterion) - f[j]
        if d < best:
            best = d
            best_j = j
    return best_j, best


@njit(cache=True)
def _candidate_costs(i, kk, t_lo, t_hi, a, b, rest_a, rest_b, n_a, n_b, table, wl, P, wP, sp,
                     ns, L, H, phi_table, criterion, s1, s2, costs):
    """Cost of children a and b if parent i used candidate kk with threshold t, for each t
    in ``t_lo:t_hi`` (``costs[kk * T + t]``; meaningless for the thresholds a scan leaves
    out, :func:`scan_order`, which are never read).

    Class by class over the thresholds at once: each threshold's sums add the same terms
    in the same order as one threshold alone would, and the thresholds' sums are
    independent, so the processor overlaps them. ``s1`` and ``s2`` are scratch of T."""
    n_t = wl.shape[2]
    s1[t_lo:t_hi] = rest_a
    s2[t_lo:t_hi] = rest_b
    for q in range(ns):
        c = sp[q]
        base_a = H[a, c] - L[i, c]  # child a without parent i's left side
        base_b = H[b, c] + L[i, c]  # child b with all of parent i
        for tt in range(t_lo, t_hi):
            lc = table[i, kk, tt, c]
            s1[tt] += phi(base_a + lc, phi_table, criterion)
            s2[tt] += phi(base_b - lc, phi_table, criterion)
    for tt in range(t_lo, t_hi):
        w = wl[i, kk, tt]
        costs[kk * n_t + tt] = g_of(n_a + w, s1[tt], phi_table, criterion) + g_of(
            n_b + wP[i] - w, s2[tt], phi_table, criterion)


@njit(cache=True)
def split_step(i, table, wl, tree_cost, cand_order, n_scan, P, wP, supp, nsupp, k, t, l, r, L,
               H, nH, S, f, phi_table, criterion):
    """Give parent i the split that minimises its children's cost, edges fixed, scanning
    its candidates ``cand_order[i, :n_scan[i]]`` (:func:`scan_orders`).

    Returns the change of the objective (<= 0 up to rounding); 0 when nothing changed.
    """
    a = l[i]
    b = r[i]
    if a == b:  # all samples reach one child whatever the split
        return 0.0
    ns = nsupp[i]
    sp = supp[i]
    w_cur = wl[i, k[i], t[i]]
    n_a = nH[a] - w_cur  # children a and b without parent i
    n_b = nH[b] - (wP[i] - w_cur)
    rest_a = S[a]  # their per-class sums outside parent i's classes
    rest_b = S[b]
    for q in range(ns):
        rest_a -= phi(H[a, sp[q]], phi_table, criterion)
        rest_b -= phi(H[b, sp[q]], phi_table, criterion)
    s_a = rest_a
    s_b = rest_b
    for q in range(ns):
        c = sp[q]
        s_a += phi(H[a, c] - L[i, c], phi_table, criterion)
        s_b += phi(H[b, c] - (P[i, c] - L[i, c]), phi_table, criterion)
    bound = g_of(n_a, s_a, phi_table, criterion) + g_of(n_b, s_b, phi_table, criterion)
    n_k, n_t = wl.shape[1], wl.shape[2]
    costs = np.empty(n_k * n_t)
    s1 = np.empty(n_t)
    s2 = np.empty(n_t)
    best_k = k[i]
    best_t = t[i]
    _candidate_costs(i, best_k, best_t, best_t + 1, a, b, rest_a, rest_b, n_a, n_b, table, wl,
                     P, wP, sp, ns, L, H, phi_table, criterion, s1, s2, costs)
    best = costs[best_k * n_t + best_t]
    for q in range(n_scan[i]):
        idx = cand_order[i, q]
        kk = idx // n_t
        tt = idx % n_t
        if not bound + tree_cost[i, kk, tt] < best:
            break  # sorted: no later candidate can do better
        if q < _ONE_BY_ONE:
            _candidate_costs(i, kk, tt, tt + 1, a, b, rest_a, rest_b, n_a, n_b, table, wl, P,
                             wP, sp, ns, L, H, phi_table, criterion, s1, s2, costs)
        elif q == _ONE_BY_ONE:
            # A long scan: the rest of it can reach only candidates with bound + tree cost
            # < best (best only falls), whose costs are computed now, all thresholds at
            # once, in memory order through the parent's table.
            for k2 in range(n_k):
                reached = False
                for t2 in range(n_t):
                    reached |= bound + tree_cost[i, k2, t2] < best
                if reached:
                    _candidate_costs(i, k2, 0, n_t, a, b, rest_a, rest_b, n_a, n_b, table,
                                     wl, P, wP, sp, ns, L, H, phi_table, criterion, s1, s2,
                                     costs)
        cost = costs[idx]
        if cost < best - _REL_GAIN * (1.0 + abs(best)):
            best = cost
            best_k = kk
            best_t = tt
    if best_k == k[i] and best_t == t[i]:
        return 0.0
    old = f[a] + f[b]
    _move(H, nH, S, f, a, L[i], w_cur, -1, sp, ns, phi_table, criterion)
    _move(H, nH, S, f, b, P[i] - L[i], wP[i] - w_cur, -1, sp, ns, phi_table, criterion)
    k[i] = best_k
    t[i] = best_t
    for c in range(P.shape[1]):
        L[i, c] = table[i, best_k, best_t, c]
    w_new = wl[i, best_k, best_t]
    _move(H, nH, S, f, a, L[i], w_new, 1, sp, ns, phi_table, criterion)
    _move(H, nH, S, f, b, P[i] - L[i], wP[i] - w_new, 1, sp, ns, phi_table, criterion)
    return f[a] + f[b] - old


@njit(cache=True)
def branch_step(i, side, P, wP, supp, nsupp, wl, k, t, l, r, L, H, nH, S, f,
                phi_table, criterion):
    """Redirect parent i's left (side 0) or right (side 1) edge to the best child.

    Returns the change of the objective (< 0 when the edge moved, else 0).
    """
    edges = l if side == 0 else r
    x = L[i] if side == 0 else P[i] - L[i]
    w = wl[i, k[i], t[i]] if side == 0 else wP[i] - wl[i, k[i], t[i]]
    j0 = edges[i]
    if w == 0:
        return 0.0
    ns = nsupp[i]
    sp = supp[i]
    removal = g_of(nH[j0] - w, _s_after(H, S, j0, x, -1, sp, ns, phi_table, criterion),
                   phi_table, criterion) - f[j0]
    s_x = 0.0
    for q in range(ns):
        s_x += phi(x[sp[q]], phi_table, criterion)
    if removal + g_of(w, s_x, phi_table, criterion) >= 0.0:
        return 0.0  # the edge pays no merge penalty where it is
    j, rise = _best_child(H, nH, S, f, x, w, sp, ns, j0, phi_table, criterion)
    if j < 0 or removal + rise >= -_REL_GAIN * (1.0 + f[j0] + f[j]):
        return 0.0
    old = f[j0] + f[j]
    _move(H, nH, S, f, j0, x, w, -1, sp, ns, phi_table, criterion)
    _move(H, nH, S, f, j, x, w, 1, sp, ns, phi_table, criterion)
    edges[i] = j
    return f[j0] + f[j] - old


@njit(cache=True)
def scan_order(tree_cost, wl, order, values, index, sort_scratch):
    """The candidates (``k * T + t``) a split step of one parent scans, by increasing tree
    cost, equal costs in index order (a stable sort): ``order[:n]``; returns n.

    Left out, since scanning them could change nothing: invalid candidates (inf cost),
    and a threshold whose left weight equals the previous threshold's of the same
    candidate. No sample lies between the two, so their left histograms, tree costs and
    split costs are equal, and the first of them is scanned before it (on few distinct
    values, most thresholds are such repeats). ``values`` and ``index`` are scratch as
    long as ``order``; ``sort_scratch``: (rank, keys, spare keys, spare rank, counts), the
    work arrays of :func:`._radix.argsort_float64` and its result."""
    n_t = wl.shape[1]
    n = 0
    for kk in range(wl.shape[0]):
        for tt in range(n_t):
            cost = tree_cost[kk, tt]
            if cost == np.inf or (tt > 0 and wl[kk, tt] == wl[kk, tt - 1]):
                continue
            index[n] = kk * n_t + tt
            values[n] = cost
            n += 1
    rank, keys, spare_keys, spare, counts = sort_scratch
    argsort_float64(values[:n], rank, keys, spare_keys, spare, counts)
    for q in range(n):
        order[q] = index[rank[q]]
    return n


@njit(cache=True)
def scan_orders(tree_cost, wl):
    """:func:`scan_order` of every parent: (order, n_scan), parent i scanning
    ``order[i, :n_scan[i]]``."""
    n, n_k, n_t = wl.shape
    order = np.empty((n, n_k * n_t), np.int64)
    n_scan = np.empty(n, np.int64)
    values = np.empty(n_k * n_t)
    index = np.empty(n_k * n_t, np.int64)
    sort_scratch = (np.empty(n_k * n_t, np.int64), np.empty(n_k * n_t, np.uint64),
                    np.empty(n_k * n_t, np.uint64), np.empty(n_k * n_t, np.int64),
                    np.empty(256, np.int64))
    for i in range(n):
        n_scan[i] = scan_order(tree_cost[i], wl[i], order[i], values, index, sort_scratch)
    return order, n_scan


@njit(cache=True)
def greedy_init(table, wl, P, wP, supp, nsupp, k, t, n_children, phi_table, criterion):
    """The paper's greedy start: fresh child pairs for the most energetic parents, the
    remaining parents' edges to the children whose cost they raise least.

    ``k, t`` hold each parent's best tree split on entry. Returns (l, r, L, H, nH, S, f).
    """
    n, n_classes = P.shape
    energy = np.empty(n)
    for i in range(n):
        s = 0.0
        for c in range(n_classes):
            s += phi(P[i, c], phi_table, criterion)
        energy[i] = g_of(wP[i], s, phi_table, criterion)
    order = np.argsort(-energy, kind="mergesort")
    L = np.empty((n, n_classes), np.int64)
    for i in range(n):
        for c in range(n_classes):
            L[i, c] = table[i, k[i], t[i], c]
    l = np.empty(n, np.int64)
    r = np.empty(n, np.int64)
    H = np.zeros((n_children, n_classes), np.int64)
    nH = np.zeros(n_children, np.int64)
    S = np.zeros(n_children)
    f = np.zeros(n_children)
    n_pairs = n_children // 2
    for rank in range(n):
        i = order[rank]
        w = wl[i, k[i], t[i]]
        R = P[i] - L[i]
        if rank < n_pairs:
            l[i] = 2 * rank
            r[i] = 2 * rank + 1
        else:
            l[i], _ = _best_child(H, nH, S, f, L[i], w, supp[i], nsupp[i], -1, phi_table, criterion)
        _move(H, nH, S, f, l[i], L[i], w, 1, supp[i], nsupp[i], phi_table, criterion)
        if rank >= n_pairs:
            r[i], _ = _best_child(H, nH, S, f, R, wP[i] - w, supp[i], nsupp[i], -1,
                                  phi_table, criterion)
        _move(H, nH, S, f, r[i], R, wP[i] - w, 1, supp[i], nsupp[i], phi_table, criterion)
    return l, r, L, H, nH, S, f


@njit(cache=True)
def lsearch(table, wl, tree_cost, P, best_k, best_t, n_children, max_sweeps, stochastic,
            state, phi_table, criterion, trace):
    """Optimise one level of one DAG.

    Full variant: sweeps over all parents (split step, then both branch steps) until a
    sweep changes nothing or ``max_sweeps`` sweeps ran. Stochastic variant: the same
    budget of single-parent steps on parents drawn at random, stopping after ``n``
    steps in a row without a change. When ``trace`` is non-empty, the objective after
    every step is written to it (for tests).

    Returns (k, t, l, r, E, steps).
    """
    n = P.shape[0]
    wP = np.empty(n, np.int64)
    for i in range(n):
        wP[i] = P[i].sum()
    supp, nsupp = class_support(P)
    cand_order, n_scan = scan_orders(tree_cost, wl)
    k = best_k.copy()
    t = best_t.copy()
    l, r, L, H, nH, S, f = greedy_init(table, wl, P, wP, supp, nsupp, k, t, n_children,
                                       phi_table, criterion)
    e = f.sum()
    steps = 0
    if n_children >= 2 * n:  # every parent has its own pair: a tree level
        return k, t, l, r, e, steps
    # A split step depends only on its parent's two children, a branch scan on every
    # child: skip a step whose inputs did not change since it last changed nothing.
    version = np.zeros(n_children, np.int64)  # bumped whenever a child's contents change
    split_seen = np.full((n, 4), -1, np.int64)  # (l, r, version[l], version[r]) last time
    moves = 0
    scan_seen = np.full((n, 2), -1, np.int64)  # moves when a scan last found nothing
    quiet = 0
    for step in range(max_sweeps * n):
        if stochastic:
            state, i = next_below(state, n)
        else:
            i = step % n
        a = l[i]
        b = r[i]
        d = 0.0
        changed = False
        if not (split_seen[i, 0] == a and split_seen[i, 1] == b
                and split_seen[i, 2] == version[a] and split_seen[i, 3] == version[b]):
            k0 = k[i]
            t0 = t[i]
            d += split_step(i, table, wl, tree_cost, cand_order, n_scan, P, wP, supp, nsupp,
                            k, t, l, r, L, H, nH, S, f, phi_table, criterion)
            if k[i] != k0 or t[i] != t0:
                version[a] += 1
                version[b] += 1
                moves += 1
                changed = True
            split_seen[i, 0] = a
            split_seen[i, 1] = b
            split_seen[i, 2] = version[a]
            split_seen[i, 3] = version[b]
        for side in range(2):
            if scan_seen[i, side] == moves:
                continue
            edges = l if side == 0 else r
            j0 = edges[i]
            d += branch_step(i, side, P, wP, supp, nsupp, wl, k, t, l, r, L, H, nH, S, f,
                             phi_table, criterion)
            if edges[i] != j0:
                version[j0] += 1
                version[edges[i]] += 1
                moves += 1
                changed = True
            else:
                scan_seen[i, side] = moves
        e += d
        if trace.shape[0] > steps:
            trace[steps] = e
        steps += 1
        quiet = 0 if changed else quiet + 1
        if quiet >= n:  # n steps in a row changed nothing: converged
            break
    return k, t, l, r, e, steps
