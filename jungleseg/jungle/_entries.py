"""Entries: which samples each DAG of an ensemble trains on, and with what weight.

The trainer grows all DAGs together from one list of *entries*, (sample, integer
weight) pairs concatenated over DAGs. Each DAG may see every sample, a bootstrap
sample of them (multiplicities as weights), or the samples of its own images, as the
paper trains each Kinect and faces DAG on its own frames. Which pixels are samples in
the first place is :func:`jungleseg.sample_pixels`' business.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True)
class Entries:
    """Per entry: the sample it holds, its weight (>= 1) and its DAG (0..n_dags-1, in
    order)."""

    sample: np.ndarray
    weight: np.ndarray
    dag: np.ndarray

    @property
    def n_dags(self) -> int:
        return int(self.dag.max()) + 1

    @cached_property
    def in_sample_order(self) -> np.ndarray:
        """Entry indices by sample, and by DAG within a sample: the order the split
        tables' passes visit entries in. Samples are drawn image by image, so an image's
        pixels serve the candidates of every DAG that trains on it while they are in
        cache, where entry order (DAG by DAG) brings each image in once per DAG.

        >>> stack_entries([([0, 1], [1, 1]), ([0, 1], [1, 1])]).in_sample_order
        array([0, 2, 1, 3])
        """
        return np.argsort(self.sample, kind="stable")


def stack_entries(per_dag: Sequence[tuple[ArrayLike, ArrayLike]]) -> Entries:
    """Concatenate per-DAG ``(sample indices, integer weights)`` pairs.

    >>> stack_entries([([0, 1], [1, 1]), ([1], [2])]).dag
    array([0, 0, 1])
    """
    sample = np.concatenate([np.asarray(s, np.int64) for s, _ in per_dag])
    weight = np.concatenate([np.asarray(w, np.int64) for _, w in per_dag])
    dag = np.concatenate([np.full(len(s), g, np.int64) for g, (s, _) in enumerate(per_dag)])
    if np.any(weight < 1):
        raise ValueError("entry weights must be positive integers")
    if np.any(np.bincount(dag, minlength=len(per_dag)) == 0):
        raise ValueError("every DAG needs at least one training sample")
    return Entries(sample, weight, dag)


def every_sample(n_samples: int, n_dags: int) -> Entries:
    """Every DAG trains on every sample once."""
    rows = np.arange(n_samples)
    return stack_entries([(rows, np.ones(n_samples, np.int64))] * n_dags)


def bootstrap(n_samples: int, n_dags: int, seed: int) -> Entries:
    """DAG g trains on a bootstrap sample drawn from ``default_rng([seed, g])``, each
    sample weighted by how often it was drawn."""
    per_dag = []
    for g in range(n_dags):
        rng = np.random.default_rng([seed, g])
        counts = np.bincount(rng.integers(0, n_samples, n_samples), minlength=n_samples)
        rows = np.flatnonzero(counts)
        per_dag.append((rows, counts[rows]))
    return stack_entries(per_dag)


def by_image(sample_image: np.ndarray, n_images: int, images_per_dag: int, n_dags: int,
             seed: int) -> Entries:
    """DAG g trains on the samples of its own ``images_per_dag`` images: consecutive
    blocks of one random order of the images (``default_rng([seed, 1])``), disjoint while
    the images last, wrapping around after."""
    return stack_entries([(rows, np.ones(rows.size, np.int64)) for rows in
                          image_rows(sample_image, n_images, images_per_dag, n_dags, seed)])


def image_rows(sample_image: np.ndarray, n_images: int, images_per_dag: int, n_dags: int,
               seed: int) -> list[np.ndarray]:
    """Per DAG, the samples (rows of ``sample_image``, the global image of each) of its
    images in :func:`by_image`; a shard holding some of the images passes its own
    samples, and a DAG may then have none."""
    order = np.random.default_rng([seed, 1]).permutation(n_images)
    every = np.arange(sample_image.shape[0])
    return [every[np.isin(sample_image, np.take(
        order, np.arange(g * images_per_dag, (g + 1) * images_per_dag), mode="wrap"))]
        for g in range(n_dags)]
