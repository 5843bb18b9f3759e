"""Numba kernels for feature responses, all feature kinds (candidate draws: :mod:`._draws`).

A feature is a ``kind`` code plus a float32 parameter row. Data live in a packed store
(see :class:`jungleseg.features.ImageStore`) passed to kernels as the tuple
``(pixels, origin, height, width, row_stride, plane_size, integral, integral_offset)``; a
sample is (image, row, column). Tabular data are one image of ``n_rows x 1`` pixels whose
channels are the columns.

Kinds and their parameter rows:

- tabular: ``[column]``: the value of that column.
- depth: ``[u_r, u_c, v_r, v_c]`` in pixel-metres: ``d(x + u/d(x)) - d(x + v/d(x))``
  (Shotton et al. 2011). The probe offset ``u/d(x)`` is rounded to whole pixels; a probe
  outside the image, on background or on invalid depth (stored as 0) reads
  ``DEPTH_FAR``.
- colour/intensity: ``[u_r, u_c, v_r, v_c, c1, c2, b_r, b_c]``: pixel offsets u and v,
  channels c1 and c2, and box half-sizes: value ``a = I_c1(x + u)``, difference
  ``a - b``, sum ``a + b`` and absolute difference ``|a - b|`` with ``b = I_c2(x + v)``;
  the box kinds use the mean over the ``(2 b_r + 1) x (2 b_c + 1)`` box instead of a
  pixel. Probes outside the image are clamped to its border; a box is clipped to the
  image (its mean is over the pixels inside).
- volume: ``[u_z, u_y, u_x, v_z, v_y, v_x, c1, c2]``: voxel offsets u and v and channels,
  combined as the colour point kinds are. Volumes are stored as taller planes (see
  :class:`jungleseg.features.ImageStore`), always padded as far as the family's probes
  reach, so these kinds read their probes at fixed steps, never clamped.
Candidate draws (:mod:`._draws`) are described by a family ``spec``: a float64 vector whose
first entry is the family code; each family below documents the rest.
"""


import numpy as np
from numba import njit, types
from numba.extending import overload

from ._prefetch import prefetch

KIND_TABULAR = 0
KIND_DEPTH = 1
KIND_VALUE = 2
KIND_DIFF = 3
KIND_SUM = 4
KIND_ABSDIFF = 5
KIND_BOX_VALUE = 6
KIND_BOX_DIFF = 7
KIND_BOX_SUM = 8
KIND_BOX_ABSDIFF = 9
_BOX_SHIFT = KIND_BOX_VALUE - KIND_VALUE
KIND_VOLUME_VALUE = 10
KIND_VOLUME_DIFF = 11
KIND_VOLUME_SUM = 12
KIND_VOLUME_ABSDIFF = 13
_VOLUME_SHIFT = KIND_VOLUME_VALUE - KIND_VALUE

COLOUR_KINDS = {
    "value": KIND_VALUE, "difference": KIND_DIFF, "sum": KIND_SUM, "absdiff": KIND_ABSDIFF,
    "box_value": KIND_BOX_VALUE, "box_difference": KIND_BOX_DIFF, "box_sum": KIND_BOX_SUM,
    "box_absdiff": KIND_BOX_ABSDIFF,
}

FAMILY_TABULAR = 0  # spec: [FAMILY_TABULAR, n_columns]
FAMILY_DEPTH = 1  # spec: [FAMILY_DEPTH, max offset in pixel-metres]
FAMILY_COLOUR = 2  # spec: [FAMILY_COLOUR, max offset px, n_channels, max box half-size,
#                            n_kinds, kind_1, ..., kind_n, centred (1: u = 0)]
FAMILY_VOLUME = 3  # spec: [FAMILY_VOLUME, max offset (physical), spacing z, y, x,
#                            n_channels, n_kinds, kind_1, ..., kind_n, centred]

VOLUME_KINDS = {"value": KIND_VOLUME_VALUE, "difference": KIND_VOLUME_DIFF,
                "sum": KIND_VOLUME_SUM, "absdiff": KIND_VOLUME_ABSDIFF}

