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


def test_label_indices_pick_as_numpy_argmax_of_the_weighted_probabilities():
    from jungleseg.jungle._predict import weighted_argmax

    rng = np.random.default_rng(2)
    for trial in range(60):
        n, n_classes = int(rng.integers(0, 40)), int(rng.integers(1, 6))
        values = rng.random((n, n_classes)).astype(np.float32 if trial % 2 else np.float64)
        if trial % 3 == 0:
            values = np.round(values * 2) / 2  # ties: the first class wins
        if trial % 4 == 0 and values.size:
            values.flat[rng.integers(0, values.size, 3)] = np.nan  # the first NaN wins
        weights = (rng.random(n_classes) + 0.5).astype(np.float32)
        np.testing.assert_array_equal(weighted_argmax(values, weights),
                                      np.argmax(values * weights, axis=1))
    jungle, _ = _worked_example()
    proba = rng.random((4, 3, 5)).astype(np.float32)  # classes along axis 1
    np.testing.assert_array_equal(jungle.label_indices(proba, axis=1),
                                  np.argmax(proba, axis=1))
    low = np.round(proba * 4).astype(np.float16)  # ties; a type Numba does not compute in
    np.testing.assert_array_equal(jungle.label_indices(low, axis=1), np.argmax(low, axis=1))


def _worked_example(spread=1.0):
    """The lecture's worked example as a hand-built DAG: every split reads the pixel's own
    grey value v. The root (threshold 0.5) sends v to A (0.3) or B (0.7); A's right child
    and B's left child are the same node D, so D collects two paths. Leaves C, D, E hold
    classes 0, 1, 2, so a pixel's probabilities are its three leaf weights."""
    from jungleseg.jungle import DAG
    family = ColourFeatures(max_offset=1, kinds=("value",), input="grey", smoothing_scales=())
    params = np.zeros((6, 8), np.float32)
    dag = DAG(level_start=np.array([0, 1, 3, 6], np.int32),
              feature_kind=np.array([2, 2, 2, 0, 0, 0], np.uint8), feature_params=params,
              threshold=np.array([0.5, 0.3, 0.7, 0, 0, 0], np.float32),
              left=np.array([1, 3, 4, -1, -2, -3], np.int32),
              right=np.array([2, 4, 5, -1, -2, -3], np.int32),
              leaf_value=np.eye(3, dtype=np.float32),
              spread=np.array([spread] * 3 + [0] * 3, np.float32))
    jungle = Jungle([dag], np.arange(3), family)
    jungle.validate()
    return jungle, family


