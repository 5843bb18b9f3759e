"""Traversal: whole-image and per-sample traversals, clamped and unclamped, agree."""
from dataclasses import replace

import numpy as np

from jungleseg import ColourFeatures, Jungle, JungleSegmenter, Samples
from jungleseg.datasets.faces import render_faces


def test_image_and_sample_traversals_agree():
    images, labels = render_faces(3, seed=1, size=(48, 70))
    seg = JungleSegmenter(ColourFeatures(max_offset=8, max_box=2), n_estimators=2, max_width=8,
                          max_depth=6, n_candidate_features=10, samples_per_image=200,
                          random_state=0).fit(images[:2], labels[:2])
    family = seg.jungle_.family
    store = family.prepare(images[2:])
    h, w = labels[2].shape
    rows, cols = np.divmod(np.arange(h * w), w)

    samples = Samples(np.zeros(h * w, np.int32), rows.astype(np.int32), cols.astype(np.int32))
    by_sample = seg.jungle_.predict_proba(store, samples).reshape(h, w, -1)
    np.testing.assert_array_equal(by_sample, seg.predict_proba(images[2]))


def test_padded_stores_are_segmented_without_clamping_and_give_the_same_result():
    images, labels = render_faces(3, seed=2, size=(30, 44))
    family = ColourFeatures(max_offset=40, kinds=("value", "difference", "sum", "absdiff"),
                            box_filters=(2,))
    seg = JungleSegmenter(family, n_estimators=2, max_width=16, max_depth=8,
                          n_candidate_features=20, samples_per_image=300,
                          random_state=0).fit(images[:2], labels[:2])
    jungle = seg.jungle_
    assert 30 < jungle.point_reach <= 40  # probes leave the 30 x 44 image: borders matter
    plain = family.prepare(images[2:])
    mask = (np.random.default_rng(0).random(labels[2].shape) < 0.7).astype(np.uint8)
    expected = [jungle.predict_image(plain), jungle.predict_image(plain, 0, mask)]
    # pad 40: the unclamped traversal; pad 5 < reach: the clamped one on a padded store
    for pad in (40, 5):
        store = family.prepare(images[2:], pad=pad)
        np.testing.assert_array_equal(jungle.predict_image(store), expected[0])
        np.testing.assert_array_equal(jungle.predict_image(store, 0, mask), expected[1])
        h, w = labels[2].shape
        rows, cols = np.divmod(np.arange(h * w), w)
        samples = Samples(np.zeros(h * w, np.int32), rows.astype(np.int32),
                          cols.astype(np.int32))
        np.testing.assert_array_equal(
            jungle.predict_proba(store, samples).reshape(h, w, -1), expected[0])
    # a (loaded) model probing beyond its family's max_offset is not trusted to the border
    far = [replace(d, feature_params=d.feature_params.copy()) for d in jungle.dags]
    for d in far:
        d.feature_params[:, :4] *= 4
    wild = Jungle(far, jungle.classes, family, jungle.params)
    wild.validate()
    assert wild.point_reach is None
    np.testing.assert_array_equal(wild.predict_image(family.prepare(images[2:], pad=40)),
                                  wild.predict_image(plain))


def test_depth_frames_traverse_their_foreground_at_fixed_steps_and_labels_alone_agree():
    """A depth model: the listed foreground pixels of a store with a background border
    (probes read at depth-scaled steps) classify as on the plain store (bounds tested),
    and segment without probabilities gives the same labels."""
    from jungleseg import DepthFeatures, segment
    from jungleseg.datasets.kinect import render_frames
    from jungleseg.jungle._predict import CLAMPED, DEPTH_STEPS

    depth, parts = render_frames(5, seed=3, size=(90, 120))
    family = DepthFeatures(max_offset=0.4, focal_length=107.1)
    seg = JungleSegmenter(family, n_estimators=2, max_width=16, max_depth=8,
                          samples_per_image=300, ignore=(0, 255), random_state=0)
    jungle = seg.fit(list(depth[:4]), list(parts[:4])).jungle_
    frame = depth[4]
    plain = family.prepare([frame])
    padded = family.prepare([frame], pad=family.margin(frame))
    index = np.flatnonzero(frame > 0)
    assert jungle._read_mode(plain, 0, index) == CLAMPED
    assert jungle._read_mode(padded, 0, index) == DEPTH_STEPS
    assert padded.planes(0).shape == plain.planes(0).shape
    assert np.all(padded.pixels.reshape(-1)[:padded.pad] == 0)  # the border is background
    got = jungle.classify_image(padded, 0, index)
    want = jungle.classify_image(plain, 0, index)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    labels_only, none = jungle.classify_image(padded, 0, index, probabilities=False)
    assert none is None
    np.testing.assert_array_equal(labels_only, got[0])
    assert np.all(got[1][frame.reshape(-1) == 0] == 0)  # background is never traversed
    labels, proba = segment(jungle, frame)
    fast, no_proba = segment(jungle, frame, probabilities=False)
    assert no_proba is None
    np.testing.assert_array_equal(fast, labels)
    np.testing.assert_array_equal(labels, np.where(
        frame > 0, jungle.classes[np.argmax(proba, axis=2)], 0))
    assert len(np.unique(labels[frame > 0])) > 2


def test_labels_alone_equal_the_labels_of_the_probabilities():
    images, labels = render_faces(3, seed=4, size=(40, 52))
    for family in (ColourFeatures(max_offset=6, max_box=2),
                   ColourFeatures(max_offset=6, kinds=("value", "difference"))):
        seg = JungleSegmenter(family, n_estimators=2, max_width=8, max_depth=6,
                              samples_per_image=300, random_state=0).fit(images[:2], labels[:2])
        for pad in (0, 6):
            store = family.prepare(images[2:], pad=pad)
            chosen, proba = seg.jungle_.classify_image(store)
            alone, _ = seg.jungle_.classify_image(store, probabilities=False)
            np.testing.assert_array_equal(alone, chosen)
            np.testing.assert_array_equal(chosen, np.argmax(proba, axis=1))
