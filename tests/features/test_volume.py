"""Volume features: their channels and kinds against plain NumPy and SciPy references,
borders and anisotropic spacing included, and the store of volumes they read."""
import numpy as np
import pytest
from scipy import ndimage

from jungleseg.features import VolumeFeatures
from jungleseg.features import _kernels as K
from jungleseg.features._draws import draw_candidates
from jungleseg.features._filters import (
    box_mean_volume,
    gaussian_volume,
    gradient_magnitude_volume,
)

SPACING = (0.3, 0.1, 0.1)


def ref_volume_kind(volume, z, y, x, kind, p):
    """A volume kind written out: probes clamped to the volume (what the padded store's
    repeated edges hold), channels last."""
    d, h, w, _ = volume.shape

    def read(dz, dy, dx, ch):
        return np.float32(volume[min(max(z + dz, 0), d - 1), min(max(y + dy, 0), h - 1),
                                 min(max(x + dx, 0), w - 1), ch])

    a = read(int(p[0]), int(p[1]), int(p[2]), int(p[6]))
    if kind == K.KIND_VOLUME_VALUE:
        return a
    b = read(int(p[3]), int(p[4]), int(p[5]), int(p[7]))
    return {K.KIND_VOLUME_DIFF: a - b, K.KIND_VOLUME_SUM: a + b,
            K.KIND_VOLUME_ABSDIFF: abs(a - b)}[kind]


def draws(family, n=60, seed=5):
    kinds = np.zeros(n, np.uint8)
    params = np.zeros((n, 8), np.float32)
    assert draw_candidates(family.spec(), np.uint64(seed), kinds, params) == n
    return kinds, params