def test_soft_routing_matches_the_worked_example_paths_multiply_and_merged_paths_add():
    jungle, family = _worked_example(spread=2.0)
    values = np.array([[0.1, 0.45, 0.55, 0.9]], np.float32)
    store = family.prepare([values])
    soft = 0.05  # temperature 0.05 x spread 2 = 0.1
    proba = jungle.classify_image(store, 0, None, True, soft=soft)[1]

    def gate(v, threshold):
        return 1.0 / (1.0 + np.exp(-(v - threshold) / (soft * 2.0)))

    v = values[0].astype(np.float64)
    g0, ga, gb = gate(v, 0.5), gate(v, 0.3), gate(v, 0.7)
    expected = np.stack([(1 - g0) * (1 - ga), (1 - g0) * ga + g0 * (1 - gb), g0 * gb], axis=1)
    np.testing.assert_allclose(proba, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    counts = {}
    jungle.classify_image(store, 0, None, False, soft=soft, counts=counts)
    assert counts == {"visits": 3 * 4, "pixels": 4}  # every split is reached softly
    hard = jungle.classify_image(store, 0, None, True, soft=0.0, counts=counts)[1]
    np.testing.assert_array_equal(hard, np.eye(3, dtype=np.float32)[[0, 1, 1, 2]])
    assert counts["visits"] == 2 * 4  # hard routing: one split per level


def _random_dag(rng, widths):
    """A random single-DAG model on grey values (every split reads the pixel's own value),
    levels of the given widths, some leaves before the last level, one class per leaf (a
    pixel's probabilities are its leaf weights), random thresholds and spreads (some 0)."""
    from jungleseg.jungle import DAG
    start = np.concatenate([[0], np.cumsum(widths)]).astype(np.int32)
    n = int(start[-1])
    left, right = np.empty(n, np.int32), np.empty(n, np.int32)
    is_leaf = np.zeros(n, bool)
    is_leaf[start[-2]:] = True
    is_leaf[1:start[-2]] = rng.random(start[-2] - 1) < 0.15
    for d in range(len(widths) - 1):  # widths[d + 1] <= 2 * widths[d]
        while 2 * (~is_leaf[start[d]:start[d + 1]]).sum() < widths[d + 1]:
            is_leaf[start[d] + int(np.argmax(is_leaf[start[d]:start[d + 1]]))] = False
        split = np.flatnonzero(~is_leaf[start[d]:start[d + 1]]) + start[d]
        slots = rng.permutation(2 * split.size)  # the first widths[d + 1] get a child each
        child = rng.integers(start[d + 1], start[d + 2], 2 * split.size)
        child[slots[:widths[d + 1]]] = np.arange(start[d + 1], start[d + 2])
        left[split], right[split] = child[0::2], child[1::2]
    leaves = np.flatnonzero(is_leaf)
    left[leaves] = right[leaves] = -1 - np.arange(leaves.size)
    spread = rng.uniform(0.05, 1.0, n).astype(np.float32)
    spread[rng.random(n) < 0.1] = 0
    spread[leaves] = 0
    dag = DAG(level_start=start, feature_kind=np.full(n, 2, np.uint8),
              feature_params=np.zeros((n, 8), np.float32),
              threshold=rng.random(n).astype(np.float32), left=left, right=right,
              leaf_value=np.eye(leaves.size, dtype=np.float32), spread=spread)
    family = ColourFeatures(max_offset=1, kinds=("value",), input="grey", smoothing_scales=())
    jungle = Jungle([dag], np.arange(leaves.size), family)
    jungle.validate()
    return jungle, dag


def _reference_weights(dag, v, soft, eps):
    """Leaf weights of grey value ``v`` by the rule, every gate evaluated exactly (float64):
    a split of temperature T > 0 would send ``w * sigmoid(-|v - threshold| / T)`` down the
    branch v does not pick; if that is at most ``eps``, or v equals the threshold, the node
    steps hard (all of w goes to the picked branch)."""
    out = np.zeros(dag.n_leaves)
    weights = {0: 1.0}
    while weights:
        nxt = {}
        for node, w in weights.items():
            if dag.left[node] < 0:
                out[-1 - dag.left[node]] += w
                continue
            t = soft * float(dag.spread[node])
            off = abs(float(v) - float(dag.threshold[node]))
            picked, other = ((dag.left[node], dag.right[node]) if v < dag.threshold[node]
                             else (dag.right[node], dag.left[node]))
            minor = w / (1.0 + np.exp(off / t)) if t > 0 and off > 0 else 0.0
            if minor > eps:
                nxt[other] = nxt.get(other, 0.0) + minor
                w -= minor
            nxt[picked] = nxt.get(picked, 0.0) + w
        weights = nxt
    return out


def test_saturated_gates_step_hard_and_equal_the_exactly_evaluated_rule():
    """The kernel skips the gate where ``|v - threshold| >= T log(1/eps - 1)`` (the minor
    share is then at most epsilon for any weight <= 1): its weights equal those of every
    gate evaluated exactly with the epsilon rule, they sum to 1, a pixel has fewer than
    1/eps + 1 paths, and epsilon >= 0.5 (every gate saturated) is hard routing bit for bit."""
    rng = np.random.default_rng(7)
    for widths in ([1, 2, 4, 6, 5, 3], [1, 2, 3, 6, 8, 8, 4, 2]):
        jungle, dag = _random_dag(rng, widths)
        values = rng.random((12, 20)).astype(np.float32)
        values[0, :10] = rng.choice(dag.threshold[dag.left >= 0], 10)  # ties step hard
        store = jungle.family.prepare([values])
        hard = jungle.classify_image(store, 0, None, True, soft=0.0)
        for soft, eps in ((0.3, 0.0), (0.3, 1e-3), (0.1, 0.01), (1.0, 0.1), (0.05, 0.3)):
            counts = {}
            got = jungle.classify_image(store, 0, None, True, soft=soft, epsilon=eps,
                                        counts=counts)[1]
            want = np.array([_reference_weights(dag, v, soft, eps) for v in values.ravel()])
            np.testing.assert_allclose(got, want, atol=2e-6)
            np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-6)
            if eps > 0:
                assert np.all((got > 0).sum(axis=1) < 1 / eps + 1)
            assert counts["visits"] >= hard_visits(jungle, store)
        for eps in (0.5, 0.9):
            soft = jungle.classify_image(store, 0, None, True, soft=0.3, epsilon=eps)
            assert soft[1].tobytes() == hard[1].tobytes()
            assert soft[0].tobytes() == hard[0].tobytes()


