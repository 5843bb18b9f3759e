"""JungleSegmenter on synthetic images with known ground truth."""
import numpy as np
import pytest

from jungleseg import ColourFeatures, DepthFeatures, JungleSegmenter, evaluate
from jungleseg.datasets.faces import render_faces
from jungleseg.datasets.kinect import render_frames


def textured(rng, shape=(64, 64)):
    """Two regions with the same mean intensity but different texture scales."""
    labels = np.zeros(shape, np.uint8)
    labels[:, shape[1] // 2:] = 1
    fine = rng.normal(0, 30, shape)
    coarse = np.kron(rng.normal(0, 30, (shape[0] // 8, shape[1] // 8)), np.ones((8, 8)))
    image = 128 + np.where(labels == 0, fine, coarse)
    return image.astype(np.float32), labels


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


def test_image_and_sample_traversals_agree():
    images, labels = render_faces(3, seed=1, size=(48, 70))
    seg = JungleSegmenter(ColourFeatures(max_offset=8, max_box=2), n_estimators=2, max_width=8,
                          max_depth=6, n_candidate_features=10, samples_per_image=200,
                          random_state=0).fit(images[:2], labels[:2])
    family = seg.jungle_.family
    store = family.prepare(images[2:])
    h, w = labels[2].shape
    rows, cols = np.divmod(np.arange(h * w), w)
    from jungleseg import Samples
    samples = Samples(np.zeros(h * w, np.int32), rows.astype(np.int32), cols.astype(np.int32))
    by_sample = seg.jungle_.predict_proba(store, samples).reshape(h, w, -1)
    np.testing.assert_array_equal(by_sample, seg.predict_proba(images[2]))


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


def test_each_dag_gets_its_own_images():
    depth, labels = render_frames(6, seed=2, size=(60, 80))
    seg = JungleSegmenter(DepthFeatures(focal_length=71.4), n_estimators=3, max_width=8,
                          max_depth=4, n_candidate_features=5, samples_per_image=50,
                          images_per_dag=2, random_state=0).fit(list(depth), list(labels))
    assert len(seg.jungle_.dags) == 3
    from jungleseg import sample_pixels
    samples = sample_pixels(list(labels), seg.classes_, per_image=50, ignore=(0, 255))
    per_dag = [set(samples.image[rows]) for rows, _ in seg._dag_samples(samples, 6, 0)]
    assert all(len(images) == 2 for images in per_dag)
    assert set.union(*per_dag) == set(range(6))  # six images, two per DAG, none shared


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
    from jungleseg import segment
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


def test_smoothing_averages_probabilities_over_the_box_inside_image_and_mask():
    from jungleseg.segment import smooth_probabilities

    rng = np.random.default_rng(3)
    proba = rng.random((9, 11, 3)).astype(np.float32)
    mask = (rng.random((9, 11)) > 0.3).astype(np.uint8)
    proba[mask == 0] = 0
    for m in (None, mask):
        got = smooth_probabilities(proba, 2, m)
        for r in range(9):
            for c in range(11):  # every pixel: boxes clipped at the borders
                box = (slice(max(r - 2, 0), r + 3), slice(max(c - 2, 0), c + 3))
                weight = np.ones((9, 11)) if m is None else m.astype(float)
                if weight[r, c] == 0:
                    assert np.all(got[r, c] == 0)
                    continue
                expected = (proba[box] * weight[box][:, :, None]).sum(axis=(0, 1)) \
                    / weight[box].sum()
                np.testing.assert_allclose(got[r, c], expected, rtol=1e-5)


def test_guided_smoothing_fits_a_linear_function_of_the_guide_in_every_box():
    from jungleseg.segment import guided_smoothing

    rng = np.random.default_rng(5)
    h, w, half, eps = 10, 12, 2, 0.05
    guide = rng.normal(size=(h, w)).astype(np.float32)
    proba = rng.random((h, w, 3)).astype(np.float32)
    proba /= proba.sum(axis=2, keepdims=True)
    mask = (rng.random((h, w)) > 0.25).astype(np.uint8)
    for m in (None, mask):
        weight = np.ones((h, w)) if m is None else m.astype(float)
        p = proba * weight[:, :, None]
        got = guided_smoothing(p, guide, half, eps, m)

        def box(r, c):
            return (slice(max(r - half, 0), r + half + 1), slice(max(c - half, 0), c + half + 1))

        # per box: least squares p ~ a * guide + b with penalty eps * a^2 (float64)
        a, b = np.zeros((h, w, 3)), np.zeros((h, w, 3))
        for r in range(h):
            for c in range(w):
                wt, g = weight[box(r, c)], guide[box(r, c)].astype(float)
                if wt.sum() == 0:
                    continue
                mg = (wt * g).sum() / wt.sum()
                var = (wt * g * g).sum() / wt.sum() - mg * mg
                for k in range(3):
                    pk = p[box(r, c)][:, :, k]
                    mp = (wt * pk).sum() / wt.sum()
                    a[r, c, k] = ((wt * g * pk).sum() / wt.sum() - mg * mp) / (var + eps)
                    b[r, c, k] = mp - a[r, c, k] * mg
        for r in range(h):
            for c in range(w):
                if weight[r, c] == 0:
                    assert np.all(got[r, c] == 0)
                    continue
                wt = weight[box(r, c)][:, :, None]
                mean_a = (wt * a[box(r, c)]).sum(axis=(0, 1)) / wt.sum()
                mean_b = (wt * b[box(r, c)]).sum(axis=(0, 1)) / wt.sum()
                expected = np.clip(mean_a * guide[r, c] + mean_b, 0, 1)
                np.testing.assert_allclose(got[r, c], expected, rtol=0, atol=2e-5)


def test_guided_smoothing_moves_a_misplaced_boundary_onto_the_image_edge():
    from jungleseg.segment import guided_smoothing, smooth_probabilities

    guide = np.zeros((40, 60), np.float32)
    guide[:, 30:] = 1  # the image edge: between columns 29 and 30
    proba = np.zeros((40, 60, 2), np.float32)
    proba[:, :32, 0] = 0.9  # the classifier put the boundary 2 px to the right
    proba[:, 32:, 0] = 0.1
    proba[:, :, 1] = 1 - proba[:, :, 0]
    boundary = {}
    for name, q in (("box", smooth_probabilities(proba, 6)),
                    ("guided", guided_smoothing(proba, guide, 6, 0.01))):
        labels = np.argmax(q, axis=2)
        assert np.all(labels == labels[:1])  # same in every row
        boundary[name] = int(np.argmax(labels[0] == 1))  # first column of class 1
    assert boundary == {"box": 32, "guided": 30}


def test_guided_eps_is_checked_and_stored_with_the_guide_scale(tmp_path):
    from jungleseg import load_model, save_model, segment

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
    pixels = np.concatenate([im.ravel() for im in images])
    assert 0.8 < scale / pixels.std() < 1.25 and abs(centre - pixels.mean()) < 0.2 * scale
    path = save_model(seg.jungle_, tmp_path / "guided.h5")
    loaded = load_model(path)
    assert loaded.params["guided_eps"] == 0.1 and loaded.metadata["guide"] == [centre, scale]
    np.testing.assert_array_equal(seg.predict(images[0]), segment(loaded, images[0])[0])
    plain = JungleSegmenter(family, **kwargs).fit(images, labels)
    assert not np.array_equal(seg.predict_proba(images[0]), plain.predict_proba(images[0]))


def test_smoothing_is_kept_with_the_model_and_removes_isolated_errors(tmp_path):
    from jungleseg import load_model, save_model, segment

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


def test_a_prepared_store_is_trained_on_and_segmented_like_the_images():
    from jungleseg import segment
    from jungleseg.segment import segment_prepared

    rng = np.random.default_rng(7)
    data = [textured(rng, (40, 48)) for _ in range(2)]
    images, labels = [d[0] for d in data], [d[1] for d in data]
    family = ColourFeatures(max_offset=4, input="grey", smoothing_scales=(1,), box_filters=(2,))
    kwargs = dict(n_estimators=2, max_width=8, max_depth=5, n_candidate_features=10,
                  samples_per_image=100, smoothing=1, random_state=0)
    store = family.prepare(images)
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
        segment_prepared(from_store.jungle_, ColourFeatures(input="grey", smoothing_scales=(1,)).prepare(images))


def test_training_on_a_padded_store_reads_unclamped_and_gives_the_same_jungle(monkeypatch):
    import jungleseg.segmenter as segmenter_module

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
    padded = JungleSegmenter(family, **kwargs).fit(
        images, labels, store=family.prepare(images, pad=40))
    big = [np.kron(im, np.ones((4, 4, 1), im.dtype)) for im in images]  # 120 x 176: an 8 px
    # border adds 24 %, so fit pads its own store
    JungleSegmenter(ColourFeatures(8, kinds=("value", "difference")), **kwargs).fit(
        big, [np.kron(lab, np.ones((4, 4), lab.dtype)) for lab in labels])
    assert modes == [False, True, True]
    assert 30 < plain.jungle_.point_reach <= 40  # probes leave the image: borders matter
    for a, b in zip(plain.jungle_.dags, padded.jungle_.dags):
        for name, array in a.arrays().items():
            np.testing.assert_array_equal(array, b.arrays()[name])


def test_padded_stores_are_segmented_without_clamping_and_give_the_same_result():
    from dataclasses import replace

    from jungleseg import Samples
    from jungleseg.model import Jungle

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
