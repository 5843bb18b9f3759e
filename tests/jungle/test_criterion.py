import numpy as np
import pytest

from jungleseg import impurity, split_gain
from jungleseg.jungle._criterion import ENTROPY, GINI, HELLINGER, hist_cost, make_phi_table


def test_gini_lecture_example():
    assert impurity([5, 5], "gini") == pytest.approx(0.5)
    assert impurity([4, 1], "gini") == pytest.approx(0.32)
    assert split_gain([4, 1], [1, 4], "gini") == pytest.approx(0.18)


def test_entropy_by_hand():
    assert impurity([5, 5]) == pytest.approx(1.0)
    h = -(0.8 * np.log2(0.8) + 0.2 * np.log2(0.2))
    assert impurity([4, 1]) == pytest.approx(h)
    assert split_gain([4, 1], [1, 4]) == pytest.approx(1.0 - h)
    assert impurity([3, 0, 0]) == 0.0
    assert impurity([1, 1, 1, 1]) == pytest.approx(2.0)


@pytest.mark.parametrize("criterion", [ENTROPY, GINI, HELLINGER])
def test_table_and_direct_terms_agree(criterion):
    rng = np.random.default_rng(0)
    small = make_phi_table(10, criterion)  # counts beyond the table are computed
    big = make_phi_table(10_000, criterion)
    for _ in range(50):
        h = rng.integers(0, 3000, 5)
        assert hist_cost(h, small, criterion) == pytest.approx(hist_cost(h, big, criterion),
                                                              rel=1e-12)


def test_unknown_criterion_is_named():
    with pytest.raises(ValueError, match="criterion"):
        impurity([1, 2], "mse")


def _ihd_reference(children, reference):
    """iHD of a split (Akash et al. 2019, eqs. 12-13) against the distribution
    ``reference``: sum_t pi_t (1 - sum_j sqrt(p_tj q_j)), in plain NumPy."""
    children = np.asarray(children, np.float64)
    n = children.sum()
    total = 0.0
    for h in children:
        if h.sum() == 0:
            continue
        total += h.sum() / n * (1.0 - np.sum(np.sqrt(h / h.sum() * reference)))
    return total


def test_hellinger_cost_is_ihd_against_the_uniform_distribution():
    rng = np.random.default_rng(3)
    phi = make_phi_table(5000, HELLINGER)
    for _ in range(200):
        c = int(rng.integers(2, 6))
        parent = rng.integers(0, 200, c) * (rng.random(c) < 0.8)
        left = rng.integers(0, parent + 1)
        right = parent - left
        n = parent.sum()
        if n == 0:
            continue
        want = _ihd_reference([left, right], np.full(c, 1.0 / c))
        cost = hist_cost(left, phi, HELLINGER) + hist_cost(right, phi, HELLINGER)
        assert 1.0 - cost / (n * np.sqrt(c)) == pytest.approx(want, abs=1e-12)
        assert cost <= hist_cost(parent, phi, HELLINGER) + 1e-9  # splits never cost more


def test_hellinger_prefers_the_split_that_isolates_a_rare_class():
    """Parent 95 : 5. Entropy prefers a pure side holding 4 of the 5 rare samples;
    Hellinger (uniform reference) prefers the side holding all 5 rare samples with 5
    majority ones (every rare sample on one side)."""
    peel, isolate = ([0, 4], [95, 1]), ([5, 5], [90, 0])
    assert split_gain(*peel) > split_gain(*isolate)
    gains = {name: impurity([95, 5], "hellinger") - (
        sum(np.sum(h) * impurity(h, "hellinger") for h in split) / 100)
        for name, split in (("peel", peel), ("isolate", isolate))}
    assert gains["isolate"] > gains["peel"]
    ihd = {name: _ihd_reference(split, np.array([0.5, 0.5]))
           for name, split in (("peel", peel), ("isolate", isolate))}
    assert ihd["isolate"] > ihd["peel"]
