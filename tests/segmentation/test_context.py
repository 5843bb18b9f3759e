"""Auto-context: out-of-fold stage maps, stage chains, tiling margins adding up over the
stages, and multi-stage model files."""
import json

import h5py
import numpy as np
import pytest

from jungleseg import (
    ColourFeatures,
    JungleSegmenter,
    ModelFileError,
    load_model,
    save_model,
    segment,
    segment_prepared,
)
from jungleseg.datasets.faces import render_faces
from jungleseg.io import _json_default
from jungleseg.segmentation._context import (
    chain_margin,
    cheap_pad,
    clone,
    context_family,
    fold_of,
    image_shapes,
    out_of_fold,
    stage_store,
    store_images,
)

FAMILY = ColourFeatures(max_offset=6, max_box=2, box_filters=(2,))


def stage_input(base, image, proba):
    """(H, W, C1 + C) float32: image ``image``'s stage-1 channels joined to a probability
    map: what a later stage's features prepare, in the plain way."""
    planes = base.planes(image)
    n, h, w = planes.shape
    return np.concatenate([np.moveaxis(planes, 0, 2), proba.reshape(h, w, -1)],
                          axis=2).astype(np.float32)


def coded(family, images):
    """``family`` coding channels as training on ``images`` does."""
    return family.with_quantiser(family.fitted_quantiser(images))


def _fit(stages, n_images=4, **kw):
    images, labels = render_faces(n_images + 2, seed=0, size=(40, 56))
    seg = JungleSegmenter(FAMILY, n_estimators=2, max_width=8, max_depth=6,
                          n_candidate_features=10, samples_per_image=200, random_state=0,
                          auto_context=stages, **kw).fit(images[:n_images], labels[:n_images])
    return seg, images[n_images:], labels[n_images:]


@pytest.fixture(scope="module")
def two_stages():
    return _fit(2)


def test_stages_chain_and_count_their_nodes(two_stages):
    seg, _, _ = two_stages
    jungle = seg.jungle_
    assert len(jungle.context) == 1 and jungle.params["auto_context"] == 2
    first = jungle.context[0]
    assert first.family == FAMILY
    assert jungle.family == context_family(FAMILY, FAMILY.n_store_channels, seg.classes_.size)
    assert seg.node_count_ == jungle.node_count == first.node_count + sum(
        d.n_nodes for d in jungle.dags)
    assert chain_margin(jungle, None) == FAMILY.margin(None) + jungle.family.margin(None)


def test_tiled_equals_whole_with_margins_adding_up_over_three_stages():
    seg, images, _ = _fit(3)
    whole = segment(seg.jungle_, images[0])
    for tile in (7, 16):
        tiled = segment(seg.jungle_, images[0], tile=tile)
        np.testing.assert_array_equal(tiled[0], whole[0])
        np.testing.assert_array_equal(tiled[1], whole[1])
    # one stage's margin alone is not enough: the tile edges then show
    short = seg.jungle_.family.margin(None)
    assert chain_margin(seg.jungle_, None) >= 3 * short


