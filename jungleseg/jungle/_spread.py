"""The spread of each split node's training responses: the scale of soft routing's
temperature (``docs/guide/beyond.md``). Routing (:func:`._grow.route`) records each entry's
response; the sums here run in entry order, and a data-parallel fit continues them shard
after shard (:mod:`._sharded`), so the spread does not depend on the thread count or on the
sharding."""
import numpy as np
from numba import njit

from ..features._kernels import DEPTH_FAR, KIND_DEPTH


@njit(cache=True, inline="always")
def depth_regime(v):
    """Which probes of a depth response read ``DEPTH_FAR`` (off the body): 1 the first
    only, -1 the second only, 0 both or neither (responses of at most a few metres)."""
    return int(v >= DEPTH_FAR / 2) - int(v <= -DEPTH_FAR / 2)


@njit(cache=True, inline="always")
def counts_in_spread(kind, v, threshold):
    """Whether a response counts toward its node's spread: any but a depth response in
    another regime than the threshold (:func:`depth_regime`). Between regimes, depth
    responses differ by about ``DEPTH_FAR`` whatever the body's shape; counted, they would
    make the spread, so the temperature, tens of metres where the threshold parts
    centimetres."""
    return kind != KIND_DEPTH or depth_regime(v) == depth_regime(threshold)


@njit(cache=True, nogil=True)
def spread_sums(order, start, nodes, response, entry_weight, w, total):
    """Add the weights and weighted training responses of each of ``nodes``' entries
    (global ids into ``start``), in entry order, to ``w`` and ``total``, leaving out NaN
    responses (those :func:`counts_in_spread` leaves out): a shard of the data continues
    the sums where the shard before it left them (:mod:`._sharded`)."""
    for q in range(nodes.shape[0]):
        i = nodes[q]
        for a in range(start[i], start[i + 1]):
            e = order[a]
            if np.isnan(response[e]):
                continue
            w[q] += entry_weight[e]
            total[q] += entry_weight[e] * float(response[e])


@njit(cache=True, nogil=True)
def spread_squares(order, start, nodes, response, entry_weight, mean, square):
    """Add the weighted squared deviations of each of ``nodes``' training responses (but
    NaN ones) from ``mean``, in entry order, to ``square`` (continued from shard to shard
    like :func:`spread_sums`)."""
    for q in range(nodes.shape[0]):
        i = nodes[q]
        for a in range(start[i], start[i + 1]):
            e = order[a]
            if np.isnan(response[e]):
                continue
            square[q] += entry_weight[e] * (float(response[e]) - mean[q]) ** 2


def spread_mean(w: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Each node's weighted mean response from :func:`spread_sums` (0 for no weight)."""
    return np.divide(total, w, out=np.zeros_like(total), where=w > 0)


def spread_of(w: np.ndarray, square: np.ndarray) -> np.ndarray:
    """Each node's weighted standard deviation, float32, from :func:`spread_squares`."""
    return np.sqrt(np.divide(square, w, out=np.zeros_like(square), where=w > 0)
                   ).astype(np.float32)


def node_spread(order, start, nodes, response, entry_weight) -> np.ndarray:
    """Weighted standard deviation of the training responses of each of ``nodes`` (global
    ids into ``start``), summed in entry order, without depth responses in another regime
    than the threshold's (see :func:`counts_in_spread`): the scale of soft routing's temperature."""
    w, total, square = (np.zeros(nodes.shape[0]) for _ in range(3))
    spread_sums(order, start, nodes, response, entry_weight, w, total)
    spread_squares(order, start, nodes, response, entry_weight, spread_mean(w, total), square)
    return spread_of(w, square)
