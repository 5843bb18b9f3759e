"""Peak-memory estimates of segmentation and training, written as formulas, and the
memory budget they are checked against.

Every estimate is a sum of the arrays the code allocates, in bytes. Names: an image of
H x W pixels with ``C_in`` input channels of ``b_in`` bytes; the feature family's
``C_s`` store channels; a store border ``p`` (``jungle.point_reach``); K classes.
The store takes ``S = C_s b_s [+ C_s b_I box kinds]`` bytes a pixel, with ``b_s`` bytes
per channel value and ``b_I`` per integral-image value (colour features' 8-bit codes and
uint32 integral images: 1 and 4; depth, volume and older models' float32 and float64: 4
and 8), read from :func:`store_value_bytes` through :func:`store_bytes_per_pixel`. Codes
are made one image at a time through float32 scratch, ``4 C_s`` bytes a pixel.

Segmentation of one window of ``h x w`` pixels (the whole image, or a tile plus its
margin ``m``: ``h = tile + 2 m``), :func:`window_bytes`::

    window = max((h + 2p)(w + 2p) S           store planes, padded by the probe reach
                 + h w max(scratch(family)    conversion: RGB to CIELab 36, grey 16,
                           + 4 C_in           channels 4 C_in; the image in float32;
                           [+ 4 C_s codes],   the float32 channels being quantised
                           4 K + 12),         or the traversal's probabilities, labels
                 h w (4 K + smooth(K) + 16))  the store freed: probabilities, smoothing
                                              (8 K; guided 8 K + 48), argmax and labels

    segmentation = H W C_in b_in                 the image
                 + H W (4 K [probabilities kept] + b_l)   probabilities and labels returned
                 + window

(untiled, the window's probabilities and labels are the returned ones and are counted
once; ``b_l`` the bytes of a label: 8 for the classes' int64, 1 where files are written,
``label_dtype`` in ``segmentation/_segment.py``). :func:`tile_for_budget` picks the largest
tile whose estimate fits a budget; the tiled result equals the untiled one
(:func:`jungleseg.segment`). Above :data:`TILE_ABOVE` pixels :func:`choose_tile` tiles
in any case, with the largest tile up to :data:`DEFAULT_TILE` whose window fits
:data:`WINDOW_BYTES` (:func:`window_tile`), so that the window term stays bounded
whatever the image size; :func:`jungleseg.segment_to` writes into arrays the caller
gives (zarr arrays on disk), which removes the image and output terms too when the image
itself is read lazily (zarr, NPY): the peak is then ``window`` of one tile plus what the
output array buffers, one chunk. Over a dask cluster
(:func:`jungleseg.distributed.segment_array`) every worker thread holds one such window
of a chunk plus its halo, and the chunk's labels.

A volume of D x H x W voxels (``C_s`` store channels; a window of ``d x h x w`` voxels,
a tile plus its margin ``m_z, m_y, m_x`` on every side)::

    volume window = d h w (4 C_s + 4 C_in + 4 + 8 K + 16)   store (padded by the probe
                                                             reach), float copy, filter
                                                             scratch, probabilities and
                                                             their smoothing copy, labels
    volume segmentation = D H W (C_in b_in + 4 K + 8) + volume window   (tiled)

Training on images of shapes (H_i, W_i) (for volumes, read H_i W_i as D_i H_i W_i voxels),
N sampled pixels, E entries (N per DAG, or the samples of each DAG's own images with
``images_per_dag``), G DAGs, K candidate features, T thresholds, P parameters per feature,
K_c classes::

    training = sum_i H_i W_i C_in b_in                                 images
             + max_i H_i W_i (scratch(family) + 8 [+ 4 C_s codes])      one image's scratch,
                                                  and its float32 channels being coded
             + stage

    stage    = sum_i (h_i + 2 p_t)(w_i + 2 p_t) S                      store
             + 16 N + 48 E                                              samples, entries
             + max over levels d of level(d)
             + G min(sum_d n_d / G, 2 E_g / min_samples_leaf) (8 K_c + 4 P + 32)   levels

    level(d) = n_d K (1 + 4 P + 4 T + 16)          candidates, thresholds, best per candidate
             + 2 n_d K T (4 K_c + 16) [LSearch]   split tables, weights and costs, and the
                                                  copy of the rows of nodes that can split
             + min(64, n_d K) 4 L_d               response scratch (L_d: largest node)

where ``h_i x w_i`` is image i as the store holds it: the whole image, or for depth
features the box that training cuts around its body (bounded by the box around the
nonzero pixels and the pixels labelled with a class, ``trainable_boxes`` in
``segmentation/_sampling.py``); ``p_t`` the training store's border
(:func:`training_pad`: the probe reach where that adds at most a quarter, else 0; for
volumes their reach along each axis); ``n_d``, the nodes split at level d, is at most
``G min(width(d), E_g / s)`` (the schedule's width; E_g the entries of one DAG, s =
max(min_samples_split, 2 min_samples_leaf), as a node needs s samples to split), and a
level is an LSearch level when its children's width is below twice its parents.

Auto-context (``auto_context`` stages, ``k = context_folds``) replaces ``stage`` by the
largest of its phases (``segmentation/_context.py``), with ``S_2`` the bytes a pixel of a
later stage's store (stage 1's channels and the K_c maps as channels)::

    fitting stage 1            stage
    out-of-fold fits           store of the stage + sum_i H_i W_i (4 K_c + 4)  maps, labels
                               + growth on (k - 1) / k of the samples
                               (the fold's store is a view of the stage's: no copy)
    making the next store      maps + sum_i (h_i + 2p_t)(w_i + 2p_t) S_2   (stage 1's
                               channels made again from the images, the old store freed)
    fitting a later stage      its store + growth

``benchmarks/memory.py`` compares these estimates with the peak memory measured. When
the store dominates, as it does for the shipped presets on their data sets, they are
within a few per cent; the growth terms assume that every node that may split does, but
count only part of what LSearch allocates, so they can err either way when they dominate.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np

#: Share of the available memory the default budget allows.
DEFAULT_BUDGET_FRACTION = 0.8
_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9,
          "t": 1e12, "tb": 1e12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def physical_memory() -> int:
    """Bytes of RAM of this machine."""
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def available_memory() -> int:
    """Bytes the kernel says can be allocated without swapping (``MemAvailable`` of
    /proc/meminfo), else the physical memory."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return physical_memory()


