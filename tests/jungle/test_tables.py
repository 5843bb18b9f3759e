"""Split tables against a plain reference loop, on random stores of every feature family;
the same models whatever the thread count; routing independent of entry order."""
import hashlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from jungleseg._rng import derive, next_below, next_uniform
from jungleseg.features import ColourFeatures, DepthFeatures, Samples, TabularFeatures
from jungleseg.features._kernels import response
from jungleseg.jungle import _tables
from jungleseg.jungle._criterion import CRITERIA, best_threshold, hist_cost, make_phi_table
from jungleseg.jungle._grow import draw_all, group_by_node, node_histograms, route
from jungleseg.jungle._tables import THRESHOLD_STREAM, split_tables


def reference_tables(nodes, order, start, entry_sample, entry_weight, samples, store, kinds,
                     params, n_drawn, seed, dags, positions, level, n_thr, n_sub, P,
                     min_leaf, phi_table, criterion):
    """Candidate by candidate over each node's entries in their order, as the trainer
    first did: responses, subsample draws, thresholds, then ``response < threshold``
    counted straight into the left histograms."""
    n, n_cand = kinds.shape[:2]
    n_classes = P.shape[1]
    thresholds = np.full((n, n_cand, n_thr), np.nan, np.float32)
    table = np.zeros((n, n_cand, n_thr, n_classes), np.int64)
    wl = np.zeros((n, n_cand, n_thr), np.int64)
    tree_cost = np.full((n, n_cand, n_thr), np.inf)
    cand_t = np.full((n, n_cand), -1, np.int64)
    cand_cost = np.full((n, n_cand), np.inf)
    classes = np.flatnonzero(P.sum(axis=0) >= 0)
    for i, node in enumerate(nodes):
        ents = order[start[node]:start[node + 1]]
        size = ents.size
        support = np.flatnonzero(P[i] > 0)
        for k in range(n_drawn[i]):
            if size < 2:
                continue
            s = entry_sample[ents]
            resp = np.array([response(kinds[i, k], params[i, k], store, samples.image[j],
                                      samples.row[j], samples.col[j]) for j in s], np.float32)
            state = derive(seed, dags[i], level, positions[i], (THRESHOLD_STREAM << 32) + k)
            if size <= n_sub:
                sub = resp.copy()
            else:
                picks = []
                for _ in range(n_sub):
                    state, j = next_below(np.uint64(state), size)
                    picks.append(j)
                sub = resp[picks]
            sub.sort()
            m = sub.size
            if sub[0] == sub[-1]:
                continue
            count = min(n_thr, m - 1)
            thr = np.empty(count, np.float32)
            for t in range(count):
                state, u = next_uniform(np.uint64(state))
                x = (t + u) / count * (m - 1)
                q = min(int(x), m - 2)
                thr[t] = sub[q] + np.float32(x - q) * (sub[q + 1] - sub[q])
            thr.sort()
            thresholds[i, k, :count] = thr
            for t in range(count):
                goes_left = resp < thr[t]
                for c in classes:
                    table[i, k, t, c] = entry_weight[ents][goes_left
                                                           & (samples.label[s] == c)].sum()
            left = table[i, k, :count][:, support]
            w_left = left.sum(axis=1)
            costs = np.empty(count)
            cand_t[i, k], cand_cost[i, k] = best_threshold(left, w_left, P[i, support],
                                                           min_leaf, phi_table, criterion,
                                                           costs)
            wl[i, k, :count] = w_left
            tree_cost[i, k, :count] = costs
    return thresholds, table, wl, tree_cost, cand_t, cand_cost


@pytest.mark.parametrize("criterion", sorted(set(CRITERIA.values())))
@pytest.mark.parametrize("seed", range(3))
def test_best_threshold_equals_every_threshold_costed_from_scratch(criterion, seed):
    """Costs of thresholds with the left weight of the one before (copied, not computed)
    equal those computed from their histograms; the best is the first of least cost."""
    rng = np.random.default_rng(seed)
    n_t, n_classes, min_leaf = 24, 5, 3
    bins = rng.integers(0, 3, (n_t, n_classes)) * (rng.random((n_t, 1)) < 0.4)  # empty bins
    left = np.cumsum(bins, axis=0)
    parent = left[-1] + rng.integers(0, 4, n_classes)
    wl = left.sum(axis=1)
    assert (np.diff(wl) == 0).any()
    phi = make_phi_table(int(parent.sum()) + 1, criterion)
    costs = np.empty(n_t)
    t, cost = best_threshold(left, wl, parent, min_leaf, phi, criterion, costs)
    expected = np.array([hist_cost(left[q], phi, criterion)
                         + hist_cost(parent - left[q], phi, criterion)
                         if min_leaf <= wl[q] <= parent.sum() - min_leaf else np.inf
                         for q in range(n_t)])
    np.testing.assert_array_equal(costs, expected)
    assert t == int(np.argmin(expected)) and cost == expected.min()


