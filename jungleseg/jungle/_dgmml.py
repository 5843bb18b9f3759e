"""dGMML split proposals (Li and Chen, arXiv:2204.11011): each node's feature by a closed-form
weight, its threshold between the classes' extremes, with no threshold search.

Per node and candidate feature k, from the weighted responses of the node's entries, the
diagonal GMML weight is a per-axis Fisher ratio (the authors' ``dgmmltree.m`` for two
classes; for more, the same ratio over all classes, which equals it up to a constant for
two)::

    w_k^2 = sum_c n_c (mu_ck - mu_k)^2 / sum_c sum_{i in c} (x_ik - mu_ck)^2

A constant feature gets 0; a feature with no spread within classes but different class
means gets +inf (the authors' code gives a constant feature weight 1 instead, which lets
it beat informative ones). The node takes the first candidate of largest weight.

Threshold (the authors' ``mytree.m`` rule, for two classes): U is the class of larger
mean and L the other; each side's robust extreme is the mean of its 5 smallest (U) or 6
largest (L) responses when it holds more than 10 samples, else its minimum (maximum);
``tau = (min_U + max_L) / 2``, snapped to the midpoint between the sorted response nearest
to it and the next larger one. With more classes, the classes present are ordered by mean
and cut at the largest gap between consecutive means into a low and a high group, which
take the roles of L and U. If the snapped threshold leaves a side with fewer than
``min_samples_leaf`` samples, the median split is used instead (the authors' other rule);
if that fails too, the node stays a leaf.

The proposal's left class histogram is returned so the jungle's levels can score it with
entropy and LSearch can route its branches (``docs/how-it-works/criteria.md``).
"""
import numpy as np
from numba import njit, prange

from ..features._kernels import at_sample, response_at
from ._criterion import hist_cost

_FEW = 10  # a class with more samples than this uses robust extremes
_LOW_COUNT, _HIGH_COUNT = 5, 6  # as the authors' code slices them


@njit(cache=True)
def gmml_weights(values, label, weight, n_classes):
    """dGMML weight of each column of ``values`` ((n, K) responses of one node's samples,
    class ``label``, weight ``weight``); the module notes give the formula."""
    n, n_k = values.shape
    out = np.zeros(n_k)
    count = np.zeros(n_classes)
    total = np.zeros(n_classes)
    for k in range(n_k):
        count[:] = 0.0
        total[:] = 0.0
        for q in range(n):
            count[label[q]] += float(weight[q])
            total[label[q]] += float(weight[q]) * values[q, k]
        mean = total.sum() / count.sum()
        between = 0.0
        for c in range(n_classes):
            if count[c] > 0:
                total[c] /= count[c]  # now the class mean
                between += count[c] * (total[c] - mean) ** 2
        within = 0.0
        for q in range(n):
            within += float(weight[q]) * (values[q, k] - total[label[q]]) ** 2
        if between <= 0.0:
            out[k] = 0.0
        elif within <= 0.0:
            out[k] = np.inf
        else:
            out[k] = np.sqrt(between / within)
    return out


@njit(cache=True)
def _robust(sorted_values, low):
    """Mean of the few smallest (``low``) or largest values of a sorted class group when
    it holds more than ``_FEW``, else its minimum or maximum."""
    m = sorted_values.shape[0]
    if m <= _FEW:
        return sorted_values[0] if low else sorted_values[m - 1]
    if low:
        return sorted_values[:_LOW_COUNT].mean()
    return sorted_values[m - _HIGH_COUNT:].mean()


@njit(cache=True)
def _snapped(sorted_all, tau):
    """Midpoint between the sorted value nearest to ``tau`` and the next larger value;
    NaN when the nearest is the largest value."""
    m = sorted_all.shape[0]
    i = np.argmin(np.abs(sorted_all - tau))
    while i + 1 < m and sorted_all[i + 1] == sorted_all[i]:
        i += 1
    if i + 1 >= m:
        return np.nan
    return 0.5 * (sorted_all[i] + sorted_all[i + 1])


