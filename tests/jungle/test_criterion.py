import numpy as np
import pytest

from jungleseg import impurity, split_gain
from jungleseg.jungle._criterion import ENTROPY, GINI, hist_cost, make_phi_table


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


@pytest.mark.parametrize("criterion", [ENTROPY, GINI])
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
