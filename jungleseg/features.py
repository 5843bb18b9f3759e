"""Feature families: what a split can test, and the packed data store it reads.

A family draws candidate features for a node (through a ``spec`` vector its Numba
drawer understands) and prepares raw data into an :class:`ImageStore`. The trainer
only sees kinds, parameter rows and the store, so new families plug in without
changing it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import cv2
import numpy as np

from . import _features as kernels


@dataclass(frozen=True)
class ImageStore:
    """Images of different sizes packed in one flat float32 array, one plane per channel.

    Image ``i`` takes ``n_channels`` planes of ``(height[i] + 2 pad) x (width[i] + 2 pad)``
    from ``pixels[offset[i]]`` on: the image with a border of ``pad`` pixels that repeat
    its edge, so a probe up to ``pad`` pixels outside reads what clamping to the border
    would (traversal then skips the clamping, see :meth:`Jungle.predict_image`).
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

    def planes(self, image: int) -> np.ndarray:
        """The (n_channels, H, W) channel planes of one image (a view, border excluded)."""
        h, w, p = int(self.height[image]), int(self.width[image]), self.pad
        start = int(self.offset[image])
        block = self.pixels[start:start + self.n_channels * (h + 2 * p) * (w + 2 * p)]
        return block.reshape(self.n_channels, h + 2 * p, w + 2 * p)[:, p:p + h, p:p + w]

    @classmethod
    def build(cls, shapes, n_channels: int, fill, integral: bool = False,
              pad: int = 0) -> "ImageStore":
        """A store of images of ``shapes`` (H, W), each with a border of ``pad`` pixels
        repeating its edge, whose channels ``fill(i, planes)`` writes straight into the
        (n_channels, H, W) view of image ``i`` (no second copy)."""
        pad = int(pad)
        if pad < 0:
            raise ValueError(f"pad must be >= 0, got {pad}")
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
                    n_channels=int(n_channels), pad=pad)
        for i in range(len(shapes)):
            fill(i, store.planes(i))
            store._repeat_edges(i)
        return store.with_integrals() if integral else store

    @classmethod
    def from_images(cls, images, integral: bool = False, pad: int = 0) -> "ImageStore":
        """Pack (H, W) or (H, W, C) arrays with the same channel count, each with a border
        of ``pad`` pixels repeating its edge."""
        images = [np.asarray(im, dtype=np.float32) for im in images]
        images = [im[:, :, None] if im.ndim == 2 else im for im in images]
        if not images:
            raise ValueError("no images to pack")
        n_channels = images[0].shape[2]
        for i, im in enumerate(images):
            if im.ndim != 3 or im.shape[2] != n_channels:
                raise ValueError(f"image {i} has shape {im.shape}; expected (H, W, {n_channels})")
        return cls.build([im.shape[:2] for im in images], n_channels,
                         lambda i, planes: np.copyto(planes, np.moveaxis(images[i], 2, 0)),
                         integral, pad)

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

    def _repeat_edges(self, image: int) -> None:
        """Fill the border of image ``image`` with its edge pixels, as OpenCV's
        BORDER_REPLICATE does (corners take the corner pixel)."""
        p = self.pad
        if not p:
            return
        h, w = int(self.height[image]), int(self.width[image])
        start = int(self.offset[image])
        block = self.pixels[start:start + self.n_channels * (h + 2 * p) * (w + 2 * p)].reshape(
            self.n_channels, h + 2 * p, w + 2 * p)
        block[:, p:p + h, :p] = block[:, p:p + h, p:p + 1]
        block[:, p:p + h, p + w:] = block[:, p:p + h, p + w - 1:p + w]
        block[:, :p] = block[:, p:p + 1]
        block[:, p + h:] = block[:, p + h - 1:p + h]


