"""ilastik's filter bank: every filter against SciPy written out (2-D and 3-D, isotropic and
anisotropic, borders included), as channels of the grey and volume families, tiled equal to
whole with the largest scale's margin (and not without it), and on a dask LocalCluster equal
to the local segmentation."""
import numpy as np
import pytest
from scipy import ndimage

from jungleseg import ColourFeatures, JungleSegmenter, VolumeFeatures, segment
from jungleseg.features._bank import FILTERS, bank_reach, filter_bank, n_planes


def reference(image, scale, spacing):
    """Each filter's planes computed directly with scipy.ndimage in float64 and eigenvalues
    with numpy.linalg.eigvalsh, sorted larger first (as ilastik sorts them)."""
    image = image.astype(np.float64)
    axes = range(image.ndim)
    sigmas = [scale / s for s in spacing]

    def gauss(x, sig, orders=None):
        orders = orders or [0] * image.ndim
        unit = np.prod([s ** o for s, o in zip(spacing, orders)])
        return ndimage.gaussian_filter(x, sig, order=orders, mode="nearest") / unit

    grads = [gauss(image, sigmas, [int(a == i) for a in axes]) for i in axes]
    hessian = np.empty(image.shape + (image.ndim, image.ndim))
    tensor = np.empty_like(hessian)
    for i in axes:
        for j in axes:
            hessian[..., i, j] = gauss(image, sigmas, [(a == i) + (a == j) for a in axes])
            tensor[..., i, j] = gauss(grads[i] * grads[j], [0.5 * s for s in sigmas])

    def eig(m):
        return list(np.moveaxis(np.linalg.eigvalsh(m)[..., ::-1], -1, 0))

    return {"gaussian": [gauss(image, sigmas)],
            "log": [sum(hessian[..., i, i] for i in axes)],
            "gradient": [np.sqrt(sum(g * g for g in grads))],
            "dog": [gauss(image, sigmas) - gauss(image, [0.66 * s for s in sigmas])],
            "structure": eig(tensor), "hessian": eig(hessian)}