def test_prepared_stage_one_store_segments_as_the_image(two_stages):
    seg, images, _ = two_stages
    store = seg.jungle_.context[0].family.prepare(images[:1])  # stage 1's codes
    a = segment_prepared(seg.jungle_, store, 0)
    b = segment(seg.jungle_, images[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize("family", [FAMILY, ColourFeatures(max_offset=2, kinds=("value",))])
def test_stage_store_is_the_joined_inputs_prepared(family):
    # the next stage's store is filled in place; it must hold what preparing the joined
    # (H, W, C1 + C) inputs would, integral images and padded borders included
    images, _ = render_faces(3, seed=4, size=(40, 56))
    base = family.prepare(images)
    rng = np.random.default_rng(0)
    maps = [rng.random((40 * 56, 3)).astype(np.float32) for _ in images]
    later = context_family(family, family.n_store_channels, 3)
    inputs = [stage_input(base, i, m) for i, m in enumerate(maps)]
    pad = cheap_pad(later.point_reach, image_shapes(inputs))
    expected = later.prepare(inputs, pad=pad)
    store = stage_store(later, base, maps)
    assert store.pad == pad == (2 if later.point_reach else 0)
    assert store.pixels.shape == expected.pixels.shape
    np.testing.assert_array_equal(store.pixels, expected.pixels)
    if later.needs_integral:
        np.testing.assert_array_equal(store.integral, expected.integral)
    for view, joined in zip(store_images(store), inputs):
        np.testing.assert_array_equal(view, joined)
    # a third stage copies stage 1's planes out of the second stage's store
    newer = [rng.random((40 * 56, 3)).astype(np.float32) for _ in images]
    np.testing.assert_array_equal(stage_store(later, store, newer).pixels,
                                  stage_store(later, base, newer).pixels)


def test_maps_are_out_of_fold():
    """Each training image's map comes from a model fitted on the other fold only: with
    one fold memorising its images, the other fold's maps differ from in-sample maps."""
    images, labels = render_faces(4, seed=3, size=(32, 40))
    model = JungleSegmenter(FAMILY, n_estimators=1, max_width=None, max_depth=20,
                            n_candidate_features=10, sampling="all", random_state=0)
    store = coded(FAMILY, images).prepare(images)
    classes = model.fit(images, labels).classes_
    maps = out_of_fold(model, images, labels, store, classes, folds=2, seed=1)
    assert all(m.shape == (32 * 40, classes.size) for m in maps)
    for i, m in enumerate(maps):
        truth = np.searchsorted(classes, labels[i].ravel())
        in_sample = model.jungle_.classify_image(store, i)[0]
        out = np.argmax(m, axis=1)
        assert np.mean(in_sample == truth) > 0.99  # a full tree memorises its images
        assert np.mean(out == truth) < np.mean(in_sample == truth)
        np.testing.assert_allclose(m.sum(axis=1), 1, atol=1e-5)


def test_each_map_comes_from_a_model_fitted_on_the_other_folds_images():
    images, labels = render_faces(5, seed=4, size=(24, 32))
    model = JungleSegmenter(FAMILY, n_estimators=1, max_depth=6, n_candidate_features=10,
                            samples_per_image=150, random_state=0)
    family = coded(FAMILY, images)  # the codes of every image, as stage 1's store holds them
    store = family.prepare(images)
    classes = model.fit(images, labels).classes_
    for folds in (2, 3, 5):
        units = [int(f.flat[0]) for f in fold_of(image_shapes(images), folds, seed=7)]
        assert sorted(np.bincount(units, minlength=folds)) == sorted(
            [5 // folds + (f < 5 % folds) for f in range(folds)])  # dealt round the folds
        maps = out_of_fold(model, images, labels, store, classes, folds=folds, seed=7)
        for f in range(folds):
            others = [i for i in range(5) if units[i] != f]
            part = clone(model, features=family).fit([images[i] for i in others],
                                                     [labels[i] for i in others])
            columns = np.searchsorted(classes, part.classes_)
            for i in (i for i in range(5) if units[i] == f):
                expected = np.zeros_like(maps[i])
                expected[:, columns] = part.jungle_.classify_image(store, i)[1]
                np.testing.assert_array_equal(maps[i], expected)
    # fewer images than folds: squares of every image, in every fold
    squares = fold_of([(40, 50), (33, 16)], 3, seed=1)
    assert [s.shape for s in squares] == [(40, 50), (33, 16)]
    assert set(np.unique(np.concatenate([s.ravel() for s in squares]))) == {0, 1, 2}
    assert all(np.all(s[:16, :16] == s[0, 0]) for s in squares)


def test_two_stage_model_file_round_trips_bit_for_bit(two_stages, tmp_path):
    seg, images, _ = two_stages
    path = save_model(seg.jungle_, tmp_path / "ac.h5")
    loaded = load_model(path)
    assert len(loaded.context) == 1 and loaded.context[0].family == FAMILY
    for a, b in zip((*loaded.context, loaded), (*seg.jungle_.context, seg.jungle_)):
        for part in ("params", "metadata"):  # as the file holds them (JSON)
            assert json.dumps(getattr(a, part), default=_json_default) == json.dumps(
                getattr(b, part), default=_json_default)
        for da, db in zip(a.dags, b.dags):
            for name, array in db.arrays().items():
                assert da.arrays()[name].tobytes() == array.tobytes()
    assert segment(loaded, images[0])[1].tobytes() == segment(seg.jungle_, images[0])[1].tobytes()
    again = save_model(loaded, tmp_path / "again.h5")
    with h5py.File(path) as f, h5py.File(again) as g:
        assert f.attrs["format_version"] == 4 and f.attrs["sha256"] == g.attrs["sha256"]
    with h5py.File(path, "r+") as f:  # a stage edited after saving
        f["stages/0"].attrs["training"] = f["stages/0"].attrs["training"].replace(
            '"smoothing": 0', '"smoothing": 1')
    with pytest.raises(ModelFileError, match="checksum"):
        load_model(path)


def test_one_image_folds_are_squares_and_depth_features_are_refused():
    from jungleseg import DepthFeatures
    from jungleseg.segmentation._context import BLOCK

    images, labels = render_faces(1, seed=0, size=(48, 64))
    model = JungleSegmenter(FAMILY, n_estimators=1, max_width=None, max_depth=20,
                            n_candidate_features=10, sampling="all", random_state=0)
    classes = model.fit(images, labels).classes_
    store = coded(FAMILY, images).prepare(images)
    maps = out_of_fold(model, images, labels, store, classes, folds=2, seed=0)
    assert maps[0].shape == (48 * 64, classes.size)
    np.testing.assert_allclose(maps[0].sum(axis=1), 1, atol=1e-5)
    truth = np.searchsorted(classes, labels[0].ravel())
    assert np.mean(np.argmax(maps[0], axis=1) == truth) < 0.99 and BLOCK == 16
    seg = JungleSegmenter(FAMILY, n_estimators=1, max_depth=4, auto_context=2,
                          samples_per_image=300, random_state=0).fit(images, labels)
    assert len(seg.jungle_.context) == 1
    depth = [np.full((20, 20), 2.0, np.float32)]
    with pytest.raises(ValueError, match="auto_context needs colour features"):
        JungleSegmenter(DepthFeatures(), auto_context=2, max_depth=3).fit(
            depth, [np.ones((20, 20), np.uint8)])


def test_strokes_of_one_class_outside_a_fold_give_that_class_its_maps():
    """A few strokes on one image: the squares outside a fold may hold one class only.
    That fold's maps say that class, as a model of it would; auto-context then trains."""
    image = render_faces(1, seed=0, size=(48, 64))[0][0]
    folds = fold_of([(48, 64)], 2, seed=0)[0]
    strokes = np.zeros((48, 64), np.uint8)
    strokes[18:22, 2:30] = 1  # background in squares of fold 0 ...
    strokes[2:6, 2:14] = 1  # ... and of fold 1
    strokes[2:6, 34:44] = 2  # the other class in a square of fold 1 only
    assert set(folds[strokes == 2]) == {1} and set(folds[strokes == 1]) == {0, 1}
    model = JungleSegmenter(FAMILY, n_estimators=1, max_depth=4, samples_per_image=300,
                            ignore=(0,), random_state=0)
    classes = model.fit([image], [strokes]).classes_
    store = coded(FAMILY, [image]).prepare([image])
    maps = out_of_fold(model, [image], [strokes], store, classes, folds=2, seed=0)[0]
    one_class = (folds == 1).ravel()  # trained on fold 0: background only
    np.testing.assert_array_equal(maps[one_class], np.tile([1, 0], (one_class.sum(), 1)))
    assert np.any(maps[~one_class, 1] > 0)  # fold 0 from a model of both classes
    np.testing.assert_allclose(maps.sum(axis=1), 1, atol=1e-5)
    seg = JungleSegmenter(FAMILY, n_estimators=1, max_depth=4, auto_context=2,
                          samples_per_image=300, ignore=(0,), random_state=0).fit(
        [image], [strokes])
    assert len(seg.jungle_.context) == 1
