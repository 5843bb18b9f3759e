"""The packed data store that feature kernels read, and the samples they are read at."""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field

import numpy as np

from ._filters import integral_planes


@dataclass(frozen=True)
class ImageStore:
    """Images of different sizes packed in one flat float32 array, one plane per channel.

    Image ``i`` takes ``n_channels`` planes of ``(height[i] + 2 pad) x (width[i] + 2 pad)``
    from ``pixels[offset[i]]`` on: the image with a border of ``pad`` pixels that repeat
    its edge (``border='edge'``), so a probe up to ``pad`` pixels outside reads what
    clamping to the border would, or that are 0 (``border='zero'``: depth, where a probe
    off the image reads background); traversal then reads probes at fixed steps from
    the pixel (see :meth:`Jungle.classify_image`).
    ``integral`` holds, when box features need them, the (H + 1) x (W + 1) float64
    integral image of every channel, planes in channel order, image ``i`` starting at
    ``integral_offset[i]``. Planes, not interleaved channels, so that neighbouring pixels
    probing one channel read neighbouring memory.
    """

    pixels: np.ndarray
    offset: np.ndarray
    height: np.ndarray
    width: np.ndarray
    n_channels: int
    integral: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    integral_offset: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    pad: int = 0
    border: str = "edge"

    def as_tuple(self) -> tuple:
        """The form Numba kernels take: ``(pixels, origin, height, width, row_stride,
        plane_size, integral, integral_offset)``, where channel ``ch`` of pixel (r, c) of
        image ``i`` is ``pixels[origin[i] + ch * plane_size[i] + r * row_stride[i] + c]``."""
        stride = self.width.astype(np.int64) + 2 * self.pad
        plane = (self.height.astype(np.int64) + 2 * self.pad) * stride
        origin = self.offset + self.pad * stride + self.pad
        return (self.pixels, origin, self.height, self.width, stride, plane, self.integral,
                self.integral_offset)

    @property
    def n_images(self) -> int:
        return int(self.offset.shape[0])

    def values_at(self, samples: Samples, channel: int = 0) -> np.ndarray:
        """One channel's values at the samples' pixels."""
        _, origin, _, _, row_stride, plane, _, _ = self.as_tuple()
        at = (origin[samples.image] + channel * plane[samples.image]
              + samples.row * row_stride[samples.image] + samples.col)
        return self.pixels[at]

    def planes(self, image: int) -> np.ndarray:
        """The (n_channels, H, W) channel planes of one image (a view, border excluded)."""
        h, w, p = int(self.height[image]), int(self.width[image]), self.pad
        start = int(self.offset[image])
        block = self.pixels[start:start + self.n_channels * (h + 2 * p) * (w + 2 * p)]
        return block.reshape(self.n_channels, h + 2 * p, w + 2 * p)[:, p:p + h, p:p + w]

    @classmethod
    def build(cls, shapes, n_channels: int, fill, integral: bool = False,
              pad: int = 0, border: str = "edge") -> "ImageStore":
        """A store of images of ``shapes`` (H, W), each with a border of ``pad`` pixels
        (repeating its edge or 0, see ``border``), whose channels ``fill(i, planes)``
        writes straight into the (n_channels, H, W) view of image ``i`` (no second
        copy)."""
        pad = int(pad)
        if pad < 0:
            raise ValueError(f"pad must be >= 0, got {pad}")
        if border not in ("edge", "zero"):
            raise ValueError(f"border must be 'edge' or 'zero', got {border!r}")
        shapes = [tuple(int(n) for n in shape) for shape in shapes]
        if not shapes:
            raise ValueError("no images to pack")
        for i, shape in enumerate(shapes):
            if len(shape) != 2 or min(shape) < 1:
                raise ValueError(f"image {i} has shape {shape}; expected (H, W) or (H, W, C)")
        sizes = np.array([n_channels * (h + 2 * pad) * (w + 2 * pad) for h, w in shapes],
                         np.int64)
        store = cls(pixels=np.empty(int(sizes.sum()), np.float32),
                    offset=np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64),
                    height=np.array([h for h, _ in shapes], np.int32),
                    width=np.array([w for _, w in shapes], np.int32),
                    n_channels=int(n_channels), pad=pad, border=border)
        for i in range(len(shapes)):
            fill(i, store.planes(i))
            store._fill_border(i)
        return store.with_integrals() if integral else store

    def with_integrals(self) -> "ImageStore":
        """This store with the float64 integral image of every channel (for box kinds)."""
        planes = [self.planes(i) for i in range(self.n_images)]
        n = self.n_channels
        sizes = np.array([n * (p.shape[1] + 1) * (p.shape[2] + 1) for p in planes], np.int64)
        integral_offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        table = np.empty(int(sizes.sum()), np.float64)
        for p, start, size in zip(planes, integral_offset, sizes):
            integral_planes(p, table[start:start + size].reshape(n, p.shape[1] + 1,
                                                                 p.shape[2] + 1))
        return dataclasses.replace(self, integral=table, integral_offset=integral_offset)

    def _fill_border(self, image: int) -> None:
        """Fill the border of image ``image`` with 0, or with its edge pixels as OpenCV's
        BORDER_REPLICATE does (corners take the corner pixel)."""
        p = self.pad
        if not p:
            return
        h, w = int(self.height[image]), int(self.width[image])
        start = int(self.offset[image])
        block = self.pixels[start:start + self.n_channels * (h + 2 * p) * (w + 2 * p)].reshape(
            self.n_channels, h + 2 * p, w + 2 * p)
        if self.border == "zero":
            block[:, :p] = 0
            block[:, p + h:] = 0
            block[:, p:p + h, :p] = 0
            block[:, p:p + h, p + w:] = 0
            return
        block[:, p:p + h, :p] = block[:, p:p + h, p:p + 1]
        block[:, p:p + h, p + w:] = block[:, p:p + h, p + w - 1:p + w]
        block[:, :p] = block[:, p:p + 1]
        block[:, p + h:] = block[:, p + h - 1:p + h]


@dataclass(frozen=True)
class Samples:
    """Training or test samples: pixel (image, row, col) of a store, with labels."""

    image: np.ndarray
    row: np.ndarray
    col: np.ndarray
    label: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.image.shape[0])


def fingerprint(store: ImageStore, samples: Samples) -> str:
    """Short SHA-256 of what a model was trained on: every channel's values at the
    samples, and their labels (a few KB to hash, however large the images)."""
    digest = hashlib.sha256()
    for channel in range(store.n_channels):
        digest.update(np.ascontiguousarray(store.values_at(samples, channel)).tobytes())
    digest.update(np.ascontiguousarray(samples.label).tobytes())
    return digest.hexdigest()[:16]