def resident_memory() -> int:
    """Bytes this process holds in memory now (interpreter, libraries, data loaded)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def default_budget() -> int:
    """:data:`DEFAULT_BUDGET_FRACTION` of the available memory."""
    return int(DEFAULT_BUDGET_FRACTION * available_memory())


def parse_size(text: str) -> int:
    """``"4GB"``, ``"512MiB"``, ``"2.5g"``, ``"1e9"`` as bytes (decimal units, binary with
    ``i``).

    >>> parse_size("1.5GB"), parse_size("2MiB"), parse_size("300")
    (1500000000, 2097152, 300)
    """
    match = re.fullmatch(r"\s*([0-9.]+(?:e[0-9]+)?)\s*([a-z]*)\s*", str(text).lower())
    if not match or match.group(2) not in _UNITS:
        raise ValueError(f"memory size {text!r}: expected a number with an optional unit "
                         "(B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. 8GB")
    value = float(match.group(1)) * _UNITS[match.group(2)]
    if value < 1:
        raise ValueError(f"memory size {text!r} must be at least one byte")
    return int(value)


def format_size(n: float) -> str:
    """Bytes for people: ``format_size(3.2e9) == '3.2 GB'``."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def _scratch(family) -> int:
    """Bytes per pixel that making the channels of one image needs besides the store."""
    from .features import ColourFeatures

    if not isinstance(family, ColourFeatures):
        return 8  # depth in metres, float32, and its mask
    if family.input == "rgb":
        return 36  # float copy, clipped copy, CIELab, 3 float32 planes each
    if family.input == "grey":
        return 16
    return 4 * family.n_input_channels


def _input_channels(family) -> int:
    from .features import ColourFeatures

    return family.n_input_channels if isinstance(family, ColourFeatures) else 1


def window_bytes(jungle, height: int, width: int, smoothing: int) -> int:
    """Peak bytes of segmenting one window of ``height`` x ``width`` pixels (module
    docstring): its store, padded by the probe reach (:func:`store_bytes_per_pixel`),
    with the conversion's scratch or the traversal's probabilities beside it; or, once
    the store is freed, the probabilities, their smoothing and the labels."""
    pad = jungle.point_reach or 0
    k, family = jungle.n_classes, jungle.family
    store = (height + 2 * pad) * (width + 2 * pad) * store_bytes_per_pixel(family)
    values = 4 * family.n_store_channels if family.quantiser is not None else 0
    beside = max(_scratch(family) + 4 * _input_channels(family) + values, 4 * k + 12)
    smooth = 2 * 4 * k + (48 if jungle.params.get("guided_eps") else 0) if smoothing else 0
    after = 4 * k + smooth + 16
    return max(store + height * width * beside, height * width * after)


