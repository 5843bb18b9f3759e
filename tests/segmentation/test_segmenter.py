"""JungleSegmenter on synthetic images with known ground truth."""
import numpy as np
import pytest

from jungleseg import ColourFeatures, DepthFeatures, JungleSegmenter, evaluate
from jungleseg.datasets.faces import render_faces
from jungleseg.datasets.kinect import render_frames

from .scenes import textured


def test_grey_texture_is_separated():
    rng = np.random.default_rng(0)
    data = [textured(rng) for _ in range(6)]
    seg = JungleSegmenter(ColourFeatures(max_offset=6, input="grey", smoothing_scales=(2, 4)),
                          n_estimators=3, max_width=16, max_depth=8, n_candidate_features=20,
                          samples_per_image=300, random_state=0)
    seg.fit([d[0] for d in data[:4]], [d[1] for d in data[:4]])
    pred = [seg.predict(d[0]) for d in data[4:]]
    s = evaluate([d[1] for d in data[4:]], pred, seg.classes_)
    assert s.pixel_accuracy > 0.9
    proba = seg.predict_proba(data[4][0])
    assert proba.shape == (64, 64, 2) and proba.dtype == np.float32
    np.testing.assert_allclose(proba.sum(axis=2), 1, atol=1e-5)


def test_depth_bodies_foreground_only():
    depth, labels = render_frames(30, seed=0, size=(120, 160))
    seg = JungleSegmenter(DepthFeatures(max_offset=0.4, focal_length=142.8), n_estimators=2,
                          max_width=64, max_depth=12, n_candidate_features=50,
                          samples_per_image=400, images_per_dag=12, random_state=0)
    seg.fit(list(depth[:24]), list(labels[:24]))
    assert 0 not in seg.classes_ and 255 not in seg.classes_
    pred = [seg.predict(d) for d in depth]
    for d, p in zip(depth, pred):
        assert np.all(p[d == 0] == 0)  # background keeps the background label
        assert np.all(p[d > 0] > 0)
    seen = evaluate(labels[:24], pred[:24], seg.classes_, ignore=(0, 255))
    held_out = evaluate(labels[24:], pred[24:], seg.classes_, ignore=(0, 255))
    assert seen.pixel_accuracy > 0.4
    assert held_out.pixel_accuracy > 3 / 31  # 31 parts, random poses seen from any side


def test_depth_training_store_holds_only_the_bodies_and_gives_the_same_jungle(monkeypatch):
    import jungleseg.segmentation._segmenter as segmenter_module

    depth, labels = render_frames(4, seed=3, size=(90, 120))
    labels[1][2, 3] = 5  # a body part where the depth is 0
    family = DepthFeatures(focal_length=107.1)
    kwargs = dict(n_estimators=2, max_width=16, max_depth=8, n_candidate_features=20,
                  sampling="all", random_state=0)
    stores = []
    grow = segmenter_module.grow

    def recording_grow(store, *args, **kw):
        stores.append(store)
        return grow(store, *args, **kw)

    monkeypatch.setattr(segmenter_module, "grow", recording_grow)
    cropped = JungleSegmenter(family, **kwargs).fit(list(depth), list(labels))
    whole = JungleSegmenter(family, **kwargs).fit(list(depth), list(labels),
                                                  store=family.prepare(list(depth)))
    heights, widths = stores[0][2], stores[0][3]
    assert np.all(widths < 120) and np.sum(heights * widths) < 0.5 * 4 * 90 * 120
    rows, cols = (np.flatnonzero(depth[1].any(axis=axis)) for axis in (1, 0))
    assert depth[1][2, 3] == 0 and rows[0] > 2 and cols[0] > 3
    assert (heights[1], widths[1]) == (rows[-1] - 1, cols[-1] - 2)  # from the pixel (2, 3)
    np.testing.assert_array_equal(stores[1][2], [90] * 4)
    assert cropped.jungle_.metadata == whole.jungle_.metadata
    for a, b in zip(cropped.jungle_.dags, whole.jungle_.dags):
        for name, array in a.arrays().items():
            np.testing.assert_array_equal(array, b.arrays()[name])


