"""Quantised channels: every channel of an image store held as 8-bit codes.

A :class:`Quantiser` maps each channel's float32 values to codes by an affine map,
``code = clip(rint((value - low) * scale), 0, max_code)``, fixed when a model is trained
(:func:`fit_quantiser`, from the training images) and kept in the model, so that training
and segmentation read identical codes. Values beyond the training range clip to the
first or last code: a held-out image brighter than any training image, or a filter
response far larger, is read as the extreme code, never refused.

Feature kinds then compare codes: a value kind a code, a difference kind a difference of
codes (as a float32, which holds every code and difference exactly), a box kind a mean of
codes from exact integer integral images. Thresholds are drawn among those responses, so
they are in codes too. A store of codes takes a quarter of the float32 store's memory, and
its integral images half of the float64 ones'.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: Quantiles of each channel's training values mapped to the first and the last code:
#: the rarest 0.1 % at either end clip, so that a few extreme filter responses do not
#: stretch the step of every other value.
QUANTILES = (0.001, 0.999)
#: Training images whose channels fit the quantiser: at most this many, evenly spread.
FIT_IMAGES = 32
#: Pixels of each of those images read: at most this many, on a regular grid.
FIT_PIXELS = 4096


@dataclass(frozen=True, eq=False)
class Quantiser:
    """Per-channel affine map of float32 values to codes of ``dtype`` (uint8 or uint16).

    ``low[c]`` maps to code 0 and each ``1 / scale[c]`` above it to the next code, up to
    the type's largest code; values outside clip to the first or last code.
    """

    low: np.ndarray  # float32, one per channel
    scale: np.ndarray  # float32, one per channel: codes per unit of value
    dtype: np.dtype = np.dtype(np.uint8)

    def __post_init__(self):
        object.__setattr__(self, "low", np.ascontiguousarray(self.low, np.float32))
        object.__setattr__(self, "scale", np.ascontiguousarray(self.scale, np.float32))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))
        if self.dtype not in (np.uint8, np.uint16):
            raise ValueError(f"codes are uint8 or uint16, not {self.dtype}")
        if self.low.shape != self.scale.shape or self.low.ndim != 1:
            raise ValueError("low and scale must be 1-D arrays of one value per channel")
        if not (np.all(np.isfinite(self.low)) and np.all(np.isfinite(self.scale))
                and np.all(self.scale > 0)):
            raise ValueError("low must be finite and scale finite and > 0")

    @property
    def n_channels(self) -> int:
        """Channels mapped."""
        return int(self.low.shape[0])

    @property
    def max_code(self) -> int:
        """The largest code (255 or 65535)."""
        return int(np.iinfo(self.dtype).max)

    def codes_into(self, values: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Write the codes of (n_channels, ...) float32 ``values`` into ``out`` (the same
        shape, of the code type or float32, which may be ``values`` itself or a strided
        view into a store). Monotone: a larger value never gets a smaller code."""
        if values.shape[0] != self.n_channels:
            raise ValueError(f"{values.shape[0]} channels to quantise, the quantiser maps "
                             f"{self.n_channels}")
        top = np.float32(self.max_code)
        for c in range(self.n_channels):
            scaled = values[c] - self.low[c]
            scaled *= self.scale[c]
            np.clip(scaled, np.float32(0), top, out=scaled)
            np.rint(scaled, out=scaled)
            np.copyto(out[c], scaled, casting="unsafe")
        return out

    def codes(self, values: np.ndarray) -> np.ndarray:
        """The codes of (n_channels, ...) float32 values, as a new array of the code
        type."""
        return self.codes_into(np.asarray(values, np.float32),
                               np.empty(np.shape(values), self.dtype))

    def values(self, codes: np.ndarray) -> np.ndarray:
        """float32 values the (n_channels, ...) codes stand for (the inverse of the map,
        up to half a step, inside the training range)."""
        codes = np.asarray(codes)
        shape = (-1,) + (1,) * (codes.ndim - 1)
        return (codes.astype(np.float32) / self.scale.reshape(shape)
                + self.low.reshape(shape)).astype(np.float32)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """What a model file keeps (:func:`quantiser_from_arrays` rebuilds it)."""
        return {"low": self.low, "scale": self.scale,
                "bits": np.array(8 * self.dtype.itemsize, np.int64)}

    def __eq__(self, other) -> bool:
        return (isinstance(other, Quantiser) and self.dtype == other.dtype
                and np.array_equal(self.low, other.low)
                and np.array_equal(self.scale, other.scale))

    def __hash__(self) -> int:
        return hash((self.low.tobytes(), self.scale.tobytes(), self.dtype.str))


