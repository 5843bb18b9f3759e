"""Every feature kind's kernel against a plain NumPy reference, borders and invalid depth
included."""
import numpy as np
import pytest

from jungleseg.features import ColourFeatures, DepthFeatures
from jungleseg.features import _kernels as K
from jungleseg.features._draws import draw_candidates

FAR = 100.0


def ref_depth(depth, r, c, params):
    """Shotton et al.'s depth comparison, written out."""
    h, w = depth.shape
    d = np.float32(depth[r, c])

    def probe(ur, uc):
        rr = r + int(np.floor(np.float32(ur) / d + np.float32(0.5)))
        cc = c + int(np.floor(np.float32(uc) / d + np.float32(0.5)))
        if not (0 <= rr < h and 0 <= cc < w) or depth[rr, cc] <= 0:
            return np.float32(FAR)
        return np.float32(depth[rr, cc])

    return probe(params[0], params[1]) - probe(params[2], params[3])


def ref_colour(image, r, c, kind, p):
    h, w, _ = image.shape

    def read(dr, dc, ch, box):
        rr = min(max(r + dr, 0), h - 1)
        cc = min(max(c + dc, 0), w - 1)
        if not box:
            return np.float32(image[rr, cc, ch])
        hr, hc = int(p[6]), int(p[7])
        patch = image[max(rr - hr, 0):min(rr + hr, h - 1) + 1,
                      max(cc - hc, 0):min(cc + hc, w - 1) + 1, ch]
        return patch.astype(np.float64).mean()

    box = kind >= K.KIND_BOX_VALUE
    base = kind - (K.KIND_BOX_VALUE - K.KIND_VALUE) if box else kind
    a = read(int(p[0]), int(p[1]), int(p[4]), box)
    if base == K.KIND_VALUE:
        return a
    b = read(int(p[2]), int(p[3]), int(p[5]), box)
    return {K.KIND_DIFF: a - b, K.KIND_SUM: a + b, K.KIND_ABSDIFF: abs(a - b)}[base]


def random_depth(rng, h, w):
    depth = rng.uniform(1.0, 4.0, (h, w)).astype(np.float32)
    depth[rng.random((h, w)) < 0.3] = 0  # background and invalid pixels
    return depth


def test_depth_feature_matches_reference():
    rng = np.random.default_rng(0)
    images = [random_depth(rng, 30, 40), random_depth(rng, 25, 17)]
    family = DepthFeatures(max_offset=0.4, focal_length=60)
    store = family.prepare(images).as_tuple()
    kinds = np.zeros(50, np.uint8)
    params = np.zeros((50, 4), np.float32)
    assert draw_candidates(family.spec(), np.uint64(1), kinds, params) == 50
    assert np.all(kinds == K.KIND_DEPTH) and np.abs(params).max() <= family.reach
    checked = 0
    for i, depth in enumerate(images):
        for r, c in zip(*np.nonzero(depth > 0)):
            for p in params[:10]:
                got = K.response(K.KIND_DEPTH, p, store, i, r, c)
                assert got == ref_depth(depth, r, c, p)
                checked += 1
    assert checked > 1000
    # probes that leave the image or land on background read the far constant
    far = np.float32([500.0, 500.0, 0.0, 0.0])
    r, c = map(int, np.argwhere(images[0] > 0)[0])
    assert K.response(K.KIND_DEPTH, far, store, 0, r, c) == FAR - images[0][r, c]


