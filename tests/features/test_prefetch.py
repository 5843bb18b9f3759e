"""The prefetch hint: emitted as LLVM's prefetch into the level-2 cache, no effect on
results, and refused on arguments it does not take."""
import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from jungleseg.features._prefetch import prefetch


@njit
def _prefetched_sum(values, indices):
    for i in indices:
        prefetch(values, i)
    total = 0.0
    for i in indices:
        total += values[i]
    return total


def test_prefetch_is_emitted_as_a_level_2_read_hint_and_changes_no_result():
    values = np.arange(1000, dtype=np.float32)
    indices = np.array([0, 999, 500, 3], np.int64)
    assert _prefetched_sum(values, indices) == float(values[indices].sum())
    ir = next(iter(_prefetched_sum.inspect_llvm().values()))
    calls = [line for line in ir.splitlines() if "call" in line and "@llvm.prefetch" in line]
    assert calls and all("i32 0, i32 2, i32 1" in line for line in calls)


@pytest.mark.parametrize("array, index", [(np.zeros((2, 2), np.float32), 0),
                                          (np.zeros(4, np.float32), 1.5)])
def test_prefetch_refuses_other_than_a_1d_array_and_an_integer(array, index):
    @njit
    def hint(a, i):
        prefetch(a, i)

    with pytest.raises(TypingError):
        hint(array, index)