N_PARAMS = {FAMILY_TABULAR: 1, FAMILY_DEPTH: 4, FAMILY_COLOUR: 8, FAMILY_VOLUME: 8}

DEPTH_FAR = np.float32(100.0)  # metres read by a depth probe that misses the body


@njit(cache=True, inline="always")
def pixel_value(store, image, row, col, channel):
    pixels, origin, _, _, stride, plane, _, _ = store
    index = origin[image] + channel * plane[image] + row * stride[image] + col
    return pixels[np.uint64(index)]  # unsigned: Numba skips its negative-index wraparound


@njit(cache=True, inline="always")
def at_sample(store, image, row, col):
    """What every response at one sample reads, read once so that a sample's many
    candidates share it: ``(image, row, col, pixel index, channel 0 there, height, width,
    row stride, plane size, image origin)``."""
    pixels, origin, height, width, stride, plane, _, _ = store
    pixel = origin[image] + row * stride[image] + col
    return (image, row, col, pixel, pixels[np.uint64(pixel)], height[image], width[image],
            stride[image], plane[image], origin[image])


@njit(cache=True, inline="always")
def _depth_probe(pixels, at, row, col):
    """Depth at (row, col), ``DEPTH_FAR`` off the image, on background or invalid depth.
    Without branches: probes land on and off the body unpredictably."""
    _, _, _, _, _, height, width, stride, _, origin = at
    inside = (row >= 0) & (row < height) & (col >= 0) & (col < width)
    d = pixels[np.uint64(origin + (row * stride + col if inside else 0))]
    return d if inside & (d > 0) else DEPTH_FAR


@njit(cache=True, inline="always")
def _box_mean(integral, integral_offset, at, row, col, channel, half_r, half_c):
    """Mean of a channel over a box centred on the (clamped) probe, clipped to the image.

    Integral images are (H + 1) x (W + 1) planes per channel:
    ``I[r, c] = sum of the channel over rows < r and columns < c``.
    """
    image, _, _, _, _, h, w, _, _, _ = at
    row = min(max(row, 0), h - 1)
    col = min(max(col, 0), w - 1)
    r0 = max(row - half_r, 0)
    r1 = min(row + half_r, h - 1) + 1
    c0 = max(col - half_c, 0)
    c1 = min(col + half_c, w - 1) + 1
    stride = w + 1
    base = integral_offset[image] + channel * (h + 1) * stride
    total = box_total(integral, base + r1 * stride + c1, base + r0 * stride + c1,
                      base + r1 * stride + c0, base + r0 * stride + c0)
    return np.float32(total / ((r1 - r0) * (c1 - c0)))


def box_total(integral, a, b, c, d):
    """``integral[a] - integral[b] - integral[c] + integral[d]``: a box's sum from its
    integral image's corners, in float64 for float64 integral images; for the wrapping
    unsigned integral images of codes, the difference wrapped to the table's type (Numba
    computes it in uint64), which is the exact sum of any box whose sum fits that type.
    """
    return integral[a] - integral[b] - integral[c] + integral[d]


@overload(box_total, inline="always")
def _box_total(integral, a, b, c, d):
    if isinstance(integral.dtype, types.Float):
        def total(integral, a, b, c, d):
            return (integral[np.uint64(a)] - integral[np.uint64(b)]
                    - integral[np.uint64(c)] + integral[np.uint64(d)])
        return total
    wrap = np.uint32 if integral.dtype.bitwidth == 32 else np.uint64

    def wrapped(integral, a, b, c, d):
        return np.float64(wrap(integral[np.uint64(a)] - integral[np.uint64(b)]
                               - integral[np.uint64(c)] + integral[np.uint64(d)]))
    return wrapped


@njit(cache=True, inline="always")
def _round(x):
    """``floor(x + 0.5)`` for float32 x, without a call to the C library's floor: truncate,
    then step down where that rounded a negative value up (exact: float32 values too large
    to hold a fraction are whole already)."""
    y = x + np.float32(0.5)
    i = np.int64(y)
    return i - np.int64(y < np.float32(i))


