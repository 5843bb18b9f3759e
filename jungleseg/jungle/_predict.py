"""Traversal of every DAG for samples or whole images (Numba, parallel)."""
import numpy as np
from numba import njit, prange

from ..features._kernels import at_sample, point_probe_steps, point_response, response_at


@njit(cache=True, inline="always")
def _accumulate(node_start, leaf_start, kind, params, threshold, left, right, leaf_value,
                store, image, row, col, out):
    """Add every DAG's leaf distribution for one pixel to ``out`` (in DAG order)."""
    pixels, _, _, _, _, _, integral, integral_offset = store
    at = at_sample(store, image, row, col)
    for g in range(node_start.shape[0] - 1):
        base = node_start[g]
        node = 0
        while left[base + node] >= 0:
            i = base + node
            v = response_at(kind[i], params, i, pixels, integral, integral_offset, at, False)
            node = left[i] if v < threshold[i] else right[i]
        leaf = leaf_start[g] - 1 - left[base + node]
        for c in range(leaf_value.shape[1]):
            out[c] += leaf_value[leaf, c]


@njit(parallel=True, cache=True, nogil=True)
def predict_proba(node_start, leaf_start, kind, params, threshold, left, right, leaf_value,
                  store, image, row, col):
    """Average of the DAGs' leaf distributions for each sample, float32 (n, C).

    The arrays are the DAGs' own, concatenated; ``node_start[g]`` and ``leaf_start[g]``
    locate DAG g's nodes and leaves. Child and leaf indices are DAG-local. The DAGs are
    summed in a fixed order, so the result does not depend on the thread count.
    """
    n = image.shape[0]
    out = np.zeros((n, leaf_value.shape[1]), np.float32)
    scale = np.float32(1.0 / (node_start.shape[0] - 1))
    for s in prange(n):
        _accumulate(node_start, leaf_start, kind, params, threshold, left, right, leaf_value,
                    store, image[s], row[s], col[s], out[s])
        for c in range(out.shape[1]):
            out[s, c] *= scale
    return out


_BLOCK = 32  # pixels of a row traversed together, level by level


@njit(parallel=True, cache=True, nogil=True)
def predict_image(node_start, leaf_start, kind, params, threshold, left, right, leaf_value,
                  store, image, mask, direct):
    """Probabilities (H, W, C) float32 for every pixel of one image of the store.

    Pixels where ``mask`` is 0 are skipped (left at zero); an empty mask means all.
    A block of neighbouring pixels descends each DAG one level at a time: neighbours
    mostly share nodes, so node data stay in cache and branches predict well. Each pixel
    still sums the DAGs in order, so the result equals :func:`predict_proba` bit for bit.

    ``direct`` says that every split node is of a point kind and probes no farther than
    the store's border reaches: probes are then read at fixed steps from the pixel,
    without clamping (the same result, faster; ``docs/performance.md``).

    Node and probe indices are unsigned, so that Numba skips its negative-index
    wraparound test on every read.
    """
    pixels, origin, height, width, stride, _, integral, integral_offset = store
    h = height[image]
    w = width[image]
    n_direct = kind.shape[0] if direct else 0  # the clamped path needs no steps
    first, second = point_probe_steps(kind[:n_direct], params[:n_direct], store, image)
    n_classes = leaf_value.shape[1]
    out = np.zeros((h, w, n_classes), np.float32)
    scale = np.float32(1.0 / (node_start.shape[0] - 1))
    use_mask = mask.size > 0
    n_blocks = (w + _BLOCK - 1) // _BLOCK
    for task in prange(h * n_blocks):
        r = task // n_blocks
        c0 = (task % n_blocks) * _BLOCK
        n = min(_BLOCK, w - c0)
        row_start = np.uint64(origin[image] + r * stride[image] + c0)
        node = np.empty(_BLOCK, np.uint64)
        for g in range(node_start.shape[0] - 1):
            base = np.uint64(node_start[g])
            node[:] = 0
            active = True
            while active:
                active = False
                for j in range(n):
                    i = base + node[j]
                    if left[i] >= 0 and not (use_mask and mask[r, c0 + j] == 0):
                        if direct:
                            p = row_start + np.uint64(j)
                            v = point_response(kind[i], pixels, p + first[i], p + second[i])
                        else:
                            v = response_at(kind[i], params, i, pixels, integral,
                                            integral_offset, at_sample(store, image, r, c0 + j),
                                            False)
                        node[j] = left[i] if v < threshold[i] else right[i]
                        active = True
            for j in range(n):
                if use_mask and mask[r, c0 + j] == 0:
                    continue
                leaf = leaf_start[g] - 1 - left[base + node[j]]
                for k in range(n_classes):
                    out[r, c0 + j, k] += leaf_value[leaf, k]
        for j in range(n):
            for k in range(n_classes):
                out[r, c0 + j, k] *= scale
    return out
