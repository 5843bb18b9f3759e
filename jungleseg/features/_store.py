"""The packed data store that feature kernels read, and the samples they are read at."""
from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._workers import fresh_array
from ._filters import integral_planes
from ._quantise import Quantiser


@dataclass(frozen=True)
class ImageStore:
    """Images of different sizes packed in one flat array, one plane per channel: float32
    values, or with a ``quantiser`` its uint8 or uint16 codes
    (:mod:`jungleseg.features._quantise`).

    Image ``i`` takes ``n_channels`` planes of ``(height[i] + 2 pad) x (width[i] + 2 pad)``
    from ``pixels[offset[i]]`` on: the image with a border of ``pad`` pixels that repeat
    its edge (``border='edge'``), so a probe up to ``pad`` pixels outside reads what
    clamping to the border would, or that are 0 (``border='zero'``: depth, where a probe
    off the image reads background); traversal then reads probes at fixed steps from
    the pixel (see :meth:`Jungle.classify_image`).
    ``integral`` holds, when box features need them, the (H + 1) x (W + 1) integral image
    of every channel (float64 of float32 values; uint32 of codes, exact modulo 2^32, so
    exact for every box whose sum is below 2^32 however large the image; uint64 where a
    box could reach that), planes in channel order, image ``i`` starting at
    ``integral_offset[i]``. Planes, not interleaved channels, so that neighbouring pixels
    probing one channel read neighbouring memory.

    A store of volumes (``ndim == 3``) holds (depth[i], height[i], width[i]) images. A
    channel of a volume is one taller plane: its ``depth + 2 pad_z`` slices, each with
    its border, one after the other, the first and last ``pad_z`` repeating the edge
    slices. Voxel (z, y, x) is then the pixel of row ``(z + pad_z) (height + 2 pad) + y``
    of that plane (:meth:`rows`), so the kernels' (image, row, col) addressing, and the
    trainer built on it, serve volumes unchanged, and a probe (dz, dy, dx) away is the
    pixel ``dz (height + 2 pad) + dy`` rows and ``dx`` columns away.
    """

    pixels: np.ndarray
    offset: np.ndarray
    height: np.ndarray
    width: np.ndarray
    n_channels: int
    integral: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    integral_offset: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    pad: int = 0
    depth: np.ndarray | None = None  # slices per image, for volumes (ndim 3)
    pad_z: int = 0
    border: str = "edge"
    quantiser: Quantiser | None = None

    @property
    def ndim(self) -> int:
        """2 for a store of images, 3 for a store of volumes."""
        return 2 if self.depth is None else 3

    def _slices(self) -> np.ndarray:
        """Slices per image, border slices included (1 for 2-D images)."""
        if self.depth is None:
            return np.ones(self.n_images, np.int64)
        return self.depth.astype(np.int64) + 2 * self.pad_z

    def shape(self, image: int) -> tuple[int, ...]:
        """(H, W) or (D, H, W) of one image, border excluded."""
        hw = (int(self.height[image]), int(self.width[image]))
        return hw if self.depth is None else (int(self.depth[image]), *hw)

    def rows(self, image: np.ndarray, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The rows of voxels (z, y) of volumes ``image`` in the kernels' addressing
        (see the class docstring); ``y`` itself for a store of 2-D images (``z`` 0)."""
        if self.depth is None:
            return np.asarray(y, np.int32)
        slice_rows = self.height[image].astype(np.int64) + 2 * self.pad
        return ((np.asarray(z, np.int64) + self.pad_z) * slice_rows + y).astype(np.int32)

    def as_tuple(self) -> tuple:
        """The form Numba kernels take: ``(pixels, origin, height, width, row_stride,
        plane_size, integral, integral_offset)``, where channel ``ch`` of pixel (r, c) of
        image ``i`` is ``pixels[origin[i] + ch * plane_size[i] + r * row_stride[i] + c]``."""
        stride = self.width.astype(np.int64) + 2 * self.pad
        plane = self._slices() * (self.height.astype(np.int64) + 2 * self.pad) * stride
        origin = self.offset + self.pad * stride + self.pad
        return (self.pixels, origin, self.height, self.width, stride, plane, self.integral,
                self.integral_offset)

    @property
    def n_images(self) -> int:
        """Images in the store."""
        return int(self.offset.shape[0])

    def values_at(self, samples: Samples, channel: int = 0) -> np.ndarray:
        """One channel's values at the samples' pixels (rows as :meth:`rows` gives them)."""
        _, origin, _, _, row_stride, plane, _, _ = self.as_tuple()
        at = (origin[samples.image] + channel * plane[samples.image]
              + samples.row * row_stride[samples.image] + samples.col)
        return self.pixels[at]

    def planes(self, image: int) -> np.ndarray:
        """The (n_channels, H, W) channel planes of one image, or the (n_channels, D, H, W)
        channels of one volume (a view, border excluded)."""
        block = self._block(image)
        p, q = self.pad, self.pad_z
        h, w = int(self.height[image]), int(self.width[image])
        if self.depth is None:
            return block[:, 0, p:p + h, p:p + w]
        return block[:, q:q + int(self.depth[image]), p:p + h, p:p + w]

    def _block(self, image: int) -> np.ndarray:
        """The (n_channels, slices, H + 2 pad, W + 2 pad) block of one image, borders
        included."""
        p = self.pad
        h, w, n = int(self.height[image]), int(self.width[image]), int(self._slices()[image])
        start = int(self.offset[image])
        block = self.pixels[start:start + self.n_channels * n * (h + 2 * p) * (w + 2 * p)]
        return block.reshape(self.n_channels, n, h + 2 * p, w + 2 * p)

    @classmethod
    def build(cls, shapes: Sequence[tuple[int, ...]], n_channels: int,
              fill: Callable[[int, np.ndarray], None] | None, integral: bool | int = False,
              pad: int = 0, pad_z: int | None = None, border: str = "edge",
              quantiser: Quantiser | None = None,
              values: Sequence[np.ndarray] | None = None) -> ImageStore:
        """A store of images of ``shapes`` (H, W), each with a border of ``pad`` pixels
        (repeating its edge or 0, see ``border``), whose channels ``fill(i, planes)``
        writes straight into the (n_channels, H, W) view of image ``i`` (no second copy);
        its memory comes from :func:`jungleseg._workers.fresh_array`. With a
        ``quantiser``, ``fill`` writes one image's float32 channels into a scratch array,
        and the store holds their codes. ``integral``: True, or the pixels of the largest
        box read (see :meth:`with_integrals`), for integral images. ``values``, with a
        ``quantiser``: each image's (n_channels, H, W) float32 channels, made already, whose
        codes the store holds (``fill`` is then not called, and no scratch is made).

        With ``pad_z`` (an int, 0 allowed), a store of volumes of ``shapes`` (D, H, W),
        ``pad_z`` edge slices repeated before and after each, and ``fill`` writing the
        (n_channels, D, H, W) view.
        """
        pad = int(pad)
        volumes = pad_z is not None
        if pad < 0 or (volumes and pad_z < 0):
            raise ValueError(f"pads must be >= 0, got {pad} and {pad_z}")
        if border not in ("edge", "zero"):
            raise ValueError(f"border must be 'edge' or 'zero', got {border!r}")
        ndim = 3 if volumes else 2
        shapes = [tuple(int(n) for n in shape) for shape in shapes]
        if not shapes:
            raise ValueError("no images to pack")
        for i, shape in enumerate(shapes):
            if len(shape) != ndim or min(shape) < 1:
                expected = "(D, H, W) or (D, H, W, C)" if volumes else "(H, W) or (H, W, C)"
                raise ValueError(f"image {i} has shape {shape}; expected {expected}")
        if volumes and integral:
            raise ValueError("volumes have no integral images: box means are channels")
        full = [((1,) + s if not volumes else s) for s in shapes]
        slices = [d + (2 * int(pad_z) if volumes else 0) for d, _, _ in full]
        sizes = np.array([n_channels * n * (h + 2 * pad) * (w + 2 * pad)
                          for n, (_, h, w) in zip(slices, full)], np.int64)
        if quantiser is not None and quantiser.n_channels != n_channels:
            raise ValueError(f"the quantiser maps {quantiser.n_channels} channels, the store "
                             f"holds {n_channels}")
        dtype = np.float32 if quantiser is None else quantiser.dtype
        store = cls(pixels=fresh_array(int(sizes.sum()), dtype),
                    offset=np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64),
                    height=np.array([h for _, h, _ in full], np.int32),
                    width=np.array([w for _, _, w in full], np.int32),
                    n_channels=int(n_channels), pad=pad,
                    depth=np.array([d for d, _, _ in full], np.int32) if volumes else None,
                    pad_z=int(pad_z) if volumes else 0, border=border, quantiser=quantiser,
                    integral=np.zeros(0, integral_type(quantiser)))
        for i in range(len(shapes)):
            planes = store.planes(i)
            if quantiser is None:
                fill(i, planes)
            elif values is not None:
                quantiser.codes_into(values[i], planes)
            else:  # one image's values at a time, then its codes
                scratch = np.empty(planes.shape, np.float32)
                fill(i, scratch)
                quantiser.codes_into(scratch, planes)
                del scratch
            store._fill_border(i)
        if not integral:
            return store
        return store.with_integrals(None if integral is True else int(integral))

    def with_integrals(self, box_pixels: int | None = None) -> ImageStore:
        """This store with the integral image of every channel (for box kinds): float64
        of float32 values; of codes, uint32 when no box of ``box_pixels`` pixels (None:
        the whole image) can sum to 2^32, else uint64, both wrapping around exactly."""
        if self.depth is not None:
            raise ValueError("volumes have no integral images: box means are channels")
        planes = [self.planes(i) for i in range(self.n_images)]
        n = self.n_channels
        sizes = np.array([n * (p.shape[1] + 1) * (p.shape[2] + 1) for p in planes], np.int64)
        integral_offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        if box_pixels is None:
            box_pixels = max((p.shape[1] * p.shape[2] for p in planes), default=0)
        dtype = integral_type(self.quantiser, box_pixels)
        table = fresh_array(int(sizes.sum()), dtype)
        for p, start, size in zip(planes, integral_offset, sizes):
            integral_planes(p, table[start:start + size].reshape(n, p.shape[1] + 1,
                                                                 p.shape[2] + 1))
        return dataclasses.replace(self, integral=table, integral_offset=integral_offset)

    def _fill_border(self, image: int) -> None:
        """Fill the border of image ``image`` with 0, or with its edge pixels as OpenCV's
        BORDER_REPLICATE does (corners take the corner pixel); a volume's border slices
        with 0 or its first and last slice."""
        p, q = self.pad, self.pad_z
        h, w = int(self.height[image]), int(self.width[image])
        block = self._block(image)
        if self.border == "zero":
            if q:
                block[:, :q] = 0
                block[:, -q:] = 0
            if p:
                inner = block[:, q:block.shape[1] - q]
                inner[:, :, :p] = 0
                inner[:, :, p + h:] = 0
                inner[:, :, p:p + h, :p] = 0
                inner[:, :, p:p + h, p + w:] = 0
            return
        if p:
            inner = block[:, q:block.shape[1] - q]
            inner[:, :, p:p + h, :p] = inner[:, :, p:p + h, p:p + 1]
            inner[:, :, p:p + h, p + w:] = inner[:, :, p:p + h, p + w - 1:p + w]
            inner[:, :, :p] = inner[:, :, p:p + 1]
            inner[:, :, p + h:] = inner[:, :, p + h - 1:p + h]
        if q:
            block[:, :q] = block[:, q:q + 1]
            block[:, -q:] = block[:, -q - 1:-q]


def integral_type(quantiser: Quantiser | None, box_pixels: int = 0) -> np.dtype:
    """The type of a store's integral images: float64 without a ``quantiser``; else
    uint32 if ``box_pixels`` codes sum below 2^32, else uint64."""
    if quantiser is None:
        return np.dtype(np.float64)
    return np.dtype(np.uint32 if quantiser.max_code * box_pixels < 2 ** 32 else np.uint64)


@dataclass(frozen=True)
class Samples:
    """Training or test samples: pixel (image, row, col) of a store, with labels (the
    row of a volume's voxel is :meth:`ImageStore.rows`)."""

    image: np.ndarray
    row: np.ndarray
    col: np.ndarray
    label: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.image.shape[0])


def fingerprint(store: ImageStore, samples: Samples) -> str:
    """Short SHA-256 of what a model was trained on: every channel's values at the
    samples, and their labels (a few KB to hash, however large the images)."""
    return fingerprint_values([store.values_at(samples, channel)
                               for channel in range(store.n_channels)], samples.label)


def fingerprint_values(channel_values: list[np.ndarray], label: np.ndarray) -> str:
    """:func:`fingerprint` from each channel's values at the samples (all samples, in
    order) and their labels."""
    digest = hashlib.sha256()
    for values in channel_values:
        digest.update(np.ascontiguousarray(values).tobytes())
    digest.update(np.ascontiguousarray(label).tobytes())
    return digest.hexdigest()[:16]
