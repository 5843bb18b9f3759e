"""TabularFeatures: a matrix as a one-column image, splits on its columns."""
import numpy as np
import pytest

from jungleseg.features import TabularFeatures
from jungleseg.features import _kernels as K


def test_rows_become_samples_and_columns_channels():
    X = np.arange(12, dtype=np.float32).reshape(4, 3)
    store, samples = TabularFeatures(3).prepare(X)
    assert len(samples) == 4 and store.n_channels == 3
    for row in range(4):
        for column in range(3):
            value = K.response(K.KIND_TABULAR, np.float32([column]), store.as_tuple(), 0, row, 0)
            assert value == X[row, column]


def test_shapes_and_loaded_parameters_are_checked():
    family = TabularFeatures(3)
    with pytest.raises(ValueError, match="3 columns"):
        family.prepare(np.zeros((4, 2)))
    assert family.check_params(np.float32([[0], [2]])) is None
    assert "column indices" in family.check_params(np.float32([[3]]))
    assert "column indices" in family.check_params(np.float32([[0.5]]))
    with pytest.raises(ValueError, match="n_columns"):
        TabularFeatures(0)