@njit(cache=True, inline="always")
def _combine(base, a, b):
    """Response of a point or box kind (``base``: its point kind) from its probes' values.

    Every combination is computed and one is selected, without a branch: a node's
    candidates mix kinds at random, and a mispredicted branch would discard the probe
    reads of the following candidates that are already under way. The probes' values are
    float32 first: codes of a quantised store are unsigned, and their difference must not
    wrap around (float32 holds codes, their sums and differences exactly)."""
    a = np.float32(a)
    b = np.float32(b)
    difference = a - b
    v = a
    v = difference if base == KIND_DIFF else v
    v = a + b if base == KIND_SUM else v
    return abs(difference) if base == KIND_ABSDIFF else v


@njit(cache=True, inline="always")
def _second_read(base, first, second):
    """Where a point kind (``base``: its point kind) reads its second probe: a value kind
    ignores it, so it reads its first probe's pixel again, already under way, and not a
    second line that would most likely miss the caches (the response is the same)."""
    return first if base == KIND_VALUE else second


@njit(cache=True, inline="always")
def _tabular_response(params, j, pixels, at):
    return pixels[np.uint64(at[3] + int(params[j, 0]) * at[8])]


@njit(cache=True, inline="always")
def _depth_response(params, j, pixels, at):
    _, row, col, _, centre, _, _, _, _, _ = at
    d = centre if centre > 0 else DEPTH_FAR  # background is never sampled: stay in bounds
    return (_depth_probe(pixels, at, row + _round(params[j, 0] / d), col + _round(params[j, 1] / d))
            - _depth_probe(pixels, at, row + _round(params[j, 2] / d),
                           col + _round(params[j, 3] / d)))


@njit(cache=True, inline="always")
def depth_responses(params, first, n, pixels, at, out, start, offsets):
    """Depth responses of the ``n`` consecutive parameter rows from ``first`` at one sample,
    written to ``out[start:]`` (equal to :func:`response_rows` of those rows, bit for bit).
    ``params`` is C-contiguous with 4 columns; ``offsets`` is scratch of at least ``4 * n``
    integers (see :func:`_depth_of_rows`)."""
    rows = params.reshape(-1)[4 * first:4 * (first + n)]  # from 0: no wraparound tests
    _depth_of_rows(rows, n, pixels, at, out, start, offsets)


@njit(cache=True, inline="always")
def drawn_depth_responses(params, first, candidates, shift, pixels, at, out, start, offsets,
                          gathered):
    """:func:`depth_responses` of listed parameter rows, ``first + (candidates[q] >>
    shift)``, copied together first (``gathered``: float32 scratch of at least ``4 *
    len(candidates)``)."""
    n = candidates.shape[0]
    for q in range(n):
        j = first + (candidates[q] >> shift)
        for p in range(4):
            gathered[4 * q + p] = params[j, p]
    _depth_of_rows(gathered[:4 * n], n, pixels, at, out, start, offsets)


@njit(cache=True, inline="always")
def _depth_of_rows(rows, n, pixels, at, out, start, offsets):
    """Depth responses of ``n`` parameter rows laid end to end in ``rows`` at one sample.
    All probe offsets are divided by the sample's depth and rounded in one loop before
    any probe is read: that loop has no reads of ``pixels``, so it runs as vector
    instructions, where the divisions of one response at a time are the slowest part of
    it."""
    _, row, col, _, centre, _, _, _, _, _ = at
    d = centre if centre > 0 else DEPTH_FAR  # background is never sampled: stay in bounds
    for x in range(4 * n):
        offsets[x] = _round(rows[x] / d)
    for k in range(n):
        out[start + k] = (
            _depth_probe(pixels, at, row + offsets[4 * k], col + offsets[4 * k + 1])
            - _depth_probe(pixels, at, row + offsets[4 * k + 2], col + offsets[4 * k + 3]))


