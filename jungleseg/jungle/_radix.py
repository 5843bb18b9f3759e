"""The sorts of the trainer's many short arrays: a threshold subsample's float32 responses
by radix and the drawn thresholds by insertion (:mod:`._tables`), and LSearch's candidates
by tree cost, a stable float64 argsort by radix (:mod:`._lsearch`).

Floats are sorted by their bits made order-preserving: a negative value's bits flipped
whole, a positive value's sign bit set. Then 8 bits a pass, least significant first,
skipping passes where every key has the same digit. On a few hundred values this is
several times faster than a comparison sort. 0 and -0 are the only equal values with
different keys; -0 sorts first, which no threshold drawn between them can tell apart.
"""
import numpy as np
from numba import njit

_SIGN = np.uint32(1 << 31)
_SIGN64 = np.uint64(1 << 63)


@njit(cache=True, nogil=True, inline="always")
def sortable_key(bits: np.uint32) -> np.uint32:
    """The unsigned key of a float32's bits, ordered like the float."""
    return ~bits if bits & _SIGN else bits | _SIGN


@njit(cache=True, nogil=True, inline="always")
def float_of_key(key: np.uint32) -> np.uint32:
    """The float32 bits :func:`sortable_key` turned into ``key``."""
    return key & ~_SIGN if key & _SIGN else ~key


@njit(cache=True, nogil=True)
def radix_sort(keys, spare, counts):
    """Sort the uint32 ``keys``. ``spare`` is a work array as long as ``keys``, ``counts``
    one of 256. The sorted keys end up in ``keys``."""
    n = keys.shape[0]
    src, dst = keys, spare
    moved = 0
    for shift in range(0, 32, 8):
        sh = np.uint32(shift)
        counts[:] = 0
        for q in range(n):
            counts[(src[q] >> sh) & np.uint32(255)] += 1
        if counts[(src[0] >> sh) & np.uint32(255)] == n:
            continue  # every key has this digit: nothing moves
        moved += 1
        acc = 0
        for b in range(256):
            c = counts[b]
            counts[b] = acc
            acc += c
        for q in range(n):
            d = (src[q] >> sh) & np.uint32(255)
            dst[counts[d]] = src[q]
            counts[d] += 1
        src, dst = dst, src
    if moved % 2:
        keys[:] = src


@njit(cache=True, nogil=True, inline="always")
def sort_float32(values, keys, spare, counts):
    """Sort float32 ``values`` in place (:func:`radix_sort` of their bits); ``keys`` and
    ``spare`` are uint32 work arrays at least as long, ``counts`` one of 256."""
    n = values.shape[0]
    bits = values.view(np.uint32)
    for q in range(n):
        keys[q] = sortable_key(bits[q])
    radix_sort(keys[:n], spare[:n], counts)
    for q in range(n):
        bits[q] = float_of_key(keys[q])


@njit(cache=True, nogil=True, inline="always")
def insertion_sort(values):
    """Sort ``values`` in place by insertion: one pass when they are already in order, as
    drawn thresholds nearly always are (rounding can put two neighbours out of order)."""
    for q in range(1, values.shape[0]):
        v = values[q]
        p = q
        while p > 0 and values[p - 1] > v:
            values[p] = values[p - 1]
            p -= 1
        values[p] = v


#: Below this many values, :func:`argsort_float64` leaves the sort to NumPy's merge sort.
_RADIX_FROM = 128


@njit(cache=True, nogil=True)
def argsort_float64(values, order, keys, spare_keys, spare_order, counts):
    """Write to ``order`` the indices that sort float64 ``values`` (no NaN), equal values
    in index order: what NumPy's stable argsort gives (0 and -0 equal).

    Long arrays are sorted by radix on order-preserving keys (as :func:`sortable_key`,
    -0 given 0's key), but on their high 32 bits only, 8 bits a pass, least significant
    first, skipping passes where every key has the same digit; each pass is stable. Then
    each run of keys that share their high bits, short since such values differ by less
    than a millionth, is put in order by insertion on the whole keys, which keeps equal
    keys in index order. ``keys``, ``spare_keys`` (uint64) and ``spare_order`` (int64)
    are work arrays at least as long as ``values``, ``counts`` one of 256."""
    n = values.shape[0]
    if n < _RADIX_FROM:
        order[:n] = np.argsort(values, kind="mergesort")
        return
    bits = values.view(np.uint64)
    src_k, dst_k = keys[:n], spare_keys[:n]
    src_o, dst_o = order[:n], spare_order[:n]
    for q in range(n):
        b = bits[q]
        src_k[q] = _SIGN64 if b == _SIGN64 else (~b if b & _SIGN64 else b | _SIGN64)
        src_o[q] = q
    moved = 0
    for shift in range(32, 64, 8):
        sh = np.uint64(shift)
        counts[:] = 0
        for q in range(n):
            counts[(src_k[q] >> sh) & np.uint64(255)] += 1
        if counts[(src_k[0] >> sh) & np.uint64(255)] == n:
            continue  # every key has this digit: nothing moves
        moved += 1
        acc = 0
        for d in range(256):
            c = counts[d]
            counts[d] = acc
            acc += c
        for q in range(n):
            d = (src_k[q] >> sh) & np.uint64(255)
            dst_k[counts[d]] = src_k[q]
            dst_o[counts[d]] = src_o[q]
            counts[d] += 1
        src_k, dst_k = dst_k, src_k
        src_o, dst_o = dst_o, src_o
    high = np.uint64(32)
    for q in range(1, n):
        key = src_k[q]
        if key >> high != src_k[q - 1] >> high or key >= src_k[q - 1]:
            continue
        at = src_o[q]
        p = q
        while p > 0 and src_k[p - 1] > key and src_k[p - 1] >> high == key >> high:
            src_k[p] = src_k[p - 1]
            src_o[p] = src_o[p - 1]
            p -= 1
        src_k[p] = key
        src_o[p] = at
    if moved % 2:
        order[:n] = src_o
