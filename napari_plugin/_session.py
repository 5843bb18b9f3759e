"""What the widget does, without Qt or napari: layer arrays in, estimators and results out.

Layer data follow napari's conventions: a grey or depth layer is (..., H, W), an RGB layer
(..., H, W, 3 or 4), a multichannel layer (..., H, W, C); leading axes are a stack of
slices. A scribble Labels layer has the same shape without the channel axis, 0 meaning
unpainted. Keeping this apart from the widget keeps the widget thin and this testable.
"""
from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from jungleseg import (
    ColourFeatures,
    DepthFeatures,
    ImageStore,
    Jungle,
    JungleSegmenter,
    VolumeFeatures,
    _jit,
    segment,
    segment_prepared,
)
from jungleseg._workers import ordered_map
from jungleseg.config import Config, load_preset, preset_paths
from jungleseg.segmentation import STREAM_PIXELS, training_values
from jungleseg.segmentation._context import input_stage
from jungleseg.segmentation._segment import label_dtype
from jungleseg.segmentation._volume import labelled_volume, smoothing_halves

#: Image types the widget offers; each says how a layer's array is read.
IMAGE_KINDS = ("grey", "rgb", "channels", "depth")
#: How the widget reads a stack: independent 2-D slices, or 3-D volumes.
MODES = ("2-D slices", "3-D volume")
DEFAULT_PRESET = "napari"
VOLUME_PRESET = "napari_volume"
#: A 16-bit layer read as depth in millimetres has no value under this (10 cm).
NEAREST_DEPTH_MM = 100
#: Channels of at most this many bytes are kept between trainings (live update).
KEPT_CHANNEL_BYTES = 1 << 30


def image_presets() -> dict[str, Path]:
    """The image presets of configs/ by name, the napari default first."""
    paths = {name: p for name, p in preset_paths().items() if name != "uci"}
    return dict(sorted(paths.items(), key=lambda item: item[0] != DEFAULT_PRESET))


def guess_kind(data: np.ndarray, rgb: bool) -> str:
    """The image type a layer most likely holds: RGB if napari says so; depth in
    millimetres for 16-bit integer data with zeros (no depth, or background) and no value
    under :data:`NEAREST_DEPTH_MM` (a depth sensor sees nothing that near; a 16-bit
    micrograph's values run down to its zeros); else grey. ``data`` may be any array with
    ``dtype``, ``ndim`` and slicing (NumPy, dask, zarr)."""
    if rgb:
        return "rgb"
    if data.dtype == np.uint16:
        first = np.asarray(data[(0,) * (data.ndim - 2)])  # a lazy stack is not read whole
        if first.min() == 0 and not np.any((first > 0) & (first < NEAREST_DEPTH_MM)):
            return "depth"
    return "grey"


def running_status(name: str, segmenting: bool, features_kept: bool) -> str:
    """The status line while a run works: training (on the image's kept features, or
    computing them first) or segmenting every slice of layer ``name``; and, when the
    kernels it needs are not compiled yet (the first run after an install), that they
    compile first and about how long that takes, as the command line says."""
    doing = (f"Segmenting every slice of {name}" if segmenting else
             "Training on your strokes" if features_kept else
             "Computing the image's features, then training")
    pending = _jit.to_compile(*(("segment",) if segmenting else ("train", "segment")))
    first = (" First run only: compiling kernels, about "
             f"{sum(_jit.COMPILE_SECONDS[c] for c in pending)} s more." if pending else "")
    return f"{doing}...{first} (press Cancel to stop)"


def spatial_ndim(kind: str, volume: bool = False) -> int:
    """Trailing axes of one slice: (H, W) or (H, W, channels); of one volume with
    ``volume``: (D, H, W) or (D, H, W, channels)."""
    return (3 if kind in ("rgb", "channels") else 2) + bool(volume)


def leading_shape(data_shape: tuple, kind: str, volume: bool = False) -> tuple:
    """The stack axes in front of one slice (or volume)."""
    n = spatial_ndim(kind, volume)
    if len(data_shape) < n:
        axes = ("(D, " if volume else "(") + ("H, W, channels)" if kind in ("rgb", "channels")
                                              else "H, W)")
        what = f"{kind} volumes" if volume else f"{kind} images"
        raise ValueError(f"{what} need at least {n} axes {axes}, got shape {data_shape}")
    if kind == "rgb" and data_shape[-1] not in (3, 4):
        raise ValueError(f"an RGB layer's last axis must have 3 or 4 values, got {data_shape}")
    return tuple(data_shape[:len(data_shape) - n])


