"""Every feature kind against a plain NumPy reference, borders and invalid depth included."""
import numpy as np
import pytest

from jungleseg import _features as K
from jungleseg.features import (ColourFeatures, DepthFeatures, ImageStore, TabularFeatures,
                                depth_in_metres, family_from_dict)

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
    assert K.draw_candidates(family.spec(), np.uint64(1), kinds, params) == 50
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
    K.draw_candidates(family.spec(), np.uint64(2), kinds, params)
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


def test_rgb_becomes_lab_and_grey_gets_smoothed_copies():
    rng = np.random.default_rng(2)
    rgb = rng.integers(0, 256, (16, 20, 3), dtype=np.uint8)
    lab = ColourFeatures().channels(rgb)
    from skimage.color import rgb2lab
    # OpenCV's constants differ slightly from scikit-image's: within 0.3 Lab units
    np.testing.assert_allclose(lab, rgb2lab(rgb), atol=0.3)
    assert np.abs(lab - rgb2lab(rgb)).mean() < 0.1
    grey = ColourFeatures(input="grey", smoothing_scales=(1, 3)).channels(rgb[:, :, 0])
    assert grey.shape == (16, 20, 3)
    np.testing.assert_array_equal(grey[:, :, 0], rgb[:, :, 0])
    assert grey[:, :, 2].std() < grey[:, :, 1].std() < grey[:, :, 0].std()
    edges = ColourFeatures(input="grey", smoothing_scales=(1, 3), gradient=True)
    step = np.zeros((16, 20), np.float32)
    step[:, 10:] = 1
    channels = edges.channels(step)
    assert channels.shape == (16, 20, 5) and edges.n_channels == 5
    np.testing.assert_array_equal(channels[:, :, :3], ColourFeatures(
        input="grey", smoothing_scales=(1, 3)).channels(step))
    from scipy import ndimage as ndi
    smooth = ndi.gaussian_filter(step, 1, mode="nearest")
    reference = np.hypot(ndi.sobel(smooth, 0, mode="nearest"), ndi.sobel(smooth, 1, mode="nearest"))
    np.testing.assert_allclose(channels[2:-2, 2:-2, 3], reference[2:-2, 2:-2], atol=0.02)
    assert np.argmax(channels[8, :, 3]) in (9, 10)  # strongest on the step
    with pytest.raises(ValueError, match="grey input only"):
        ColourFeatures(input="rgb", gradient=True)


def test_hessian_channels_match_a_numpy_reference():
    rng = np.random.default_rng(5)
    image = rng.random((24, 30)).astype(np.float32)
    family = ColourFeatures(input="grey", smoothing_scales=(1.5,), gradient=True, hessian=True)
    channels = family.channels(image)
    assert channels.shape == (24, 30, 5) and family.n_channels == 5
    from scipy import ndimage as ndi

    smooth = channels[:, :, 1].astype(np.float64)
    second = np.array([1.0, -2.0, 1.0])
    first = np.array([-1.0, 0.0, 1.0])
    blur = np.array([1.0, 2.0, 1.0])
    dxx = ndi.correlate(smooth, np.outer(blur, second), mode="nearest")
    dyy = ndi.correlate(smooth, np.outer(second, blur), mode="nearest")
    dxy = ndi.correlate(smooth, np.outer(first, first), mode="nearest")
    hessian = np.stack([[dyy, dxy], [dxy, dxx]]).transpose(2, 3, 0, 1)
    eigen = np.linalg.eigvalsh(hessian)[..., ::-1]  # larger first
    np.testing.assert_allclose(channels[:, :, 3:], eigen, atol=1e-4)
    assert family_from_dict(family.to_dict()) == family
    with pytest.raises(ValueError, match="grey input only"):
        ColourFeatures(input="channels", n_channels=2, hessian=True)


def test_box_filter_channels_match_a_numpy_reference():
    rng = np.random.default_rng(6)
    rgb = rng.integers(0, 256, (13, 17, 3), dtype=np.uint8)
    family = ColourFeatures(input="rgb", box_filters=(1, 4), position=True)
    channels = family.channels(rgb)
    assert channels.shape == (13, 17, 11) and family.n_channels == 11
    lab = ColourFeatures().channels(rgb)
    np.testing.assert_array_equal(channels[:, :, :3], lab)
    for i, half in enumerate((1, 4), start=1):
        for r in range(13):
            for c in range(17):  # every pixel: borders, where boxes are clipped, included
                box = lab[max(r - half, 0):r + half + 1, max(c - half, 0):c + half + 1]
                np.testing.assert_allclose(channels[r, c, 3 * i:3 * i + 3],
                                           box.mean(axis=(0, 1)), atol=1e-4)
    np.testing.assert_array_equal(channels[:, :, 9:], ColourFeatures(position=True).channels(
        rgb)[:, :, 3:])  # position last, unchanged
    assert family.margin() == ColourFeatures().margin() + 4
    with pytest.raises(ValueError, match="box_filters"):
        ColourFeatures(box_filters=(0,))
    with pytest.raises(ValueError, match="box_filters"):
        ColourFeatures(box_filters=(2, 2))


def test_depth_units():
    mm = np.array([[0, 1500], [2500, 4000]], np.uint16)
    metres, units = depth_in_metres(mm)
    assert units == "mm" and metres[1, 0] == pytest.approx(2.5)
    assert depth_in_metres(mm.astype(np.float32) / 1000)[1] == "m"
    with pytest.raises(ValueError, match="millimetres"):
        depth_in_metres(mm.astype(np.float32), units="m")
    with pytest.raises(ValueError, match="non-negative"):
        depth_in_metres(np.array([[-1.0]]))
    with pytest.raises(ValueError, match="8-bit"):
        depth_in_metres(np.zeros((2, 2), np.uint8))


