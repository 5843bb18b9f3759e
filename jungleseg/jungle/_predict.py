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


@njit(parallel=True, cache=True, nogil=True)
def predict_pixels(node_start, leaf_start, kind, params, threshold, left, right, leaf_value,
                   store, image, index, mode, proba, labels, n_workers):
    """Classify the listed pixels (flat indices ``row * width + col``) of one image.

    Writes each listed pixel's class index (the most probable, the first of equals) to
    ``labels``, and, unless ``proba`` is empty, its probabilities to ``proba[index]``
    ((height * width, C) float32); other pixels are not touched, and with an empty
    ``proba`` no per-class array is ever written. ``mode`` says how probes are read
    (:data:`CLAMPED`, :data:`POINT_STEPS`, :data:`DEPTH_STEPS`); all give the same result.

    Blocks of neighbouring listed pixels descend each DAG one level at a time: neighbours
    mostly share nodes, so node data stay in cache and branches predict well. Each pixel
    sums the DAGs in order and scales once, so the result equals :func:`predict_proba`
    bit for bit whatever the thread count. Node and probe indices are unsigned, so that
    Numba skips its negative-index wraparound test on every read.
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
    counter = np.zeros(1, np.int64)
    for _ in prange(n_workers):
        node = np.empty(_BLOCK, np.uint64)
        at_pixel = np.empty(_BLOCK, np.int64)
        acc = np.empty((_BLOCK, n_classes), np.float32)
        one = np.zeros(1, np.int64)
        value = np.empty(1, np.float32)
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
            for g in range(node_start.shape[0] - 1):
                base = np.uint64(node_start[g])
                node[:m] = 0
                active = True
                while active:
                    active = False
                    for j in range(m):
                        i = base + node[j]
                        if left[i] < 0:
                            continue
                        p = at_pixel[j]
                        if mode == POINT_STEPS:
                            v = point_response(kind[i], pixels, np.uint64(p) + first[i],
                                               np.uint64(p) + second[i])
                        elif mode == DEPTH_STEPS:
                            v = depth_step_response(params, i, pixels, p, stride[image])
                        else:
                            at = at_sample(store, image, index[lo + j] // w, index[lo + j] % w)
                            response_rows(kind2d, params, i, one, 0, pixels, integral,
                                          integral_offset, at, False, value, 0)
                            v = value[0]
                        node[j] = left[i] if v < threshold[i] else right[i]
                        active = True
                for j in range(m):
                    leaf = leaf_start[g] - 1 - left[base + node[j]]
                    for c in range(n_classes):
                        acc[j, c] += leaf_value[leaf, c]
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