def slice_indices(data_shape: tuple, kind: str, first: tuple = (), volume: bool = False
                  ) -> list[tuple]:
    """Indices of every slice (or volume) of a stack, ``first`` (the visible one) first."""
    lead = leading_shape(data_shape, kind, volume)
    indices = list(itertools.product(*(range(n) for n in lead)))
    first = tuple(first)
    if first in indices:
        indices.remove(first)
        indices.insert(0, first)
    return indices


def estimator(preset: Config, kind: str, n_channels: int, n_estimators: int, max_width: int,
              max_depth: int, max_offset: float, seed: int | None = None,
              smoothing: int | None = None) -> JungleSegmenter:
    """An unfitted segmenter: the preset with the widget's knobs and features for ``kind``.

    A colour preset keeps its kinds and box sizes for grey, RGB and multichannel layers
    (:meth:`ColourFeatures.for_input`); a depth layer always gets depth features.
    ``max_offset`` is in pixels for colour features and in metres for depth.
    """
    family = preset.features()
    if kind == "depth":
        focal = family.focal_length if isinstance(family, DepthFeatures) else None
        family = DepthFeatures(float(max_offset), *([focal] if focal else []))
    else:
        colour = family if isinstance(family, ColourFeatures) else ColourFeatures()
        family = colour.for_input(kind, int(n_channels) if kind == "channels" else None
                                  ).with_params(max_offset=max(1, int(round(max_offset))))
    return _with_knobs(preset.estimator(), family, n_estimators, max_width, max_depth, seed,
                       smoothing)


def _with_knobs(model: JungleSegmenter, family, n_estimators: int, max_width: int,
                max_depth: int, seed: int | None, smoothing: int | None) -> JungleSegmenter:
    """``model`` with ``family`` and the widget's knobs (seed and smoothing where given)."""
    model.set_params(features=family, n_estimators=int(n_estimators),
                     max_width=int(max_width), max_depth=int(max_depth))
    if seed is not None:
        model.set_params(random_state=int(seed))
    if smoothing is not None:
        model.set_params(smoothing=int(smoothing))
    return model


def painted_indices(image_shape: tuple, scribbles: np.ndarray, kind: str,
                    volume: bool = False) -> list[tuple]:
    """Indices of the slices (or, with ``volume``, volumes) with paint on them; reads only
    the scribbles.

    Raises ValueError naming the problem: shapes that do not match, nothing painted, or
    fewer than two classes painted.
    """
    scribbles = np.asarray(scribbles)
    lead = leading_shape(image_shape, kind, volume)
    expected = tuple(image_shape[:len(lead) + 2 + bool(volume)])
    if scribbles.shape != expected:
        raise ValueError(f"the labels layer has shape {scribbles.shape} but the {kind} image "
                         f"needs labels of shape {expected}")
    if not np.issubdtype(scribbles.dtype, np.integer):
        raise ValueError(f"labels must be integers, got {scribbles.dtype}")
    indices = [i for i in slice_indices(image_shape, kind, volume=volume)
               if np.any(scribbles[i])]
    if not indices:
        raise ValueError("no labels painted: paint a few strokes of at least two classes "
                         "(label 0 means unpainted)")
    classes = np.unique(np.concatenate([np.unique(scribbles[i]) for i in indices]))
    classes = classes[classes != 0]
    if classes.size < 2:
        raise ValueError(f"only class {int(classes[0])} is painted: paint at least two classes")
    return indices


