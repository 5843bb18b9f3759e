"""The trainer's sorts: float32 subsamples (radix) and drawn thresholds (insertion), in
place, against NumPy."""
import numpy as np
import pytest

from jungleseg.jungle._radix import insertion_sort, sort_float32


def _cases(rng, dtype):
    yield rng.normal(size=256).astype(dtype) * 1e3
    yield rng.integers(-3, 4, size=300).astype(dtype)  # many ties, both signs, zeros
    yield np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 0.0, -0.0], dtype)
    yield np.full(17, 2.5, dtype)  # every pass skipped
    yield rng.random(1).astype(dtype)
    yield (rng.random(200) * 1e-40).astype(dtype)  # float32 subnormals


@pytest.mark.parametrize("seed", range(3))
def test_sort_of_float32_subsamples_equals_numpy(seed):
    rng = np.random.default_rng(seed)
    for values in _cases(rng, np.float32):
        n = values.size
        got = values.copy()
        sort_float32(got, np.empty(n, np.uint32), np.empty(n, np.uint32),
                     np.empty(256, np.int64))
        np.testing.assert_array_equal(got, np.sort(values))
        negative_zero = np.signbit(got[got == 0]).astype(int)
        assert np.all(np.diff(negative_zero) <= 0)  # -0 before 0


@pytest.mark.parametrize("seed", range(3))
def test_insertion_sort_of_drawn_thresholds_equals_numpy(seed):
    rng = np.random.default_rng(seed)
    drawn = np.sort(rng.normal(size=32)).astype(np.float32)
    drawn[[5, 6]] = drawn[[6, 5]]  # rounding's rare neighbours out of order
    for values in (drawn, rng.normal(size=40).astype(np.float32), drawn[:1]):
        got = values.copy()
        insertion_sort(got)
        np.testing.assert_array_equal(got, np.sort(values))
