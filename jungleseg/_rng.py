"""Counter-based random streams for Numba kernels.

Every random draw in training comes from a stream derived from a tuple such as
(seed, dag, level, parent, candidate), never from a shared generator, so a model does
not depend on how parallel loops are scheduled or on the thread count.
The mixer is SplitMix64 (Steele, Lea & Flood 2014).
"""
import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV_2_53 = 1.0 / 9007199254740992.0


@njit(cache=True)
def mix64(z):
    """SplitMix64 finaliser: a bijective scramble of a uint64."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def derive(seed, a, b, c, d):
    """Stream state for the key (seed, a, b, c, d) of non-negative integers."""
    s = mix64(np.uint64(seed) + _GOLDEN)
    s = mix64(s ^ (np.uint64(a) + _GOLDEN))
    s = mix64(s ^ (np.uint64(b) + _GOLDEN))
    s = mix64(s ^ (np.uint64(c) + _GOLDEN))
    return mix64(s ^ (np.uint64(d) + _GOLDEN))


@njit(cache=True)
def next_uniform(state):
    """Advance the stream; return (state, u) with u uniform in [0, 1)."""
    state = state + _GOLDEN
    return state, float(mix64(state) >> _S11) * _INV_2_53


@njit(cache=True)
def next_below(state, n):
    """Advance the stream; return (state, i) with i uniform in {0, ..., n - 1}."""
    state, u = next_uniform(state)
    i = int(u * n)
    return state, min(i, n - 1)


@njit(cache=True)
def advance(state, n):
    """The stream's state after ``n`` more draws (each draw adds the golden gamma)."""
    return state + np.uint64(n) * _GOLDEN
