"""Candidate draws: tabular columns without replacement, centred colour probes."""
import numpy as np

from jungleseg.features import ColourFeatures, TabularFeatures
from jungleseg.features._draws import draw_candidates


def test_tabular_draws_distinct_columns():
    kinds = np.zeros(5, np.uint8)
    params = np.zeros((5, 1), np.float32)
    n = draw_candidates(TabularFeatures(5).spec(), np.uint64(3), kinds, params)
    assert n == 5 and sorted(params[:, 0]) == [0, 1, 2, 3, 4]


def test_centred_draws_put_the_first_probe_on_the_pixel():
    draws = []
    for centred in (False, True):
        kinds = np.zeros(200, np.uint8)
        params = np.zeros((200, 8), np.float32)
        draw_candidates(ColourFeatures(12, centred=centred).spec(), np.uint64(4), kinds, params)
        draws.append((kinds, params))
    (kinds, free), (centred_kinds, centred) = draws
    assert np.all(centred[:, :2] == 0) and np.any(free[:, :2] != 0)
    np.testing.assert_array_equal(kinds, centred_kinds)  # same stream, only u changes
    np.testing.assert_array_equal(free[:, 2:], centred[:, 2:])
