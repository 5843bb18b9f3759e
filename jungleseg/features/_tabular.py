"""Axis-aligned splits on the columns of a numeric matrix (the UCI sets)."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import Integral, Interval
from . import _kernels as kernels
from ._base import FeatureFamily, check_indices
from ._store import ImageStore, Samples


class TabularFeatures(FeatureFamily):
    """Axis-aligned splits on the columns of a numeric matrix.

    Parameters
    ----------
    n_columns : int
        Columns of the matrix; a split tests one of them against a threshold.

    Examples
    --------
    >>> store, samples = TabularFeatures(2).prepare([[0.5, 1.0], [2.0, 3.0]])
    >>> len(samples), store.n_channels
    (2, 2)
    """

    name = "tabular"
    n_params = kernels.N_PARAMS[kernels.FAMILY_TABULAR]
    kind_codes = (kernels.KIND_TABULAR,)
    _parameter_constraints = {"n_columns": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, n_columns: int):
        self.n_columns = n_columns
        self._validate()

    @property
    def n_store_channels(self) -> int:
        return self.n_columns

    def spec(self) -> np.ndarray:
        return np.array([kernels.FAMILY_TABULAR, self.n_columns], np.float64)

    def check_params(self, params: np.ndarray) -> str | None:
        return check_indices(params[:, 0], self.n_columns, "column")

    def prepare(self, X: ArrayLike) -> tuple[ImageStore, Samples]:
        """A store holding X as one image of ``n x 1`` pixels, and one sample per row:
        float32 values, or uint8 bin codes as given (:mod:`._bins`), a quarter of the
        memory, whose split tables training counts by histogram."""
        X = np.asarray(X)
        X = np.ascontiguousarray(X, dtype=np.uint8 if X.dtype == np.uint8 else np.float32)
        if X.ndim != 2 or X.shape[1] != self.n_columns:
            raise ValueError(f"expected a matrix with {self.n_columns} columns, "
                             f"got shape {X.shape}")
        n = X.shape[0]
        store = ImageStore(pixels=X.T.reshape(-1), offset=np.zeros(1, np.int64),
                           height=np.array([n], np.int32), width=np.ones(1, np.int32),
                           n_channels=self.n_columns)
        samples = Samples(image=np.zeros(n, np.int32), row=np.arange(n, dtype=np.int32),
                          col=np.zeros(n, np.int32))
        return store, samples
