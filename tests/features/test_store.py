"""ImageStore: packing images of different sizes, padded borders, integral images."""
import numpy as np
import pytest

from jungleseg.features import ImageStore
from jungleseg.features import _kernels as K


def pack(images, integral=False, pad=0):
    """A store of (H, W) or (H, W, C) arrays as they are (no feature conversion)."""
    images = [np.asarray(im, np.float32) for im in images]
    images = [im[:, :, None] if im.ndim == 2 else im for im in images]
    return ImageStore.build([im.shape[:2] for im in images], images[0].shape[2],
                            lambda i, planes: np.copyto(planes, np.moveaxis(images[i], 2, 0)),
                            integral, pad)


def test_store_packs_images_of_different_sizes():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.arange(6, dtype=np.float32).reshape(2, 3) + 100
    store = pack([a, b], integral=True)
    assert store.n_images == 2
    assert K.pixel_value(store.as_tuple(), 1, 1, 2, 0) == b[1, 2]
    assert store.integral.size == (4 * 5 + 3 * 4)


def test_a_padded_store_repeats_each_edge_and_reads_like_the_plain_one():
    rng = np.random.default_rng(3)
    images = [rng.random((5, 7, 2)).astype(np.float32), rng.random((4, 3, 2)).astype(np.float32)]
    plain = pack(images)
    padded = pack(images, integral=True, pad=6)
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
    np.testing.assert_array_equal(padded.integral, pack(images, True).integral)
    with pytest.raises(ValueError, match="pad"):
        pack(images, pad=-1)


def test_a_zero_border_holds_background():
    """Depth stores pad with 0, which a depth probe reads as off the body."""
    from jungleseg import DepthFeatures

    rng = np.random.default_rng(0)
    frame = rng.uniform(1, 3, (6, 9)).astype(np.float32)
    store = DepthFeatures().prepare([frame], pad=3)
    assert store.border == "zero"
    block = store.pixels.reshape(12, 15)
    np.testing.assert_array_equal(block[3:9, 3:12], frame)
    block[3:9, 3:12] = 0
    assert not block.any()
    with pytest.raises(ValueError, match="border"):
        ImageStore.build([(2, 2)], 1, lambda i, p: None, pad=1, border="mirror")


def test_a_store_of_codes_from_values_made_already_equals_one_filled():
    from jungleseg.features._quantise import affine_quantiser

    rng = np.random.default_rng(3)
    values = [rng.normal(size=(2, h, w)).astype(np.float32) for h, w in [(5, 7), (6, 4)]]
    quantiser = affine_quantiser(np.full(2, -2.0), np.full(2, 2.0))
    shapes = [v.shape[1:] for v in values]
    filled = ImageStore.build(shapes, 2, lambda i, out: np.copyto(out, values[i]), pad=2,
                              quantiser=quantiser, integral=True)
    given = ImageStore.build(shapes, 2, None, pad=2, quantiser=quantiser, integral=True,
                             values=values)
    np.testing.assert_array_equal(given.pixels, filled.pixels)
    np.testing.assert_array_equal(given.integral, filled.integral)
    assert given.pixels.dtype == np.uint8