def segmentation_bytes(jungle, shape, itemsize: int = 1, tile: int | None = None,
                       smoothing: int | None = None, margin: int = 0,
                       probabilities: bool = True, label_bytes: int = 8) -> int:
    """Peak bytes of ``segment(jungle, image, tile=tile)`` for an image of ``shape``
    whose values take ``itemsize`` bytes (module docstring); ``margin``, the context a
    tile reads around itself (``family.margin`` plus the smoothing's reach). Tiled, the
    labels returned take ``label_bytes`` a pixel, and the probabilities are kept only
    with ``probabilities``."""
    h, w = int(shape[0]), int(shape[1])
    c_in = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    smoothing = jungle.params.get("smoothing", 0) if smoothing is None else smoothing
    image = h * w * c_in * itemsize
    if tile is None:  # the window's probabilities and labels are the ones returned
        return image + window_bytes(jungle, h, w, smoothing)
    outputs = h * w * (label_bytes + (4 * jungle.n_classes if probabilities else 0))
    th, tw = min(tile, h) + 2 * margin, min(tile, w) + 2 * margin
    return image + outputs + window_bytes(jungle, th, tw, smoothing)


def tile_for_budget(jungle, shape, itemsize: int, budget: int, margin: int,
                    smoothing: int | None = None, probabilities: bool = True,
                    label_bytes: int = 8) -> int | None:
    """None if the whole image fits ``budget``, else the largest tile (a multiple of 64
    pixels) whose estimate fits (:func:`segmentation_bytes`, outputs as given). Raises
    MemoryError, saying what is needed, when not even a 64-pixel tile fits (the image,
    its labels and probabilities alone)."""
    outputs = {"probabilities": probabilities, "label_bytes": label_bytes}
    if segmentation_bytes(jungle, shape, itemsize, None, smoothing) <= budget:
        return None
    low, high = 64, max(int(shape[0]), int(shape[1]))
    need = segmentation_bytes(jungle, shape, itemsize, low, smoothing, margin, **outputs)
    if need > budget:
        raise MemoryError(f"segmenting a {shape[0]}x{shape[1]} image needs at least "
                          f"{format_size(need)} (the image, its labels"
                          f"{' and probabilities' if probabilities else ''}, one 64-pixel "
                          f"tile), more than the memory budget {format_size(budget)}")
    while high - low > 64:  # the estimate grows with the tile: bisect
        middle = (low + high) // 128 * 64
        if segmentation_bytes(jungle, shape, itemsize, middle, smoothing, margin,
                              **outputs) <= budget:
            low = middle
        else:
            high = middle
    return low


def window_tile(jungle, margin: int, smoothing: int, budget: int | None = None) -> int:
    """The largest tile, a multiple of 64 pixels from :data:`SMALLEST_WINDOW_TILE` to
    :data:`DEFAULT_TILE`, whose window (the tile and ``margin`` on every side) fits
    ``budget`` bytes (default :data:`WINDOW_BYTES`): the tile of images above
    :data:`TILE_ABOVE` pixels, so that one window's working set stays near that budget
    whatever the model (a lighter store gives larger tiles)."""
    budget = WINDOW_BYTES if budget is None else budget
    tile = DEFAULT_TILE
    while tile > SMALLEST_WINDOW_TILE and window_bytes(
            jungle, tile + 2 * margin, tile + 2 * margin, smoothing) > budget:
        tile -= 64
    return tile


#: Images above this many pixels are segmented in tiles whatever the budget.
TILE_ABOVE = 4096 * 4096
#: The largest tile :func:`choose_tile` picks for them.
DEFAULT_TILE = 2048
#: The working set of one window that the tiles of those images aim at (:func:`window_tile`).
WINDOW_BYTES = 400 * 10**6
#: The smallest tile :func:`window_tile` picks: below it the margins cost more time
#: than the memory they save is worth.
SMALLEST_WINDOW_TILE = 1024
#: Volumes above this many voxels are segmented in tiles of :data:`VOLUME_TILE` voxels
#: per axis (or smaller, to fit the budget).
VOLUME_TILE_ABOVE = 256 * 512 * 512
VOLUME_TILE = 128