def integral_planes(planes: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill ``out`` (C, H + 1, W + 1) float64 with the sums of each (H, W) plane over rows
    < r and columns < c."""
    for ch in range(planes.shape[0]):
        out[ch] = cv2.integral(planes[ch], sdepth=cv2.CV_64F)
    return out


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

    Subclasses define ``name``, ``n_params``, ``kinds``, :meth:`spec`, :meth:`to_dict`
    and :meth:`prepare`.
    """

    name = "base"
    n_params = 0
    kinds: tuple = ()  # feature kind codes its nodes may store
    n_channels = 1  # channels of the store it prepares
    needs_integral = False  # whether features read integral images

    def channels(self, image, window=None) -> np.ndarray:
        """The (H, W, n_channels) float32 channels the features read from one image (or
        from a tile of one: ``window = (row0, col0, full_height, full_width)``)."""
        raise NotImplementedError

    def channels_into(self, image, out: np.ndarray, window=None) -> None:
        """Write :meth:`channels` into the (n_channels, H, W) float32 array ``out``, a view
        into a store; families that compute channels in place override this."""
        np.copyto(out, np.moveaxis(self.channels(image, window=window), 2, 0))

    def margin(self, tile) -> int:
        """Pixels of context around ``tile`` needed for its features to equal the whole
        image's."""
        raise NotImplementedError

    def prepare(self, images, pad: int = 0, window=None) -> "ImageStore":
        """A store of raw images converted to channels, with a border of ``pad`` pixels
        (see :class:`ImageStore`); ``window`` as for :meth:`channels`, for a single tile."""
        images = [np.asarray(im) for im in images]
        return ImageStore.build(
            [im.shape[:2] for im in images], self.n_channels,
            lambda i, planes: self.channels_into(images[i], planes, window=window),
            integral=self.needs_integral, pad=pad)

    @property
    def point_reach(self) -> int | None:
        """How far from its pixel a feature may probe, in pixels, when every kind reads
        single pixels at fixed offsets; None when some kind does not (depth probes scale
        with depth, box kinds read boxes). A store padded this far is segmented without
        clamping probes to the image (:meth:`Jungle.predict_image`)."""
        return None

    def spec(self) -> np.ndarray:
        """float64 vector read by the Numba candidate drawer."""
        raise NotImplementedError

    def check_params(self, params: np.ndarray) -> str | None:
        """Why these split-node parameter rows are unsafe for the kernels, or None."""
        return None

    def to_dict(self) -> dict:
        """JSON-friendly description, enough to rebuild the family."""
        raise NotImplementedError

    def __eq__(self, other) -> bool:
        return isinstance(other, FeatureFamily) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "name")
        return f"{type(self).__name__}({args})"


class TabularFeatures(FeatureFamily):
    """Axis-aligned splits on the columns of a numeric matrix."""

    name = "tabular"
    n_params = kernels.N_PARAMS[kernels.FAMILY_TABULAR]
    kinds = (kernels.KIND_TABULAR,)

    def __init__(self, n_columns: int):
        if n_columns < 1:
            raise ValueError(f"n_columns must be >= 1, got {n_columns}")
        self.n_columns = self.n_channels = int(n_columns)

    def spec(self) -> np.ndarray:
        return np.array([kernels.FAMILY_TABULAR, self.n_columns], np.float64)

    def check_params(self, params: np.ndarray) -> str | None:
        return _check_indices(params[:, 0], self.n_columns, "column")

    def to_dict(self) -> dict:
        return {"name": self.name, "n_columns": self.n_columns}

    def prepare(self, X: np.ndarray) -> tuple[ImageStore, Samples]:
        """A store holding X as one image of ``n x 1`` pixels, and one sample per row."""
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] != self.n_columns:
            raise ValueError(f"expected a matrix with {self.n_columns} columns, got shape {X.shape}")
        n = X.shape[0]
        store = ImageStore(pixels=X.T.reshape(-1), offset=np.zeros(1, np.int64),
                           height=np.array([n], np.int32), width=np.ones(1, np.int32),
                           n_channels=self.n_columns)
        samples = Samples(image=np.zeros(n, np.int32), row=np.arange(n, dtype=np.int32),
                          col=np.zeros(n, np.int32))
        return store, samples


