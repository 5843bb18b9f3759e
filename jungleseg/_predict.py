"""Traversal of every DAG for a batch of samples (Numba, parallel over samples)."""
import numpy as np
from numba import njit, prange

from ._features import response


@njit(parallel=True, cache=True)
def predict_proba(node_start, leaf_start, kind, params, threshold, left, right, leaf_value,
                  store, image, row, col):
    """Average of the DAGs' leaf distributions for each sample, float32 (n, C).

    The arrays are the DAGs' own, concatenated; ``node_start[g]`` and ``leaf_start[g]``
    locate DAG g's nodes and leaves. Child and leaf indices are DAG-local. The DAGs are
    summed in a fixed order, so the result does not depend on the thread count.
    """
    n_dags = node_start.shape[0] - 1
    n = image.shape[0]
    out = np.zeros((n, leaf_value.shape[1]), np.float32)
    scale = np.float32(1.0 / n_dags)
    for s in prange(n):
        for g in range(n_dags):
            base = node_start[g]
            node = 0
            while left[base + node] >= 0:
                i = base + node
                v = response(kind[i], params[i], store, image[s], row[s], col[s])
                node = left[i] if v < threshold[i] else right[i]
            leaf = leaf_start[g] - 1 - left[base + node]
            for c in range(leaf_value.shape[1]):
                out[s, c] += leaf_value[leaf, c]
        for c in range(leaf_value.shape[1]):
            out[s, c] *= scale
    return out
