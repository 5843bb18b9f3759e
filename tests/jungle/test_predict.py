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
