"""Random candidate features of each family, drawn from its ``spec`` (see
:mod:`._kernels` for the kinds and their parameter rows) with the trainer's counter-based
random stream, so that a candidate depends only on its node's state."""
import math

import numpy as np
from numba import njit

from .._rng import next_below, next_uniform
from ._kernels import (
    FAMILY_COLOUR,
    FAMILY_DEPTH,
    FAMILY_TABULAR,
    FAMILY_VOLUME,
    KIND_BOX_VALUE,
    KIND_DEPTH,
    KIND_TABULAR,
)


@njit(cache=True)
def _uniform(state, low, high):
    state, u = next_uniform(state)
    return state, low + (high - low) * u


@njit(cache=True)
def _draw_volume(spec, state, kinds, params):
    """Volume candidates: offsets uniform in a cube of ``spec[1]`` physical units per
    axis, rounded to whole voxels of each axis' spacing, so that anisotropic volumes
    get probes of equal physical reach."""
    reach = spec[1]
    n_channels = int(spec[5])
    n_kinds = int(spec[6])
    centred = spec[7 + n_kinds] != 0
    for i in range(kinds.shape[0]):
        state, q = next_below(state, n_kinds)
        kinds[i] = int(spec[7 + q])
        for p in range(6):
            state, u = _uniform(state, -reach, reach)
            params[i, p] = math.floor(u / spec[2 + p % 3] + 0.5)
        if centred:  # the first probe on the voxel itself; draws stay the same
            params[i, 0:3] = 0
        state, params[i, 6] = next_below(state, n_channels)
        state, params[i, 7] = next_below(state, n_channels)
    return kinds.shape[0]


@njit(cache=True)
def draw_candidates(spec, state, kinds, params):
    """Fill ``kinds[K]`` and ``params[K, P]`` with K candidate features from ``spec``.

    Returns the number of candidates drawn (tabular draws columns without replacement,
    so at most ``n_columns``).
    """
    family = int(spec[0])
    n = kinds.shape[0]
    if family == FAMILY_TABULAR:
        n_columns = int(spec[1])
        n = min(n, n_columns)
        pool = np.arange(n_columns)
        for i in range(n):  # partial Fisher-Yates shuffle
            state, j = next_below(state, n_columns - i)
            pool[i], pool[i + j] = pool[i + j], pool[i]
            kinds[i] = KIND_TABULAR
            params[i, 0] = pool[i]
        return n
    if family == FAMILY_DEPTH:
        reach = spec[1]
        for i in range(n):
            kinds[i] = KIND_DEPTH
            for p in range(4):
                state, params[i, p] = _uniform(state, -reach, reach)
        return n
    if family == FAMILY_VOLUME:
        return _draw_volume(spec, state, kinds, params)
    if family == FAMILY_COLOUR:
        reach = int(spec[1])
        n_channels = int(spec[2])
        box_max = int(spec[3])
        n_kinds = int(spec[4])
        centred = spec[5 + n_kinds] != 0
        for i in range(n):
            state, q = next_below(state, n_kinds)
            kind = int(spec[5 + q])
            kinds[i] = kind
            for p in range(4):
                state, v = next_below(state, 2 * reach + 1)
                params[i, p] = v - reach
            if centred:  # the first probe on the pixel itself; draws stay the same
                params[i, 0:2] = 0
            state, params[i, 4] = next_below(state, n_channels)
            state, params[i, 5] = next_below(state, n_channels)
            params[i, 6:8] = 0
            if kind >= KIND_BOX_VALUE:
                state, params[i, 6] = next_below(state, box_max + 1)
                state, params[i, 7] = next_below(state, box_max + 1)
        return n
    return 0