def test_depth_responses_of_consecutive_or_drawn_rows_equal_one_response_at_a_time():
    """The vectorised block of a node's candidates, or of its listed (drawn) candidates,
    gives each response bit for bit, probes off the image and on background included."""
    from numba import njit

    @njit
    def block(params, first, n, store, image, row, col):
        out = np.full(n + 3, np.nan, np.float32)
        K.depth_responses(params, first, n, store[0], K.at_sample(store, image, row, col), out,
                          2, np.empty(4 * n, np.int64))
        return out

    @njit
    def drawn(params, first, codes, shift, store, image, row, col):
        out = np.empty(codes.shape[0], np.float32)
        n = 4 * codes.shape[0]
        K.drawn_depth_responses(params, first, codes, shift, store[0],
                                K.at_sample(store, image, row, col), out, 0,
                                np.empty(n, np.int64), np.empty(n, np.float32))
        return out

    rng = np.random.default_rng(3)
    listed = np.array([4, 4, 29, 0, 11, 3])
    images = [random_depth(rng, 30, 40), random_depth(rng, 12, 9)]
    store = DepthFeatures(max_offset=0.4, focal_length=60).prepare(images).as_tuple()
    params = rng.uniform(-40, 40, (37, 4)).astype(np.float32)
    params[5] = [500.0, 500.0, 0.0, 0.0]  # off the image
    for i, depth in enumerate(images):
        for r, c in list(zip(*np.nonzero(depth > 0)))[:60]:
            for first, n in ((0, 37), (5, 20), (36, 1)):
                got = block(params, first, n, store, i, r, c)
                want = [K.response(K.KIND_DEPTH, p, store, i, r, c)
                        for p in params[first:first + n]]
                assert np.isnan(got[:2]).all() and np.isnan(got[2 + n:]).all()
                assert np.array_equal(got[2:2 + n].view(np.uint32),
                                      np.float32(want).view(np.uint32))
            codes = (listed << 3) + 5  # drawn rows, as the threshold subsamples list them
            got = drawn(params, 7, codes, 3, store, i, r, c)
            want = [K.response(K.KIND_DEPTH, params[7 + k], store, i, r, c) for k in listed]
            assert np.array_equal(got.view(np.uint32), np.float32(want).view(np.uint32))


def test_depth_responses_at_listed_pixels_and_nodes_equal_one_response_at_a_time():
    """The traversal's level step: each entry's own node at its own pixel, probes read at
    steps on a store with a background border, equals the bounds-tested response bit for
    bit; entries marked as leaves never read their (here hostile) parameters."""
    from numba import njit

    @njit
    def level(params, node, split, at, pixels, stride):
        n = node.shape[0]
        out = np.full(n, np.nan, np.float32)
        K.depth_step_responses(params, node, split, at, n, pixels, stride, out,
                               np.empty(4 * n, np.float32), np.empty(4 * n, np.float32),
                               np.empty(4 * n, np.int64))
        return out

    @njit
    def one_step(params, i, pixels, at, stride):
        return K.depth_step_response(params, i, pixels, at, stride)

    rng = np.random.default_rng(5)
    depth = random_depth(rng, 30, 40)
    family = DepthFeatures(max_offset=0.4, focal_length=60)
    params = rng.uniform(-40, 40, (23, 4)).astype(np.float32)
    params[3] = [500.0, 500.0, 0.0, 0.0]  # far off the image
    rows, cols = np.nonzero(depth > 0)
    nearest = depth[depth > 0].min()
    pad = int(np.ceil(np.abs(params).max() / nearest)) + 1
    plain = family.prepare([depth]).as_tuple()
    padded = family.prepare([depth], pad=pad)
    pixels, origin, _, _, stride, _, _, _ = padded.as_tuple()
    pick = rng.choice(rows.size, 200)
    node = rng.integers(0, 23, 200).astype(np.uint64)
    split = rng.random(200) < 0.8
    leaf_params = params.copy()
    leaf_params[np.unique(node[~split]).astype(np.int64)] = np.nan
    leaf_params[node[split].astype(np.int64)] = params[node[split].astype(np.int64)]
    at = origin[0] + rows[pick] * stride[0] + cols[pick]
    got = level(leaf_params, node, split, at, pixels, stride[0])
    want = np.float32([K.response(K.KIND_DEPTH, params[k], plain, 0, r, c) if s else 0.0
                       for k, s, r, c in zip(node.astype(np.int64), split, rows[pick],
                                             cols[pick])])
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert split.sum() > 100 and (~split).sum() > 20
    one = np.float32([one_step(params, k, pixels, a, stride[0]) if s else 0.0
                      for k, s, a in zip(node.astype(np.int64), split, at)])
    assert np.array_equal(one.view(np.uint32), want.view(np.uint32))  # hard routing's step


