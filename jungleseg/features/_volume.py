"""Offset features on 3-D volumes, with probes drawn in physical units.

A volume is (D, H, W) for one channel or (D, H, W, C) for several (z, y, x order), with a
voxel spacing per axis (z, y, x), e.g. (0.3, 0.1, 0.1) micrometres for a confocal stack:
offsets, smoothing scales and box sizes are all given in the spacing's units, so a probe
reaches as far along z as within a slice even when slices are three times farther apart.

The store is a store of volumes (:class:`ImageStore` with ``ndim == 3``): each channel a
taller plane of slices, padded as far as the probes reach along every axis, so that the
kinds (codes in :mod:`._kernels`) read their probes at fixed steps and the trainer and
traversal address voxels as (image, row, column) like pixels. Box means are channels
(separable box filters), read at one voxel like any other channel (``docs/results/speed.md``
has the measurement against 3-D integral images).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._validation import Integral, Interval, ListOf, Real, StrOptions
from . import _kernels as kernels
from ._bank import FILTERS, bank_reach, filter_bank, n_planes
from ._base import FeatureFamily, Window, check_indices
from ._filters import box_mean_volume, gaussian_kernel, gaussian_volume, gradient_magnitude_volume
from ._store import ImageStore

_AXES = "zyx"


class VolumeFeatures(FeatureFamily):
    """Offset features on the voxels of 3-D volumes, of one channel or several.

    Parameters
    ----------
    spacing : sequence of 3 floats
        Voxel size along z, y and x (e.g. micrometres): offsets, scales and boxes below are
        in these units and become voxels per axis.
    max_offset : float
        Largest probe offset per axis, in the spacing's units.
    kinds : sequence of str
        Any of 'value', 'difference', 'sum' and 'absdiff' (see
        :class:`~jungleseg.ColourFeatures`), on voxels.
    n_channels : int
        Channels of the input: (D, H, W) volumes for 1, (D, H, W, n_channels) otherwise.
    smoothing_scales : sequence of float
        Gaussian sigmas, in the spacing's units: every input channel also gets a smoothed
        copy at each.
    gradient : bool
        Also the gradient magnitude (central differences, in intensity per unit of the
        spacing) of each smoothed copy: edge strength at every scale.
    box_filters : sequence of float
        Box half-sizes, in the spacing's units: every channel above also gets its mean over
        the box around each voxel (clipped to the volume), as channels.
    centred : bool
        Put the first probe on the voxel itself (u = 0); the second keeps its offset.
    filters : sequence of str
        ilastik's filter bank in 3-D (:mod:`jungleseg.features._bank`) of each input
        channel: any of 'gaussian', 'log', 'gradient', 'dog', 'structure' and 'hessian', at
        every ``filter_scales``; the tensors give three eigenvalues each, larger first.
    filter_scales : sequence of float
        The bank's Gaussian sigmas, in the spacing's units: ``scale / spacing`` voxels
        along each axis, derivatives per unit of the spacing.

    Examples
    --------
    >>> family = VolumeFeatures(spacing=(0.3, 0.1, 0.1), max_offset=1.0)
    >>> family.reach
    (3, 10, 10)
    """

    name = "volume"
    n_params = kernels.N_PARAMS[kernels.FAMILY_VOLUME]
    spatial_ndim = 3
    _parameter_constraints = {
        "spacing": [ListOf(Interval(Real, 0, None, closed="neither"), non_empty=True)],
        "max_offset": [Interval(Real, 0, 1 << 16, closed="both")],
        "kinds": [ListOf(StrOptions(kernels.VOLUME_KINDS), non_empty=True, unique=True)],
        "n_channels": [Interval(Integral, 1, 1 << 10, closed="both")],
        "smoothing_scales": [ListOf(Interval(Real, 0, 1 << 16, closed="neither"))],
        "gradient": ["boolean"],
        "box_filters": [ListOf(Interval(Real, 0, 1 << 16, closed="neither"), unique=True)],
        "centred": ["boolean"],
        "filters": [ListOf(StrOptions(FILTERS), unique=True)],
        "filter_scales": [ListOf(Interval(Real, 0, 1 << 16, closed="neither"), unique=True)],
    }

    def __init__(self, spacing=(1.0, 1.0, 1.0), max_offset: float = 8.0,
                 kinds=("value", "difference", "absdiff"), n_channels: int = 1,
                 smoothing_scales=(1.0, 2.0), gradient: bool = True, box_filters=(),
                 centred: bool = True, filters=(), filter_scales=()):
        self.spacing = spacing
        self.max_offset = max_offset
        self.kinds = kinds
        self.n_channels = n_channels
        self.smoothing_scales = smoothing_scales
        self.gradient = gradient
        self.box_filters = box_filters
        self.centred = centred
        self.filters = filters
        self.filter_scales = filter_scales
        self._validate()
        if bool(filters) != bool(filter_scales):
            raise ValueError("filters and filter_scales go together: give both or neither")
        if len(self.spacing) != 3:
            raise ValueError(f"spacing needs 3 values (z, y, x), got {list(self.spacing)}")
        self.spacing = tuple(float(s) for s in self.spacing)

    def _voxels(self, length: float) -> tuple[int, int, int]:
        """A physical length in whole voxels along z, y and x (rounded as the drawer
        rounds offsets)."""
        return tuple(int(math.floor(length / s + 0.5)) for s in self.spacing)

    @property
    def reach(self) -> tuple[int, int, int]:
        """How far a probe may lie from its voxel along z, y and x, in voxels."""
        return self._voxels(self.max_offset)

    @property
    def n_input_channels(self) -> int:
        return self.n_channels

    @property
    def _per_input(self) -> int:
        """Converted channels per input channel: itself, smoothed copies, gradients, the
        filter bank."""
        return (1 + len(self.smoothing_scales) * (1 + self.gradient)
                + n_planes(self.filters, 3) * len(self.filter_scales))

    @property
    def n_store_channels(self) -> int:
        return self.n_channels * self._per_input * (1 + len(self.box_filters))

    @property
    def kind_codes(self) -> tuple:
        return tuple(kernels.VOLUME_KINDS[k] for k in self.kinds)

    def spec(self) -> np.ndarray:
        return np.array([kernels.FAMILY_VOLUME, self.max_offset, *self.spacing,
                         self.n_store_channels, len(self.kinds), *self.kind_codes,
                         self.centred], np.float64)

    def check_params(self, params: np.ndarray) -> str | None:
        problem = check_indices(params[:, 6:8].ravel(), self.n_store_channels, "channel")
        if problem:
            return problem
        offsets = params[:, :6].reshape(-1, 2, 3)
        reach = np.array(self.reach, np.float64)
        if np.any(offsets != np.round(offsets)) or np.any(np.abs(offsets) > reach):
            return (f"probe offsets must be whole voxels within the reach {self.reach} "
                    f"(z, y, x) of max_offset {self.max_offset} at spacing {self.spacing}")
        return None

    def check_store(self, store: ImageStore) -> None:
        """Raise ValueError unless ``store`` holds volumes of these channels padded as far
        as the probes reach (the kinds read probes unclamped)."""
        _, reach_y, reach_x = self.reach
        if store.ndim != 3:
            raise ValueError("a volume model reads stores of volumes, not of 2-D images")
        if (store.n_channels != self.n_store_channels or store.pad_z < self.reach[0]
                or store.pad < max(reach_y, reach_x)):
            raise ValueError("the store was not prepared by these volume features")

    def prepare(self, images: Sequence[ArrayLike], pad: int = 0, window: Window | None = None
                ) -> ImageStore:
        """A store of volumes converted to channels, padded at least as far as the probes
        reach (``pad`` may ask for a wider border in y and x)."""
        volumes = [self._checked(np.asarray(v)) for v in images]
        reach_z, reach_y, reach_x = self.reach
        return ImageStore.build([v.shape[:3] for v in volumes], self.n_store_channels,
                                lambda i, planes: self.channels_into(volumes[i], planes),
                                pad=max(int(pad), reach_y, reach_x), pad_z=reach_z)

    def channels(self, image: ArrayLike, window: Window | None = None) -> np.ndarray:
        """The (D, H, W, n_store_channels) float32 channels of one volume."""
        volume = self._checked(np.asarray(image))
        planes = np.empty((self.n_store_channels, *volume.shape[:3]), np.float32)
        self.channels_into(volume, planes)
        return np.moveaxis(planes, 0, 3)

    def _checked(self, volume: np.ndarray) -> np.ndarray:
        """``volume`` as (D, H, W, C), or a ValueError naming what is wrong with its shape."""
        if volume.ndim == 3 and self.n_channels == 1:
            volume = volume[..., None]
        if volume.ndim != 4 or volume.shape[3] != self.n_channels:
            expected = "(D, H, W)" if self.n_channels == 1 else f"(D, H, W, {self.n_channels})"
            what = "a 2-D image" if volume.ndim == 2 + (self.n_channels > 1) else "an array"
            raise ValueError(f"this volume model reads {expected} volumes; got {what} of "
                             f"shape {volume.shape}")
        return volume

    def channels_into(self, image: ArrayLike, out: np.ndarray, window: Window | None = None
                      ) -> None:
        """The channels of a (D, H, W[, C]) volume written into the (n_store_channels, D,
        H, W) ``out`` (may be a strided view): per input channel the intensity, its smoothed
        copies, their gradient magnitudes and the filter bank; then the box means of all of
        them."""
        volume = self._checked(np.asarray(image))
        n = self.n_channels * self._per_input
        n_scales = len(self.smoothing_scales)
        for c in range(self.n_channels):
            block = out[c * self._per_input:(c + 1) * self._per_input]
            source = np.ascontiguousarray(volume[..., c], np.float32)
            block[0] = source
            for k, sigma in enumerate(self.smoothing_scales):
                gaussian_volume(source, tuple(sigma / s for s in self.spacing), block[1 + k])
                if self.gradient:
                    gradient_magnitude_volume(block[1 + k], self.spacing,
                                              block[1 + n_scales + k])
            if self.filters:
                filter_bank(source, self.filters, self.filter_scales, self.spacing,
                            block[1 + n_scales * (1 + self.gradient):])
        for i, half in enumerate(self.box_filters, start=1):
            halves = self._voxels(half)
            for ch in range(n):
                box_mean_volume(np.ascontiguousarray(out[ch]), halves, out[i * n + ch])

    def margin(self, tile: ArrayLike | None = None) -> tuple[int, int, int]:
        """Context around a tile, in voxels along z, y and x, for its channels and probes to
        equal the whole volume's: probe reach, largest box and smoothing radius (plus one
        voxel for the gradient's differences)."""
        largest = max(self.smoothing_scales, default=0.0)
        smoothing = [len(gaussian_kernel(largest / s)) // 2 + self.gradient if largest else 0
                     for s in self.spacing]
        bank = bank_reach(self.filters, self.filter_scales, self.spacing)
        box = self._voxels(max(self.box_filters, default=0.0))
        return tuple(r + b + max(g, f) for r, b, g, f in zip(self.reach, box, smoothing, bank))

    @staticmethod
    def planar_nodes(kind: np.ndarray, params: np.ndarray, slice_rows: int
                     ) -> tuple[np.ndarray, np.ndarray]:
        """The split nodes of a volume model as the colour point kinds that read the same
        voxels on a store's taller planes of ``slice_rows`` rows per slice (H + 2 pad): an
        offset (dz, dy, dx) is ``dz slice_rows + dy`` rows and ``dx`` columns. So the 2-D
        traversal kernel, which reads probes at fixed steps, segments a volume slice by
        slice (:meth:`Jungle.predict_volume`). Leaves keep their rows."""
        volume = kind >= kernels.KIND_VOLUME_VALUE
        planar_kind = np.where(volume, kind - kernels._VOLUME_SHIFT, kind).astype(np.uint8)
        planar = np.zeros_like(params, dtype=np.float64)
        planar[:, 0] = params[:, 0] * slice_rows + params[:, 1]
        planar[:, 1] = params[:, 2]
        planar[:, 2] = params[:, 3] * slice_rows + params[:, 4]
        planar[:, 3] = params[:, 5]
        planar[:, 4:6] = params[:, 6:8]
        if np.abs(planar[:, :4]).max(initial=0) >= 1 << 24:
            raise ValueError("slices too large for exact float32 row offsets")
        return planar_kind, np.where(volume[:, None], planar, params).astype(np.float32)