def volume_segmentation_bytes(jungle, shape, itemsize: int = 1, tile=None,
                              margin=(0, 0, 0)) -> int:
    """Peak bytes of segmenting a (D, H, W[, C]) volume, whole or in cubic tiles of
    ``tile`` voxels with ``margin`` (z, y, x) around them (module docstring)."""
    family, k = jungle.family, jungle.n_classes
    dims = [int(n) for n in shape[:3]]
    c_in = int(np.prod(shape[3:])) if len(shape) > 3 else 1
    per_voxel = 4 * family.n_store_channels + 4 * c_in + 4 + 8 * k + 16
    reach = family.reach
    if tile is None:
        window = np.prod([n + 2 * r for n, r in zip(dims, reach)])
        return int(np.prod(dims) * c_in * itemsize + window * per_voxel)
    window = np.prod([min(tile, n) + 2 * (m + r) for n, m, r in zip(dims, margin, reach)])
    return int(np.prod(dims) * (c_in * itemsize + 4 * k + 8) + window * per_voxel)


def choose_tile(jungle, shape, itemsize: int, budget: int, margin,
                smoothing: int | None = None, probabilities: bool = True,
                label_bytes: int = 8):
    """The tile :func:`jungleseg.segment` uses with ``tile="auto"`` (see its
    docstring): for 2-D images :func:`tile_for_budget` (outputs as given), capped at
    :func:`window_tile` above :data:`TILE_ABOVE` pixels; for volumes (``margin`` per
    axis, or 0 for the family's own) whole below :data:`VOLUME_TILE_ABOVE` voxels if
    they fit, else the largest cubic tile up to :data:`VOLUME_TILE` (halved until it fits)."""
    if jungle.family.spatial_ndim == 3:
        if not np.ndim(margin):
            margin = jungle.family.margin()
        voxels = int(np.prod(shape[:3]))
        if voxels <= VOLUME_TILE_ABOVE and \
                volume_segmentation_bytes(jungle, shape, itemsize) <= budget:
            return None
        tile = VOLUME_TILE
        while tile > 8 and volume_segmentation_bytes(jungle, shape, itemsize, tile,
                                                     margin) > budget:
            tile //= 2
        return tile
    tile = tile_for_budget(jungle, shape, itemsize, budget, margin, smoothing,
                           probabilities, label_bytes)
    if int(shape[0]) * int(shape[1]) > TILE_ABOVE:
        smoothing = jungle.params.get("smoothing", 0) if smoothing is None else smoothing
        return min(tile or DEFAULT_TILE, window_tile(jungle, margin, smoothing))
    return tile


def store_value_bytes(family) -> tuple[int, int]:
    """(bytes of one channel value of a store, bytes of one value of its integral images)
    for the stores ``family`` prepares: with a quantiser its codes and uint32 integral
    images (uint64 where a box's sum could reach 2^32); without, float32 and float64.
    Every estimate reads the store's size from here (training ones through
    :func:`as_trained`), so a store of other types changes only this function."""
    from .features._store import integral_type

    if family.quantiser is None:
        return 4, 8
    return (family.quantiser.dtype.itemsize,
            integral_type(family.quantiser, family.box_pixels).itemsize)


def as_trained(family):
    """``family`` as training holds its store: with a quantiser of its code type if it has
    one (:meth:`~jungleseg.features.FeatureFamily.fitted_quantiser`), else as it is."""
    from .features._quantise import affine_quantiser

    if family.quantiser is not None or family.code_type is None:
        return family
    n = family.n_store_channels
    return family.with_quantiser(affine_quantiser(np.zeros(n), np.ones(n), family.code_type))


def store_bytes_per_pixel(family) -> int:
    """Bytes one pixel (voxel) of a store takes: every channel's value, and for box kinds
    every channel's integral value."""
    value, integral = store_value_bytes(family)
    c_s = family.n_store_channels
    return c_s * value + (c_s * integral if family.needs_integral else 0)