@pytest.mark.parametrize("pad", [0, 6])
def test_colour_responses_of_a_node_equal_one_response_at_a_time(pad):
    """Point and box kinds mixed in one node, borders included, clamped (no pad) and at
    fixed steps (padded as far as the probes reach): bit for bit."""
    from numba import njit

    @njit
    def block(kinds, params, i, store, image, row, col, unclamped):
        n = kinds.shape[1]
        out = np.full(n + 3, np.nan, np.float32)
        K.colour_responses(kinds, params, i, np.arange(n), 0, store[0], store[6], store[7],
                           K.at_sample(store, image, row, col), unclamped, out, 2,
                           np.empty(2 * n, np.int64))
        return out

    rng = np.random.default_rng(4)
    family = ColourFeatures(max_offset=6, kinds=sorted(K.COLOUR_KINDS), max_box=2,
                            input="channels", n_channels=3)
    images = [rng.uniform(0, 1, (15, 22, 3)).astype(np.float32),
              rng.uniform(0, 1, (7, 9, 3)).astype(np.float32)]
    store = family.prepare(images, pad=pad).as_tuple()
    kinds = np.zeros((2, 30), np.uint8)
    params = np.zeros((60, 8), np.float32)
    for i in range(2):
        draw_candidates(family.spec(), np.uint64(i), kinds[i], params[30 * i:30 * (i + 1)])
    assert len(set(kinds.ravel())) == len(K.COLOUR_KINDS)
    for image, (h, w, _) in enumerate(x.shape for x in images):
        for r in range(h):
            for c in (0, 1, w // 2, w - 1):
                for i in range(2):
                    got = block(kinds, params, i, store, image, r, c, pad > 0)
                    want = [K.response(kinds[i, k], params[30 * i + k], store, image, r, c)
                            for k in range(30)]
                    assert np.isnan(got[:2]).all() and np.isnan(got[32:]).all()
                    assert np.array_equal(got[2:32].view(np.uint32),
                                          np.float32(want).view(np.uint32))


@pytest.mark.parametrize("kind", sorted(K.COLOUR_KINDS))
def test_colour_feature_kinds_match_reference(kind):
    rng = np.random.default_rng(1)
    family = ColourFeatures(max_offset=12, kinds=[kind], max_box=3, input="channels",
                            n_channels=2)
    images = [rng.uniform(0, 100, (20, 30, 2)).astype(np.float32),
              rng.uniform(-5, 5, (9, 13, 2)).astype(np.float32)]
    store = family.prepare(images).as_tuple()
    kinds = np.zeros(40, np.uint8)
    params = np.zeros((40, 8), np.float32)
    draw_candidates(family.spec(), np.uint64(2), kinds, params)
    code = K.COLOUR_KINDS[kind]
    assert np.all(kinds == code)
    assert np.abs(params[:, :4]).max() <= 12 and params[:, 6:].max() <= 3
    for i, image in enumerate(images):
        h, w, _ = image.shape
        for r in range(h):
            for c in (0, 1, w // 2, w - 1):  # borders included
                for p in params[:8]:
                    got = K.response(code, p, store, i, r, c)
                    assert got == pytest.approx(ref_colour(image, r, c, code, p), abs=2e-4)
    if code > K.KIND_ABSDIFF:
        return
    # point kinds read unclamped from a store padded as far as they probe: the same values
    padded = family.prepare(images, pad=family.point_reach).as_tuple()
    for i, image in enumerate(images):
        h, w, _ = image.shape
        for r in range(h):
            for c in range(w):
                for p in params[:8]:
                    assert K.unclamped_response(code, p, padded, i, r, c) \
                        == K.response(code, p, store, i, r, c)