@njit(cache=True, inline="always")
def colour_responses(kinds, params, i, candidates, shift, pixels, integral, integral_offset,
                     at, unclamped, out, start, reads):
    """:func:`response_rows` of a colour family's node row i (point and box kinds), bit for
    bit: the responses of ``candidates`` (``candidates[q] >> shift`` is a candidate index)
    at one sample, written to ``out[start:]``.

    Where each point probe reads is worked out for every candidate first (``reads``:
    scratch of at least ``2 * len(candidates)`` integers) and prefetched
    (:func:`prefetch`); then the probes are read in a loop without a branch, every
    candidate as a point kind; last the box kinds' responses replace theirs (their point
    probes are clamped, since a family with box kinds never reads unclamped, so those
    reads stay in the image). Probes read from all over a large store mostly miss the
    caches: with no branch and no box code between them, the processor keeps many of
    those reads under way at once."""
    _, row, col, pixel, _, _, _, stride, plane, _ = at
    first = i * kinds.shape[1]
    for q in range(candidates.shape[0]):
        k = candidates[q] >> shift
        j = first + k
        a_step, b_step = _probe_steps(params, j, stride, plane)
        a = _clamped_index(at, row + int(params[j, 0]), col + int(params[j, 1]),
                           int(params[j, 4]))
        b = _clamped_index(at, row + int(params[j, 2]), col + int(params[j, 3]),
                           int(params[j, 5]))
        a = pixel + a_step if unclamped else a
        b = _second_read(kinds[i, k], a, pixel + b_step if unclamped else b)
        prefetch(pixels, a)
        prefetch(pixels, b)
        reads[2 * q] = a
        reads[2 * q + 1] = b
    for q in range(candidates.shape[0]):
        out[start + q] = _combine(kinds[i, candidates[q] >> shift],
                                  pixels[np.uint64(reads[2 * q])],
                                  pixels[np.uint64(reads[2 * q + 1])])
    for q in range(candidates.shape[0]):
        k = candidates[q] >> shift
        if kinds[i, k] >= KIND_BOX_VALUE:
            out[start + q] = _box_response(kinds[i, k], params, first + k, integral,
                                           integral_offset, at)


@njit(cache=True, inline="always")
def _clamped_index(at, row, col, channel):
    _, _, _, _, _, height, width, stride, plane, origin = at
    row = min(max(row, 0), height - 1)
    col = min(max(col, 0), width - 1)
    return origin + channel * plane + row * stride + col


@njit(cache=True, inline="always")
def _point_response(kind, params, j, pixels, at, unclamped):
    """Both probes are read whatever the kind (a value kind ignores the second), and
    clamped or not is a select: no branch between reads of ``pixels``."""
    _, row, col, pixel, _, _, _, stride, plane, _ = at
    first, second = _probe_steps(params, j, stride, plane)
    a = _clamped_index(at, row + int(params[j, 0]), col + int(params[j, 1]), int(params[j, 4]))
    b = _clamped_index(at, row + int(params[j, 2]), col + int(params[j, 3]), int(params[j, 5]))
    return _combine(kind, pixels[np.uint64(pixel + first if unclamped else a)],
                    pixels[np.uint64(pixel + second if unclamped else b)])


@njit(cache=True, inline="always")
def _box_response(kind, params, j, integral, integral_offset, at):
    _, row, col, _, _, _, _, _, _, _ = at
    half_r = int(params[j, 6])
    half_c = int(params[j, 7])
    a = _box_mean(integral, integral_offset, at, row + int(params[j, 0]), col + int(params[j, 1]),
                  int(params[j, 4]), half_r, half_c)
    b = _box_mean(integral, integral_offset, at, row + int(params[j, 2]), col + int(params[j, 3]),
                  int(params[j, 5]), half_r, half_c)
    return _combine(kind - _BOX_SHIFT, a, b)