def random_level(store, samples, family, n_dags, n_nodes, n_candidates, seed, weights=False):
    """A level of ``n_dags`` DAGs whose entries (every sample, per DAG) sit in random
    nodes (halving in size), with candidates drawn as the trainer draws them."""
    rng = np.random.default_rng(seed)
    n = len(samples)
    entry_sample = np.tile(np.arange(n), n_dags)
    entry_dag = np.repeat(np.arange(n_dags), n)
    entry_weight = rng.integers(1, 4, entry_sample.size) if weights else np.ones_like(entry_sample)
    share = 0.5 ** np.arange(n_nodes)  # nodes of very different sizes
    entry_node = entry_dag * n_nodes + rng.choice(n_nodes, entry_sample.size, p=share / share.sum())
    order, start = group_by_node(entry_node, n_dags * n_nodes)
    n_classes = int(samples.label.max()) + 1
    hist = node_histograms(order, start, entry_sample, entry_weight, samples.label, n_classes)
    nodes = np.flatnonzero(hist.sum(axis=1) > 0)
    dags = nodes // n_nodes
    positions = nodes % n_nodes
    kinds, params, n_drawn = draw_all(family.spec(), seed, dags, positions, 3, n_candidates,
                                      family.n_params)
    return (nodes, order, start, entry_sample, entry_weight, kinds, params, n_drawn, dags,
            positions, hist[nodes])


def random_samples(rng, shapes, n, n_classes, foreground=None):
    """Samples spread over the images, many on their borders."""
    image = np.sort(rng.integers(0, len(shapes), n)).astype(np.int32)
    h = np.array([shapes[i][0] for i in image])
    w = np.array([shapes[i][1] for i in image])
    row = (rng.random(n) * h).astype(np.int32)
    col = (rng.random(n) * w).astype(np.int32)
    edge = rng.random(n) < 0.3
    row[edge] = np.where(rng.random(edge.sum()) < 0.5, 0, h[edge] - 1)
    if foreground is not None:  # depth: samples on foreground pixels only
        keep = np.array([foreground[i][r, c] for i, r, c in zip(image, row, col)])
        image, row, col = image[keep], row[keep], col[keep]
    label = rng.integers(0, n_classes, image.size).astype(np.int32)
    return Samples(image, row, col, label)


def stores(rng):
    """(name, family, store, samples, unclamped) for every feature family and border."""
    shapes = [(23, 31), (17, 12), (40, 9)]
    grey = [rng.normal(size=s).astype(np.float32) for s in shapes]
    colour = ColourFeatures(max_offset=6, input="channels", n_channels=1,
                            kinds=("value", "difference", "sum", "absdiff"))
    boxes = ColourFeatures(max_offset=5, input="channels", n_channels=1, max_box=3,
                           kinds=("box_value", "box_difference", "box_sum", "box_absdiff"))
    depth_images = [rng.uniform(1.0, 4.0, s).astype(np.float32) for s in shapes]
    for d in depth_images:
        d[rng.random(d.shape) < 0.3] = 0
    depth = DepthFeatures(max_offset=0.3, focal_length=40)
    table = rng.normal(size=(300, 7)).astype(np.float32)
    table[:, 3] = 1.5  # a constant column: no thresholds
    tabular = TabularFeatures(7)
    tab_store, tab_samples = tabular.prepare(table)
    yield ("tabular", tabular, tab_store, Samples(tab_samples.image, tab_samples.row,
                                                  tab_samples.col,
                                                  rng.integers(0, 3, 300).astype(np.int32)),
           False)
    samples = random_samples(rng, shapes, 400, 4)
    yield "colour", colour, colour.prepare(grey), samples, False
    yield "colour padded", colour, colour.prepare(grey, pad=6), samples, True
    yield "box", boxes, boxes.prepare(grey), samples, False
    yield ("depth", depth, depth.prepare(depth_images),
           random_samples(rng, shapes, 500, 5, [d > 0 for d in depth_images]), False)


@pytest.mark.parametrize("keep_table", [False, True])
@pytest.mark.parametrize("wave_bytes", [1 << 30, 20_000])
@pytest.mark.parametrize("n_thresholds", [3, 6])
def test_tables_equal_the_reference_loop(keep_table, wave_bytes, n_thresholds, monkeypatch):
    """Every store kind, nodes above and below the subsample size, weighted entries; one
    wave or many small ones (each with several pass-2 batches); fewer thresholds than the
    5 candidates (bins counted across candidates) and more (along each candidate)."""
    monkeypatch.setattr(_tables, "_WAVE_BYTES", wave_bytes)
    rng = np.random.default_rng(1)
    for name, family, store, samples, unclamped in stores(rng):
        level = random_level(store, samples, family, 2, 5, 5, seed=7, weights=True)
        nodes, order, start, entry_sample, entry_weight, kinds, params, n_drawn, dags, \
            positions, P = level
        phi_table = make_phi_table(int(entry_weight.sum()), 0)
        n_sub = 64  # some nodes hold more entries, some fewer
        tuple_store = store.as_tuple()
        want = reference_tables(nodes, order, start, entry_sample, entry_weight, samples,
                                tuple_store, kinds, params, n_drawn, 11, dags, positions, 3,
                                n_thresholds, n_sub, P, 2, phi_table, 0)
        sizes = np.diff(start)[nodes]
        assert sizes.max() > n_sub > sizes.min(), name
        # visited by sample (as growth does), in entry order, or in any order: same tables
        for visit in (np.argsort(entry_sample, kind="stable"), np.arange(entry_sample.size),
                      rng.permutation(entry_sample.size)):
            got = split_tables(nodes, order, start, entry_sample, entry_weight, visit,
                               samples.image, samples.row, samples.col, samples.label,
                               tuple_store, unclamped, kinds, params, n_drawn, 11, dags,
                               positions, 3, n_thresholds, n_sub, P, keep_table, 2, phi_table, 0)
            np.testing.assert_array_equal(got[0], want[0], err_msg=name)
            for g, w, what in zip(got[4:], want[4:], ("best threshold", "cost")):
                np.testing.assert_array_equal(g, w, err_msg=f"{name}: {what}")
            if keep_table:
                for g, w, what in zip(got[1:4], want[1:4], ("table", "left weights", "costs")):
                    np.testing.assert_array_equal(g, w, err_msg=f"{name}: {what}")
            else:
                assert got[1].shape[0] == 0


