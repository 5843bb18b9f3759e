"""Traversal of every DAG for samples or for listed pixels of an image (Numba, parallel)."""
import numpy as np
from numba import njit, prange

from .._workers import TASKS_PER_WORKER, claim, run_workers
from ..features._kernels import (
    at_sample,
    depth_step_response,
    depth_step_responses,
    point_probe_steps,
    point_response,
    response_rows,
)

#: How listed pixels read their probes: clamped to the image (any kind), at fixed steps
#: on a store padded as far as the probes reach (point kinds), or at depth-scaled steps
#: on a store with a background border that far (depth).
CLAMPED, POINT_STEPS, DEPTH_STEPS = 0, 1, 2
#: Listed pixels traversed together, level by level: as many as this, fewer where a
#: worker would otherwise get under ``TASKS_PER_WORKER`` blocks, but not under the least.
_MOST_BLOCK, _LEAST_BLOCK = 256, 32
#: Pixels that descend a DAG side by side in hard routing of point and clamped probes:
#: their probe reads do not wait on one another, so cache misses overlap.
_LANES = 4


@njit(parallel=True, cache=True, nogil=True)
def predict_proba(node_start, leaf_start, kind, params, threshold, left, right, leaf_value,
                  store, image, row, col):
    """Average of the DAGs' leaf distributions for each sample, float32 (n, C).

    The arrays are the DAGs' own, concatenated; ``node_start[g]`` and ``leaf_start[g]``
    locate DAG g's nodes and leaves. Child and leaf indices are DAG-local. The DAGs are
    summed in a fixed order, so the result does not depend on the thread count.
    """
    pixels, _, _, _, _, _, integral, integral_offset = store
    kind2d = kind.reshape(-1, 1)  # one candidate per node: response_rows reads kind2d[i, 0]
    n = image.shape[0]
    out = np.zeros((n, leaf_value.shape[1]), np.float32)
    scale = np.float32(1.0 / (node_start.shape[0] - 1))
    for s in prange(n):
        one = np.zeros(1, np.int64)
        value = np.empty(1, np.float32)
        at = at_sample(store, image[s], row[s], col[s])
        for g in range(node_start.shape[0] - 1):
            base = node_start[g]
            node = 0
            while left[base + node] >= 0:
                i = base + node
                response_rows(kind2d, params, i, one, 0, pixels, integral, integral_offset, at,
                              False, value, 0)
                node = left[i] if value[0] < threshold[i] else right[i]
            leaf = leaf_start[g] - 1 - left[base + node]
            for c in range(leaf_value.shape[1]):
                out[s, c] += leaf_value[leaf, c]
        for c in range(out.shape[1]):
            out[s, c] *= scale
    return out


@njit(cache=True, nogil=True, inline="always")
def _frontier_responses(mode, node, split, at, pix, n, kind, kind2d, params, first, second,
                        store, image, pixel_row, pixel_col, one, out, rows, depths, offsets):
    """Responses of split nodes ``node[e]`` (global indices) at the store's flat indices
    ``at[e]``, for the frontier's first ``n`` entries, read as ``mode`` says, into
    ``out[e]``; the pixel of entry e is the block's ``pix[e]``, at row ``pixel_row`` and
    column ``pixel_col`` of the image. Entries at leaves (``split[e]`` False) are not
    evaluated. A level's responses are all taken before any entry is routed, so that
    independent probe reads overlap (and, for depth, the divisions run as vector
    instructions); ``rows``, ``depths``, ``offsets`` are scratch for that."""
    pixels, _, _, _, stride, _, integral, integral_offset = store
    if mode == DEPTH_STEPS:
        depth_step_responses(params, node, split, at, n, pixels, stride[image], out, rows,
                             depths, offsets)
        return
    for e in range(n):
        if not split[e]:
            continue
        i = node[e]
        if mode == POINT_STEPS:
            out[e] = point_response(kind[i], pixels, np.uint64(at[e]) + first[i],
                                    np.uint64(at[e]) + second[i])
        else:
            j = pix[e]
            response_rows(kind2d, params, i, one, 0, pixels, integral, integral_offset,
                          at_sample(store, image, pixel_row[j], pixel_col[j]), False, out, e)


