"""Probability smoothing: box averages and the guided filter against references."""
import numpy as np

from jungleseg import guided_smoothing, smooth_probabilities
from jungleseg._workers import threads


def test_smoothing_averages_probabilities_over_the_box_inside_image_and_mask():
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


def test_guided_smoothing_does_not_depend_on_the_thread_count_or_the_mask_type():
    # its box means run in pairs on two threads; segmentation passes a boolean mask
    rng = np.random.default_rng(9)
    guide = rng.normal(size=(37, 45)).astype(np.float32)
    proba = rng.random((37, 45, 4)).astype(np.float32)
    inside = rng.random((37, 45)) > 0.2
    with threads(1):
        one = guided_smoothing(proba, guide, 3, 0.1, inside.astype(np.uint8))
    with threads(2):
        two = guided_smoothing(proba, guide, 3, 0.1, inside)
    np.testing.assert_array_equal(one, two)