@pytest.mark.parametrize("kind", sorted(K.VOLUME_KINDS))
def test_volume_kinds_match_reference(kind):
    rng = np.random.default_rng(3)
    family = VolumeFeatures(SPACING, max_offset=0.7, kinds=[kind], n_channels=2,
                            smoothing_scales=(), gradient=False, centred=False)
    volumes = [rng.uniform(0, 100, (6, 11, 9, 2)).astype(np.float32),
               rng.uniform(-5, 5, (4, 7, 13, 2)).astype(np.float32)]
    store = family.prepare(volumes)
    assert (store.pad_z, store.pad) == (2, 7) == family.reach[:2]
    kinds, params = draws(family)
    code = K.VOLUME_KINDS[kind]
    assert np.all(kinds == code)
    tup = store.as_tuple()
    for i, volume in enumerate(volumes):
        d, h, w, _ = volume.shape
        for z in range(d):  # every border voxel and a few inside
            for y in range(h):
                for x in (0, 1, w // 2, w - 1):
                    row = int(store.rows(np.array([i]), np.array([z]), np.array([y]))[0])
                    for p in params[:12]:
                        assert K.response(code, p, tup, i, row, x) \
                            == ref_volume_kind(volume, z, y, x, code, p)


def test_offsets_have_equal_physical_reach_on_anisotropic_voxels():
    family = VolumeFeatures(SPACING, max_offset=1.0, centred=False)
    _, params = draws(family, n=4000)
    offsets = params[:, :6].reshape(-1, 2, 3)
    reach = np.abs(offsets).max(axis=(0, 1))
    np.testing.assert_array_equal(reach, family.reach)
    assert family.reach == (3, 10, 10)
    physical = np.abs(offsets * np.array(SPACING)).reshape(-1, 3)
    # the same spread in micrometres along z as in y and x (within z's rounding)
    assert abs(physical[:, 0].mean() - physical[:, 1].mean()) < 0.05
    assert family.check_params(params) is None
    too_far = params.copy()
    too_far[0, 0] = 4  # z beyond the reach: unsafe to read unclamped
    assert "reach" in family.check_params(too_far)
    _, centred = draws(VolumeFeatures(SPACING, max_offset=1.0), n=50)
    assert np.all(centred[:, :3] == 0) and np.any(centred[:, 3:6] != 0)


def test_channels_match_scipy_on_anisotropic_volumes():
    rng = np.random.default_rng(0)
    volume = rng.normal(10, 3, (9, 20, 17)).astype(np.float32)
    sigmas = (0.6 / 0.3, 0.6 / 0.1, 0.6 / 0.1)
    out = np.empty_like(volume)
    gaussian_volume(volume, sigmas, out)
    np.testing.assert_allclose(out, ndimage.gaussian_filter(volume.astype(np.float64), sigmas,
                                                            mode="nearest"), atol=1e-4)
    grad = np.empty_like(volume)
    gradient_magnitude_volume(out, SPACING, grad)
    padded = np.pad(out.astype(np.float64), 1, mode="edge")
    parts = [(padded[2:, 1:-1, 1:-1] - padded[:-2, 1:-1, 1:-1]) / (2 * SPACING[0]),
             (padded[1:-1, 2:, 1:-1] - padded[1:-1, :-2, 1:-1]) / (2 * SPACING[1]),
             (padded[1:-1, 1:-1, 2:] - padded[1:-1, 1:-1, :-2]) / (2 * SPACING[2])]
    np.testing.assert_allclose(grad, np.sqrt(sum(p * p for p in parts)), rtol=1e-4, atol=1e-3)
    box = np.empty_like(volume)
    box_mean_volume(volume, (1, 3, 2), box)
    d, h, w = volume.shape
    for z, y, x in [(0, 0, 0), (8, 19, 16), (4, 10, 8), (1, 2, 15), (7, 18, 1)]:
        patch = volume[max(z - 1, 0):z + 2, max(y - 3, 0):y + 4, max(x - 2, 0):x + 3]
        assert box[z, y, x] == pytest.approx(patch.astype(np.float64).mean(), rel=1e-5)


def test_family_channels_and_store_layout():
    rng = np.random.default_rng(1)
    family = VolumeFeatures(SPACING, max_offset=0.5, smoothing_scales=(0.4,), gradient=True,
                            box_filters=(0.3,))
    assert family.n_store_channels == 3 * 2
    volume = rng.uniform(0, 1, (5, 12, 10)).astype(np.float32)
    store = family.prepare([volume])
    planes = store.planes(0)
    assert planes.shape == (6, 5, 12, 10)
    np.testing.assert_array_equal(planes[0], volume)
    smoothed = np.empty_like(volume)
    gaussian_volume(volume, (0.4 / 0.3, 4.0, 4.0), smoothed)
    np.testing.assert_array_equal(planes[1], smoothed)
    box = np.empty_like(volume)
    box_mean_volume(volume, (1, 3, 3), box)  # 0.3 um: 1 slice, 3 pixels
    np.testing.assert_array_equal(planes[3], box)
    np.testing.assert_array_equal(family.channels(volume), np.moveaxis(planes, 0, 3))
    # the border slices and rows repeat the edges
    block = store._block(0)
    q, p = store.pad_z, store.pad
    np.testing.assert_array_equal(block[:, 0, p:-p, p:-p], planes[:, 0])
    np.testing.assert_array_equal(block[:, -1, p:-p, p:-p], planes[:, -1])
    np.testing.assert_array_equal(block[:, q + 2, 0, p:-p], planes[:, 2, 0])
    with pytest.raises(ValueError, match=r"reads \(D, H, W\) volumes; got a 2-D image"):
        family.prepare([volume[0]])
    with pytest.raises(ValueError, match="spacing needs 3 values"):
        VolumeFeatures((0.3, 0.1))
    two = VolumeFeatures(SPACING, n_channels=2)
    with pytest.raises(ValueError, match=r"\(D, H, W, 2\) volumes"):
        two.prepare([volume])


def test_margin_covers_every_reach():
    family = VolumeFeatures(SPACING, max_offset=0.6, smoothing_scales=(0.3,), gradient=True,
                            box_filters=(0.2,))
    # reach (2, 6, 6); box (1, 2, 2); smoothing radius 4 and 12 voxels, gradient 1
    assert family.margin() == (2 + 1 + 5, 6 + 2 + 13, 6 + 2 + 13)