def test_depth_memory_check_counts_the_bodies_not_the_frames():
    from jungleseg._memory import training_bytes
    from jungleseg.segmentation._sampling import trainable_boxes

    depth, labels = render_frames(3, seed=4, size=(90, 120))
    seg = JungleSegmenter(DepthFeatures(focal_length=107.1), n_estimators=1, max_width=8,
                          max_depth=4, n_candidate_features=5, sampling="all", random_state=0)
    classes = np.setdiff1d(np.unique(labels), [0, 255])  # as fit finds them
    shapes = [im.shape for im in depth]
    bodies = training_bytes(seg, shapes, depth.dtype.itemsize, len(classes),
                            store_shapes=trainable_boxes(list(depth), list(labels), classes))
    frames = training_bytes(seg, shapes, depth.dtype.itemsize, len(classes))
    assert bodies.total < frames.total
    # every pixel sampled: the crops are those boxes
    seg.fit(list(depth), list(labels), max_memory=bodies.total)
    with pytest.raises(MemoryError, match="more than the memory budget"):
        seg.fit(list(depth), list(labels), max_memory=bodies.total - 1)


def test_each_dag_gets_its_own_images():
    depth, labels = render_frames(6, seed=2, size=(60, 80))
    seg = JungleSegmenter(DepthFeatures(focal_length=71.4), n_estimators=3, max_width=8,
                          max_depth=4, n_candidate_features=5, samples_per_image=50,
                          images_per_dag=2, random_state=0).fit(list(depth), list(labels))
    assert len(seg.jungle_.dags) == 3
    roots = [dag.leaf_value[-1] for dag in seg.jungle_.dags]  # trained on other images
    assert not np.array_equal(roots[0], roots[1]) and not np.array_equal(roots[1], roots[2])
    everything = JungleSegmenter(DepthFeatures(focal_length=71.4), n_estimators=1, max_width=8,
                                 max_depth=4, n_candidate_features=5, samples_per_image=50,
                                 random_state=0).fit(list(depth), list(labels))
    assert everything.n_samples_ == seg.n_samples_


def test_errors_are_named():
    rng = np.random.default_rng(0)
    image, labels = textured(rng)
    seg = JungleSegmenter(ColourFeatures(input="grey"))
    with pytest.raises(ValueError, match="two classes"):
        seg.fit([image], [np.zeros_like(labels)])
    with pytest.raises(ValueError, match="labels are"):
        seg.fit([image], [labels[:10]])
    with pytest.raises(ValueError, match="grey"):
        seg.fit([np.dstack([image] * 3)], [labels])
    # one image and its labels instead of sequences of them
    with pytest.raises(ValueError, match=r"labels is one label image of shape \(\d+, \d+\); "
                                         r"fit takes a sequence .*: fit\(\[image\], \[labels\]\)"):
        seg.fit(image, labels)
    with pytest.raises(ValueError, match=r"got \d+ images and 1 label images \(one image: fit"):
        seg.fit(image, [labels])


@pytest.mark.parametrize("param, value", [("n_candidate_features", "many"),
                                          ("samples_per_image", 0), ("images_per_dag", 1.5)])
def test_bad_image_parameters_are_named(param, value):
    rng = np.random.default_rng(0)
    image, labels = textured(rng)
    with pytest.raises(ValueError, match=param):
        JungleSegmenter(ColourFeatures(input="grey"), **{param: value}).fit([image], [labels])


