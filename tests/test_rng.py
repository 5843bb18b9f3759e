"""Counter-based random streams: keyed, reproducible, uniform enough."""
import numpy as np

from jungleseg._rng import derive, mix64, next_below, next_uniform


def test_streams_are_keyed_by_every_component():
    base = derive(1, 2, 3, 4, 5)
    assert derive(1, 2, 3, 4, 5) == base
    others = {derive(*key) for key in [(0, 2, 3, 4, 5), (1, 0, 3, 4, 5), (1, 2, 0, 4, 5),
                                       (1, 2, 3, 0, 5), (1, 2, 3, 4, 0), (1, 3, 2, 4, 5)]}
    assert base not in others and len(others) == 6


def test_mix64_is_a_bijection_on_a_sample():
    values = {int(mix64(np.uint64(i))) for i in range(20000)}
    assert len(values) == 20000


def test_uniforms_and_integers_are_in_range_and_roughly_uniform():
    state = np.uint64(derive(7, 0, 0, 0, 0))  # kernels hold states as uint64
    us, ks = [], []
    for _ in range(20000):
        state, u = next_uniform(np.uint64(state))
        us.append(u)
        state, k = next_below(np.uint64(state), 10)
        ks.append(k)
    us, ks = np.array(us), np.array(ks)
    assert us.min() >= 0 and us.max() < 1 and abs(us.mean() - 0.5) < 0.01
    counts = np.bincount(ks, minlength=10)
    assert ks.min() == 0 and ks.max() == 9 and counts.min() > 1800 and counts.max() < 2200
