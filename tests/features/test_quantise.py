"""Quantised channel stores (:mod:`jungleseg.features._quantise`)."""
from __future__ import annotations

import numpy as np
import pytest

from jungleseg import ColourFeatures, JungleSegmenter, load_model, save_model, segment
from jungleseg.features import ImageStore
from jungleseg.features import _kernels as kernels
from jungleseg.features._quantise import (
    Quantiser,
    affine_quantiser,
    fit_quantiser,
    quantiser_from_arrays,
)
from jungleseg.segmentation._context import stage_store


def scenes(n: int, seed: int = 0, h: int = 36, w: int = 44):
    rng = np.random.default_rng(seed)
    images, labels = [], []
    for _ in range(n):
        lab = np.zeros((h, w), np.uint8)
        lab[:, w // 2:] = 1
        lab[h // 3:2 * h // 3, w // 4:w // 2] = 2
        colours = np.array([[200, 60, 40], [40, 160, 60], [50, 60, 200]], np.float64)
        images.append(np.clip(colours[lab] + rng.normal(0, 40, (h, w, 3)), 0, 255
                              ).astype(np.uint8))
        labels.append(lab)
    return images, labels


FAMILY = ColourFeatures(max_offset=5, max_box=2, gradient=True, box_filters=(2,),
                        filters=("log",), filter_scales=(1.0,))


def test_round_trip_and_clipping():
    q = affine_quantiser([-1.0, 0.0], [1.0, 100.0])
    values = np.stack([np.linspace(-1, 1, 1001), np.linspace(0, 100, 1001)]).astype(np.float32)
    codes = q.codes(values)
    assert codes.dtype == np.uint8 and codes.min() == 0 and codes.max() == 255
    step = 1 / q.scale
    assert np.all(np.abs(q.values(codes) - values) <= step[:, None] / 2 * 1.001 + 1e-5)
    every = np.arange(256, dtype=np.uint8)[None].repeat(2, 0)
    np.testing.assert_array_equal(q.codes(q.values(every)), every)
    # far outside the training range: the extreme codes, never an error
    far = np.array([[-1e9, 1e9], [-5.0, 1e30]], np.float32)
    np.testing.assert_array_equal(q.codes(far), [[0, 255], [0, 255]])
    assert quantiser_from_arrays(q.to_arrays()) == q


def test_codes_are_monotone_in_the_value():
    rng = np.random.default_rng(1)
    q = affine_quantiser([-3.7], [12.9])
    values = np.sort(np.concatenate([rng.normal(3, 8, 20000), [-1e6, 1e6]])).astype(np.float32)
    codes = q.codes(values[None])[0]
    assert np.all(np.diff(codes.astype(np.int64)) >= 0)


def test_sixteen_bit_codes():
    q = affine_quantiser([0.0], [1.0], np.uint16)
    codes = q.codes(np.array([[0.0, 0.5, 1.0, 2.0]], np.float32))
    assert codes.dtype == np.uint16
    np.testing.assert_array_equal(codes, [[0, 32768, 65535, 65535]])
    with pytest.raises(ValueError, match="uint8 or uint16"):
        Quantiser(np.zeros(1), np.ones(1), np.int32)


def test_fitted_quantiser_spans_the_training_values():
    images, _ = scenes(3)
    q = fit_quantiser(FAMILY.n_store_channels, images, FAMILY.channels_into)
    store = FAMILY.with_quantiser(q).prepare(images)
    assert store.pixels.dtype == np.uint8 and store.integral.dtype == np.uint32
    for c in range(store.n_channels):  # the codes use the range: not a few levels only
        assert np.ptp(store.planes(0)[c]) > 100


def test_training_and_segmentation_read_identical_codes():
    images, labels = scenes(3)
    seg = JungleSegmenter(FAMILY, n_estimators=2, max_depth=5, samples_per_image=200,
                          random_state=0)
    plan = seg._plan(images, labels)
    seg.fit(images, labels)
    family = seg.jungle_.family
    assert family.quantiser is not None and family.quantiser == plan.family.quantiser
    for i, image in enumerate(images):
        alone = family.prepare([image])
        np.testing.assert_array_equal(alone.planes(0), plan.store.planes(i))
        ref = family.channels(image)  # float32 values; codes by the same map
        np.testing.assert_array_equal(family.quantiser.codes(np.moveaxis(ref, 2, 0)),
                                      alone.planes(0))


def test_later_stages_read_stage_one_codes():
    """A later auto-context stage's store holds stage 1's codes whether it copies them
    from stage 1's store or makes them again from the images."""
    from jungleseg.segmentation._context import context_family

    images, _ = scenes(2)
    q = fit_quantiser(FAMILY.n_store_channels, images, FAMILY.channels_into)
    base = FAMILY.with_quantiser(q)
    first = base.prepare(images)
    family = context_family(base, first.n_channels, 3, q)
    maps = [np.random.default_rng(i).random((36 * 44, 3)).astype(np.float32) for i in range(2)]
    copied = stage_store(family, first, maps)
    remade = stage_store(family, None, maps, base, images)
    for i in range(2):
        np.testing.assert_array_equal(copied.planes(i), remade.planes(i))
        np.testing.assert_array_equal(copied.planes(i)[:first.n_channels], first.planes(i))


def test_uint32_integral_images_wrap_exactly():
    """Box sums of codes are exact although the image's sum exceeds 2^32 (4200 x 4100
    pixels of code 255: 4.4e9)."""
    h, w = 4200, 4100
    q = affine_quantiser([0.0], [1.0])
    store = ImageStore.build([(h, w)], 1, lambda i, planes: planes.fill(1.0), integral=25,
                             quantiser=q)
    assert store.integral.dtype == np.uint32
    assert 255 * h * w > 2 ** 32
    params = np.array([0, 0, 0, 0, 0, 0, 2, 2], np.float32)
    for row, col in ((h - 1, w - 1), (h - 3, w - 7), (2, 3)):
        assert kernels.response(kernels.KIND_BOX_VALUE, params, store.as_tuple(), 0, row,
                                col) == 255


def test_quantised_models_save_and_load(tmp_path):
    images, labels = scenes(3)
    seg = JungleSegmenter(FAMILY, n_estimators=2, max_depth=5, samples_per_image=200,
                          random_state=0, auto_context=2, context_folds=2).fit(images, labels)
    path = save_model(seg.jungle_, tmp_path / "m.h5")
    loaded = load_model(path)
    assert loaded.family.quantiser == seg.jungle_.family.quantiser
    assert loaded.context[0].family.quantiser == seg.jungle_.context[0].family.quantiser
    test = scenes(1, seed=7)[0][0]
    a, pa = segment(seg.jungle_, test)
    b, pb = segment(loaded, test)
    np.testing.assert_array_equal(a, b)
    assert pa.tobytes() == pb.tobytes()


def numpy_codes(q: Quantiser, values: np.ndarray) -> np.ndarray:
    """The codes as NumPy computes them step by step (float32 throughout)."""
    scaled = (values - q.low.reshape((-1,) + (1,) * (values.ndim - 1)))
    scaled *= q.scale.reshape((-1,) + (1,) * (values.ndim - 1))
    return np.rint(np.clip(scaled, np.float32(0), np.float32(q.max_code))).astype(q.dtype)


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("shape", [(3, 7, 9), (2, 4, 5, 6), (2, 11)])
def test_codes_equal_numpy_s_step_by_step_into_strided_and_float_outputs(bits, shape):
    rng = np.random.default_rng(bits)
    q = affine_quantiser(rng.normal(0, 1, shape[0]), rng.normal(0, 1, shape[0]) + 3,
                         dtype=np.uint8 if bits == 8 else np.uint16)
    values = rng.normal(0, 2, shape).astype(np.float32)
    values.flat[:4] = [1e30, -1e30, np.float32(q.low[0]), -0.0]
    expected = numpy_codes(q, values)
    np.testing.assert_array_equal(q.codes(values), expected)
    padded = np.zeros(shape[:-1] + (shape[-1] + 3,), q.dtype)  # a strided view, as a store's
    q.codes_into(values, padded[..., 1:-2])
    np.testing.assert_array_equal(padded[..., 1:-2], expected)
    assert not padded[..., 0].any() and not padded[..., -2:].any()
    in_place = values.copy()  # float32 codes in place, as auto-context stages make them
    q.codes_into(in_place, in_place)
    np.testing.assert_array_equal(in_place, expected.astype(np.float32))


def test_codes_round_half_steps_to_even():
    q = affine_quantiser([0.0], [255.0])  # scale 1: halves stay exact
    halves = np.array([[0.5, 1.5, 2.5, 3.5, 254.5]], np.float32)
    np.testing.assert_array_equal(q.codes(halves), [[0, 2, 2, 4, 254]])
    np.testing.assert_array_equal(q.codes(halves), numpy_codes(q, halves))
