"""Memory estimates: budgets, tile choice, refusals."""
import numpy as np
import pytest

from jungleseg import ColourFeatures, JungleSegmenter, segment
from jungleseg._memory import (
    available_memory,
    check_training_memory,
    default_budget,
    format_size,
    parse_size,
    physical_memory,
    segmentation_bytes,
    tile_for_budget,
    training_bytes,
    training_pad,
)
from jungleseg.datasets.faces import render_faces
from jungleseg.segmentation._context import clone


@pytest.fixture(scope="module")
def model():
    images, labels = render_faces(3, seed=0, size=(40, 48))
    return JungleSegmenter(ColourFeatures(max_offset=6, max_box=2), n_estimators=2,
                           max_width=8, max_depth=4, n_candidate_features=8,
                           samples_per_image=100, smoothing=2,
                           random_state=0).fit(images, labels), images


def test_sizes_and_budgets():
    assert parse_size("2GB") == 2_000_000_000 and parse_size("1GiB") == 2**30
    assert parse_size(" 512 mb ") == 512_000_000
    for bad in ("lots", "-1GB", "0", "3 parsecs"):
        with pytest.raises(ValueError, match="memory size"):
            parse_size(bad)
    assert 0 < available_memory() <= physical_memory()
    assert default_budget() < available_memory()


