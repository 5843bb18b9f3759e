"""Numba kernels for feature responses and candidate draws, all feature kinds.

A feature is a ``kind`` code plus a float32 parameter row. Data live in a packed store
(see :class:`jungleseg.features.ImageStore`) passed to kernels as the tuple
``(pixels, offset, height, width, n_channels)``; a sample is (image, row, column).
Tabular data are the special case of one image of ``n_rows x 1`` pixels whose channels
are the columns.

Candidate draws are described by a family ``spec``: a float64 vector whose first entry
is the family code; each family documents the rest.
"""
import numpy as np
from numba import njit

from ._rng import next_below

# feature kinds stored per node
KIND_TABULAR = 0  # params: [column]

# family codes (spec[0])
FAMILY_TABULAR = 0  # spec: [FAMILY_TABULAR, n_columns]

N_PARAMS = {FAMILY_TABULAR: 1}


@njit(cache=True)
def pixel_value(store, image, row, col, channel):
    pixels, offset, height, width, n_channels = store
    return pixels[offset[image] + (row * width[image] + col) * n_channels + channel]


@njit(cache=True)
def response(kind, params, store, image, row, col):
    """Feature response of one sample; the only place a feature reads data."""
    if kind == KIND_TABULAR:
        return pixel_value(store, image, row, col, int(params[0]))
    return np.float32(np.nan)


@njit(cache=True)
def draw_candidates(spec, state, kinds, params):
    """Fill ``kinds[K]`` and ``params[K, P]`` with K candidate features from ``spec``.

    Returns the number of candidates drawn (tabular draws columns without replacement,
    so at most ``n_columns``).
    """
    family = int(spec[0])
    if family == FAMILY_TABULAR:
        n_columns = int(spec[1])
        k = min(kinds.shape[0], n_columns)
        pool = np.arange(n_columns)
        for i in range(k):  # partial Fisher-Yates shuffle
            state, j = next_below(state, n_columns - i)
            pool[i], pool[i + j] = pool[i + j], pool[i]
            kinds[i] = KIND_TABULAR
            params[i, 0] = pool[i]
        return k
    return 0
