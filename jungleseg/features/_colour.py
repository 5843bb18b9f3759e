"""Offset features on colour or intensity channels: single pixels or box means."""
from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import ArrayLike

from .._validation import Integral, Interval, ListOf, Real, StrOptions
from .._workers import thread_map
from . import _kernels as kernels
from ._bank import FILTERS, bank_reach, filter_bank, n_planes
from ._base import FeatureFamily, Window, check_indices
from ._filters import box_mean, gradient_magnitude, hessian_eigenvalues, oriented_edges

#: Inputs a colour family reads.
INPUTS = ("rgb", "grey", "channels")
#: Options that grey and RGB input have, not 'channels' (they are computed from the
#: intensity or the CIELab lightness).
TEXTURE = ("gradient", "hessian", "orientation", "filters")
_FAR = 1 << 20  # the longest probe offset and box half-size the kernels accept


class ColourFeatures(FeatureFamily):
    """Offset features on colour or intensity channels, single pixels or box means.

    Parameters
    ----------
    max_offset : int
        Largest probe offset per axis, in pixels.
    kinds : sequence of str
        Any of ``value``, ``difference``, ``sum``, ``absdiff`` and their ``box_`` versions.
    max_box : int
        Largest box half-size (a box is up to ``2 max_box + 1`` pixels wide).
    input : {'rgb', 'grey', 'channels'}
        RGB images become CIELab; grey images become the intensity plus Gaussian-smoothed
        copies at ``smoothing_scales``; 'channels' takes (H, W, n_channels) as they are.
    smoothing_scales : sequence of float
        Gaussian sigmas for grey input, and for the texture channels of RGB input.
    n_channels : int
        Channel count for 'channels' input.
    position : bool
        Append two channels holding the pixel's row and column as fractions of the image
        height and width, times 100 (the range of CIELab lightness), so that splits can
        use where a pixel is (sky above, road below) as well as what is around it.
    gradient : bool
        For grey input, also the gradient magnitude (Sobel) of each smoothed copy: edge
        strength at every scale, which separates textures of equal mean intensity. For RGB
        input the same of the CIELab lightness smoothed at each scale (grass from road,
        foliage from sky of a similar colour).
    hessian : bool
        For grey input, also the two eigenvalues (larger first) of the Hessian (3x3 Sobel
        second derivatives) of each smoothed copy: curvature, which marks ridges, blobs and
        the inflection line of an edge. For RGB input, of the smoothed lightness.
    orientation : bool
        Also the absolute horizontal and vertical derivatives (3x3 Sobel) of each smoothed
        copy, or of the smoothed lightness for RGB input: which way edges run, not only how
        strong they are, so that the vertical lines of buildings and trunks part from the
        level ones of roads, water and horizons.
    centred : bool
        Put the first probe on the pixel itself (u = 0); the second keeps its offset.
        Offset probes place a class boundary up to ``max_offset`` pixels away from the
        image edge that causes it, which sparse scribbles (painted inside regions, never
        on boundaries) cannot correct; centred probes keep boundaries on the edges.
    filters : sequence of str
        ilastik's filter bank (:mod:`jungleseg.features._bank`): any of 'gaussian', 'log',
        'gradient', 'dog', 'structure' and 'hessian', each at every ``filter_scales``, of
        the intensity (grey input) or the CIELab lightness (RGB input); the two tensors
        give two eigenvalues each, larger first.
    filter_scales : sequence of float
        The bank's Gaussian sigmas, in pixels.
    box_filters : sequence of int
        Box half-sizes r: every converted channel also gets its mean over the
        ``(2 r + 1) x (2 r + 1)`` box around each pixel (clipped to the image, as the box
        kinds are), appended as channels. Pixel kinds then compare box means for the
        price of one read, where box kinds need four reads of the integral images.
    """

    name = "colour"
    n_params = kernels.N_PARAMS[kernels.FAMILY_COLOUR]
    code_type = np.uint8  # 8-bit codes: docs/how-it-works/features.md, "Quantised channels"
    _parameter_constraints = {
        "max_offset": [Interval(Integral, 0, _FAR, closed="both")],
        "kinds": [ListOf(StrOptions(kernels.COLOUR_KINDS), non_empty=True, unique=True)],
        "max_box": [Interval(Integral, 0, _FAR, closed="both")],
        "input": [StrOptions(INPUTS)],
        "smoothing_scales": [ListOf(Interval(Real, 0, None, closed="neither"))],
        "n_channels": [Interval(Integral, 1, None, closed="left"), None],
        "position": ["boolean"],
        "gradient": ["boolean"],
        "hessian": ["boolean"],
        "orientation": ["boolean"],
        "centred": ["boolean"],
        "box_filters": [ListOf(Interval(Integral, 1, _FAR, closed="both"), unique=True)],
        "filters": [ListOf(StrOptions(FILTERS), unique=True)],
        "filter_scales": [ListOf(Interval(Real, 0, 1 << 10, closed="neither"), unique=True)],
    }

    def __init__(self, max_offset: int = 16, kinds=("value", "difference", "absdiff",
                 "box_value", "box_difference"), max_box: int = 4, input: str = "rgb",
                 smoothing_scales=(1.0, 2.0, 4.0), n_channels: int | None = None,
                 position: bool = False, gradient: bool = False, hessian: bool = False,
                 orientation: bool = False, centred: bool = False, box_filters=(),
                 filters=(), filter_scales=()):
        self.max_offset = max_offset
        self.kinds = kinds
        self.max_box = max_box
        self.input = input
        self.smoothing_scales = smoothing_scales
        self.n_channels = n_channels
        self.position = position
        self.gradient = gradient
        self.hessian = hessian
        self.orientation = orientation
        self.centred = centred
        self.box_filters = box_filters
        self.filters = filters
        self.filter_scales = filter_scales
        self._validate()
        if bool(filters) != bool(filter_scales):
            raise ValueError("filters and filter_scales go together: give both or neither")
        if (input == "channels") != (n_channels is not None):
            raise ValueError("n_channels is required with input='channels' and allowed with "
                             "it only")
        for name in TEXTURE:
            if input == "channels" and getattr(self, name):
                raise ValueError(f"{name} channels are made for grey or rgb input only")

    @property
    def n_input_channels(self) -> int:
        """Channels made from the image (before box means and positions)."""
        texture = ((self.gradient + 2 * self.hessian + 2 * self.orientation)
                   * len(self.smoothing_scales) + self._n_bank)
        if self.input == "rgb":
            return 3 + texture
        if self.input == "grey":
            return 1 + len(self.smoothing_scales) + texture
        return self.n_channels

    @property
    def _n_bank(self) -> int:
        """Channels of the filter bank."""
        return n_planes(self.filters, 2) * len(self.filter_scales)

    @property
    def n_store_channels(self) -> int:
        return self.n_input_channels * (1 + len(self.box_filters)) + 2 * self.position

    def for_input(self, input: str, n_channels: int | None = None) -> ColourFeatures:
        """This family for another input: the same options, less those the new input
        does not have (:data:`TEXTURE`)."""
        texture = ({name: () if name == "filters" else False for name in TEXTURE}
                   if input == "channels" else {})
        if input == "channels":
            texture["filter_scales"] = ()
        return self.with_params(input=input, n_channels=n_channels if input == "channels"
                                else None, **texture)

    @property
    def kind_codes(self) -> tuple:
        return tuple(kernels.COLOUR_KINDS[k] for k in self.kinds)

    @property
    def needs_integral(self) -> bool:
        return any(k.startswith("box_") for k in self.kinds)

    @property
    def point_reach(self) -> int | None:
        return None if self.needs_integral else self.max_offset

    @property
    def box_pixels(self) -> int:
        return (2 * self.max_box + 1) ** 2

    def spec(self) -> np.ndarray:
        return np.array([kernels.FAMILY_COLOUR, self.max_offset, self.n_store_channels,
                         self.max_box, len(self.kinds), *self.kind_codes, self.centred],
                        np.float64)

    def check_params(self, params: np.ndarray) -> str | None:
        problem = check_indices(params[:, 4:6].ravel(), self.n_store_channels, "channel")
        if problem:
            return problem
        boxes = params[:, 6:8]
        if np.any(boxes < 0) or np.any(boxes != np.round(boxes)) or np.any(boxes > _FAR):
            return "box half-sizes must be whole numbers from 0 to 2^20"
        if np.any(np.abs(params[:, :4]) > _FAR):
            return "probe offsets must lie within 2^20 pixels"
        return None

    def channels_into(self, image: ArrayLike, out: np.ndarray, window: Window | None = None
                      ) -> None:
        """The channels written into ``out`` (n_store_channels, H, W), which may be a
        strided view: OpenCV's filters and NumPy round the same whatever the stride, so a
        padded store holds the same values. ``window = (row0, col0, full_height,
        full_width)`` says that ``image`` is a tile of a larger image, so that position
        channels keep whole-image coordinates."""
        image = np.asarray(image)
        n = self.n_input_channels
        self._convert(image, out[:n])
        h, w = out.shape[1:]

        def box(job: tuple) -> None:
            i, half, ch = job
            box_mean(out[ch], half, out=out[i * n + ch])

        thread_map(box, [(i, half, ch) for i, half in enumerate(self.box_filters, start=1)
                         for ch in range(n)])
        if self.position:
            row0, col0, full_h, full_w = window or (0, 0, h, w)
            out[-2] = (np.arange(row0, row0 + h, dtype=np.float32)
                       * np.float32(100 / max(full_h - 1, 1)))[:, None]
            out[-1] = (np.arange(col0, col0 + w, dtype=np.float32)
                       * np.float32(100 / max(full_w - 1, 1)))[None, :]

    def margin(self, tile: ArrayLike | None = None) -> int:
        """Context around a tile for its channels and probes to equal the whole image's:
        the probe offset, the largest box, and the smoothing and derivative kernels' reach
        (the same for every tile)."""
        derivative = 1 if any(getattr(self, name) for name in TEXTURE[:3]) else 0  # 3x3
        smoothing = int(np.ceil(4 * max(self.smoothing_scales, default=0))) + 1 + derivative
        box = self.max_box if self.needs_integral else 0
        smoothed = self.input == "grey" or (self.input == "rgb" and derivative)
        bank = max(bank_reach(self.filters, self.filter_scales, (1.0, 1.0)))
        return (self.max_offset + box + max(self.box_filters, default=0)
                + max(smoothing if smoothed else 0, bank))

    def _convert(self, image: np.ndarray, out: np.ndarray) -> None:
        """Write the converted channels (before box means and positions) into the
        (n_input_channels, H, W) ``out``."""
        if self.input == "rgb":
            if image.ndim != 3 or image.shape[2] not in (3, 4):
                raise ValueError(f"expected an RGB image (H, W, 3), got shape {image.shape}")
            scale = 255.0 if image.dtype == np.uint8 else (65535.0 if image.dtype == np.uint16
                                                          else 1.0)
            rgb = np.ascontiguousarray(image[:, :, :3], dtype=np.float32) / np.float32(scale)
            np.copyto(out[:3], np.moveaxis(cv2.cvtColor(np.clip(rgb, 0, 1), cv2.COLOR_RGB2Lab),
                                           2, 0))
            if len(out) > 3:
                smoothed = np.empty((len(self.smoothing_scales), *out.shape[1:]), np.float32)
                self._texture(out[0], smoothed, out[3:])
            return
        if self.input == "grey":
            if image.ndim == 3 and image.shape[2] == 1:
                image = image[:, :, 0]
            if image.ndim != 2:
                raise ValueError(f"expected a grey image (H, W), got shape {image.shape}")
            np.copyto(out[0], image, casting="unsafe")
            n_scales = len(self.smoothing_scales)
            self._texture(out[0], out[1:1 + n_scales], out[1 + n_scales:])
            return
        if image.ndim == 2:
            image = image[:, :, None]
        if image.ndim != 3 or image.shape[2] != self.n_input_channels:
            raise ValueError(f"expected (H, W, {self.n_input_channels}) channels, got "
                             f"{image.shape}")
        for row in range(image.shape[0]):  # a row at a time: 8x faster than one strided copy
            np.copyto(out[:, row], image[row].T, casting="unsafe")

    def _texture(self, intensity: np.ndarray, smoothed: np.ndarray, derived: np.ndarray
                 ) -> None:
        """``intensity`` Gaussian-smoothed at each scale into ``smoothed``, and the
        gradient magnitudes, then the Hessian eigenvalue pairs, then the oriented edge
        pairs, of those into ``derived`` (as many planes as the options ask for)."""
        n_scales = len(self.smoothing_scales)
        gradient = derived[:n_scales if self.gradient else 0]
        hessian = derived[len(gradient):len(gradient) + (2 * n_scales if self.hessian else 0)]
        orientation = derived[len(gradient) + len(hessian):len(derived) - self._n_bank]
        if self.filters:
            per_scale = n_planes(self.filters, 2)
            bank = derived[len(derived) - self._n_bank:]
            thread_map(lambda k: filter_bank(intensity, self.filters, self.filter_scales[k:k + 1],
                                             (1.0, 1.0), bank[k * per_scale:(k + 1) * per_scale]),
                       range(len(self.filter_scales)))

        def scale(k: int) -> None:  # one scale's planes: independent of the other scales'
            plane = smoothed[k]
            cv2.GaussianBlur(intensity, (0, 0), self.smoothing_scales[k], dst=plane,
                             borderType=cv2.BORDER_REPLICATE)
            if self.gradient:
                gradient_magnitude(plane, out=gradient[k])
            if self.hessian:
                hessian_eigenvalues(plane, out=hessian[2 * k:2 * k + 2])
            if self.orientation:
                oriented_edges(plane, out=orientation[2 * k:2 * k + 2])

        thread_map(scale, range(n_scales))