def quantiser_from_arrays(arrays: dict) -> Quantiser:
    """The quantiser of :meth:`Quantiser.to_arrays` output."""
    bits = int(np.asarray(arrays["bits"]))
    if bits not in (8, 16):
        raise ValueError(f"quantiser bits must be 8 or 16, got {bits}")
    return Quantiser(np.asarray(arrays["low"]), np.asarray(arrays["scale"]),
                     np.uint8 if bits == 8 else np.uint16)


def affine_quantiser(low: np.ndarray, high: np.ndarray, dtype=np.uint8) -> Quantiser:
    """The quantiser that maps ``low`` to the first code and ``high`` to the last, per
    channel (a channel with ``high <= low`` gets one code per unit)."""
    low = np.asarray(low, np.float64)
    high = np.asarray(high, np.float64)
    top = np.iinfo(dtype).max
    width = high - low
    scale = np.where(width > 0, top / np.where(width > 0, width, 1.0), 1.0)
    return Quantiser(low.astype(np.float32), scale.astype(np.float32), dtype)


def fit_images(n_images: int) -> np.ndarray:
    """Which of ``n_images`` training images fit the quantiser: at most
    :data:`FIT_IMAGES`, evenly spread (the same on every worker of a cluster)."""
    return np.unique(np.linspace(0, n_images - 1, min(n_images, FIT_IMAGES)).round()
                     ).astype(np.int64)


def fit_sample(planes: np.ndarray) -> np.ndarray:
    """(n_channels, k) float32: the values of (n_channels, H, W) channel planes at up to
    :data:`FIT_PIXELS` pixels on a regular grid (the quantiser's sample of one image)."""
    n, h, w = planes.shape
    step = max(1, int(np.ceil(np.sqrt(h * w / FIT_PIXELS))))
    return np.ascontiguousarray(planes[:, ::step, ::step].reshape(n, -1), np.float32)


def quantiser_of_samples(samples: Sequence[np.ndarray], dtype=np.uint8) -> Quantiser:
    """The quantiser whose codes span each channel's :data:`QUANTILES` of the
    (n_channels, k) ``samples`` of the :func:`fit_images` (in image order)."""
    pooled = np.concatenate([np.asarray(s, np.float64) for s in samples], axis=1)
    low, high = np.quantile(pooled, QUANTILES, axis=1)
    return affine_quantiser(low, high, dtype)


def fit_quantiser(n_channels: int, images: Sequence, channels_into: Callable,
                  dtype=np.uint8) -> Quantiser:
    """The quantiser of training ``images``: ``channels_into(image, out)`` writes an
    image's (n_channels, H, W) float32 channels (the family's); the codes span each
    channel's :data:`QUANTILES` over :func:`fit_sample` of the :func:`fit_images`."""
    return quantiser_of_samples([image_sample(images[i], n_channels, channels_into)
                                 for i in fit_images(len(images))], dtype)


def image_sample(image, n_channels: int, channels_into: Callable) -> np.ndarray:
    """:func:`fit_sample` of one image's channels, which ``channels_into(image, out)``
    writes to (n_channels, H, W) float32 planes."""
    image = np.asarray(image)
    planes = np.empty((n_channels, *image.shape[:2]), np.float32)
    channels_into(image, planes)
    return fit_sample(planes)
