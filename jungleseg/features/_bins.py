"""Quantile bins of the columns of a matrix, as LightGBM and XGBoost (``hist``) build them.

Each column is cut once, before training, into at most ``max_bins`` bins; training then
reads the bin *codes* (0, 1, ...) instead of the values. The cuts come from the column's
distinct values on a subsample of the rows: when there are few distinct values, each gets
a bin of its own; otherwise the cuts fall at quantiles of the subsample, so that bins hold
about equally many rows (a value that fills more than a bin's share gets a bin to itself).
A cut lies midway between two neighbouring distinct values, so that a value never seen in
training falls on the nearer side.

Codes are monotone in the value: ``code(v) = #{cuts <= v}``. A split "code < t" on codes
therefore sends a row left exactly when its value is below ``cuts[ceil(t) - 1]``, a raw
threshold, which is what a model stores (:func:`raw_thresholds`): prediction reads raw
values and needs no bins.
"""
from __future__ import annotations

import numpy as np

#: Rows the cuts of a column are chosen from at most (as LightGBM's
#: ``bin_construct_sample_cnt``).
BIN_SUBSAMPLE = 200_000

#: Threshold of a split that no finite value goes left of (a code threshold at or below
#: the smallest code).
NONE_LEFT = np.finfo(np.float32).min
#: Threshold of a split that every finite value goes left of.
ALL_LEFT = np.finfo(np.float32).max


def column_cuts(values: np.ndarray, max_bins: int) -> np.ndarray:
    """Increasing float32 cuts of one column into at most ``max_bins`` bins.

    Parameters
    ----------
    values : ndarray of shape (n,), float32
        The column (or a subsample of its rows); finite.
    max_bins : int
        Largest number of bins (at least 2).

    Returns
    -------
    ndarray of shape (n_bins - 1,), float32
        Cuts ``c`` with ``lower < c <= upper`` for the two distinct values ``lower`` and
        ``upper`` they separate.

    Examples
    --------
    >>> column_cuts(np.float32([3, 1, 2, 2, 1]), 256)
    array([1.5, 2.5], dtype=float32)
    >>> column_cuts(np.arange(100, dtype=np.float32), 4)
    array([24.5, 49.5, 74.5], dtype=float32)
    """
    distinct, counts = np.unique(np.asarray(values, np.float32), return_counts=True)
    if distinct.size <= max_bins:
        upper = np.arange(1, distinct.size)  # every distinct value its own bin
    else:
        # the bin a value's rows mostly fall in, when bins hold equally many rows: a cut
        # goes after each distinct value whose cumulative count reaches a new bin
        cumulative = np.cumsum(counts)
        bin_of = ((cumulative - counts / 2) * max_bins / cumulative[-1]).astype(np.int64)
        upper = np.flatnonzero(np.diff(bin_of) > 0) + 1
    lower_value = distinct[upper - 1].astype(np.float64)
    upper_value = distinct[upper].astype(np.float64)
    cuts = ((lower_value + upper_value) / 2).astype(np.float32)
    # float32 rounding may land on the lower value (neighbouring floats): use the upper one
    return np.where(cuts > distinct[upper - 1], cuts, distinct[upper]).astype(np.float32)


def fit_cuts(X: np.ndarray, max_bins: int, seed: int) -> list[np.ndarray]:
    """The cuts (:func:`column_cuts`) of every column of ``X``, from at most
    :data:`BIN_SUBSAMPLE` rows drawn with ``seed`` (all rows when there are fewer)."""
    n = X.shape[0]
    rows = (np.sort(np.random.default_rng(seed).choice(n, BIN_SUBSAMPLE, replace=False))
            if n > BIN_SUBSAMPLE else slice(None))
    return [column_cuts(X[rows, j], max_bins) for j in range(X.shape[1])]


def quantise(X: np.ndarray, cuts: list[np.ndarray]) -> np.ndarray:
    """Bin codes of the rows of ``X``: ``codes[i, j] = #{cuts[j] <= X[i, j]}``, uint8
    (uint16 where a column has more than 256 bins).

    Examples
    --------
    >>> quantise(np.float32([[0.5], [1.5], [9.0]]), [np.float32([1.0, 2.0])]).ravel()
    array([0, 1, 2], dtype=uint8)
    """
    widest = max((c.size for c in cuts), default=0)
    codes = np.empty(X.shape, np.uint8 if widest < 256 else np.uint16)
    for j, column_cuts_j in enumerate(cuts):
        codes[:, j] = np.searchsorted(column_cuts_j, X[:, j], side="right")
    return codes


def raw_thresholds(code_threshold: np.ndarray, column: np.ndarray,
                   cuts: list[np.ndarray]) -> np.ndarray:
    """The raw thresholds that split values as ``code < code_threshold`` splits their codes.

    A code below ``t`` is a code at most ``b = ceil(t) - 1``, and ``code(v) <= b`` holds
    exactly when ``v < cuts[b]``; for ``b < 0`` nothing goes left (:data:`NONE_LEFT`), for
    ``b`` past the last cut everything does (:data:`ALL_LEFT`).

    Examples
    --------
    >>> raw_thresholds(np.float32([0.5, 1.0, 1.7]), np.array([0, 0, 0]),
    ...                [np.float32([1.0, 2.0])])
    array([1., 1., 2.], dtype=float32)
    """
    b = np.ceil(code_threshold.astype(np.float64)).astype(np.int64) - 1
    column = np.asarray(column, np.int64)
    n_cuts = np.array([c.size for c in cuts], np.int64)
    first = np.cumsum(n_cuts) - n_cuts  # where each column's cuts start in ``flat``
    flat = np.concatenate([*cuts, np.zeros(1, np.float32)]).astype(np.float32)
    inside = flat[first[column] + np.clip(b, 0, n_cuts[column])]
    return np.where(b < 0, NONE_LEFT, np.where(b >= n_cuts[column], ALL_LEFT, inside)).astype(
        np.float32)