def training_pad(family, shapes) -> tuple[int, int]:
    """(pad in y and x, pad in z) of the training store of images of ``shapes``: as
    ``JungleSegmenter.fit`` prepares it (``cheap_pad``; volumes at least their reach)."""
    from .segmentation._context import cheap_pad

    if family.spatial_ndim == 3:
        reach_z, reach_y, reach_x = family.reach
        return max(reach_y, reach_x), reach_z
    return cheap_pad(family.point_reach, [tuple(s[:2]) for s in shapes]), 0


def padded_pixels(shapes, ndim: int, pad: int, pad_z: int = 0) -> list[int]:
    """Pixels (voxels) of each image of ``shapes`` with its border in the store."""
    if ndim == 3:
        return [(int(s[0]) + 2 * pad_z) * (int(s[1]) + 2 * pad) * (int(s[2]) + 2 * pad)
                for s in shapes]
    return [(int(s[0]) + 2 * pad) * (int(s[1]) + 2 * pad) for s in shapes]


@dataclass(frozen=True)
class TrainingEstimate:
    """Peak training bytes, and the largest term of the sum with its description."""

    total: int
    largest: str
    largest_bytes: int

    def message(self, budget: int, what: str) -> str:
        """The one-line refusal: the estimate, the budget (``what`` says which), the
        largest part."""
        return (f"training would need up to {format_size(self.total)}, more than the memory "
                f"budget {format_size(budget)} ({what}); the largest part is {self.largest} "
                f"({format_size(self.largest_bytes)})")


def training_bytes(estimator, shapes, itemsize: int = 1, n_classes: int = 2,
                   n_samples: int | None = None, store_shapes=None) -> TrainingEstimate:
    """Peak bytes of ``estimator.fit`` (a :class:`~jungleseg.JungleSegmenter`) on images
    of ``shapes`` with ``n_classes`` classes (module docstring), auto-context stages and
    their out-of-fold fits included; ``n_samples`` defaults to ``samples_per_image`` per
    image (every labelled pixel for ``sampling='all'``). ``store_shapes``: the (H, W) of
    each image in the training store where that holds less than the whole image (depth
    bodies), default ``shapes``."""
    from .features import ColourFeatures
    from .features._base import coding_bytes

    family = as_trained(estimator._family())
    ndim = family.spatial_ndim  # (D, H, W) for volumes: every voxel counts
    pixels = [int(np.prod(s[:ndim], dtype=np.int64)) for s in shapes]
    if n_samples is None:
        per_image = [p if estimator.sampling == "all" else min(p, estimator.samples_per_image)
                     for p in pixels]
        n_samples = sum(per_image)
    stored = [tuple(s) for s in (shapes if store_shapes is None else store_shapes)]
    pad, pad_z = training_pad(family, stored)
    store_pixels = sum(padded_pixels(stored, ndim, pad, pad_z))
    images = sum(pixels) * _input_channels(family) * itemsize
    scratch = _scratch(family) + 8 + coding_bytes(family)
    common = {"the images": images, "one image's scratch": max(pixels, default=0) * scratch}
    stage = {"the store of every image's channels": store_pixels * store_bytes_per_pixel(family),
             **_growth_terms(estimator, family, n_samples, len(shapes), n_classes)}
    context = int(getattr(estimator, "auto_context", 1)) > 1 and isinstance(family, ColourFeatures)
    terms = {**common, **(_context_peak(estimator, family, stage, store_pixels, sum(pixels),
                                        n_samples, len(shapes), n_classes) if context else stage)}
    name = max(terms, key=terms.get)
    return TrainingEstimate(int(sum(terms.values())), name, int(terms[name]))