def depth_in_metres(depth: np.ndarray, units: str = "auto") -> tuple[np.ndarray, str]:
    """Depth as float32 metres with 0 for background or invalid pixels, and the units read.

    ``units='auto'`` takes integer images (16-bit PNG) and float images whose largest
    value exceeds 20 as millimetres, other float images as metres.
    """
    depth = np.asarray(depth)
    if depth.ndim != 2:
        raise ValueError(f"a depth image must be 2-D (H, W), got shape {depth.shape}")
    if depth.dtype.itemsize == 1:
        raise ValueError("an 8-bit depth image cannot hold depth: expected 16-bit millimetres "
                         "or floating-point metres")
    if units == "auto":
        units = "mm" if depth.dtype.kind in "ui" or float(np.nanmax(depth, initial=0)) > 20 else "m"
    if units not in ("m", "mm"):
        raise ValueError(f"depth units must be 'm', 'mm' or 'auto', got {units!r}")
    metres = depth.astype(np.float32) / (1000.0 if units == "mm" else 1.0)
    if not np.all(np.isfinite(metres)) or np.any(metres < 0):
        raise ValueError("depth must be finite and non-negative (0 marks invalid pixels)")
    if units == "m" and metres.max(initial=0) > 20:
        raise ValueError(f"depth up to {metres.max():.0f} m: is it in millimetres?")
    return metres, units


class DepthFeatures(FeatureFamily):
    """Depth comparisons ``d(x + u/d(x)) - d(x + v/d(x))`` for depth images.

    Parameters
    ----------
    max_offset : float
        Largest probe offset per axis in world metres (a body part a metre away).
    focal_length : float
        Camera focal length in pixels, converting metres to pixel-metres.
    """

    name = "depth"
    n_params = kernels.N_PARAMS[kernels.FAMILY_DEPTH]
    kinds = (kernels.KIND_DEPTH,)

    def __init__(self, max_offset: float = 0.45, focal_length: float = 285.63):
        if not max_offset > 0 or not focal_length > 0:
            raise ValueError("max_offset and focal_length must be positive")
        self.max_offset = float(max_offset)
        self.focal_length = float(focal_length)

    @property
    def reach(self) -> float:
        """Largest offset component in pixel-metres."""
        return self.max_offset * self.focal_length

    def spec(self) -> np.ndarray:
        return np.array([kernels.FAMILY_DEPTH, self.reach], np.float64)

    def to_dict(self) -> dict:
        return {"name": self.name, "max_offset": self.max_offset,
                "focal_length": self.focal_length}

    def channels(self, depth: np.ndarray, units: str = "auto", window=None) -> np.ndarray:
        return depth_in_metres(depth, units)[0][:, :, None]

    def margin(self, tile) -> int:
        # a probe from a pixel at depth d reaches reach / d pixels
        depth = self.channels(np.asarray(tile))[:, :, 0]
        nearest = float(depth[depth > 0].min()) if np.any(depth > 0) else np.inf
        return int(np.ceil(self.reach / nearest)) + 1 if np.isfinite(nearest) else 0


