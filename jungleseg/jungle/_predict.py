"""Traversal of every DAG for samples or for listed pixels of an image (Numba, parallel)."""
import numpy as np
from numba import njit, prange

from .._workers import claim
from ..features._kernels import (at_sample, depth_step_response, point_probe_steps,
                                 point_response, response_rows)

#: How listed pixels read their probes: clamped to the image (any kind), at fixed steps
#: on a store padded as far as the probes reach (point kinds), or at depth-scaled steps
#: on a store with a background border that far (depth).
CLAMPED, POINT_STEPS, DEPTH_STEPS = 0, 1, 2
_BLOCK = 32  # listed pixels traversed together, level by level


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
def _pixel_response(mode, i, p, r, c, kind, kind2d, params, first, second, store, image,
                    one, value):
    """Response of split node ``i`` at the pixel at ``p`` in the store (row ``r``, column
    ``c`` of the image), read as ``mode`` says."""
    pixels, _, _, _, stride, _, integral, integral_offset = store
    if mode == POINT_STEPS:
        return point_response(kind[i], pixels, np.uint64(p) + first[i], np.uint64(p) + second[i])
    if mode == DEPTH_STEPS:
        return depth_step_response(params, i, pixels, p, stride[image])
    response_rows(kind2d, params, i, one, 0, pixels, integral, integral_offset,
                  at_sample(store, image, r, c), False, value, 0)
    return value[0]


@njit(cache=True, nogil=True, inline="always")
def _soft_dag(base, leaf_first, mode, p, r, c, kind, kind2d, params, threshold, left, right,
              leaf_value, spread, soft, epsilon, first, second, store, image, one, value,
              weight, frontier, mix):
    """Soft descent of one pixel through one DAG: the gate of split node i sends the share
    ``sigmoid((v - threshold) / (soft * spread[i]))`` of the weight reaching it right and
    the rest left (hard where the temperature is 0); weights of paths that meet add up,
    level by level, and branches of weight <= ``epsilon`` are dropped. Writes the
    weight-mixed leaf distribution (renormalised over the leaves reached) to ``mix`` and
    returns the number of split nodes visited."""
    mix[:] = 0.0
    weight[0] = 1.0
    frontier[0, 0] = 0
    n_cur = 1
    side = 0
    visits = 0
    total = 0.0
    while n_cur > 0:
        n_next = 0
        for q in range(n_cur):
            node = frontier[side, q]
            w = weight[node]
            weight[node] = 0.0
            i = base + np.uint64(node)
            if left[i] < 0:
                leaf = leaf_first - 1 - left[i]
                total += w
                for k in range(mix.shape[0]):
                    mix[k] += w * leaf_value[leaf, k]
                continue
            v = _pixel_response(mode, i, p, r, c, kind, kind2d, params, first, second, store,
                                image, one, value)
            visits += 1
            t = soft * spread[i]
            if t > 0:
                gate = 1.0 / (1.0 + np.exp(-(float(v) - float(threshold[i])) / t))
            else:
                gate = 0.0 if v < threshold[i] else 1.0
            for branch in range(2):
                child = left[i] if branch == 0 else right[i]
                share = w * (1.0 - gate) if branch == 0 else w * gate
                if share > epsilon:
                    if weight[child] == 0.0:
                        frontier[1 - side, n_next] = child
                        n_next += 1
                    weight[child] += share
        side = 1 - side
        n_cur = n_next
    for k in range(mix.shape[0]):
        mix[k] /= total
    return visits