def test_tabular_draws_distinct_columns():
    kinds = np.zeros(5, np.uint8)
    params = np.zeros((5, 1), np.float32)
    n = K.draw_candidates(TabularFeatures(5).spec(), np.uint64(3), kinds, params)
    assert n == 5 and sorted(params[:, 0]) == [0, 1, 2, 3, 4]


def test_centred_draws_put_the_first_probe_on_the_pixel():
    draws = []
    for centred in (False, True):
        kinds = np.zeros(200, np.uint8)
        params = np.zeros((200, 8), np.float32)
        K.draw_candidates(ColourFeatures(12, centred=centred).spec(), np.uint64(4), kinds,
                          params)
        draws.append((kinds, params))
    (kinds, free), (centred_kinds, centred) = draws
    assert np.all(centred[:, :2] == 0) and np.any(free[:, :2] != 0)
    np.testing.assert_array_equal(kinds, centred_kinds)  # same stream, only u changes
    np.testing.assert_array_equal(free[:, 2:], centred[:, 2:])


@pytest.mark.parametrize("family", [TabularFeatures(4), DepthFeatures(0.3, 500.0),
                                    ColourFeatures(8, ["value", "box_sum"], 2, "grey", (1.5,)),
                                    ColourFeatures(4, centred=True),
                                    ColourFeatures(4, input="grey", gradient=True),
                                    ColourFeatures(4, box_filters=(2, 5))])
def test_family_round_trip(family):
    assert family_from_dict(family.to_dict()) == family


def test_bad_family_arguments_are_named():
    with pytest.raises(ValueError, match="kinds"):
        ColourFeatures(kinds=["gradient"])
    with pytest.raises(ValueError, match="input"):
        ColourFeatures(input="hsv")
    with pytest.raises(ValueError, match="RGB"):
        ColourFeatures().channels(np.zeros((4, 4)))


def test_store_packs_images_of_different_sizes():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.arange(6, dtype=np.float32).reshape(2, 3) + 100
    store = ImageStore.from_images([a, b], integral=True)
    assert store.n_images == 2
    assert K.pixel_value(store.as_tuple(), 1, 1, 2, 0) == b[1, 2]
    assert store.integral.size == (4 * 5 + 3 * 4)


def test_a_padded_store_repeats_each_edge_and_reads_like_the_plain_one():
    rng = np.random.default_rng(3)
    images = [rng.random((5, 7, 2)).astype(np.float32), rng.random((4, 3, 2)).astype(np.float32)]
    plain = ImageStore.from_images(images)
    padded = ImageStore.from_images(images, integral=True, pad=6)
    for i, im in enumerate(images):
        h, w, _ = im.shape
        np.testing.assert_array_equal(padded.planes(i), np.moveaxis(im, 2, 0))
        np.testing.assert_array_equal(plain.planes(i), np.moveaxis(im, 2, 0))
        start = padded.offset[i]
        block = padded.pixels[start:start + 2 * (h + 12) * (w + 12)].reshape(2, h + 12, w + 12)
        np.testing.assert_array_equal(block, np.pad(np.moveaxis(im, 2, 0),
                                                    ((0, 0), (6, 6), (6, 6)), mode="edge"))
        for r, c, ch in [(0, 0, 0), (h - 1, w - 1, 1), (h // 2, 1, 1)]:
            assert K.pixel_value(padded.as_tuple(), i, r, c, ch) == im[r, c, ch]
            assert K.pixel_value(plain.as_tuple(), i, r, c, ch) == im[r, c, ch]
    np.testing.assert_array_equal(padded.integral, ImageStore.from_images(images, True).integral)
    with pytest.raises(ValueError, match="pad"):
        ImageStore.from_images(images, pad=-1)


def test_channels_computed_into_a_padded_store_equal_the_plain_channels_bit_for_bit():
    # prepare() filters straight into strided views of the store: the values must not
    # depend on the pad (row stride) or on where a plane starts in memory
    rng = np.random.default_rng(8)
    grey = ColourFeatures(max_offset=5, input="grey", smoothing_scales=(1, 2.5),
                          gradient=True, hessian=True, box_filters=(1, 3), position=True)
    rgb = ColourFeatures(max_offset=5, kinds=("value", "box_value"), box_filters=(2,))
    for trial in range(12):
        h, w = (int(n) for n in rng.integers(9, 70, 2))
        images = [(grey, [rng.random((h, w)).astype(np.float32) * 300,
                          rng.integers(0, 60000, (w, h)).astype(np.uint16)]),
                  (rgb, [rng.integers(0, 256, (h, w, 3)).astype(np.uint8)])]
        for family, ims in images:
            plain = [family.channels(im) for im in ims]
            for pad in (0, 1, 3, 7):
                store = family.prepare(ims, pad=pad)
                for i, expected in enumerate(plain):
                    np.testing.assert_array_equal(store.planes(i), np.moveaxis(expected, 2, 0))


def test_point_reach_is_known_only_for_fixed_single_pixel_probes():
    assert ColourFeatures(max_offset=9, kinds=("value", "absdiff")).point_reach == 9
    assert ColourFeatures(max_offset=9, kinds=("value", "box_value")).point_reach is None
    assert DepthFeatures().point_reach is None
    assert TabularFeatures(3).point_reach is None