def train(model: JungleSegmenter, image: np.ndarray, scribbles: np.ndarray, kind: str,
          progress: Callable[[int, int], None] | None = None,
          indices: list[tuple] | None = None, channels: dict | None = None
          ) -> dict[tuple, tuple[ImageStore, int]]:
    """Fit ``model`` on every painted slice (only those are read from ``image``);
    ``progress(level, n_nodes)`` as in ``fit``; ``indices``, the painted slices if the
    caller has found them already (:func:`painted_indices`).

    ``channels``, a dict the caller keeps between trainings (live update retrains after
    every stroke), holds the last training's checked slices and their channels. They are
    used again when the same features read slices of the same content (compared by
    digest, so an edited image is never served stale channels); otherwise they are
    replaced. The model is the same either way.

    Returns the painted slices' channels as ``{slice index: (store, position)}``, for
    :func:`segment_stack` to segment those slices without computing them again.
    """
    scribbles = np.asarray(scribbles)
    if indices is None:
        indices = painted_indices(image.shape, scribbles, kind)
    features = model.features  # the estimator() of a preset names its features
    pad = features.point_reach or 0  # training and segment_prepared read probes unclamped

    def prepare(raw: list[np.ndarray]) -> tuple[list[np.ndarray], ImageStore]:
        # checked (NaN, complex, float RGB outside [0, 1]) and in one unit, as fit reads them
        slices, _ = training_values(raw, features)  # coded as fit codes them
        return slices, features.prepare_fitted(slices, pad=pad)

    slices, store = _kept_channels(features, pad, [np.asarray(image[i]) for i in indices],
                                   prepare, channels)
    model.fit(slices, [scribbles[i] for i in indices], progress=progress, store=store)
    return {index: (store, k) for k, index in enumerate(indices)}


def _kept_channels(features, pad: int, raw: list[np.ndarray], prepare: Callable,
                   channels: dict | None) -> tuple[list[np.ndarray], ImageStore]:
    """``prepare(raw)``: the values fit reads and their channels, taken from ``channels``
    (see :func:`train`) when they were computed for the same features and content, and
    kept there for the next training when they take at most :data:`KEPT_CHANNEL_BYTES`."""
    key = _channels_key(features, pad, raw) if channels is not None else None
    if key is not None and channels.get("key") == key:
        return channels["slices"], channels["store"]
    values, store = prepare(raw)
    if channels is not None:
        channels.clear()  # one image's channels at a time: memory stays bounded
        if key is not None and store.pixels.nbytes <= KEPT_CHANNEL_BYTES:
            channels.update(key=key, slices=values, store=store)
    return values, store


def _channels_key(features, pad: int, slices: list[np.ndarray]) -> tuple | None:
    """What the channels of ``slices`` depend on: the features' settings, the store's
    border, and each slice's shape, type and content (a SHA-256 digest: hardware-accelerated
    on most CPUs, a few times faster than BLAKE2 there); None for slices that are not
    numbers (never kept: :func:`training_values` says what is wrong)."""
    if any(a.dtype.kind not in "biuf" for a in slices):
        return None
    content = tuple((a.shape, a.dtype.str,
                     hashlib.sha256(np.ascontiguousarray(a).view(np.uint8)).digest())
                    for a in slices)
    return type(features).__name__, repr(sorted(features.get_params().items())), pad, content


def inference_knobs(jungle: Jungle) -> tuple[int, float, float]:
    """The smoothing, soft-routing factor and prior power a loaded model segments with:
    its own, but soft routing 0 for a model without node spreads and prior power 0 for
    one without class shares (models written before those existed)."""
    params = jungle.params
    return (int(params.get("smoothing", 0)),
            float(params.get("soft", 0)) if jungle.can_route_softly else 0.0,
            float(params.get("prior_power", 0)) if "class_shares" in jungle.metadata else 0.0)


def model_kind(jungle: Jungle) -> str:
    """The image type a model reads (an auto-context model: its first stage)."""
    family = input_stage(jungle).family
    if isinstance(family, DepthFeatures):
        return "depth"
    if isinstance(family, ColourFeatures):
        return family.input
    if isinstance(family, VolumeFeatures):
        return "grey" if family.n_channels == 1 else "channels"
    raise ValueError(f"a {family.name} model does not segment images")


def check_layer(kind: str, data_shape: tuple, rgb: bool, n_channels: int | None = None,
                name: str = "the layer") -> None:
    """Raise ValueError unless a layer (napari's ``rgb`` flag and shape) holds ``kind``
    images, with ``n_channels`` channels where given."""
    if rgb != (kind == "rgb"):
        what = "an RGB layer" if rgb else "not an RGB layer"
        raise ValueError(f"{name} is {what}, but {kind} images are expected")
    leading_shape(data_shape, kind)
    if kind == "channels" and n_channels is not None and data_shape[-1] != n_channels:
        raise ValueError(f"{name} has {data_shape[-1]} channels (last axis), but "
                         f"{n_channels} are expected")