@njit(parallel=True, cache=True, nogil=True)
def predict_pixels(node_start, leaf_start, kind, params, threshold, left, right, leaf_value,
                   spread, store, image, index, mode, soft, epsilon, proba, labels, visits,
                   n_workers):
    """Classify the listed pixels (flat indices ``row * width + col``) of one image.

    Writes each listed pixel's class index (the most probable, the first of equals) to
    ``labels``, and, unless ``proba`` is empty, its probabilities to ``proba[index]``
    ((height * width, C) float32); other pixels are not touched, and with an empty
    ``proba`` no per-class array is ever written. ``mode`` says how probes are read
    (:data:`CLAMPED`, :data:`POINT_STEPS`, :data:`DEPTH_STEPS`); all give the same result.
    ``visits[b]`` receives the number of split nodes block b evaluated.

    With ``soft == 0`` (hard routing), blocks of neighbouring listed pixels descend each
    DAG one level at a time: neighbours mostly share nodes, so node data stay in cache and
    branches predict well. Each pixel sums the DAGs in order and scales once, so the result
    equals :func:`predict_proba` bit for bit whatever the thread count. Node and probe
    indices are unsigned, so that Numba skips its negative-index wraparound test on every
    read. With ``soft > 0`` each pixel descends each DAG softly (:func:`_soft_dag`, gates
    of temperature ``soft * spread[node]``, branches of weight <= ``epsilon`` dropped) and
    its probabilities average the DAGs' weighted leaf mixtures; ``spread`` is then the
    packed per-node spread (unused, and may be empty, with ``soft == 0``).
    """
    pixels, origin, height, width, stride, _, integral, integral_offset = store
    w = width[image]
    n_steps = kind.shape[0] if mode == POINT_STEPS else 0  # other modes need no steps
    first, second = point_probe_steps(kind[:n_steps], params[:n_steps], store, image)
    kind2d = kind.reshape(-1, 1)
    n_classes = leaf_value.shape[1]
    scale = np.float32(1.0 / (node_start.shape[0] - 1))
    write_proba = proba.shape[0] > 0
    n = index.shape[0]
    n_blocks = (n + _BLOCK - 1) // _BLOCK
    largest = np.max(node_start[1:] - node_start[:-1]) if soft > 0 else 1
    counter = np.zeros(1, np.int64)
    for _ in prange(n_workers):
        node = np.empty(_BLOCK, np.uint64)
        at_pixel = np.empty(_BLOCK, np.int64)
        acc = np.empty((_BLOCK, n_classes), np.float32)
        one = np.zeros(1, np.int64)
        value = np.empty(1, np.float32)
        weight = np.zeros(largest, np.float64)
        frontier = np.empty((2, largest), np.int64)
        mix = np.empty(n_classes, np.float64)
        while True:
            task = claim(counter)
            if task >= n_blocks:
                break
            lo = task * _BLOCK
            m = min(_BLOCK, n - lo)
            for j in range(m):
                at_pixel[j] = origin[image] + (index[lo + j] // w) * stride[image] + (
                    index[lo + j] % w)
            acc[:m] = 0
            count = 0
            for g in range(node_start.shape[0] - 1):
                base = np.uint64(node_start[g])
                if soft > 0:
                    for j in range(m):
                        count += _soft_dag(base, leaf_start[g], mode, at_pixel[j],
                                           index[lo + j] // w, index[lo + j] % w, kind, kind2d,
                                           params, threshold, left, right, leaf_value, spread,
                                           soft, epsilon, first, second, store, image, one,
                                           value, weight, frontier, mix)
                        for c in range(n_classes):
                            acc[j, c] += np.float32(mix[c])
                    continue
                node[:m] = 0
                active = True
                while active:
                    active = False
                    for j in range(m):
                        i = base + node[j]
                        if left[i] < 0:
                            continue
                        v = _pixel_response(mode, i, at_pixel[j], index[lo + j] // w,
                                            index[lo + j] % w, kind, kind2d, params, first,
                                            second, store, image, one, value)
                        node[j] = left[i] if v < threshold[i] else right[i]
                        count += 1
                        active = True
                for j in range(m):
                    leaf = leaf_start[g] - 1 - left[base + node[j]]
                    for c in range(n_classes):
                        acc[j, c] += leaf_value[leaf, c]
            visits[task] = count
            for j in range(m):
                best = 0
                for c in range(n_classes):
                    acc[j, c] *= scale
                    if acc[j, c] > acc[j, best]:
                        best = c
                labels[lo + j] = best
                if write_proba:
                    for c in range(n_classes):
                        proba[index[lo + j], c] = acc[j, c]