@njit(cache=True, inline="always")
def _volume_response(kind, params, j, pixels, at):
    """Response of a volume kind at a voxel of a store of volumes, which is padded as far
    as the probes reach: a probe (dz, dy, dx) away is ``dz`` slices of ``height + 2 pad``
    rows, ``dy`` rows and ``dx`` columns away in the taller plane. Both probes are read
    whatever the kind (a value kind ignores the second)."""
    _, _, _, pixel, _, height, width, stride, plane, _ = at
    slice_step = (height + stride - width) * stride  # stride - width = 2 pad
    a = pixels[np.uint64(pixel + int(params[j, 6]) * plane + int(params[j, 0]) * slice_step
                         + int(params[j, 1]) * stride + int(params[j, 2]))]
    b = pixels[np.uint64(pixel + int(params[j, 7]) * plane + int(params[j, 3]) * slice_step
                         + int(params[j, 4]) * stride + int(params[j, 5]))]
    return _combine(kind - _VOLUME_SHIFT, a, b)


@njit(cache=True, inline="always")
def response_rows(kinds, params, i, candidates, shift, pixels, integral, integral_offset, at,
                  unclamped, out, start):
    """Responses of node row i's ``candidates`` (``candidates[q] >> shift`` is a candidate
    index k: kind ``kinds[i, k]``, parameters ``params[i * n_candidates + k]``) at one
    sample (``at``: :func:`at_sample`; the arrays: the store's), written to
    ``out[start:]``; the one place features read data with :func:`response_at` and
    :func:`point_response`.

    Each kind reads through its own small function whose arrays are used on every path;
    the choice of kind is made here, in the loop. Written otherwise (arrays passed into a
    function that reads them on some paths only), Numba takes a reference on every array
    at every call, which costs more than the response."""
    n_cand = kinds.shape[1]
    for q in range(candidates.shape[0]):
        k = candidates[q] >> shift
        kind = kinds[i, k]
        j = i * n_cand + k
        if kind == KIND_DEPTH:
            v = _depth_response(params, j, pixels, at)
        elif kind == KIND_TABULAR:
            v = _tabular_response(params, j, pixels, at)
        elif kind >= KIND_VOLUME_VALUE:
            v = _volume_response(kind, params, j, pixels, at)
        elif kind >= KIND_BOX_VALUE:
            v = _box_response(kind, params, j, integral, integral_offset, at)
        else:
            v = _point_response(kind, params, j, pixels, at, unclamped)
        out[start + q] = v


@njit(cache=True)
def response_at(kind, params, j, pixels, integral, integral_offset, at, unclamped):
    """Response of one feature ``(kind, params[j])`` at a sample (see
    :func:`response_rows`; ``unclamped`` reads a point kind's probes without clamping them
    to the image: the same on a store padded at least as far as the probes reach, and
    cheaper)."""
    if kind == KIND_DEPTH:
        return _depth_response(params, j, pixels, at)
    if kind == KIND_TABULAR:
        return _tabular_response(params, j, pixels, at)
    if kind >= KIND_VOLUME_VALUE:
        return _volume_response(kind, params, j, pixels, at)
    if kind >= KIND_BOX_VALUE:
        return _box_response(kind, params, j, integral, integral_offset, at)
    return _point_response(kind, params, j, pixels, at, unclamped)


@njit(cache=True)
def response(kind, params, store, image, row, col):
    """Feature response of one sample, parameters a 1-D row (:func:`response_at`,
    clamped)."""
    return sample_response(kind, params.reshape(1, -1), 0, store, image, row, col, False)


@njit(cache=True)
def unclamped_response(kind, params, store, image, row, col):
    """:func:`response` of a point kind, its probes read without clamping them to the
    image: the same on a store padded at least as far as the probes reach."""
    return sample_response(kind, params.reshape(1, -1), 0, store, image, row, col, True)


@njit(cache=True, inline="always")
def _probe_steps(params, j, stride, plane):
    """How far a point kind's two probes lie from its pixel in a store's flat pixels."""
    return (int(params[j, 4]) * plane + int(params[j, 0]) * stride + int(params[j, 1]),
            int(params[j, 5]) * plane + int(params[j, 2]) * stride + int(params[j, 3]))


