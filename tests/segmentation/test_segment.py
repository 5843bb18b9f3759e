"""segment, segment_prepared and tiling: whole images, tiles and prepared stores agree."""
import numba
import numpy as np
import pytest

from jungleseg import (
    ColourFeatures,
    DepthFeatures,
    JungleSegmenter,
    load_model,
    save_model,
    segment,
    segment_frames,
    segment_prepared,
    segment_to,
)
from jungleseg._workers import threads
from jungleseg.datasets.faces import render_faces
from jungleseg.datasets.kinect import render_frames

from .scenes import textured


@pytest.mark.parametrize("make", ["grey", "rgb_position", "rgb_box_filters", "depth"])
def test_tiled_segmentation_equals_whole_image(make):
    rng = np.random.default_rng(0)
    if make == "depth":
        depth, labels = render_frames(4, seed=5, size=(120, 160))
        images, labels = list(depth), list(labels)
        family = DepthFeatures(max_offset=0.3, focal_length=142.8)
    elif make == "grey":
        data = [textured(rng, (72, 96)) for _ in range(3)]
        images, labels = [d[0] for d in data], [d[1] for d in data]
        family = ColourFeatures(max_offset=7, max_box=2, input="grey", smoothing_scales=(1.5,))
    else:
        images, labels = render_faces(3, seed=2, size=(70, 90))
        images, labels = list(images), list(labels)
        family = ColourFeatures(max_offset=9, max_box=3, position=True)
        if make == "rgb_box_filters":
            family = ColourFeatures(max_offset=9, kinds=["value", "difference"],
                                    box_filters=(2, 5))

    for guided_eps in (None, 0.1):
        seg = JungleSegmenter(family, n_estimators=2, max_width=8, max_depth=6,
                              n_candidate_features=10, samples_per_image=200,
                              guided_eps=guided_eps, random_state=0).fit(images[:-1], labels[:-1])
        for smoothing in (0, 3):
            whole = segment(seg.jungle_, images[-1], smoothing=smoothing)
            for tile in (16, 33):
                tiled = segment(seg.jungle_, images[-1], tile=tile, smoothing=smoothing)
                np.testing.assert_array_equal(tiled[0], whole[0])
                np.testing.assert_allclose(tiled[1], whole[1], rtol=0, atol=1e-5 * smoothing)


def test_a_tile_traverses_its_pixels_and_what_its_smoothing_reads_not_its_margin(monkeypatch):
    images, labels = render_faces(3, seed=2, size=(70, 90))
    seg = JungleSegmenter(ColourFeatures(max_offset=9), n_estimators=2, max_width=8,
                          max_depth=6, n_candidate_features=10, samples_per_image=200,
                          random_state=0).fit(list(images[:-1]), list(labels[:-1]))
    model = type(seg.jungle_)
    real, traversed = model.classify_image, []

    def counting(self, store, image=0, index=None, *args, **kw):
        traversed.append(int(store.height[image] * store.width[image]) if index is None
                         else len(index))
        return real(self, store, image, index, *args, **kw)

    monkeypatch.setattr(model, "classify_image", counting)
    tile, reach = 16, 3
    segment(seg.jungle_, images[-1], tile=tile, smoothing=reach)

    def extents(n):  # each tile along an axis, with the smoothing's reach, in the image
        return sum(min(a + tile + reach, n) - max(a - reach, 0) for a in range(0, n, tile))

    assert sum(traversed) == extents(70) * extents(90)


def test_a_prepared_store_is_trained_on_and_segmented_like_the_images():
    rng = np.random.default_rng(7)
    data = [textured(rng, (40, 48)) for _ in range(2)]
    images, labels = [d[0] for d in data], [d[1] for d in data]
    family = ColourFeatures(max_offset=4, input="grey", smoothing_scales=(1,), box_filters=(2,))
    kwargs = dict(n_estimators=2, max_width=8, max_depth=5, n_candidate_features=10,
                  samples_per_image=100, smoothing=1, random_state=0)
    coded = family.with_quantiser(family.fitted_quantiser(images))  # as fit would code them
    store = coded.prepare(images)
    from_store = JungleSegmenter(family, **kwargs).fit(images, labels, store=store)
    plain = JungleSegmenter(family, **kwargs).fit(images, labels)
    for k in range(2):
        got = segment_prepared(from_store.jungle_, store, k)
        expected = segment(plain.jungle_, images[k])
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
    with pytest.raises(ValueError, match="store does not hold"):
        JungleSegmenter(family, **kwargs).fit(images[:1], labels[:1], store=store)
    with pytest.raises(ValueError, match="not in the store"):
        segment_prepared(from_store.jungle_, store, 2)
    with pytest.raises(ValueError, match="channels"):
        segment_prepared(from_store.jungle_,
                         ColourFeatures(input="grey", smoothing_scales=(1,)).prepare(images))