@njit(cache=True)
def gmml_threshold(x, label, n_classes):
    """The rule's threshold on responses ``x`` (float64) of classes ``label``; NaN if none
    (see the module notes)."""
    count = np.zeros(n_classes)
    mean = np.zeros(n_classes)
    for q in range(x.shape[0]):
        count[label[q]] += 1.0
        mean[label[q]] += x[q]
    present = np.flatnonzero(count > 0)
    if present.shape[0] < 2:
        return np.nan
    means = mean[present] / count[present]
    order = np.argsort(means, kind="mergesort")
    cut = 0
    gap = -1.0
    for j in range(order.shape[0] - 1):
        d = means[order[j + 1]] - means[order[j]]
        if d > gap:
            gap = d
            cut = j
    high = np.zeros(n_classes, np.bool_)
    for j in range(cut + 1, order.shape[0]):
        high[present[order[j]]] = True
    is_high = np.empty(x.shape[0], np.bool_)
    for q in range(x.shape[0]):
        is_high[q] = high[label[q]]
    upper = np.sort(x[is_high])
    lower = np.sort(x[~is_high])
    tau = 0.5 * (_robust(upper, True) + _robust(lower, False))
    return _snapped(np.sort(x), tau)


@njit(cache=True)
def _left_hist(x, label, weight, tau, n_classes, out):
    out[:] = 0
    for q in range(x.shape[0]):
        if x[q] < tau:
            out[label[q]] += weight[q]
    return out.sum()


@njit(parallel=True, cache=True, nogil=True)
def dgmml_splits(nodes, order, start, entry_sample, entry_weight, s_image, s_row, s_col,
                 label, store, unclamped, kinds, params, n_drawn, P, min_leaf, phi_table,
                 criterion):
    """Each node's dGMML proposal: (candidate, threshold, left histogram, left weight,
    cost ``g(left) + g(right)``) with cost inf and candidate -1 where there is none.
    Nodes are independent and each sums in entry order, so the result does not depend on
    the thread count."""
    pixels, _, _, _, _, _, integral, integral_offset = store
    n = nodes.shape[0]
    n_cand = kinds.shape[1]
    n_classes = P.shape[1]
    best_k = np.full(n, -1, np.int64)
    tau = np.full(n, np.nan, np.float32)
    left = np.zeros((n, n_classes), np.int64)
    w_left = np.zeros(n, np.int64)
    cost = np.full(n, np.inf)
    for r in prange(n):
        i = nodes[r]
        m = start[i + 1] - start[i]
        n_k = n_drawn[r]
        if m < 2 or n_k == 0:
            continue
        values = np.empty((m, n_k))
        lab = np.empty(m, np.int64)
        wt = np.empty(m, np.int64)
        for q in range(m):
            e = order[start[i] + q]
            s = entry_sample[e]
            lab[q] = label[s]
            wt[q] = entry_weight[e]
            at = at_sample(store, s_image[s], s_row[s], s_col[s])
            for k in range(n_k):
                values[q, k] = response_at(kinds[r, k], params, r * n_cand + k, pixels,
                                           integral, integral_offset, at, unclamped)
        w = gmml_weights(values, lab, wt, n_classes)
        k = np.argmax(w)
        if not w[k] > 0:
            continue
        x = np.ascontiguousarray(values[:, k])
        threshold = np.float32(gmml_threshold(x, lab, n_classes))
        total = wt.sum()
        hist = left[r]
        ok = False
        if np.isfinite(threshold):
            wl = _left_hist(x, lab, wt, threshold, n_classes, hist)
            ok = wl >= min_leaf and total - wl >= min_leaf
        if not ok:  # the median split
            threshold = np.float32(_snapped(np.sort(x), np.median(x)))
            if np.isfinite(threshold):
                wl = _left_hist(x, lab, wt, threshold, n_classes, hist)
                ok = wl >= min_leaf and total - wl >= min_leaf
        if not ok:
            hist[:] = 0
            continue
        best_k[r] = k
        tau[r] = threshold
        w_left[r] = int(wl)
        cost[r] = hist_cost(hist, phi_table, criterion) + hist_cost(P[r] - hist, phi_table,
                                                                    criterion)
    return best_k, tau, left, w_left, cost