def segment_stack(jungle: Jungle, image: np.ndarray, first: tuple = (),
                  smoothing: int | None = None, prepared: dict | None = None
                  ) -> Iterator[tuple[tuple, np.ndarray, np.ndarray]]:
    """Segment every slice of ``image``, the slice ``first`` before the others.

    Yields ``(index, labels, probabilities)`` per slice, so a caller can show the visible
    slice at once and stop between slices. The first slice is segmented alone, on every
    thread; slices of at most :data:`jungleseg.segmentation.STREAM_PIXELS` pixels then go
    several at a time, each on one thread, as :func:`jungleseg.segment_frames` does
    (faster for small slices); larger ones one at a time. ``image`` may be lazy (dask,
    zarr): only the slices being segmented are read. ``smoothing`` overrides the model's
    (see :func:`jungleseg.segment`). Slices in ``prepared`` (from :func:`train`) are
    segmented from their stored channels.
    """
    kind = model_kind(jungle)
    lead = leading_shape(image.shape, kind)
    height, width = image.shape[len(lead):len(lead) + 2]
    held = label_dtype(jungle)  # a byte a pixel, as trained (a loaded model's are int64)
    indices = iter(slice_indices(image.shape, kind, first))

    def segmented(index: tuple) -> tuple[tuple, np.ndarray, np.ndarray]:
        if prepared and index in prepared:
            labels, proba = segment_prepared(jungle, *prepared[index], smoothing=smoothing)
        else:
            labels, proba = segment(jungle, np.asarray(image[index]), smoothing=smoothing)
        return index, labels.astype(held, copy=False), proba

    for index in indices:  # the visible slice: at once, on every thread
        yield segmented(index)
        break
    yield from (ordered_map(segmented, indices) if height * width <= STREAM_PIXELS
                else map(segmented, indices))


def uncertainty(proba: np.ndarray) -> np.ndarray:
    """1 - the winning class's probability: 0 where the jungle is sure.

    A running maximum over the class planes, much faster than ``proba.max(axis=-1)``
    over a short last axis (it runs on the interface thread)."""
    top = np.array(proba[..., 0], np.float32)
    for c in range(1, proba.shape[-1]):
        np.maximum(top, proba[..., c], out=top)
    return np.subtract(np.float32(1), top, out=top)


def is_volume_model(jungle: Jungle) -> bool:
    """Whether a model segments 3-D volumes."""
    return jungle.family.spatial_ndim == 3


def has_voxel_size(scale) -> bool:
    """Whether a layer's ``scale`` (its last three axes) gives a voxel size: napari's
    default scale, 1 on every axis, says nothing about the voxels."""
    return not np.allclose(np.asarray(scale, float)[-3:], 1.0)


def volume_preset(preset: Config) -> Config:
    """``preset``, or the widget's volume preset unless ``preset`` names volume features."""
    return preset if isinstance(preset.features(), VolumeFeatures) else load_preset(
        VOLUME_PRESET)


def offset_unit(preset: Config, scale) -> float:
    """The length, in the preset's units, of one unit of the widget's 3-D offset range for
    a layer of ``scale``: 1 where the layer gives its voxel size (offsets in the layer's
    scale units), else the preset's in-plane voxel size (offsets in voxels)."""
    return 1.0 if has_voxel_size(scale) else float(
        volume_preset(preset).features().spacing[-1])


def volume_estimator(preset: Config, n_channels: int, spacing: tuple, n_estimators: int,
                     max_width: int, max_depth: int, max_offset: float,
                     seed: int | None = None, smoothing: int | None = None
                     ) -> JungleSegmenter:
    """An unfitted volume segmenter: the preset (the volume preset unless ``preset`` names
    volume features) with the widget's knobs, ``n_channels`` input channels, the layer's
    voxel ``spacing`` (z, y, x) and ``max_offset`` in the spacing's units.

    A ``spacing`` of 1 on every axis (a layer without a voxel size) is read as isotropic
    voxels of the preset's in-plane size, and ``max_offset`` as voxels: the preset's
    offsets and filter scales then reach as far in voxels as in a stack of that voxel
    size, not a tenth of a voxel."""
    preset = volume_preset(preset)
    unit = offset_unit(preset, spacing)
    if unit != 1.0:
        spacing = (unit,) * 3
    family = preset.features().with_params(spacing=tuple(float(s) for s in spacing),
                                           n_channels=int(n_channels),
                                           max_offset=float(max_offset) * unit)
    return _with_knobs(preset.estimator(), family, n_estimators, max_width, max_depth, seed,
                       smoothing)