def test_smoothing_is_kept_with_the_model_and_removes_isolated_errors(tmp_path):
    rng = np.random.default_rng(4)
    data = [textured(rng, (64, 64)) for _ in range(4)]
    kwargs = dict(n_estimators=2, max_width=8, max_depth=5, n_candidate_features=10,
                  samples_per_image=100, random_state=0)
    family = ColourFeatures(max_offset=4, input="grey", smoothing_scales=(1,))
    plain = JungleSegmenter(family, **kwargs).fit([d[0] for d in data[:3]],
                                                  [d[1] for d in data[:3]])
    smooth = JungleSegmenter(family, smoothing=4, **kwargs).fit([d[0] for d in data[:3]],
                                                               [d[1] for d in data[:3]])
    image, truth = data[3]
    errors = [np.mean(model.predict(image) != truth) for model in (plain, smooth)]
    assert errors[1] < errors[0]  # the same DAGs; only the averaging differs
    save_model(smooth.jungle_, tmp_path / "m.h5")
    loaded = load_model(tmp_path / "m.h5")
    np.testing.assert_array_equal(segment(loaded, image)[0], smooth.predict(image))
    np.testing.assert_array_equal(segment(loaded, image, smoothing=0)[0], plain.predict(image))
    with pytest.raises(ValueError, match="smoothing"):
        segment(loaded, image, smoothing=-1)
    with pytest.raises(ValueError, match="smoothing"):
        JungleSegmenter(family, smoothing=1.5, **kwargs).fit([image], [truth])


@pytest.mark.parametrize("make", ["rgb", "depth"])
def test_prior_power_labels_by_weighted_probabilities_on_every_path(make, tmp_path):
    if make == "depth":
        depth, labels = render_frames(3, seed=5, size=(120, 160))
        images, labels = list(depth), list(labels)
        family = DepthFeatures(max_offset=0.3, focal_length=142.8)
    else:
        images, labels = render_faces(3, seed=2, size=(70, 90))
        images, labels = list(images), list(labels)
        family = ColourFeatures(max_offset=9, max_box=3)
    seg = JungleSegmenter(family, n_estimators=2, max_width=8, max_depth=6,
                          n_candidate_features=10, samples_per_image=200,
                          random_state=0).fit(images[:-1], labels[:-1])
    jungle, image = seg.jungle_, images[-1]
    shares = np.asarray(jungle.metadata["class_shares"])
    plain, proba = segment(jungle, image)
    for power in (0.5, 1.0):
        weights = (shares ** -power).astype(np.float32)
        expected = np.where(proba.sum(axis=2) > 0,
                            jungle.classes[np.argmax(proba * weights, axis=2)], plain)
        labels_only = segment(jungle, image, prior_power=power, probabilities=False)[0]
        np.testing.assert_array_equal(labels_only, expected)
        chosen, kept = segment(jungle, image, prior_power=power)
        np.testing.assert_array_equal(chosen, expected)
        assert kept.tobytes() == proba.tobytes()  # the probabilities are not changed
        np.testing.assert_array_equal(segment(jungle, image, tile=32, prior_power=power)[0],
                                      expected)
        smooth, smooth_proba = segment(jungle, image, smoothing=2, prior_power=power)
        np.testing.assert_array_equal(
            smooth, np.where(smooth_proba.sum(axis=2) > 0, jungle.classes[
                np.argmax(smooth_proba * weights, axis=2)], plain))
    assert not np.array_equal(expected, plain)  # rarer classes won some pixels
    np.testing.assert_array_equal(segment(jungle, image, prior_power=0)[0], plain)
    # stored with the model, and what segment uses by default
    weighted = JungleSegmenter(family, n_estimators=2, max_width=8, max_depth=6,
                               n_candidate_features=10, samples_per_image=200,
                               prior_power=1.0, random_state=0).fit(images[:-1], labels[:-1])
    save_model(weighted.jungle_, tmp_path / "m.h5")
    np.testing.assert_array_equal(segment(load_model(tmp_path / "m.h5"), image)[0], expected)
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="prior_power"):
            segment(jungle, image, prior_power=bad)


