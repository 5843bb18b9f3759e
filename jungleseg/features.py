"""Feature families: what a split can test, and the packed data store it reads.

A family draws candidate features for a node (through a ``spec`` vector its Numba
drawer understands) and prepares raw data into an :class:`ImageStore`. The trainer
only sees kinds, parameter rows and the store, so new families plug in without
changing it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _features


@dataclass(frozen=True)
class ImageStore:
    """Images of different sizes packed in one flat float32 array (channel-last).

    ``pixels[offset[i] + (r * width[i] + c) * n_channels + ch]`` is channel ``ch`` of
    pixel (r, c) of image ``i``.
    """

    pixels: np.ndarray
    offset: np.ndarray
    height: np.ndarray
    width: np.ndarray
    n_channels: int

    def as_tuple(self) -> tuple:
        """The form Numba kernels take."""
        return (self.pixels, self.offset, self.height, self.width, np.int64(self.n_channels))

    @property
    def n_images(self) -> int:
        return int(self.offset.shape[0])

    @classmethod
    def from_images(cls, images) -> "ImageStore":
        """Pack a sequence of (H, W) or (H, W, C) arrays with the same channel count."""
        images = [np.asarray(im, dtype=np.float32) for im in images]
        images = [im[:, :, None] if im.ndim == 2 else im for im in images]
        if not images:
            raise ValueError("no images to pack")
        n_channels = images[0].shape[2]
        for i, im in enumerate(images):
            if im.ndim != 3 or im.shape[2] != n_channels:
                raise ValueError(
                    f"image {i} has shape {im.shape}; expected (H, W, {n_channels})"
                )
        sizes = np.array([im.size for im in images], np.int64)
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        pixels = np.concatenate([im.ravel() for im in images]) if len(images) > 1 else images[0].ravel()
        return cls(
            pixels=np.ascontiguousarray(pixels),
            offset=offset,
            height=np.array([im.shape[0] for im in images], np.int32),
            width=np.array([im.shape[1] for im in images], np.int32),
            n_channels=int(n_channels),
        )


@dataclass(frozen=True)
class Samples:
    """Training or test samples: pixel (image, row, col) of a store, with labels."""

    image: np.ndarray
    row: np.ndarray
    col: np.ndarray
    label: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.image.shape[0])


class FeatureFamily:
    """Base class: a family of split features.

    Subclasses define ``name``, ``n_params``, :meth:`spec` and :meth:`to_dict`.
    """

    name = "base"
    n_params = 0
    kinds: tuple = ()  # feature kind codes its nodes may store

    def spec(self) -> np.ndarray:
        """float64 vector read by the Numba candidate drawer."""
        raise NotImplementedError

    def to_dict(self) -> dict:
        """JSON-friendly description, enough to rebuild the family."""
        raise NotImplementedError


class TabularFeatures(FeatureFamily):
    """Axis-aligned splits on the columns of a numeric matrix."""

    name = "tabular"
    n_params = _features.N_PARAMS[_features.FAMILY_TABULAR]
    kinds = (_features.KIND_TABULAR,)

    def __init__(self, n_columns: int):
        if n_columns < 1:
            raise ValueError(f"n_columns must be >= 1, got {n_columns}")
        self.n_columns = int(n_columns)

    def spec(self) -> np.ndarray:
        return np.array([_features.FAMILY_TABULAR, self.n_columns], np.float64)

    def to_dict(self) -> dict:
        return {"name": self.name, "n_columns": self.n_columns}

    def prepare(self, X: np.ndarray) -> tuple[ImageStore, Samples]:
        """A store holding X as one image of ``n x 1`` pixels, and one sample per row."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] != self.n_columns:
            raise ValueError(f"expected a matrix with {self.n_columns} columns, got shape {X.shape}")
        n = X.shape[0]
        store = ImageStore(
            pixels=X.reshape(-1),
            offset=np.zeros(1, np.int64),
            height=np.array([n], np.int32),
            width=np.ones(1, np.int32),
            n_channels=self.n_columns,
        )
        samples = Samples(
            image=np.zeros(n, np.int32), row=np.arange(n, dtype=np.int32), col=np.zeros(n, np.int32)
        )
        return store, samples


def family_from_dict(d: dict) -> FeatureFamily:
    """Rebuild a family from :meth:`FeatureFamily.to_dict` output."""
    if d.get("name") == TabularFeatures.name:
        return TabularFeatures(int(d["n_columns"]))
    raise ValueError(f"unknown feature family {d.get('name')!r}")