def check_model_input(jungle: Jungle, kind: str, data_shape: tuple, rgb: bool, name: str
                      ) -> None:
    """Raise ValueError, naming the layer ``name``, unless the model can segment an input
    of ``kind`` and ``data_shape`` (channels last; ``rgb``: napari's flag)."""
    expected = model_kind(jungle)
    n_channels = data_shape[-1] if kind == "channels" else 1
    family = input_stage(jungle).family
    if is_volume_model(jungle):
        if len(data_shape) < spatial_ndim(expected, volume=True):
            raise ValueError(f"the model segments 3-D volumes, but {name} has shape "
                             f"{tuple(data_shape)}: choose a volume layer or a 2-D model")
        if n_channels != family.n_channels:
            raise ValueError(f"the model reads {family.n_channels} channel(s), but {name} "
                             f"has {n_channels}")
    elif "channels" in (kind, expected):
        wanted = family.n_input_channels if expected == "channels" else 1
        if kind != expected or n_channels != wanted:
            raise ValueError(f"the model reads {wanted} channel(s) of {expected} images, but "
                             f"{name} gives {n_channels} ({kind})")
    else:
        check_layer(expected, data_shape, rgb, name=name)


def train_volumes(model: JungleSegmenter, image, scribbles: np.ndarray, kind: str,
                  progress: Callable[[int, int], None] | None = None,
                  indices: list[tuple] | None = None, channels: dict | None = None
                  ) -> dict[tuple, tuple[ImageStore, int]]:
    """Fit a volume ``model`` on the paint across every painted volume of ``image``
    (..., D, H, W[, C]); returns ``{volume index: (store, position)}`` like :func:`train`,
    so that :func:`segment_volumes` segments them from the channels computed here.
    ``channels``: kept between trainings, as for :func:`train` (the channels of a volume
    take most of a training's time)."""
    scribbles = np.asarray(scribbles)
    if indices is None:
        indices = painted_indices(np.shape(image), scribbles, kind, volume=True)
    features = model.features
    volumes, store = _kept_channels(features, 0, [np.asarray(image[i]) for i in indices],
                                    lambda raw: (raw, features.prepare(raw)), channels)
    model.fit(volumes, [scribbles[i] for i in indices], progress=progress, store=store)
    return {index: (store, k) for k, index in enumerate(indices)}


def segment_volumes(jungle: Jungle, image, first: tuple = (), first_slice: int | None = None,
                    smoothing: int | None = None, prepared: dict | None = None
                    ) -> Iterator[tuple[tuple, slice, np.ndarray, np.ndarray]]:
    """Segment every volume of ``image``, the volume ``first`` before the others.

    Yields ``(index, slices, labels, probabilities)``: of the visible volume, first the
    slice ``first_slice`` alone (traversing one slice, and the few the smoothing box
    reads, costs little once the channels are computed), then the whole volume; of the
    others, the whole volume. Volumes in ``prepared`` (from :func:`train_volumes`) reuse
    their channels. The parts equal the whole volume's result.
    """
    kind = model_kind(jungle)
    held = label_dtype(jungle)
    smoothing = jungle.params.get("smoothing", 0) if smoothing is None else int(smoothing)
    for index in slice_indices(np.shape(image), kind, first, volume=True):
        if prepared and index in prepared:
            store, position = prepared[index]
        else:
            store, position = jungle.family.prepare([np.asarray(image[index])]), 0
        depth = int(store.depth[position])
        if index == tuple(first) and first_slice is not None and depth > 1:
            z = min(max(int(first_slice), 0), depth - 1)
            reach = smoothing_halves(jungle.family, smoothing)[0]
            lo, hi = max(z - reach, 0), min(z + reach + 1, depth)
            labels, proba = labelled_volume(jungle, store, position, smoothing,
                                            np.arange(lo, hi))
            yield (index, slice(z, z + 1), labels[z - lo:z - lo + 1].astype(held, copy=False),
                   proba[z - lo:z - lo + 1])
        labels, proba = labelled_volume(jungle, store, position, smoothing)
        yield index, slice(0, depth), labels.astype(held, copy=False), proba