class ColourFeatures(FeatureFamily):
    """Offset features on colour or intensity channels, single pixels or box means.

    Parameters
    ----------
    max_offset : int
        Largest probe offset per axis, in pixels.
    kinds : sequence of str
        Any of 'value', 'difference', 'sum', 'absdiff' and their 'box_' versions.
    max_box : int
        Largest box half-size (a box is up to ``2 max_box + 1`` pixels wide).
    input : {'rgb', 'grey', 'channels'}
        RGB images become CIELab; grey images become the intensity plus Gaussian-smoothed
        copies at ``smoothing_scales``; 'channels' takes (H, W, n_channels) as they are.
    smoothing_scales : sequence of float
        Gaussian sigmas for grey input.
    n_channels : int
        Channel count for 'channels' input.
    position : bool
        Append two channels holding the pixel's row and column as fractions of the image
        height and width, times 100 (the range of CIELab lightness), so that splits can
        use where a pixel is (sky above, road below) as well as what is around it.
    gradient : bool
        For grey input, also the gradient magnitude (Sobel) of each smoothed copy: edge
        strength at every scale, which separates textures of equal mean intensity.
    hessian : bool
        For grey input, also the two eigenvalues (larger first) of the Hessian (3x3 Sobel
        second derivatives) of each smoothed copy: curvature, which marks ridges, blobs and
        the inflection line of an edge.
    centred : bool
        Put the first probe on the pixel itself (u = 0); the second keeps its offset.
        Offset probes place a class boundary up to ``max_offset`` pixels away from the
        image edge that causes it, which sparse scribbles (painted inside regions, never
        on boundaries) cannot correct; centred probes keep boundaries on the edges.
    box_filters : sequence of int
        Box half-sizes r: every converted channel also gets its mean over the
        ``(2 r + 1) x (2 r + 1)`` box around each pixel (clipped to the image, as the box
        kinds are), appended as channels. Pixel kinds then compare box means for the
        price of one read, where box kinds need four reads of the integral images.
    """

    name = "colour"
    n_params = kernels.N_PARAMS[kernels.FAMILY_COLOUR]

    def __init__(self, max_offset: int = 16, kinds=("value", "difference", "absdiff",
                 "box_value", "box_difference"), max_box: int = 4, input: str = "rgb",
                 smoothing_scales=(1.0, 2.0, 4.0), n_channels: int | None = None,
                 position: bool = False, gradient: bool = False, hessian: bool = False,
                 centred: bool = False, box_filters=()):
        unknown = set(kinds) - set(kernels.COLOUR_KINDS)
        if unknown or not kinds:
            raise ValueError(f"unknown feature kinds {sorted(unknown)}; choose from "
                             f"{sorted(kernels.COLOUR_KINDS)}")
        if input not in ("rgb", "grey", "channels"):
            raise ValueError(f"input must be 'rgb', 'grey' or 'channels', got {input!r}")
        if input == "channels" and not (n_channels and n_channels >= 1):
            raise ValueError("input='channels' needs n_channels >= 1")
        if int(max_offset) < 0 or int(max_box) < 0:
            raise ValueError("max_offset and max_box must be >= 0")
        self.box_filters = tuple(int(r) for r in box_filters)
        if any(r < 1 for r in self.box_filters) or len(set(self.box_filters)) != len(
                self.box_filters):
            raise ValueError(f"box_filters must be distinct half-sizes >= 1, got "
                             f"{list(box_filters)}")
        self.max_offset = int(max_offset)
        self.kind_names = tuple(kinds)
        self.max_box = int(max_box)
        self.input = input
        self.smoothing_scales = tuple(float(s) for s in smoothing_scales)
        if (gradient or hessian) and input != "grey":
            raise ValueError("gradient and hessian channels are made for grey input only")
        self.gradient = bool(gradient)
        self.hessian = bool(hessian)
        per_scale = 1 + self.gradient + 2 * self.hessian
        grey_channels = 1 + per_scale * len(self.smoothing_scales)
        self.n_input_channels = {"rgb": 3, "grey": grey_channels}.get(input, n_channels)
        self.position = bool(position)
        self.centred = bool(centred)
        self.n_channels = (self.n_input_channels * (1 + len(self.box_filters))
                           + 2 * self.position)

    @property
    def kinds(self) -> tuple:
        return tuple(kernels.COLOUR_KINDS[k] for k in self.kind_names)

    @property
    def needs_integral(self) -> bool:
        return any(k.startswith("box_") for k in self.kind_names)

    @property
    def point_reach(self) -> int | None:
        return None if self.needs_integral else self.max_offset

    def spec(self) -> np.ndarray:
        return np.array([kernels.FAMILY_COLOUR, self.max_offset, self.n_channels, self.max_box,
                         len(self.kinds), *self.kinds, self.centred], np.float64)

    def check_params(self, params: np.ndarray) -> str | None:
        problem = _check_indices(params[:, 4:6].ravel(), self.n_channels, "channel")
        if problem:
            return problem
        boxes = params[:, 6:8]
        if np.any(boxes < 0) or np.any(boxes != np.round(boxes)) or np.any(boxes > 1 << 20):
            return "box half-sizes must be whole numbers from 0 to 2^20"
        if np.any(np.abs(params[:, :4]) > 1 << 20):
            return "probe offsets must lie within 2^20 pixels"
        return None

    def to_dict(self) -> dict:
        d = {"name": self.name, "max_offset": self.max_offset, "kinds": list(self.kind_names),
             "max_box": self.max_box, "input": self.input,
             "smoothing_scales": list(self.smoothing_scales)}
        if self.input == "channels":
            d["n_channels"] = self.n_input_channels
        if self.position:
            d["position"] = True
        if self.gradient:
            d["gradient"] = True
        if self.hessian:
            d["hessian"] = True
        if self.centred:
            d["centred"] = True
        if self.box_filters:
            d["box_filters"] = list(self.box_filters)
        return d

    def channels(self, image: np.ndarray, window=None) -> np.ndarray:
        """The (H, W, n_channels) float32 channels the features read.

        ``window = (row0, col0, full_height, full_width)`` says that ``image`` is a tile of
        a larger image, so that position channels keep whole-image coordinates. The result
        is a view of (n_channels, H, W) planes, the layout :class:`ImageStore` keeps.
        """
        image = np.asarray(image)
        planes = np.empty((self.n_channels, *image.shape[:2]), np.float32)
        self.channels_into(image, planes, window)
        return np.moveaxis(planes, 0, 2)

    def channels_into(self, image, out: np.ndarray, window=None) -> None:
        """:meth:`channels` written into ``out`` (n_channels, H, W), which may be a strided
        view: OpenCV's filters and NumPy round the same whatever the stride (checked for
        Gaussian, Sobel and box filters), so a padded store holds the same values."""
        image = np.asarray(image)
        n = self.n_input_channels
        self._convert(image, out[:n])
        h, w = out.shape[1:]
        for i, half in enumerate(self.box_filters, start=1):
            for ch in range(n):
                box_mean(out[ch], half, out=out[i * n + ch])
        if self.position:
            row0, col0, full_h, full_w = window or (0, 0, h, w)
            out[-2] = (np.arange(row0, row0 + h, dtype=np.float32)
                       * np.float32(100 / max(full_h - 1, 1)))[:, None]
            out[-1] = (np.arange(col0, col0 + w, dtype=np.float32)
                       * np.float32(100 / max(full_w - 1, 1)))[None, :]

    def margin(self, tile=None) -> int:
        derivative = 1 if self.gradient or self.hessian else 0  # 3x3 kernels
        smoothing = int(np.ceil(4 * max(self.smoothing_scales, default=0))) + 1 + derivative
        box = self.max_box if self.needs_integral else 0
        return (self.max_offset + box + max(self.box_filters, default=0)
                + (smoothing if self.input == "grey" else 0))

    def _convert(self, image: np.ndarray, out: np.ndarray) -> None:
        """Write the converted channels (before box means and positions) into the
        (n_input_channels, H, W) ``out``."""
        if self.input == "rgb":
            if image.ndim != 3 or image.shape[2] not in (3, 4):
                raise ValueError(f"expected an RGB image (H, W, 3), got shape {image.shape}")
            scale = 255.0 if image.dtype == np.uint8 else (65535.0 if image.dtype == np.uint16
                                                          else 1.0)
            rgb = np.ascontiguousarray(image[:, :, :3], dtype=np.float32) / np.float32(scale)
            np.copyto(out, np.moveaxis(cv2.cvtColor(np.clip(rgb, 0, 1), cv2.COLOR_RGB2Lab), 2, 0))
            return
        if self.input == "grey":
            if image.ndim == 3 and image.shape[2] == 1:
                image = image[:, :, 0]
            if image.ndim != 2:
                raise ValueError(f"expected a grey image (H, W), got shape {image.shape}")
            np.copyto(out[0], image, casting="unsafe")
            n_scales = len(self.smoothing_scales)
            smoothed = out[1:1 + n_scales]
            for plane, sigma in zip(smoothed, self.smoothing_scales):
                cv2.GaussianBlur(out[0], (0, 0), sigma, dst=plane,
                                 borderType=cv2.BORDER_REPLICATE)
            derived = out[1 + n_scales:]
            if self.gradient:
                for plane, edges in zip(smoothed, derived):
                    _gradient_magnitude(plane, out=edges)
                derived = derived[n_scales:]
            if self.hessian:
                for k, plane in enumerate(smoothed):
                    _hessian_eigenvalues(plane, out=derived[2 * k:2 * k + 2])
            return
        if image.ndim == 2:
            image = image[:, :, None]
        if image.ndim != 3 or image.shape[2] != self.n_input_channels:
            raise ValueError(f"expected (H, W, {self.n_input_channels}) channels, got "
                             f"{image.shape}")
        np.copyto(out, np.moveaxis(image, 2, 0), casting="unsafe")