def test_guided_eps_is_checked_and_stored_with_the_guide_scale(tmp_path):
    rng = np.random.default_rng(6)
    data = [textured(rng, (48, 48)) for _ in range(2)]
    images, labels = [d[0] * 7 + 1000 for d in data], [d[1] for d in data]
    kwargs = dict(n_estimators=2, max_width=8, max_depth=5, n_candidate_features=10,
                  samples_per_image=100, smoothing=3, random_state=0)
    family = ColourFeatures(max_offset=4, input="grey", smoothing_scales=(1,))
    for bad in (0, -1.0, float("nan"), "0.1", True):
        with pytest.raises(ValueError, match="guided_eps"):
            JungleSegmenter(family, guided_eps=bad, **kwargs).fit(images, labels)
    seg = JungleSegmenter(family, guided_eps=0.1, **kwargs).fit(images, labels)
    centre, scale = seg.jungle_.metadata["guide"]  # channel 0 over the training pixels
    store = seg.jungle_.family.prepare(images)  # in the codes the model reads
    pixels = np.concatenate([store.planes(i)[0].ravel() for i in range(2)]).astype(float)
    assert 0.8 < scale / pixels.std() < 1.25 and abs(centre - pixels.mean()) < 0.2 * scale
    path = save_model(seg.jungle_, tmp_path / "guided.h5")
    loaded = load_model(path)
    assert loaded.params["guided_eps"] == 0.1 and loaded.metadata["guide"] == [centre, scale]
    np.testing.assert_array_equal(seg.predict(images[0]), segment(loaded, images[0])[0])
    plain = JungleSegmenter(family, **kwargs).fit(images, labels)
    assert not np.array_equal(seg.predict_proba(images[0]), plain.predict_proba(images[0]))


def test_segment_frames_equals_segment_frame_by_frame_and_names_a_bad_frame():
    depth, labels = render_frames(8, seed=3, size=(90, 120))
    jungle = JungleSegmenter(DepthFeatures(max_offset=0.3, focal_length=107.1),
                             n_estimators=2, max_depth=8, samples_per_image=300,
                             random_state=0).fit(list(depth[:4]), list(labels[:4])).jungle_
    frames = list(depth[4:])
    for smoothing in (0, 2):
        for probabilities in (False, True):
            expected = [segment(jungle, f, smoothing=smoothing, probabilities=probabilities)
                        for f in frames]
            for n in {1, min(2, numba.config.NUMBA_NUM_THREADS)}:
                with threads(n):
                    got = list(segment_frames(jungle, iter(frames), smoothing=smoothing,
                                              probabilities=probabilities))
                assert len(got) == len(frames)
                for (want_labels, want_proba), (labels_, proba) in zip(expected, got):
                    np.testing.assert_array_equal(labels_, want_labels)
                    assert (proba is None) == (not probabilities)
                    if probabilities:
                        np.testing.assert_array_equal(proba, want_proba)
    assert np.unique(expected[0][0]).size > 1  # frames with several parts, not blanks

    bad = frames[:2] + [frames[2].astype(np.uint8)] + frames[3:]
    stream = segment_frames(jungle, bad, probabilities=False)
    first = segment(jungle, frames[0], probabilities=False)[0]
    np.testing.assert_array_equal(next(stream)[0], first)
    next(stream)
    with pytest.raises(ValueError, match="^frame 2: an 8-bit depth image"):
        next(stream)
    stream = segment_frames(jungle, [frames[0].astype(np.complex64)], probabilities=False)
    with pytest.raises(ValueError, match="^frame 0: complex values"):  # not 'frame 0: image:'
        next(stream)
    with pytest.raises(ValueError, match="smoothing"):
        segment_frames(jungle, frames, smoothing=-1)  # settings: before any frame is read


def test_a_tile_that_is_no_size_is_named():
    image, labels = textured(np.random.default_rng(0))
    seg = JungleSegmenter(ColourFeatures(input="grey"), n_estimators=1, max_depth=3,
                          samples_per_image=100, random_state=0).fit([image], [labels])
    with pytest.raises(ValueError, match="tile must be a size in pixels, 'auto' or None, got "
                                         "'big'"):
        segment(seg.jungle_, image, tile="big")


def test_segment_to_refuses_outputs_that_cannot_hold_the_result():
    """Slice assignment would wrap class 300 to 44 in a uint8 array, and broadcast a
    result into an output of another shape: both are refused, naming the array."""
    image, labels = textured(np.random.default_rng(0))
    labels = labels.astype(np.uint16) * 299 + 1  # classes 1 and 300
    seg = JungleSegmenter(ColourFeatures(input="grey"), n_estimators=1, max_depth=3,
                          samples_per_image=100, random_state=0).fit([image], [labels])
    assert seg.classes_.max() >= 256
    with pytest.raises(ValueError, match=f"labels is uint8, which cannot hold the label value "
                                         f"{seg.classes_.max()}: give a uint16 array"):
        segment_to(seg.jungle_, image, np.zeros(image.shape, np.uint8))
    with pytest.raises(ValueError, match=r"labels is \(4, 4\); this image needs"):
        segment_to(seg.jungle_, image, np.zeros((4, 4), np.uint16))
    with pytest.raises(ValueError, match=r"probabilities is .*, 1\); this image needs"):
        segment_to(seg.jungle_, image, np.zeros(image.shape, np.uint16),
                   np.zeros((*image.shape, 1), np.float32))
    out = np.zeros(image.shape, np.uint16)
    segment_to(seg.jungle_, image, out)
    np.testing.assert_array_equal(out, segment(seg.jungle_, image)[0])