def _context_peak(estimator, family, first: dict, store_pixels: int, pixels: int,
                  n_samples: int, n_images: int, n_classes: int) -> dict:
    """The terms of the largest phase of auto-context training (``segmentation/_context``):
    fitting stage 1; an out-of-fold fit of a stage on the other folds' images (its store a
    view of the stage's own, the maps of every image, its labels); making the next
    stage's store from the images and the maps (the stage's store freed first); fitting
    a later stage."""
    from .segmentation._context import context_family

    later = context_family(family, family.n_store_channels, n_classes, family.quantiser)
    folds = int(estimator.context_folds)
    part = max(1, n_images - n_images // folds)  # images of the largest out-of-fold fit
    maps = pixels * n_classes * 4
    later_store = store_pixels * store_bytes_per_pixel(later)
    phases = {"fitting stage 1": first}
    stores = [first["the store of every image's channels"], later_store]
    for s in range(1, int(estimator.auto_context)):
        store = stores[min(s - 1, 1)]
        fold_growth = _growth_terms(estimator, later if s > 1 else family,
                                    n_samples * part // max(n_images, 1), part, n_classes)
        phases[f"out-of-fold fits of stage {s}"] = {
            f"the store of stage {s}": store,
            "the out-of-fold probability maps and labels": maps + 4 * pixels,
            **fold_growth}
        phases[f"making the store of stage {s + 1}"] = {  # stage s's store freed first
            "the out-of-fold probability maps": maps,
            f"the store of stage {s + 1}": later_store}
        phases[f"fitting stage {s + 1}"] = {
            f"the store of stage {s + 1}": later_store,
            **_growth_terms(estimator, later, n_samples, n_images, n_classes)}
    return max(phases.values(), key=lambda terms: sum(terms.values()))


def _growth_terms(estimator, family, n_samples: int, n_images: int, n_classes: int) -> dict:
    """Samples, entries, the widest level's split tables and the DAGs' levels of growing
    the DAGs of one fit on ``n_samples`` samples of ``n_images`` images."""
    from .jungle._classes import MAX_DEPTH
    from .jungle._schedules import level_width

    g = int(estimator.n_estimators)
    per_dag = n_samples
    if estimator.images_per_dag is not None and n_images:
        share = min(1.0, int(estimator.images_per_dag) / n_images)
        per_dag = int(np.ceil(n_samples * share))
    entries = g * per_dag
    terms = {"samples and entries": 16 * n_samples + 48 * entries}
    k = int(estimator.n_candidate_features)
    t = int(estimator.n_thresholds)
    p = family.n_params
    split = max(int(estimator.min_samples_split), 2 * int(estimator.min_samples_leaf))
    depth = MAX_DEPTH if estimator.max_depth is None else int(estimator.max_depth)
    worst, worst_level, nodes, largest_node = 0, "", 0, per_dag
    for d in range(depth):
        parents = min(level_width(estimator.schedule, estimator.max_width, d),
                      max(1, per_dag // split))
        lsearch = level_width(estimator.schedule, estimator.max_width, d + 1) < 2 * parents
        n = g * parents
        level = n * k * (1 + 4 * p + 4 * t + 16) + min(64, n * k) * 4 * largest_node
        if lsearch:  # twice: the rows of nodes with a valid split are copied out
            level += 2 * n * k * t * (4 * n_classes + 16)
        nodes += parents
        if level > worst:
            worst, worst_level = level, (
                f"split tables of level {d}: {g} DAGs x {parents} nodes x {k} candidate "
                f"features x {t} thresholds" + (f" x {n_classes} classes" if lsearch else ""))
        largest_node = max(1, largest_node // 2)
    # a DAG has at most 2 E_g / min_samples_leaf nodes: every leaf keeps that many samples
    nodes = min(nodes, 2 * per_dag // int(estimator.min_samples_leaf) + 1)
    terms[worst_level or "split tables"] = worst
    terms["the DAGs' levels"] = g * nodes * (8 * n_classes + 4 * p + 32)
    return terms


def check_training_memory(estimator, images, labels, budget: int | None = None,
                          what: str = "max_memory") -> TrainingEstimate:
    """The estimate of ``estimator.fit(images, labels)`` (:func:`training_bytes`, the
    store as training holds it: depth images cut to their bodies), or MemoryError, in
    one line with the estimate and the budget, when it exceeds ``budget`` bytes (None:
    the memory available now, :func:`available_memory`). ``what`` names the budget in
    the message. Called before any store is made, so that a training that cannot fit
    is refused before it starts."""
    from .segmentation._sampling import trainable_boxes

    family = estimator._family()
    ignored = estimator._never_trained(family)
    values = np.unique(np.concatenate([np.unique(np.asarray(lab)) for lab in labels]))
    classes = [v for v in values if int(v) not in ignored]
    boxes = (trainable_boxes(images, labels, classes) if family.border == "zero"
             else None)  # depth training stores only the box around each body
    estimate = training_bytes(estimator, [np.shape(im) for im in images],
                              max(np.asarray(im).dtype.itemsize for im in images),
                              max(len(classes), 2), store_shapes=boxes)
    if budget is None:
        budget, what = available_memory(), "the memory available"
    if estimate.total > budget:
        raise MemoryError(estimate.message(int(budget), what))
    return estimate