def box_mean(values: np.ndarray, half: int, mask: np.ndarray | None = None,
             out: np.ndarray | None = None) -> np.ndarray:
    """Mean of (H, W) or (H, W, C) float32 ``values`` over the ``(2 half + 1)`` square box
    around every pixel, over the pixels of the box inside the image (as the box kinds clip
    boxes) and, where ``mask`` is given, inside the mask (at least one pixel counted).

    Used for box-mean channels and for smoothing class probabilities. OpenCV filters at
    most 512 channels (``CV_CN_MAX``) at once.
    """
    h, w = values.shape[:2]
    size = (2 * half + 1, 2 * half + 1)
    out = cv2.boxFilter(values, cv2.CV_32F, size, dst=out, normalize=False,
                        borderType=cv2.BORDER_CONSTANT).reshape(values.shape)
    if mask is None:  # in-image counts are separable
        count_rows, count_cols = _inside(h, half)[:, None], _inside(w, half)[None, :]
        if out.ndim == 3:
            count_rows, count_cols = count_rows[:, :, None], count_cols[:, :, None]
        out /= count_rows
        out /= count_cols
        return out
    count = cv2.boxFilter((mask > 0).astype(np.float32), cv2.CV_32F, size, normalize=False,
                          borderType=cv2.BORDER_CONSTANT)
    count = np.maximum(count, 1)
    out /= count if out.ndim == 2 else count[:, :, None]
    return out