def hard_visits(jungle, store):
    counts = {}
    jungle.classify_image(store, 0, None, False, soft=0.0, counts=counts)
    return counts["visits"]


def test_a_response_equal_to_the_threshold_steps_right_as_hard_routing_does():
    jungle, family = _worked_example(spread=2.0)  # temperature 0.05 x 2 = 0.1 at each split
    store = family.prepare([np.array([[0.5, 0.3, 0.7]], np.float32)])  # each split's threshold
    proba = jungle.classify_image(store, 0, None, True, soft=0.05)[1]

    def minor(off):
        return 1.0 / (1.0 + np.exp(off / 0.1))

    # 0.5 ties the root: all of it goes right to B (0.7), whose gate splits it
    np.testing.assert_allclose(proba[0], [0, 1 - minor(0.2), minor(0.2)], rtol=1e-5)
    # 0.3 is gated at the root and ties A: A's share goes right to D unsplit
    m = minor(0.2)
    np.testing.assert_allclose(proba[1], [0, (1 - m) + m * (1 - minor(0.4)), m * minor(0.4)],
                               rtol=1e-5)
    # 0.7 ties B: B's share goes right to E unsplit
    np.testing.assert_allclose(proba[2], [m * minor(0.4), m * (1 - minor(0.4)), 1 - m],
                               rtol=1e-5)