@njit(cache=True, inline="always")
def sample_response(kind, params, j, store, image, row, col, unclamped):
    """:func:`response_at` of one feature at one sample, from the store tuple."""
    pixels, _, _, _, _, _, integral, integral_offset = store
    return response_at(kind, params, j, pixels, integral, integral_offset,
                       at_sample(store, image, row, col), unclamped)


@njit(cache=True)
def point_probe_steps(kind, params, store, image):
    """For each node of a point kind, how far its two probes lie from the pixel in the
    flat ``pixels`` of ``image``: ``(first, second)`` uint64 arrays (0 for other nodes;
    a step back wraps around, so that ``pixel + step`` is still the probe's index).

    Only valid without clamping, i.e. on a store padded at least as far as the probes
    reach; :func:`point_response` reads them.
    """
    _, _, _, _, stride, plane, _, _ = store
    first = np.zeros(kind.shape[0], np.uint64)
    second = np.zeros(kind.shape[0], np.uint64)
    for i in range(kind.shape[0]):
        if KIND_VALUE <= kind[i] <= KIND_ABSDIFF:
            a, b = _probe_steps(params, i, stride[image], plane[image])
            first[i], second[i] = np.uint64(a), np.uint64(b)
    return first, second


@njit(cache=True, inline="always")
def point_response(kind, pixels, first, second):
    """Response of a point kind whose probes are ``pixels[first]`` and ``pixels[second]``
    (equal to :func:`response` on a padded store; see :func:`point_probe_steps`)."""
    return _combine(kind, pixels[first], pixels[second])


@njit(cache=True, inline="always")
def depth_step_response(params, i, pixels, at, stride):
    """One entry of :func:`depth_step_responses` (node ``i`` at the int64 flat index ``at``),
    by the same float32 operations: equal to it bit for bit."""
    d = np.float32(pixels[at]) if pixels[at] > 0 else DEPTH_FAR
    r0, c0 = _round(params[i, 0] / d), _round(params[i, 1] / d)
    r1, c1 = _round(params[i, 2] / d), _round(params[i, 3] / d)
    a, b = pixels[np.uint64(at + r0 * stride + c0)], pixels[np.uint64(at + r1 * stride + c1)]
    return (a if a > 0 else DEPTH_FAR) - (b if b > 0 else DEPTH_FAR)


@njit(cache=True, inline="always")
def depth_step_responses(params, nodes, split, at, n, pixels, stride, out, rows, depths,
                         offsets):
    """Depth responses of nodes ``nodes[e]`` at flat store indices ``at[e]``, ``e < n``, on
    a store whose border is background (0) at least as far as the nodes' probes reach from
    there: probes are read at steps from the pixel, without bounds tests (equal to
    :func:`response_at` bit for bit). Entries whose ``split[e]`` is False (leaves) read
    the pixel itself, whatever their parameters. Parameter rows and the depths that divide
    them are copied side by side first (``rows``, ``depths``: float32 scratch, ``offsets``:
    int64 scratch, each of at least ``4 * n``), so that the divisions and roundings run
    as vector instructions, and the probe reads of different entries overlap."""
    for e in range(n):
        d = pixels[np.uint64(at[e])]
        d = d if d > 0 else DEPTH_FAR
        for p in range(4):
            rows[4 * e + p] = params[nodes[e], p] if split[e] else np.float32(0.0)
            depths[4 * e + p] = d
    for x in range(4 * n):
        offsets[x] = _round(rows[x] / depths[x])
    for e in range(n):
        a = pixels[np.uint64(at[e] + offsets[4 * e] * stride + offsets[4 * e + 1])]
        b = pixels[np.uint64(at[e] + offsets[4 * e + 2] * stride + offsets[4 * e + 3])]
        out[e] = (a if a > 0 else DEPTH_FAR) - (b if b > 0 else DEPTH_FAR)