def blobs(shape, seed=0):
    """Noise plus bright blobs, one cut by the border (borders are where clamping shows)."""
    rng = np.random.default_rng(seed)
    image = rng.normal(0, 0.2, shape)
    grid = np.indices(shape)
    for centre in ([n // 2 for n in shape], [0] * len(shape), [n - 2 for n in shape]):
        image += np.exp(-sum((g - c) ** 2 for g, c in zip(grid, centre)) / 8.0)
    return image.astype(np.float32)


@pytest.mark.parametrize("shape, spacing", [((33, 40), (1.0, 1.0)), ((33, 40), (2.0, 0.7)),
                                            ((11, 24, 27), (1.0, 1.0, 1.0)),
                                            ((11, 24, 27), (3.0, 1.0, 1.2))])
@pytest.mark.parametrize("scale", [0.7, 2.5])
def test_each_filter_equals_scipy_written_out(shape, spacing, scale):
    image = blobs(shape)
    out = np.empty((n_planes(FILTERS, len(shape)), *shape), np.float32)
    filter_bank(image, FILTERS, [scale], spacing, out)
    planes = reference(image, scale, spacing)
    expected = [(f, plane) for f in FILTERS for plane in planes[f]]
    assert len(expected) == len(out)
    for got, (name, want) in zip(out, expected):
        tolerance = 2e-6 * np.abs(want).max() + 1e-7
        np.testing.assert_allclose(got, want, rtol=0, atol=tolerance, err_msg=name)
        border = np.ones(shape, bool)
        border[tuple(slice(2, -2) for _ in shape)] = False
        np.testing.assert_allclose(got[border], want[border], rtol=0, atol=tolerance,
                                   err_msg=f"{name} at the border")


def test_volume_bands_equal_scipy_whatever_the_thread_count():
    """A volume's passes and eigenvalues run on threads, in bands of slices and of columns
    (this volume has more columns than one band): the values stay SciPy's across the
    bands' edges and do not depend on the thread count."""
    from jungleseg._workers import threads
    from jungleseg.features._bank import COLUMN_BAND, SLICE_BAND

    shape, spacing = (2 * SLICE_BAND + 1, 130, 131), (2.0, 1.0, 1.0)
    assert shape[1] * shape[2] > COLUMN_BAND
    image = blobs(shape)
    outs = []
    for n in (1, 2):
        outs.append(np.empty((n_planes(FILTERS, 3), *shape), np.float32))
        with threads(n):
            filter_bank(image, FILTERS, [1.5], spacing, outs[-1])
    np.testing.assert_array_equal(outs[0], outs[1])
    planes = reference(image, 1.5, spacing)
    for got, (name, want) in zip(outs[1], [(f, p) for f in FILTERS for p in planes[f]]):
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * np.abs(want).max() + 1e-7,
                                   err_msg=name)


def test_eigenvalues_are_sorted_larger_first_and_tensor_eigenvalues_are_not_negative():
    image = blobs((9, 20, 21))
    out = np.empty((6, 9, 20, 21), np.float32)
    filter_bank(image, ["structure", "hessian"], [1.0], (2.0, 1.0, 1.0), out)
    assert np.all(out[0] >= out[1]) and np.all(out[1] >= out[2]) and out[2].min() > -1e-6
    assert np.all(out[3] >= out[4]) and np.all(out[4] >= out[5])


def test_families_write_the_bank_after_their_other_channels():
    image = blobs((30, 35))
    grey = ColourFeatures(input="grey", smoothing_scales=(1.0,), gradient=True,
                          filters=["dog", "hessian"], filter_scales=[1.0, 3.0])
    assert grey.n_store_channels == 3 + 2 * 3
    bank = np.empty((6, 30, 35), np.float32)
    filter_bank(image, ["dog", "hessian"], [1.0, 3.0], (1.0, 1.0), bank)
    np.testing.assert_array_equal(np.moveaxis(grey.channels(image)[..., 3:], 2, 0), bank)

    volume = blobs((8, 16, 18))
    family = VolumeFeatures((0.3, 0.1, 0.1), max_offset=0.3, smoothing_scales=(0.2,),
                            filters=["log", "structure"], filter_scales=[0.3])
    assert family.n_store_channels == 3 + 4
    bank = np.empty((4, 8, 16, 18), np.float32)
    filter_bank(volume, ["log", "structure"], [0.3], (0.3, 0.1, 0.1), bank)
    np.testing.assert_array_equal(np.moveaxis(family.channels(volume)[..., 3:], 3, 0), bank)
    assert bank_reach(["structure"], [0.3], (0.3, 0.1, 0.1)) == (4 + 2, 12 + 6, 12 + 6)


def test_bad_bank_options_are_refused():
    with pytest.raises(ValueError, match="filters"):
        ColourFeatures(input="grey", filters=["sobel"], filter_scales=[1.0])
    with pytest.raises(ValueError, match="give both"):
        VolumeFeatures(filters=["log"])
    with pytest.raises(ValueError, match="grey or rgb"):
        ColourFeatures(input="channels", n_channels=2, filters=["log"], filter_scales=[1.0])


def fitted(family, images, labels):
    return JungleSegmenter(family, n_estimators=2, max_depth=6, max_width=16,
                           n_candidate_features=20, samples_per_image=1500,
                           random_state=0).fit(images, labels)


@pytest.fixture(scope="module")
def models():
    image = blobs((70, 90))
    truth = (image > 0.4).astype(np.uint8) + 1
    grey = fitted(ColourFeatures(max_offset=3, kinds=["value", "difference"], input="grey",
                                 smoothing_scales=(), filters=list(FILTERS),
                                 filter_scales=[0.7, 4.0]), [image], [truth])
    volume = blobs((14, 40, 44), seed=1)
    vtruth = (volume > 0.4).astype(np.uint8) + 1
    vol = fitted(VolumeFeatures((0.3, 0.1, 0.1), max_offset=0.3, smoothing_scales=(),
                                filters=list(FILTERS), filter_scales=[0.1, 0.5]),
                 [volume], [vtruth])
    return (grey, image), (vol, volume)


def test_tiled_equals_whole_with_the_largest_scale(models):
    (grey, image), (vol, volume) = models
    assert grey.jungle_.family.margin(None) == 3 + 16 + 8  # structure tensor at sigma 4
    whole = segment(grey.jungle_, image)
    for tile in (16, 37):
        tiled = segment(grey.jungle_, image, tile=tile)
        np.testing.assert_array_equal(tiled[1], whole[1])
    whole_volume = segment(vol.jungle_, volume)
    tiled = segment(vol.jungle_, volume, tile=(5, 17, 20))
    np.testing.assert_array_equal(tiled[1], whole_volume[1])


@pytest.mark.parametrize("family, shape", [
    (ColourFeatures(max_offset=0, input="grey", smoothing_scales=(), filters=list(FILTERS),
                    filter_scales=[0.7, 3.0]), (60, 64)),
    (VolumeFeatures((0.3, 0.1, 0.1), max_offset=0, smoothing_scales=(),
                    filters=list(FILTERS), filter_scales=[0.1, 0.4]), (24, 50, 52))])
def test_a_tile_needs_the_whole_margin_of_the_largest_scale(family, shape):
    """The channels at the centre of a crop reaching ``margin`` around it equal the whole
    image's; half of it along any axis and they differ (the last voxels of a reach carry
    weights below float32 rounding, so one voxel less may not show)."""
    image = blobs(shape, seed=3)
    whole = family.channels(image)
    margin = np.broadcast_to(family.margin(None), len(shape))
    centre = tuple(slice(n // 2 - 1, n // 2 + 1) for n in shape)
    for short in [None, *range(len(shape))]:
        reach = [m // 2 if axis == short else m for axis, m in enumerate(margin)]
        crop = tuple(slice(c.start - r, c.stop + r) for c, r in zip(centre, reach))
        inner = tuple(slice(r, r + 2) for r in reach)
        same = np.array_equal(family.channels(image[crop])[inner], whole[centre])
        assert same == (short is None), short


def test_cluster_segmentation_equals_local(models):
    from jungleseg import distributed as jd

    (grey, image), (vol, volume) = models
    with jd.connect(workers=2) as client:
        np.testing.assert_array_equal(jd.segment_array(vol, volume, client, chunk=8),
                                      segment(vol.jungle_, volume, probabilities=False)[0])
        np.testing.assert_array_equal(jd.segment_array(grey, image, client, chunk=24),
                                      segment(grey.jungle_, image, probabilities=False)[0])