def test_routing_does_not_depend_on_entry_order():
    """Shuffling the entries (so each node's entries come in another order) sends every
    entry to the same child."""
    rng = np.random.default_rng(3)
    _, family, store, samples, _ = list(stores(rng))[1]
    n_entries = 3 * len(samples)
    entry_sample = np.tile(np.arange(len(samples)), 3)
    entry_node = rng.integers(-1, 6, n_entries)
    node_row = np.array([0, -1, 1, 2, 3, 4])  # node 1 did not split
    kinds, params, _ = draw_all(family.spec(), 5, np.arange(5), np.arange(5), 0, 1,
                                family.n_params)
    kind, prm = kinds[:, 0], params[:, 0]
    threshold = rng.normal(size=5).astype(np.float32)
    left, right = np.arange(5) * 2, np.arange(5) * 2 + 1
    args = (samples.image, samples.row, samples.col, store.as_tuple(), False, kind, prm,
            threshold, left, right)
    plain, plain_response = route(entry_node, node_row, entry_sample, *args, 2)
    perm = rng.permutation(n_entries)
    shuffled, shuffled_response = route(entry_node[perm], node_row, entry_sample[perm], *args,
                                        2)
    np.testing.assert_array_equal(shuffled, plain[perm])
    np.testing.assert_array_equal(shuffled_response, plain_response[perm])
    expect = np.full(n_entries, -1)
    for e in range(n_entries):
        i = node_row[entry_node[e]] if entry_node[e] >= 0 else -1
        if i >= 0:
            s = entry_sample[e]
            v = response(kind[i], prm[i], store.as_tuple(), samples.image[s], samples.row[s],
                         samples.col[s])
            expect[e] = left[i] if v < threshold[i] else right[i]
    np.testing.assert_array_equal(plain, expect)


_FIT_AND_HASH = textwrap.dedent("""
    import hashlib
    import numpy as np
    from jungleseg import ColourFeatures, DepthFeatures, JungleClassifier, JungleSegmenter
    from jungleseg.datasets.faces import render_faces
    from jungleseg.datasets.kinect import render_frames

    digest = hashlib.sha256()
    def add(jungle):
        for dag in jungle.dags:
            for name, array in sorted(dag.arrays().items()):
                digest.update(name.encode())
                digest.update(np.ascontiguousarray(array).tobytes())
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 8)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int) + 2 * (X[:, 1] + X[:, 2] > 0)
    add(JungleClassifier(4, max_width=16, random_state=0).fit(X, y).jungle_)
    images, labels = render_faces(6, seed=0, size=(64, 64))
    add(JungleSegmenter(ColourFeatures(max_offset=8), n_estimators=3, max_width=16,
                        max_depth=8, samples_per_image=800, random_state=0)
        .fit(images, labels).jungle_)
    depth, parts = render_frames(6, seed=0)
    add(JungleSegmenter(DepthFeatures(), n_estimators=2, max_width=32, max_depth=8,
                        schedule="kinect", samples_per_image=600, ignore=(0, 255),
                        images_per_dag=3, random_state=0).fit(list(depth), list(parts)).jungle_)
    print(digest.hexdigest())
""")
# every region and filter on every thread, however small and whatever else is running
_EVERY_REGION_PARALLEL = ("import jungleseg._workers as w\n"
                          "w.SERIAL_WORK = 0\nw.free_cores = lambda: 64\n")


def test_models_do_not_depend_on_the_thread_count():
    """The same tabular, colour and depth models with 1, 2 and 3 Numba threads (separate
    processes: the thread count is fixed when Numba starts its threads), every parallel
    region run on all of them however small."""
    digests = []
    for n_threads in (1, 2, 3):
        env = {**os.environ, "NUMBA_NUM_THREADS": str(n_threads)}
        run = subprocess.run([sys.executable, "-c", _EVERY_REGION_PARALLEL + _FIT_AND_HASH],
                             env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-2000:]
        digests.append(run.stdout.split()[-1])
    assert len(set(digests)) == 1, digests
    assert hashlib.sha256(b"").hexdigest() not in digests