def test_pruned_soft_routing_follows_fewer_paths_and_stays_near_the_full_mix():
    jungle, family = _worked_example(spread=1.0)
    store = family.prepare([np.array([[0.1, 0.45, 0.55, 0.9]], np.float32)])
    full = jungle.classify_image(store, 0, None, True, soft=0.05)[1]
    counts = {}
    pruned = jungle.classify_image(store, 0, None, True, soft=0.05, epsilon=0.05,
                                   counts=counts)[1]
    assert counts["visits"] < 12
    np.testing.assert_allclose(pruned.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(pruned, full, atol=2 * 0.05)


def _trained(**kw):
    images, labels = render_faces(3, seed=4, size=(40, 52))
    seg = JungleSegmenter(ColourFeatures(max_offset=8, max_box=2), n_estimators=3,
                          max_width=8, max_depth=7, n_candidate_features=10,
                          samples_per_image=300, random_state=0, **kw).fit(images[:2],
                                                                            labels[:2])
    return seg, images[2]


def test_soft_factor_zero_is_hard_routing_bit_for_bit_and_weights_sum_to_one():
    seg, image = _trained()
    jungle = seg.jungle_
    store = jungle.family.prepare([image])
    hard = jungle.classify_image(store, 0, None, True)
    zero = jungle.classify_image(store, 0, None, True, soft=0.0, epsilon=0.3)
    assert hard[1].tobytes() == zero[1].tobytes() and hard[0].tobytes() == zero[0].tobytes()
    # leaf distributions replaced by one-hot leaf indices: a pixel's probabilities are then
    # its leaf weights (summed over the DAGs, scaled by 1/3)
    n_leaves = max(d.n_leaves for d in jungle.dags)
    onehot = [replace(d, leaf_value=np.eye(n_leaves, dtype=np.float32)[:d.n_leaves])
              for d in jungle.dags]
    probe = Jungle(onehot, np.arange(n_leaves), jungle.family, jungle.params)
    for soft, eps in ((0.3, 0.0), (1.0, 1e-3)):
        weights = probe.classify_image(store, 0, None, True, soft=soft, epsilon=eps)[1]
        np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
        assert np.all(weights >= 0)
    soft = jungle.classify_image(store, 0, None, True, soft=0.3)[1]
    assert soft.tobytes() != hard[1].tobytes()
    # tiny temperatures approach the hard result
    near = jungle.classify_image(store, 0, None, True, soft=1e-7)[1]
    assert np.mean(np.abs(near - hard[1]) < 1e-4) > 0.99


def test_soft_routing_is_the_same_whatever_the_thread_count():
    import numba
    seg, image = _trained(soft=0.5, soft_epsilon=1e-3)
    jungle = seg.jungle_
    store = jungle.family.prepare([image])
    runs = []
    for n in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(n)
        runs.append(jungle.classify_image(store)[1].tobytes())
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert runs[0] == runs[1]
    assert seg.predict_proba(image).tobytes() == runs[0]  # the model's own factor is used


def test_traversal_is_the_same_whatever_the_block_size():
    """Blocks are sized by the pixel count and the number of workers; every size gives
    each pixel the result of the per-sample traversal, and the same visit count."""
    from jungleseg.jungle._predict import CLAMPED, predict_pixels

    images, labels = render_faces(3, seed=6, size=(120, 140))
    seg = JungleSegmenter(ColourFeatures(max_offset=8, max_box=2), n_estimators=2, max_width=8,
                          max_depth=7, n_candidate_features=10, samples_per_image=300,
                          random_state=0).fit(images[:2], labels[:2])
    jungle = seg.jungle_
    store = jungle.family.prepare(images[2:])
    h, w = labels[2].shape
    for n in (300, 4000, h * w):  # blocks of 32-37, 100-256 and 256 pixels
        index = np.random.default_rng(n).choice(h * w, n, replace=False)
        rows, cols = np.divmod(index, w)
        reference = jungle.predict_proba(store, Samples(np.zeros(n, np.int32),
                                                        rows.astype(np.int32),
                                                        cols.astype(np.int32)))
        runs = []
        # weights favouring the least probable class on average: labels must change
        weights = (1 / reference.mean(axis=0)).astype(np.float32)
        for workers in (1, 2, 5):
            for weight, expected in ((np.ones(jungle.n_classes, np.float32),
                                      np.argmax(reference, axis=1)),
                                     (weights, np.argmax(reference * weights, axis=1))):
                proba = np.zeros((h * w, jungle.n_classes), np.float32)
                labels_out = np.empty(n, np.int32)
                visits = predict_pixels(*jungle._packed, jungle._spread, jungle._widest,
                                        store.as_tuple(), 0, index, CLAMPED, 0.0, 0.0, weight,
                                        proba, labels_out, workers)
                np.testing.assert_array_equal(proba[index], reference)
                np.testing.assert_array_equal(labels_out, expected)
            runs.append(visits)
        assert not np.array_equal(np.argmax(reference * weights, axis=1),
                                  np.argmax(reference, axis=1))
        assert runs[0] == runs[1] == runs[2] > n