@njit(cache=True, nogil=True, inline="always")
def _emit(child, share, j, soft, group, n_next, slot, nxt_pix, nxt_node, nxt_w):
    """Add ``share`` of pixel ``j``'s weight to ``child`` in the next level's frontier, whose
    entries ``group:n_next`` are pixel j's: onto j's entry for that child if it has one
    (paths meeting), else as a new entry (``slot`` remembers where each child went; with
    hard routing a pixel has one entry, so nothing can meet). Returns the new count."""
    if soft > 0:
        s = slot[child]
        if group <= s < n_next and nxt_node[s] == child:
            nxt_w[s] += share
            return n_next
        slot[child] = n_next
    nxt_pix[n_next] = j
    nxt_node[n_next] = child
    nxt_w[n_next] = share
    return n_next + 1


def predict_pixels(node_start, leaf_start, kind, params, threshold, left, right, leaf_value,
                   spread, widest, store, image, index, mode, soft, epsilon, label_weight,
                   proba, labels, n_workers):
    """Classify the listed pixels (flat indices ``row * width + col``) of one image.

    Writes each listed pixel's class index to ``labels``: the class c of the largest
    ``probability[c] * label_weight[c]`` (the first of equals; weights of 1 pick the most
    probable class), and, unless ``proba`` is empty, its probabilities to ``proba[index]``
    ((height * width, C) float32); other pixels are not touched, and with an empty
    ``proba`` no per-class array is ever written. ``mode`` says how probes are read
    (:data:`CLAMPED`, :data:`POINT_STEPS`, :data:`DEPTH_STEPS`); all give the same result.
    Returns the number of split nodes evaluated.

    Hard routing (``soft == 0``) walks :data:`_LANES` pixels side
    by side down each DAG (:func:`_hard_pixels_worker`): each pixel's next node waits only
    on its own probe reads, so the others' cache misses overlap with them; this is several
    times faster than the frontier below for 8 to 32 channels of 320 x 240 photos, and
    about twice as fast on depth frames.
    Otherwise (soft routing) blocks of neighbouring listed pixels
    (:data:`_MOST_BLOCK`) descend each DAG together,
    one level at a time: neighbours mostly share nodes, so node data and probed pixels stay
    in cache, and the longer a level's frontier the less each entry pays for the loops
    around it. Each pixel's result is its own, whatever the block size. A block's
    frontier lists (pixel, node, weight) entries, a pixel's entries together; all of a
    level's responses are taken before any entry steps on (:func:`_frontier_responses`),
    so no entry's probe reads wait on another's branch. With
    ``soft == 0`` (hard routing) each pixel has one entry of weight 1 that steps to the
    child its response picks; each pixel sums the DAGs' leaf distributions in order and
    scales once, so the result equals :func:`predict_proba` bit for bit whatever the
    thread count.

    With ``soft > 0`` a split node i of temperature ``T = soft * spread[i]`` would send
    the share ``w * sigmoid(-|v - threshold| / T)`` of the weight ``w`` reaching it to the
    branch its response does not pick (the minor branch) and the rest to the other. If
    that minor share is at most ``epsilon`` the node steps hard, passing all of ``w`` on:
    the gate is saturated. That holds without evaluating the gate whenever
    ``|v - threshold| >= T * log(1 / epsilon - 1)`` (the bound for ``w <= 1``), so a pixel
    whose gates are saturated costs what a hard one does. A response equal to the
    threshold steps hard too (right, as hard routing sends it): responses take discrete
    values (8-bit colour; a depth probe pair both off the body reads exactly 0), and a
    threshold drawn between equal responses equals them, so a tie says to which side the
    training pixels of that value went, not that the pixel is on the split's boundary;
    gated, every tied pixel would split its weight in half (a fifth of a Kinect model's
    thresholds are 0). Weights of paths that meet at a node add up; every entry carries
    more than ``epsilon``, so a pixel has fewer than ``1 / epsilon + 1`` entries per level
    (and at most ``widest``, the widest level), and its weights still sum to 1 over the
    leaves. Weights are float32; a pixel's probabilities are the DAGs' weight-mixed leaf
    distributions, averaged. ``spread`` is the packed per-node spread (unused, and may be
    empty, with ``soft == 0``). Node and probe indices are unsigned, so that Numba skips its
    negative-index wraparound test on every read.
    """
    if soft == 0:
        return sum(run_workers(_hard_pixels_worker, n_workers, node_start, leaf_start, kind,
                               params, threshold, left, right, leaf_value, store, image, index,
                               mode, label_weight, proba, labels, n_workers))
    return sum(run_workers(_predict_pixels_worker, n_workers, node_start, leaf_start, kind,
                           params, threshold, left, right, leaf_value, spread, widest, store,
                           image, index, mode, soft, epsilon, label_weight, proba, labels,
                           n_workers))