def _inside(n: int, half: int) -> np.ndarray:
    """How many of the indices i - half .. i + half lie in 0 .. n - 1, for each i."""
    i = np.arange(n)
    return (np.minimum(i + half, n - 1) - np.maximum(i - half, 0) + 1).astype(np.float32)


def _gradient_magnitude(image: np.ndarray, out: np.ndarray) -> None:
    """Sobel gradient magnitude of ``image`` into ``out``.

    With NumPy, whose square, sum and root round the same whatever the alignment:
    ``cv2.magnitude`` rounds the last bit differently when ``out`` is not 32-byte
    aligned, as planes of a store often are."""
    gx = cv2.Sobel(image, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.Sobel(image, cv2.CV_32F, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gx *= gx
    gy *= gy
    gx += gy
    np.sqrt(gx, out=out)


def _hessian_eigenvalues(image: np.ndarray, out: np.ndarray) -> None:
    """The Hessian's eigenvalues (3x3 Sobel second derivatives), larger first, into the two
    planes of ``out``."""
    def d(dx, dy):
        return cv2.Sobel(image, cv2.CV_32F, dx, dy, ksize=3, borderType=cv2.BORDER_REPLICATE)

    dxx, dyy, dxy = d(2, 0), d(0, 2), d(1, 1)
    mean = 0.5 * (dxx + dyy)
    spread = np.sqrt(0.25 * (dxx - dyy) ** 2 + dxy ** 2)
    np.add(mean, spread, out=out[0])
    np.subtract(mean, spread, out=out[1])


def _check_indices(values: np.ndarray, limit: int, what: str) -> str | None:
    if np.any(values < 0) or np.any(values >= limit) or np.any(values != np.round(values)):
        return f"{what} indices must be whole numbers from 0 to {limit - 1}"
    return None


FAMILIES = {f.name: f for f in (TabularFeatures, DepthFeatures, ColourFeatures)}


def family_from_dict(d: dict) -> FeatureFamily:
    """Rebuild a family from :meth:`FeatureFamily.to_dict` output."""
    d = dict(d)
    cls = FAMILIES.get(d.pop("name", None))
    if cls is None:
        raise ValueError(f"unknown feature family in {d!r}")
    return cls(**d)