def test_prior_correction_restores_class_frequencies():
    rng = np.random.default_rng(0)
    images, labels = [], []
    for _ in range(3):
        labels.append((rng.random((40, 40)) < 0.1).astype(np.uint8))  # 10 % class 1
        images.append(rng.normal(100, 20, (40, 40)).astype(np.float32))  # no signal at all
    kwargs = dict(n_estimators=2, max_width=4, max_depth=2, n_candidate_features=4,
                  samples_per_image=200, sampling="balanced", random_state=0)
    plain = JungleSegmenter(ColourFeatures(input="grey"), **kwargs).fit(images, labels)
    fixed = JungleSegmenter(ColourFeatures(input="grey"), correct_prior=True,
                            **kwargs).fit(images, labels)
    # balanced samples say 50/50; corrected, the model's belief is near the true 10 %
    assert plain.predict_proba(images[0])[:, :, 1].mean() > 0.3
    assert fixed.predict_proba(images[0])[:, :, 1].mean() < 0.2
    for dag in fixed.jungle_.dags:
        np.testing.assert_allclose(dag.leaf_value.sum(axis=1), 1, atol=1e-5)
    # class shares: what the leaves are posteriors under (the samples', or the pixels')
    np.testing.assert_allclose(plain.jungle_.metadata["class_shares"], [0.5, 0.5])
    truth = np.mean([lab.mean() for lab in labels])
    np.testing.assert_allclose(fixed.jungle_.metadata["class_shares"], [1 - truth, truth])


def test_class_shares_are_the_samples_and_never_zero():
    rng = np.random.default_rng(1)
    labels = [np.where(rng.random((30, 30)) < 0.2, 2, 1).astype(np.uint8) for _ in range(2)]
    labels[0][0, 0] = 7  # one pixel of class 7, which 50 random samples an image miss
    images = [rng.normal(100, 20, (30, 30)).astype(np.float32) for _ in range(2)]
    seg = JungleSegmenter(ColourFeatures(input="grey"), n_estimators=1, max_width=4,
                          max_depth=2, n_candidate_features=4, samples_per_image=50,
                          random_state=0).fit(images, labels)
    shares = np.array(seg.jungle_.metadata["class_shares"])
    np.testing.assert_array_equal(seg.classes_, [1, 2, 7])
    assert shares.sum() == pytest.approx(1) and shares[2] > 0
    assert shares[2] == pytest.approx(0.5 / seg.n_samples_, rel=0.01)  # half a sample
    assert 0.1 < shares[1] < 0.3  # about the 20 % of the pixels


def test_training_on_a_padded_store_reads_unclamped_and_gives_the_same_jungle(monkeypatch):
    import jungleseg.segmentation._segmenter as segmenter_module

    images, labels = render_faces(3, seed=4, size=(30, 44))
    family = ColourFeatures(max_offset=40, kinds=("value", "difference", "absdiff"))
    kwargs = dict(n_estimators=2, max_width=16, max_depth=8, n_candidate_features=20,
                  samples_per_image=300, random_state=0)
    modes = []
    grow = segmenter_module.grow

    def recording_grow(*args, **kw):
        modes.append(kw["unclamped"])
        return grow(*args, **kw)

    monkeypatch.setattr(segmenter_module, "grow", recording_grow)
    plain = JungleSegmenter(family, **kwargs).fit(images, labels)  # a 40 px border: 10x
    coded = family.with_quantiser(family.fitted_quantiser(images))  # the codes fit makes
    padded = JungleSegmenter(family, **kwargs).fit(
        images, labels, store=coded.prepare(images, pad=40))
    big = [np.kron(im, np.ones((4, 4, 1), im.dtype)) for im in images]  # 120 x 176: an 8 px
    # border adds 24 %, so fit pads its own store
    JungleSegmenter(ColourFeatures(8, kinds=("value", "difference")), **kwargs).fit(
        big, [np.kron(lab, np.ones((4, 4), lab.dtype)) for lab in labels])
    assert modes == [False, True, True]
    assert 30 < plain.jungle_.point_reach <= 40  # probes leave the image: borders matter
    for a, b in zip(plain.jungle_.dags, padded.jungle_.dags):
        for name, array in a.arrays().items():
            np.testing.assert_array_equal(array, b.arrays()[name])
