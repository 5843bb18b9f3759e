"""Segment whole images, tiles of large images, or images of a prepared store with a
trained (or loaded) jungle."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator

import numpy as np
from numpy.typing import ArrayLike

from .._validation import Integral, Interval, Real, check_params
from .._workers import ordered_map
from ..features import ColourFeatures, DepthFeatures, ImageStore
from ..jungle import Jungle
from ..jungle._model import PRIOR_POWER, checked_jungle
from ._context import chain_margin, chain_store, input_stage
from ._input import checked_image
from ._smoothing import (
    SMOOTHING_CONSTRAINTS,
    guided_smoothing,
    smooth_probabilities,
    smoothing_reach,
)
from ._volume import labelled_volume, segment_volume

#: The model parameters segmentation reads (checked when a model file is loaded).
SEGMENTATION_CONSTRAINTS = {
    **SMOOTHING_CONSTRAINTS,
    "background": [Interval(Integral, 0, 65535, closed="both")],
    "soft": [Interval(Real, 0, 1e6, closed="both")],
    "soft_epsilon": [Interval(Real, 0, 1, closed="left")],
    "prior_power": PRIOR_POWER,
}


def with_inference(jungle: Jungle, soft: float | None = None,
                   soft_epsilon: float | None = None, prior_power: float | None = None
                   ) -> Jungle:
    """``jungle`` itself, or, where any setting is given, a copy (the same DAGs) that
    routes and labels with it; ValueError for bad values, for soft routing of a model that
    records no node spreads, or for a prior power asked of a model that records no class
    shares.

    Parameters
    ----------
    jungle : Jungle
        A trained or loaded model.
    soft, soft_epsilon : float, optional
        Soft-routing factor (0: hard routing) and pruning threshold (a split whose
        minor share is at most ``soft_epsilon`` steps hard).
    prior_power : float, optional
        Labels maximise ``probability / share ** prior_power`` (see
        :meth:`Jungle.label_weights`): 0 the most probable class, up to 1 class
        frequencies divided out.

    Returns
    -------
    Jungle

    Examples
    --------
    >>> import numpy as np
    >>> from jungleseg import JungleSegmenter
    >>> rng = np.random.default_rng(0)
    >>> image = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
    >>> labels = (np.arange(32)[:, None] >= 28).repeat(32, axis=1).astype(np.uint8) + 1
    >>> jungle = JungleSegmenter(n_estimators=1, samples_per_image=400).fit(
    ...     [image], [labels]).jungle_
    >>> with_inference(jungle, prior_power=0.5).params["prior_power"]
    0.5
    """
    given = {k: v for k, v in (("soft", soft), ("soft_epsilon", soft_epsilon),
                               ("prior_power", prior_power)) if v is not None}
    if not given:
        return jungle
    check_params(SEGMENTATION_CONSTRAINTS, given, "segment")
    for stage in (*jungle.context, jungle):
        stage.soft_routing(soft, soft_epsilon)
    jungle.label_weights(prior_power)
    return dataclasses.replace(jungle, params={**jungle.params, **given}, context=tuple(
        dataclasses.replace(s, params={**s.params, **given}) for s in jungle.context))


def segment(jungle: Jungle, image: ArrayLike, tile: int | str | None = None,
            smoothing: int | None = None, probabilities: bool = True,
            max_memory: int | None = None, soft: float | None = None,
            soft_epsilon: float | None = None, prior_power: float | None = None
            ) -> tuple[np.ndarray, np.ndarray | None]:
    """Labels (H, W) and class probabilities (H, W, n_classes) float32 of one image; with
    ``probabilities=False`` the labels and None, faster: without smoothing no per-class
    array is made at all.

    With depth features only foreground pixels (depth > 0) are classified; the others
    get the model's ``background`` label and zero probabilities. With ``tile``, the image
    is processed in tiles of that size plus a margin of the largest probe reach, so only
    one tile's channels are in memory at a time; ``image`` may then be any array that
    supports slicing (a memory map, a zarr or dask array); the result is the same.
    ``smoothing`` (default: the model's own, see :class:`~jungleseg.JungleSegmenter`) is
    the half-size of the box over which probabilities are averaged before labelling; a
    model trained with ``guided_eps`` averages them edge-aware (:func:`guided_smoothing`).
    ``soft`` and ``soft_epsilon`` (default: the model's own, see
    :class:`~jungleseg.JungleSegmenter`) route pixels softly through the DAGs (0: hard).
    ``prior_power`` (default: the model's own) favours rarer classes in the labels (see
    :meth:`Jungle.label_weights`); the probabilities stay the model's posteriors.

    A volume model (:class:`~jungleseg.VolumeFeatures`) segments (D, H, W[, C]) volumes:
    labels (D, H, W), probabilities (D, H, W, n_classes), ``tile`` in voxels (one size or
    z, y, x; see :func:`segment_volume`). A 2-D model refuses a volume, and a volume model
    a 2-D image, with a ValueError saying so.

    ``tile="auto"`` picks the tile by a memory budget (:func:`jungleseg._memory.tile_for_budget`):
    ``max_memory`` bytes, by default 80 % of the memory available; None when the whole
    image fits, else the largest multiple of 64 pixels that does. To write results of any
    size without holding them, see :func:`segment_to`.
    """
    jungle = checked_jungle(jungle, "segment")
    if isinstance(tile, str) and tile != "auto":
        raise ValueError(f"tile must be a size in pixels, 'auto' or None, got {tile!r}")
    smoothing = _checked_smoothing(jungle, smoothing)
    jungle = with_inference(jungle, soft, soft_epsilon, prior_power)
    if tile == "auto":
        tile = auto_tile(jungle, image, smoothing, max_memory, probabilities)
    if jungle.family.spatial_ndim == 3:
        labels, proba = segment_volume(jungle, image, tile, smoothing)
        return labels, (proba if probabilities else None)
    _check_planar(jungle, np.shape(image))
    if tile is not None:
        return _segment_tiled(jungle, image, int(tile), smoothing, probabilities)
    return _segment_window(jungle, image, None, smoothing, probabilities)


#: Images of at most this many pixels are segmented faster several at a time, each on one
#: thread (:func:`segment_frames`), than one after another on every thread: the command
#: line and the napari widget stream folders and stacks of them (``docs/results/speed.md``).
STREAM_PIXELS = 1 << 20


def segment_frames(jungle: Jungle, frames: Iterable[ArrayLike], smoothing: int | None = None,
                   probabilities: bool = True, soft: float | None = None,
                   soft_epsilon: float | None = None, prior_power: float | None = None
                   ) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """:func:`segment` of each of a sequence of 2-D images (the frames of a depth camera
    or a video, a time series, many small images), yielded in order as they are done,
    several at a time.

    Each frame is segmented on one thread, and as many frames at once as Numba may use
    threads (:func:`jungleseg._workers.ordered_map`). For small images this is faster
    than calling :func:`segment` for each: a frame of a few milliseconds hardly repays
    waking a second thread for its traversal. The results equal :func:`segment`'s, bit for
    bit. ``frames`` may be any iterable, a generator reading a camera included; it is read
    at most a few frames ahead. The settings are checked before any frame is read; a frame
    that cannot be segmented raises a ValueError naming it (``frame 3: ...``) where its
    result would come.

    Parameters
    ----------
    jungle : Jungle
        A 2-D model.
    frames : iterable of array
        Images as :func:`segment` takes them.
    smoothing, probabilities, soft, soft_epsilon, prior_power
        As for :func:`segment`.

    Yields
    ------
    labels : ndarray (H, W)
    probabilities : ndarray (H, W, n_classes) float32, or None

    Examples
    --------
    >>> from jungleseg import DepthFeatures, JungleSegmenter
    >>> from jungleseg.datasets.kinect import render_frames
    >>> depth, labels = render_frames(3, seed=0, size=(60, 80))
    >>> jungle = JungleSegmenter(DepthFeatures(max_offset=0.3, focal_length=71.4),
    ...                          n_estimators=1, samples_per_image=200).fit(
    ...                              list(depth), list(labels)).jungle_
    >>> stream = segment_frames(jungle, iter(depth), probabilities=False)
    >>> [found.shape for found, _ in stream]
    [(60, 80), (60, 80), (60, 80)]
    """
    jungle = checked_jungle(jungle, "segment_frames")
    smoothing = _checked_smoothing(jungle, smoothing)
    jungle = with_inference(jungle, soft, soft_epsilon, prior_power)
    if jungle.family.spatial_ndim == 3:
        raise ValueError("segment_frames takes a 2-D model; segment volumes with segment")

    def one(numbered: tuple) -> tuple[np.ndarray, np.ndarray | None]:
        k, frame = numbered
        try:
            _check_planar(jungle, np.shape(frame))
            return _segment_window(jungle, frame, None, smoothing, probabilities)
        except ValueError as err:
            raise ValueError(f"frame {k}: {str(err).removeprefix('image: ')}") from err

    return ordered_map(one, enumerate(frames))


def auto_tile(jungle: Jungle, image, smoothing: int | None = None,
              max_memory: int | None = None, probabilities: bool = True,
              label_dtype=None):
    """The tile :func:`segment` uses with ``tile="auto"``: None if the image fits
    ``max_memory`` bytes (default: :func:`jungleseg._memory.default_budget`), else the
    largest that does, counting the probabilities only with ``probabilities`` and the
    labels in ``label_dtype`` (default the classes' type); for a 2-D image above
    :data:`jungleseg._memory.TILE_ABOVE` pixels, at most
    :func:`jungleseg._memory.window_tile`, so that memory stays bounded whatever the
    image size; for volumes, :data:`jungleseg._memory.VOLUME_TILE` above
    :data:`jungleseg._memory.VOLUME_TILE_ABOVE` voxels."""
    from .._memory import choose_tile, default_budget

    smoothing = _checked_smoothing(jungle, smoothing)
    shape, itemsize = np.shape(image), np.dtype(getattr(image, "dtype", np.float64)).itemsize
    budget = default_budget() if max_memory is None else int(max_memory)
    margin = 0
    if jungle.family.spatial_ndim == 2 and len(shape) >= 2:
        margin = tile_margin(jungle, image, smoothing)
    label_bytes = np.dtype(jungle.classes.dtype if label_dtype is None else label_dtype).itemsize
    return choose_tile(jungle, shape, itemsize, budget, margin, smoothing, probabilities,
                       label_bytes)


def label_dtype(jungle: Jungle) -> np.dtype:
    """The smallest unsigned integer type that holds every class value of ``jungle`` and
    its background label, or the classes' own type: how label files and the labels of
    large images are held (a byte a pixel for up to 256 classes, not eight)."""
    values = [int(v) for v in jungle.classes] + [int(jungle.params.get("background", 0))]
    if min(values) < 0 or max(values) > 65535:
        return jungle.classes.dtype
    return np.dtype(np.uint8 if max(values) < 256 else np.uint16)


def tile_margin(jungle: Jungle, image, smoothing: int) -> int:
    """The largest margin a 2-D tile of ``image`` needs (:func:`tile_window`): the
    features' margin over the whole image plus the smoothing's reach."""
    return (chain_margin(jungle, image)
            + smoothing_reach(smoothing, jungle.params.get("guided_eps")))


def _check_planar(jungle: Jungle, shape: tuple) -> None:
    """Raise ValueError if a 2-D model is given more axes than its images have: a colour
    picture for a grey or depth model, or a stack."""
    family = input_stage(jungle).family
    axes = 3 if isinstance(family, ColourFeatures) and family.input != "grey" else 2
    grey_channel = axes == 2 and len(shape) == 3 and shape[2] == 1
    if len(shape) == 3 and axes == 2 and 1 < shape[2] <= 4:  # a picture (is_stack's rule)
        what = "depth frames" if isinstance(family, DepthFeatures) else "grey images"
        raise ValueError(f"this model reads {what} (H, W); got an image of {shape[2]} "
                         f"channels, shape {tuple(shape)}")
    if len(shape) > axes and not grey_channel:
        layout = "(H, W)" if axes == 2 else "(H, W, C)"
        raise ValueError(f"this 2-D model reads {layout} images; got an array of shape "
                         f"{tuple(shape)}: segment images, a stack's or a volume's, one by one "
                         "(segment_frames), or train a volume model (VolumeFeatures)")


def _checked_smoothing(jungle: Jungle, smoothing) -> int:
    if smoothing is None:
        smoothing = jungle.params.get("smoothing", 0)
    check_params(SEGMENTATION_CONSTRAINTS, {"smoothing": smoothing}, "segment")
    return int(smoothing)


def segment_prepared(jungle: Jungle, store: ImageStore, image: int = 0,
                     smoothing: int | None = None, probabilities: bool = True,
                     soft: float | None = None, soft_epsilon: float | None = None,
                     prior_power: float | None = None
                     ) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`segment` of image ``image`` of a store the jungle's features prepared
    (``jungle.family.prepare(images, pad=...)``), e.g. the one it was trained on. With
    ``pad`` at least ``jungle.point_reach``, probes are read without clamping (faster).
    An auto-context model takes a store prepared by its first stage's features."""
    jungle = checked_jungle(jungle, "segment_prepared")
    jungle = with_inference(jungle, soft, soft_epsilon, prior_power)
    family = input_stage(jungle).family
    family.check_store(store)
    if store.n_channels != family.n_store_channels:
        raise ValueError(f"the store has {store.n_channels} channels; the model reads "
                         f"{family.n_store_channels}")
    if store.quantiser != family.quantiser:
        raise ValueError("the store does not hold the channel codes the model reads: "
                         "prepare it with the model's features (jungle.family.prepare)")
    if not 0 <= image < store.n_images:
        raise ValueError(f"image {image} is not in the store (0 to {store.n_images - 1})")
    if jungle.context:
        store, image = chain_store(jungle, store, image), 0
    if store.ndim == 3:
        labels, proba = labelled_volume(jungle, store, image,
                                        _checked_smoothing(jungle, smoothing))
        return labels, (proba if probabilities else None)
    return _labelled(jungle, store, image, _checked_smoothing(jungle, smoothing), probabilities)


def _segment_window(jungle: Jungle, image, window, smoothing: int = 0,
                    probabilities: bool = True, region: tuple | None = None
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    first = input_stage(jungle)
    family = first.family
    image = checked_image(image, family, first.metadata.get("input_values"))
    # padded so that probes are read at fixed steps: as far as points reach, or as far as
    # depth probes reach from the nearest foreground pixel (a border of background)
    pad = family.margin(image) if isinstance(family, DepthFeatures) else first.point_reach or 0
    store = family.prepare([image], pad=pad, window=window)
    if jungle.context:
        store = chain_store(jungle, store, 0)
    traversed = _traversed(jungle, store, 0, smoothing, probabilities, region)
    del store  # the window's largest array: freed before smoothing and labelling
    return _labels_of(jungle, traversed, smoothing, probabilities)


def _labelled(jungle: Jungle, store: ImageStore, image: int, smoothing: int,
              probabilities: bool = True, region: tuple | None = None
              ) -> tuple[np.ndarray, np.ndarray | None]:
    """Labels and probabilities from the traversal, of the whole image or of its
    ``region`` ``((top, bottom), (left, right))``: only the region's pixels are traversed
    and smoothed (a tile's margin is read by probes, never labelled). With depth features
    only the foreground pixels (depth > 0) are traversed, listed, and the rest get
    ``background``."""
    return _labels_of(jungle, _traversed(jungle, store, image, smoothing, probabilities,
                                         region), smoothing, probabilities)


def _traversed(jungle: Jungle, store: ImageStore, image: int, smoothing: int,
               probabilities: bool, region: tuple | None) -> tuple:
    """What :func:`_labelled` needs of the store: the traversal's classes and
    probabilities, the foreground and its listed pixels (depth), the region's size and
    the guide of edge-aware smoothing, so that the store can be freed before the rest."""
    h, w = int(store.height[image]), int(store.width[image])
    (r0, r1), (c0, c1) = region or ((0, h), (0, w))
    rows, cols = r1 - r0, c1 - c0
    mask = listed = None  # listed: the traversed pixels, flat in the region
    if isinstance(jungle.family, DepthFeatures):  # foreground: depth (channel 0) > 0
        mask = store.planes(image)[0][r0:r1, c0:c1] > 0
        listed = np.flatnonzero(mask)
    index = listed  # flat in the image
    if region is not None:
        local = np.arange(rows * cols) if listed is None else listed
        index = (local // cols + r0) * w + local % cols + c0
    chosen, proba = jungle.classify_image(store, image, index, probabilities or smoothing > 0)
    if proba is not None:
        proba = proba.reshape(h, w, -1)[r0:r1, c0:c1]
    guide = None
    if smoothing and jungle.params.get("guided_eps"):
        centre, scale = jungle.metadata["guide"]  # channel 0 over the training pixels
        guide = (store.planes(image)[0][r0:r1, c0:c1] - np.float32(centre)) \
            / np.float32(scale)
    return chosen, proba, mask, listed, (rows, cols), guide


def _labels_of(jungle: Jungle, traversed: tuple, smoothing: int, probabilities: bool
               ) -> tuple[np.ndarray, np.ndarray | None]:
    """Labels and probabilities (smoothed) from what :func:`_traversed` returned."""
    chosen, proba, mask, listed, (rows, cols), guide = traversed
    if smoothing:
        eps = jungle.params.get("guided_eps")
        if eps:
            proba = guided_smoothing(proba, guide, smoothing, eps, mask)
        else:
            proba = smooth_probabilities(proba, smoothing, mask)
        chosen = jungle.label_indices(proba, axis=2).reshape(-1) if listed is None else \
            jungle.label_indices(proba.reshape(rows * cols, -1)[listed], axis=1)
    if listed is None:
        labels = jungle.classes[chosen].reshape(rows, cols)
    else:
        labels = np.full((rows, cols), jungle.params.get("background", 0), jungle.classes.dtype)
        labels.reshape(-1)[listed] = jungle.classes[chosen]
    return labels, (proba if probabilities else None)


def _segment_tiled(jungle: Jungle, image, tile: int, smoothing: int, probabilities: bool
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    h, w = image.shape[:2]
    labels = np.empty((h, w), jungle.classes.dtype)
    proba = np.empty((h, w, jungle.n_classes), np.float32) if probabilities else None
    segment_to(jungle, image, labels, proba, tile, smoothing)
    return labels, proba


def segment_to(jungle: Jungle, image, labels, probabilities=None, tile: int | None = None,
               smoothing: int | None = None, stop: Callable[[], bool] | None = None) -> bool:
    """:func:`segment` into output arrays given by the caller, tile by tile: ``labels``
    (H, W) and optionally ``probabilities`` (H, W, n_classes) may be anything that takes
    slice assignment (NumPy arrays, memory maps, zarr arrays), so neither the labels nor
    the probabilities of the whole image need to be in memory; ``image`` may be any array
    that supports slicing. Volume models write (D, H, W) labels in 3-D tiles. The result
    equals :func:`segment`'s. Outputs of another shape, and a ``labels`` type that cannot
    hold every class value (:func:`label_dtype` can), are refused with a ValueError.

    ``stop``, if given, is asked before each tile (Ctrl-C in the command line): once it
    says True, no further tile is begun and False is returned, the outputs written only
    in part. True once every tile is written.
    """
    jungle = checked_jungle(jungle, "segment_to")
    smoothing = _checked_smoothing(jungle, smoothing)
    _check_outputs(jungle, np.shape(image), labels, probabilities)
    if jungle.family.spatial_ndim == 3:
        return segment_volume(jungle, image, tile, smoothing, out=(labels, probabilities),
                              stop=stop) is not None
    _check_planar(jungle, np.shape(image))
    h, w = image.shape[:2]
    tile = max(h, w) if tile is None else int(tile)
    if tile < 1:
        raise ValueError(f"tile must be >= 1, got {tile}")
    for r0 in range(0, h, tile):
        for c0 in range(0, w, tile):
            if stop is not None and stop():
                return False
            inner = ((r0, min(r0 + tile, h)), (c0, min(c0 + tile, w)))
            outer = tile_window(jungle, image, inner, smoothing)
            window = image[outer[0][0]:outer[0][1], outer[1][0]:outer[1][1]]
            lab, pr = segment_part(jungle, window, outer, (h, w), inner, smoothing,
                                   probabilities is not None)
            labels[r0:inner[0][1], c0:inner[1][1]] = lab
            if probabilities is not None:
                probabilities[r0:inner[0][1], c0:inner[1][1]] = pr
    return True


def _check_outputs(jungle: Jungle, image_shape: tuple, labels, probabilities) -> None:
    """ValueError unless the output arrays of :func:`segment_to` have the image's shape
    (and a column per class) and ``labels`` a type that holds every label value: slice
    assignment would silently wrap class 300 to 44 in a uint8 array."""
    shape = tuple(image_shape[:jungle.family.spatial_ndim])
    for name, array, wanted in (("labels", labels, shape),
                                ("probabilities", probabilities, (*shape, jungle.n_classes))):
        if array is not None and tuple(np.shape(array)) != wanted:
            raise ValueError(f"{name} is {tuple(np.shape(array))}; this image needs {wanted}")
    dtype = np.dtype(getattr(labels, "dtype", np.int64))
    if dtype.kind not in "iub":
        return  # floating point holds them all
    low, high = (0, 1) if dtype.kind == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    values = [int(v) for v in jungle.classes] + [int(jungle.params.get("background", 0))]
    wrong = [v for v in values if not low <= v <= high]
    if wrong:
        raise ValueError(f"labels is {dtype}, which cannot hold the label value {wrong[0]}: "
                         f"give a {label_dtype(jungle)} array")


def tile_window(jungle: Jungle, image, inner: tuple, smoothing: int) -> tuple:
    """The window ``((top, bottom), (left, right))`` of ``image`` whose features and
    smoothing give the pixels of ``inner`` (same form) the whole image's result: the
    tile with the features' margin (:meth:`FeatureFamily.margin`, read from the tile and
    the smoothing's reach around it: depth probes reach less from farther pixels) plus
    the smoothing's reach."""
    (r0, r1), (c0, c1) = inner
    h, w = image.shape[:2]
    reach = smoothing_reach(smoothing, jungle.params.get("guided_eps"))  # averaged into a tile
    ring = (slice(max(r0 - reach, 0), r1 + reach), slice(max(c0 - reach, 0), c1 + reach))
    margin = chain_margin(jungle, image[ring]) + reach
    return ((max(r0 - margin, 0), min(r1 + margin, h)), (max(c0 - margin, 0), min(c1 + margin, w)))


def segment_part(jungle: Jungle, window, outer: tuple, shape: tuple, inner: tuple,
                 smoothing: int, probabilities: bool = True
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    """Labels and probabilities (None with ``probabilities=False``) of the pixels
    ``inner`` of an image of ``shape``, from the ``window`` of it at ``outer`` (both
    ``((top, bottom), (left, right))`` in image coordinates): equal to the whole image's
    there when the window holds the tile's margin (:func:`tile_window`). How both the
    tiled loop and a dask block segment."""
    (top, _), (left, _) = outer
    reach = smoothing_reach(smoothing, jungle.params.get("guided_eps"))
    # labelled: the tile and what its smoothing averages in, within the image
    region = tuple((max(a - reach, 0) - at, min(b + reach, n) - at)
                   for (a, b), n, at in zip(inner, shape, (top, left)))
    lab, pr = _segment_window(jungle, window, (top, left, shape[0], shape[1]), smoothing,
                              probabilities, region)
    keep = tuple(slice(a - at - start, b - at - start)
                 for (a, b), at, (start, _) in zip(inner, (top, left), region))
    return lab[keep], (pr[keep] if probabilities else None)