@njit(cache=True, nogil=True)
def _clamped_response(kind2d, params, i, store, image, row, col, one, value):
    """Response of split node ``i`` at pixel (row, col) of ``image``, probes clamped to the
    image (``one``, ``value``: scratch of one int64 0 and one float32); a call of its own,
    so that the loop of step reads it is called from stays short."""
    pixels, _, _, _, _, _, integral, integral_offset = store
    response_rows(kind2d, params, i, one, 0, pixels, integral, integral_offset,
                  at_sample(store, image, row, col), False, value, 0)
    return value[0]


@njit(cache=True, nogil=True)
def _hard_pixels_worker(node_start, leaf_start, kind, params, threshold, left, right,
                        leaf_value, store, image, index, mode, label_weight, proba, labels,
                        n_workers, counter):
    """One worker of :func:`predict_pixels` with hard routing, probes read at fixed or
    depth-scaled steps, or clamped: claims blocks of pixels from ``counter``, and walks
    :data:`_LANES` pixels at a time down each DAG, each its own path, one node of each per
    step. Returns the split nodes it evaluated. Each pixel sums the DAGs' leaf
    distributions in order and scales once, as the frontier traversal does, so the results
    are the same bit for bit."""
    pixels, origin, _, width, stride, _, _, _ = store
    w = width[image]
    one = np.zeros(1, np.int64)
    value = np.empty(1, np.float32)
    n_steps = kind.shape[0] if mode == POINT_STEPS else 0  # clamped reads need no steps
    first, second = point_probe_steps(kind[:n_steps], params[:n_steps], store, image)
    kind2d = kind.reshape(-1, 1)
    n_classes = leaf_value.shape[1]
    scale = np.float32(1.0 / (node_start.shape[0] - 1))
    write_proba = proba.shape[0] > 0
    n = index.shape[0]
    block = min(_MOST_BLOCK, max(_LEAST_BLOCK, n // (n_workers * TASKS_PER_WORKER)))
    n_blocks = (n + block - 1) // block
    visits = np.zeros(n_blocks, np.int64)  # per block: no shared counter
    node = np.empty(_LANES, np.int64)
    at = np.empty(_LANES, np.uint64)
    pixel_row = np.empty(_LANES, np.int64)
    pixel_col = np.empty(_LANES, np.int64)
    acc = np.empty((_LANES, n_classes), np.float32)
    while True:
        task = claim(counter)
        if task >= n_blocks:
            break
        end = min(n, (task + 1) * block)
        count = 0
        for lo in range(task * block, end, _LANES):
            m = min(_LANES, end - lo)
            for q in range(m):
                pixel_row[q] = index[lo + q] // w
                pixel_col[q] = index[lo + q] % w
                at[q] = np.uint64(origin[image] + pixel_row[q] * stride[image] + pixel_col[q])
            for q in range(m):
                for c in range(n_classes):
                    acc[q, c] = 0
            for g in range(node_start.shape[0] - 1):
                base = node_start[g]
                for q in range(m):
                    node[q] = base
                walking = m
                while walking > 0:
                    walking = 0
                    for q in range(m):
                        i = node[q]
                        if left[i] < 0:
                            continue
                        if mode == POINT_STEPS:
                            v = point_response(kind[i], pixels, at[q] + first[i],
                                               at[q] + second[i])
                        elif mode == DEPTH_STEPS:
                            v = depth_step_response(params, i, pixels, np.int64(at[q]),
                                                    stride[image])
                        else:
                            v = _clamped_response(kind2d, params, i, store, image,
                                                  pixel_row[q], pixel_col[q], one, value)
                        node[q] = base + (left[i] if v < threshold[i] else right[i])
                        walking += 1
                    count += walking
                for q in range(m):
                    leaf = leaf_start[g] - 1 - left[node[q]]
                    for c in range(n_classes):
                        acc[q, c] += leaf_value[leaf, c]
            for q in range(m):
                best = 0
                for c in range(n_classes):
                    acc[q, c] *= scale
                    if acc[q, c] * label_weight[c] > acc[q, best] * label_weight[best]:
                        best = c
                labels[lo + q] = best
                if write_proba:
                    for c in range(n_classes):
                        proba[index[lo + q], c] = acc[q, c]
        visits[task] = count
    return visits.sum()


@njit(cache=True, nogil=True)
def _predict_pixels_worker(node_start, leaf_start, kind, params, threshold, left, right,
                           leaf_value, spread, widest, store, image, index, mode, soft, epsilon,
                           label_weight, proba, labels, n_workers, counter):
    """One worker of :func:`predict_pixels`: claims blocks of pixels from ``counter``;
    returns the split nodes it evaluated."""
    _, origin, _, width, stride, _, _, _ = store
    w = width[image]
    n_steps = kind.shape[0] if mode == POINT_STEPS else 0  # other modes need no steps
    first, second = point_probe_steps(kind[:n_steps], params[:n_steps], store, image)
    kind2d = kind.reshape(-1, 1)
    n_classes = leaf_value.shape[1]
    scale = np.float32(1.0 / (node_start.shape[0] - 1))
    write_proba = proba.shape[0] > 0
    n = index.shape[0]
    block = min(_MOST_BLOCK, max(_LEAST_BLOCK, n // (n_workers * TASKS_PER_WORKER)))
    n_blocks = (n + block - 1) // block
    soft32 = np.float32(soft)
    eps32 = np.float32(epsilon)
    per_pixel = 1
    saturated = np.float32(np.inf)  # gates saturate where |v - threshold| >= T * this
    if soft > 0:
        per_pixel = widest
        if epsilon > 0:
            per_pixel = min(widest, int(1.0 / epsilon) + 1)
            saturated = np.float32(np.log(1.0 / epsilon - 1.0)) if epsilon < 0.5 else \
                np.float32(0.0)
    largest = np.max(node_start[1:] - node_start[:-1]) if soft > 0 else 1
    visits = np.zeros(n_blocks, np.int64)  # per block: no shared counter
    at_pixel = np.empty(block, np.int64)
    acc = np.empty((block, n_classes), np.float32)
    one = np.zeros(1, np.int64)
    pixel_row = np.empty(block, np.int64)
    pixel_col = np.empty(block, np.int64)
    ent_at = np.empty(block * per_pixel, np.int64)
    ent_i = np.empty(block * per_pixel, np.uint64)
    ent_split = np.empty(block * per_pixel, np.bool_)
    ent_v = np.empty(block * per_pixel, np.float32)
    rows = np.empty(4 * block * per_pixel, np.float32)
    depths = np.empty(4 * block * per_pixel, np.float32)
    offsets = np.empty(4 * block * per_pixel, np.int64)
    ent_pix = np.empty((2, block * per_pixel), np.int64)
    ent_node = np.empty((2, block * per_pixel), np.uint64)
    ent_w = np.empty((2, block * per_pixel), np.float32)
    slot = np.full(largest, -1, np.int64)
    while True:
        task = claim(counter)
        if task >= n_blocks:
            break
        lo = task * block
        m = min(block, n - lo)
        for j in range(m):
            pixel_row[j] = index[lo + j] // w
            pixel_col[j] = index[lo + j] % w
            at_pixel[j] = origin[image] + pixel_row[j] * stride[image] + pixel_col[j]
        acc[:m] = 0
        count = 0
        for g in range(node_start.shape[0] - 1):
            base = np.uint64(node_start[g])
            for j in range(m):
                ent_pix[0, j] = j
                ent_node[0, j] = 0
                ent_w[0, j] = 1.0
            side = 0
            n_cur = m
            while n_cur > 0:
                cur_pix, cur_node, cur_w = ent_pix[side], ent_node[side], ent_w[side]
                nxt_pix, nxt_node, nxt_w = ent_pix[1 - side], ent_node[1 - side], \
                    ent_w[1 - side]
                for e in range(n_cur):
                    ent_i[e] = base + cur_node[e]
                    ent_split[e] = left[ent_i[e]] >= 0
                    ent_at[e] = at_pixel[cur_pix[e]]
                _frontier_responses(mode, ent_i, ent_split, ent_at, cur_pix, n_cur, kind,
                                    kind2d, params, first, second, store, image,
                                    pixel_row, pixel_col, one, ent_v, rows, depths,
                                    offsets)
                n_next = 0
                group = 0
                last = -1
                for e in range(n_cur):
                    j = cur_pix[e]
                    if j != last:
                        group = n_next
                        last = j
                    i = ent_i[e]
                    share = cur_w[e]
                    if not ent_split[e]:
                        leaf = leaf_start[g] - 1 - left[i]
                        for c in range(n_classes):
                            acc[j, c] += share * leaf_value[leaf, c]
                        continue
                    v = ent_v[e]
                    count += 1
                    go_left = v < threshold[i]
                    if soft > 0:
                        t = soft32 * spread[i]
                        off = abs(v - threshold[i])
                        if t > 0 and off > 0 and off < t * saturated:
                            minor = share / (np.float32(1.0) + np.exp(off / t))
                            if minor > eps32:
                                other = right[i] if go_left else left[i]
                                n_next = _emit(np.uint64(other), minor, j, soft, group,
                                               n_next, slot, nxt_pix, nxt_node, nxt_w)
                                share -= minor
                    n_next = _emit(np.uint64(left[i] if go_left else right[i]), share, j, soft,
                                   group, n_next, slot, nxt_pix, nxt_node, nxt_w)
                side = 1 - side
                n_cur = n_next
        visits[task] = count
        for j in range(m):
            best = 0
            for c in range(n_classes):
                acc[j, c] *= scale
                if acc[j, c] * label_weight[c] > acc[j, best] * label_weight[best]:
                    best = c
            labels[lo + j] = best
            if write_proba:
                for c in range(n_classes):
                    proba[index[lo + j], c] = acc[j, c]
    return visits.sum()


@njit(cache=True, nogil=True)
def weighted_argmax(values, weights):
    """For each row of ``values`` (n, C), the first column where ``values * weights`` is
    largest, as ``numpy.argmax`` of that product picks it (the first NaN, if any, wins):
    one pass, where NumPy's argmax along a short last axis takes several times as long."""
    n, n_classes = values.shape
    out = np.empty(n, np.intp)
    for i in range(n):
        best = 0
        top = values[i, 0] * weights[0]
        for c in range(1, n_classes):
            x = values[i, c] * weights[c]
            if x > top or (x != x and top == top):
                best, top = c, x
        out[i] = best
    return out
