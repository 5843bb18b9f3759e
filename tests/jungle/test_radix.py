"""The trainer's sorts: float32 subsamples (radix) and drawn thresholds (insertion), in
place, and LSearch's stable float64 argsort, against NumPy."""
import numpy as np
import pytest

from jungleseg.jungle._radix import _RADIX_FROM, argsort_float64, insertion_sort, sort_float32


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


def _float64_cases(rng):
    for n in (_RADIX_FROM - 1, _RADIX_FROM, 4000):  # NumPy's merge sort below, radix above
        yield rng.uniform(1e3, 5e4, n)
        yield rng.integers(0, 20, n) * 1.5  # many ties: kept in index order
        near = 1e4 + rng.integers(0, 3, n) * 1e-9  # equal high 32 bits, different low ones
        yield near
        near[::3] = near[0]
        yield near
        yield rng.choice([0.0, -0.0, 1.0, -2.0, 3e-300], n)  # 0 and -0 equal, both signs
    yield np.full(300, 7.25)  # every pass skipped
    yield np.empty(0)


@pytest.mark.parametrize("seed", range(3))
def test_argsort_of_float64_costs_equals_numpys_stable_argsort(seed):
    rng = np.random.default_rng(seed)
    for values in _float64_cases(rng):
        n = values.size
        order = np.full(n, -1, np.int64)
        argsort_float64(values, order, np.empty(n, np.uint64), np.empty(n, np.uint64),
                        np.empty(n, np.int64), np.empty(256, np.int64))
        np.testing.assert_array_equal(order, np.argsort(values, kind="stable"))