def test_tiles_are_chosen_to_fit_and_give_the_same_result(model):
    seg, images = model
    jungle = seg.jungle_
    image = np.tile(images[0], (8, 8, 1))  # 320 x 384
    margin = jungle.family.margin(image) + 2
    whole = segmentation_bytes(jungle, image.shape, 1)
    assert tile_for_budget(jungle, image.shape, 1, whole, margin) is None
    tile = tile_for_budget(jungle, image.shape, 1, whole // 2, margin)
    assert tile is not None and tile % 64 == 0
    assert segmentation_bytes(jungle, image.shape, 1, tile, margin=margin) <= whole // 2
    assert segmentation_bytes(jungle, image.shape, 1, tile + 64, margin=margin) > whole // 2
    labels, proba = segment(jungle, image)
    tiled = segment(jungle, image, tile=tile)
    np.testing.assert_array_equal(tiled[0], labels)
    with pytest.raises(MemoryError, match="320x384 image needs at least"):
        tile_for_budget(jungle, image.shape, 1, 10_000, margin)


def test_training_estimates_refuse_what_cannot_fit(model):
    seg, images = model
    shapes = [im.shape for im in images]
    small = training_bytes(seg, shapes, 1, 8)
    assert 0 < small.total < 100e6
    huge = JungleSegmenter(ColourFeatures(), n_estimators=1000, max_width=1 << 20,
                           n_candidate_features=5000, samples_per_image=100000)
    estimate = training_bytes(huge, [(2000, 2000, 3)] * 100, 1, 8)
    assert estimate.total > physical_memory() and "split tables" in estimate.largest
    with pytest.raises(MemoryError, match="more than the memory budget .* available"):
        huge.fit([np.zeros((2000, 2000, 3), np.uint8)] * 2,
                 [np.tile(np.arange(2, dtype=np.uint8), (2000, 1000))] * 2)


def test_fit_refuses_a_budget_before_it_starts(model):
    seg, images = model
    labels = [seg.predict(im) for im in images]
    need = check_training_memory(seg, images, labels).total
    for stages in (1, 2):
        small = clone(seg, auto_context=stages)
        with pytest.raises(MemoryError) as refused:
            small.fit(images, labels, max_memory=need // 2,
                      progress=lambda *a: pytest.fail("training started"))
        message = str(refused.value)
        assert "\n" not in message and format_size(need // 2) in message
        assert "training would need up to" in message
    assert clone(seg).fit(images, labels, max_memory=2 * need).jungle_ is not None


def test_auto_context_estimates_count_every_stage_and_the_maps(monkeypatch):
    from jungleseg import _memory

    # float32 stores (4 and 8 bytes a value), large enough to be the largest parts
    monkeypatch.setattr(_memory, "store_value_bytes", lambda family: (4, 8))
    plain = JungleSegmenter(ColourFeatures(max_offset=4), n_estimators=2, samples_per_image=100)
    shapes = [(240, 320, 3)] * 50
    one = training_bytes(plain, shapes, 1, 8)
    two = training_bytes(clone(plain, auto_context=2), shapes, 1, 8)
    family = plain._family()
    pixels = 50 * 240 * 320
    assert one.largest == "the store of every image's channels"
    # making stage 2's store holds the maps and stage 2's store (stage 1's channels and
    # the 8 maps) at once; stage 1's store is freed first
    stage2 = (family.n_store_channels + 8) * 4 * pixels
    assert two.largest == "the store of stage 2" and two.largest_bytes >= stage2
    assert two.total >= one.total - one.largest_bytes + stage2 + 8 * 4 * pixels


def test_store_bytes_follow_the_store_types(monkeypatch):
    from jungleseg import _memory

    seg = JungleSegmenter(ColourFeatures(max_offset=4, kinds=("value", "difference")),
                          n_estimators=2, samples_per_image=100)
    shapes = [(240, 320, 3)] * 10
    narrow = training_bytes(seg, shapes, 1, 8).total  # colour training stores 8-bit codes
    monkeypatch.setattr(_memory, "store_value_bytes", lambda family: (4, 8))
    wide = training_bytes(seg, shapes, 1, 8).total
    pad = training_pad(seg._family(), shapes)[0]  # 4: the store holds a border
    assert wide - narrow == 3 * seg._family().n_store_channels * 10 * (240 + 2 * pad) * (
        320 + 2 * pad)


def test_store_value_bytes_of_codes_and_of_float32_stores():
    from jungleseg._memory import as_trained, store_value_bytes
    from jungleseg.features import DepthFeatures

    boxes = ColourFeatures(max_offset=4, max_box=4)
    assert store_value_bytes(boxes) == (4, 8)  # no quantiser: a float32 model's store
    assert store_value_bytes(as_trained(boxes)) == (1, 4)
    assert store_value_bytes(as_trained(boxes.with_params(max_box=5000))) == (1, 8)
    assert store_value_bytes(as_trained(DepthFeatures(0.3))) == (4, 8)


def test_padded_training_stores_are_counted():
    points = ("value", "difference")
    seg = JungleSegmenter(ColourFeatures(max_offset=8, kinds=points), n_estimators=2,
                          samples_per_image=100)
    shapes = [(240, 320, 3)] * 10
    assert training_pad(seg._family(), shapes) == (8, 0)  # cheap: adds under a quarter
    padded = training_bytes(seg, shapes, 1, 8).total
    far_family = ColourFeatures(max_offset=80, kinds=points)
    far = training_bytes(clone(seg, features=far_family), shapes, 1, 8)
    assert training_pad(far_family, shapes) == (0, 0)
    c_s = seg._family().n_store_channels
    assert padded - far.total == 10 * ((256 * 336) - 240 * 320) * 1 * c_s  # 8-bit codes


def test_training_estimates_count_the_store_as_training_holds_it():
    from jungleseg import DepthFeatures, VolumeFeatures

    depth = JungleSegmenter(DepthFeatures(), n_estimators=2, samples_per_image=100)
    whole = training_bytes(depth, [(240, 320)] * 10, 2, 5)
    bodies = training_bytes(depth, [(240, 320)] * 10, 2, 5, store_shapes=[(100, 50)] * 10)
    n_store = depth._family().n_store_channels
    assert whole.total - bodies.total == 10 * (240 * 320 - 100 * 50) * 4 * n_store
    volumes = JungleSegmenter(VolumeFeatures(), n_estimators=2, samples_per_image=100)
    thin, wide = (training_bytes(volumes, [(8, 64, w)], 1, 3).total for w in (64, 128))
    stores = VolumeFeatures().n_store_channels * 4 + 1  # the store and the volume itself
    assert wide - thin >= 8 * 64 * 64 * stores  # every voxel counts, not only D x H


def test_large_images_get_tiles_whose_window_fits_the_window_budget(model):
    from jungleseg import _memory

    seg, _ = model
    jungle = seg.jungle_
    shape = (8000, 8000, 3)
    margin = 40
    tile = _memory.choose_tile(jungle, shape, 1, 100 * 10**9, margin, 2, False, 1)
    assert tile == _memory.window_tile(jungle, margin, 2)
    assert _memory.SMALLEST_WINDOW_TILE <= tile <= _memory.DEFAULT_TILE and tile % 64 == 0
    side = tile + 2 * margin
    fits = _memory.window_bytes(jungle, side, side, 2) <= _memory.WINDOW_BYTES
    assert fits or tile == _memory.SMALLEST_WINDOW_TILE
    if tile < _memory.DEFAULT_TILE:
        wider = side + 64
        assert _memory.window_bytes(jungle, wider, wider, 2) > _memory.WINDOW_BYTES
    # labels only, a byte each: less is held than with probabilities and int64 labels
    lean = segmentation_bytes(jungle, shape, 1, tile, 2, margin, False, 1)
    assert segmentation_bytes(jungle, shape, 1, tile, 2, margin) - lean == \
        8000 * 8000 * (4 * jungle.n_classes + 7)
