"""ColourFeatures: channels against NumPy references, options, and what it refuses."""
import numpy as np
import pytest

from jungleseg._workers import threads
from jungleseg.features import ColourFeatures, DepthFeatures, TabularFeatures, family_from_dict


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
    assert channels.shape == (16, 20, 5) and edges.n_store_channels == 5
    np.testing.assert_array_equal(channels[:, :, :3], ColourFeatures(
        input="grey", smoothing_scales=(1, 3)).channels(step))
    from scipy import ndimage as ndi
    smooth = ndi.gaussian_filter(step, 1, mode="nearest")
    reference = np.hypot(ndi.sobel(smooth, 0, mode="nearest"), ndi.sobel(smooth, 1, mode="nearest"))
    np.testing.assert_allclose(channels[2:-2, 2:-2, 3], reference[2:-2, 2:-2], atol=0.02)
    assert np.argmax(channels[8, :, 3]) in (9, 10)  # strongest on the step
    with pytest.raises(ValueError, match="grey or rgb input only"):
        ColourFeatures(input="channels", n_channels=3, gradient=True)


def test_hessian_channels_match_a_numpy_reference():
    rng = np.random.default_rng(5)
    image = rng.random((24, 30)).astype(np.float32)
    family = ColourFeatures(input="grey", smoothing_scales=(1.5,), gradient=True, hessian=True)
    channels = family.channels(image)
    assert channels.shape == (24, 30, 5) and family.n_store_channels == 5
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
    with pytest.raises(ValueError, match="grey or rgb input only"):
        ColourFeatures(input="channels", n_channels=2, hessian=True)


def test_orientation_channels_are_absolute_sobel_derivatives_by_axis():
    rng = np.random.default_rng(9)
    image = rng.random((22, 27)).astype(np.float32)
    family = ColourFeatures(input="grey", smoothing_scales=(1.0, 2.0), gradient=True,
                            orientation=True)
    channels = family.channels(image)
    assert channels.shape == (22, 27, 9) and family.n_input_channels == 9
    from scipy import ndimage as ndi

    for k in range(2):
        smooth = channels[:, :, 1 + k].astype(np.float64)
        across = ndi.correlate(smooth, np.outer([1, 2, 1], [-1, 0, 1]), mode="nearest")
        down = ndi.correlate(smooth, np.outer([-1, 0, 1], [1, 2, 1]), mode="nearest")
        np.testing.assert_allclose(channels[:, :, 5 + 2 * k], np.abs(across), atol=1e-5)
        np.testing.assert_allclose(channels[:, :, 6 + 2 * k], np.abs(down), atol=1e-5)
        # the two parts make up the gradient magnitude
        np.testing.assert_allclose(np.hypot(across, down), channels[:, :, 3 + k], atol=1e-5)
    # a vertical edge shows in the horizontal derivative only
    step = np.zeros((16, 20), np.float32)
    step[:, 10:] = 1
    edges = ColourFeatures(input="grey", smoothing_scales=(1.0,), orientation=True).channels(step)
    assert edges[:, :, 2].max() > 0.5 and edges[:, :, 3].max() == 0
    # after the Hessian pairs, so that models without orientation keep their channels
    both = ColourFeatures(input="grey", smoothing_scales=(1.0, 2.0), hessian=True,
                          orientation=True).channels(image)
    np.testing.assert_array_equal(both[:, :, :7], ColourFeatures(
        input="grey", smoothing_scales=(1.0, 2.0), hessian=True).channels(image))
    np.testing.assert_array_equal(both[:, :, 7:], channels[:, :, 5:])
    assert family_from_dict(family.to_dict()) == family
    rgb = ColourFeatures(orientation=True, smoothing_scales=(1.0, 2.0))
    assert rgb.margin() == ColourFeatures(gradient=True, smoothing_scales=(1.0, 2.0)).margin()
    assert rgb.for_input("channels", 4).orientation is False
    with pytest.raises(ValueError, match="orientation channels are made for grey or rgb"):
        ColourFeatures(input="channels", n_channels=3, orientation=True)


def test_rgb_texture_channels_are_the_lightness_filtered_as_grey_input_is():
    rng = np.random.default_rng(8)
    rgb = rng.integers(0, 256, (24, 30, 3), dtype=np.uint8)
    scales = (1.0, 2.5)
    family = ColourFeatures(smoothing_scales=scales, gradient=True, hessian=True,
                            box_filters=[2], position=True)
    channels = family.channels(rgb)
    assert family.n_input_channels == 3 + 3 * len(scales)
    assert channels.shape == (24, 30, 2 * 9 + 2) == (24, 30, family.n_store_channels)
    lab = ColourFeatures().channels(rgb)
    np.testing.assert_array_equal(channels[:, :, :3], lab)
    # the grey family on the lightness makes [L, smoothed copies, gradients, Hessians]
    grey = ColourFeatures(input="grey", smoothing_scales=scales, gradient=True,
                          hessian=True).channels(np.ascontiguousarray(lab[:, :, 0]))
    np.testing.assert_array_equal(channels[:, :, 3:9], grey[:, :, 3:])
    assert family.margin() == ColourFeatures(box_filters=[2]).margin() + 11 + 1
    # a tile with the margin around it has the whole image's channels inside the margin
    texture = ColourFeatures(smoothing_scales=scales, gradient=True, hessian=True,
                             orientation=True)
    m = texture.margin()
    big = rng.integers(0, 256, (2 * m + 10, 2 * m + 12, 3), dtype=np.uint8)
    tile = texture.channels(big[2:-2, 3:-3])
    np.testing.assert_array_equal(tile[m - 2:-(m - 2), m - 3:-(m - 3)],
                                  texture.channels(big)[m:-m, m:-m])
    assert family_from_dict(family.to_dict()) == family


def test_box_filter_channels_match_a_numpy_reference():
    rng = np.random.default_rng(6)
    rgb = rng.integers(0, 256, (13, 17, 3), dtype=np.uint8)
    family = ColourFeatures(input="rgb", box_filters=(1, 4), position=True)
    channels = family.channels(rgb)
    assert channels.shape == (13, 17, 11) and family.n_store_channels == 11
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


def test_bad_family_arguments_are_named():
    with pytest.raises(ValueError, match="kinds"):
        ColourFeatures(kinds=["gradient"])
    with pytest.raises(ValueError, match="input"):
        ColourFeatures(input="hsv")
    with pytest.raises(ValueError, match="RGB"):
        ColourFeatures().channels(np.zeros((4, 4)))


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


def test_channels_do_not_depend_on_the_thread_count():
    # the smoothing scales and the box means of one image are filtered on several threads
    rng = np.random.default_rng(3)
    grey = ColourFeatures(input="grey", smoothing_scales=(1, 2, 4), gradient=True,
                          orientation=True, box_filters=(2, 4))
    rgb = ColourFeatures(kinds=("value",), gradient=True, hessian=True, box_filters=(1, 5))
    for family, image in ((grey, rng.random((61, 83)).astype(np.float32)),
                          (rgb, rng.integers(0, 256, (61, 83, 3)).astype(np.uint8))):
        with threads(1):
            one = family.prepare([image], pad=3)
        with threads(2):
            two = family.prepare([image], pad=3)
        np.testing.assert_array_equal(one.pixels, two.pixels)


def test_point_reach_is_known_only_for_fixed_single_pixel_probes():
    assert ColourFeatures(max_offset=9, kinds=("value", "absdiff")).point_reach == 9
    assert ColourFeatures(max_offset=9, kinds=("value", "box_value")).point_reach is None
    assert DepthFeatures().point_reach is None
    assert TabularFeatures(3).point_reach is None
