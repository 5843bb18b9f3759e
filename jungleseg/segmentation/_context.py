"""Auto-context: a chain of jungles, each later one also probing the previous one's
class-probability maps as channels (``JungleSegmenter(auto_context=k)``).

Stage 1 reads the image through its feature family (colour features). Stage s + 1 reads
channels: stage 1's channels (the store planes, box means and positions included) followed
by stage s's class probabilities, probed at offsets with stage 1's kinds, offsets and box
sizes. The last stage is the model; the earlier ones are ``Jungle.context``, in order, and
all live in one model file.

Training maps come out of fold: the training images are cut into ``context_folds`` parts
at random (fewer images than folds: their squares, see :func:`fold_of`); the map of an image
comes from a stage trained on the other parts, so the next stage learns how much to trust
maps made on unseen images, not the near-perfect maps a stage makes of its own training
pixels. k folds cost k extra fits, each on (k - 1) / k of the images; more folds make the
training maps more like the maps of the stage trained on every image, which segmentation
uses, at a linear extra cost (two folds: about one extra fit per stage in all, as fitting
time grows about linearly with the images).

Tiling: stage s + 1's probes read stage s's map up to its own margin away, and that map is
right only at its own margin inside the window, so a tile needs the sum of the stages'
margins (:func:`chain_margin`).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..features import ColourFeatures, ImageStore
from ..features._quantise import Quantiser, affine_quantiser
from ..jungle import Jungle
from ._sampling import TooFewClasses

#: Side of the squares a single training image is cut into for its folds, in pixels.
BLOCK = 16
_UNUSED = 65535  # the label of a fold's hidden pixels (beyond every class value)


def context_family(base: ColourFeatures, n_base_channels: int, n_classes: int,
                   quantiser: Quantiser | None = None) -> ColourFeatures:
    """The feature family of a later stage: ``n_base_channels`` of stage 1 and the
    ``n_classes`` probability maps as plain channels, probed like stage 1 probes; with
    stage 1's ``quantiser``, its stores hold codes (:func:`context_quantiser`), without
    float32 values as stage 1's do."""
    family = ColourFeatures(max_offset=base.max_offset, kinds=base.kinds, max_box=base.max_box,
                            input="channels", smoothing_scales=(),
                            n_channels=n_base_channels + n_classes, centred=base.centred)
    if quantiser is None:
        return family.with_quantiser(None)
    return family.with_quantiser(context_quantiser(quantiser, n_base_channels, n_classes))


def context_quantiser(base: Quantiser, n_base_channels: int, n_classes: int) -> Quantiser:
    """A later stage's quantiser: stage 1's codes (its input, read from stage 1's store)
    map to themselves, and probabilities 0..1 span the codes; fixed, so that no stage
    needs a pass over its images to fit it."""
    top = np.iinfo(base.dtype).max
    low = np.zeros(n_base_channels + n_classes)
    high = np.concatenate([np.full(n_base_channels, top), np.ones(n_classes)])
    return affine_quantiser(low, high, base.dtype)


def stage_store(family: ColourFeatures, previous: ImageStore | None, maps: list[np.ndarray],
                base: ColourFeatures | None = None, values: list | None = None,
                pad: int | None = None) -> ImageStore:
    """The next stage's store: every image's stage-1 planes (the first planes of
    ``previous``, stage 1's store or a later stage's; or, with ``base`` and ``values``,
    made again by stage 1's features from the training images, so that no earlier store
    need be held beside the new one) and its map, as ``family`` would prepare the two
    joined as (H, W, C1 + C) channels, written straight into the store: no joined copy
    of any image exists beside it. ``pad``: the border (default :func:`cheap_pad`, what
    training affords)."""
    n_base = family.n_input_channels - maps[0].shape[-1]
    shapes = ([np.shape(v)[:2] for v in values] if previous is None
              else [previous.shape(i) for i in range(previous.n_images)])

    def fill(i: int, planes: np.ndarray) -> None:
        if previous is None:  # the same values as stage 1's store: the same functions
            base.channels_into(values[i], planes[:n_base])
            if base.quantiser is not None:  # its codes, which the stage maps to themselves
                base.quantiser.codes_into(planes[:n_base], planes[:n_base])
        else:
            planes[:n_base] = previous.planes(i)[:n_base]
        planes[n_base:] = np.moveaxis(maps[i].reshape(*shapes[i], -1), 2, 0)

    if pad is None:
        pad = cheap_pad(family.point_reach, shapes)
    return ImageStore.build(shapes, family.n_store_channels, fill,
                            integral=family.box_pixels if family.needs_integral else False,
                            pad=pad, border=family.border, quantiser=family.quantiser)


def image_shapes(images) -> list[tuple[int, int]]:
    """The (H, W) of each image."""
    return [np.shape(im)[:2] for im in images]


def store_images(store: ImageStore) -> list[np.ndarray]:
    """The (H, W, C) images a plain-channels store holds, as views into it."""
    return [np.moveaxis(store.planes(i), 0, 2) for i in range(store.n_images)]


def chain_store(jungle: Jungle, base: ImageStore, image: int) -> ImageStore:
    """The last stage's store of image ``image`` of a stage-1 store: the earlier stages
    run in turn, each on the channels the previous ones made, and each later store is
    filled from stage 1's planes and the map in place (:func:`stage_store`), padded as far
    as its stage's points reach, so that its probes are read unclamped."""
    first = store_subset(base, [image])
    proba = jungle.context[0].classify_image(base, image)[1]
    for stage in jungle.context[1:]:
        store = stage_store(stage.family, first, [proba], pad=stage.point_reach or 0)
        proba = stage.classify_image(store, 0)[1]
    return stage_store(jungle.family, first, [proba], pad=jungle.point_reach or 0)


def input_stage(jungle: Jungle) -> Jungle:
    """The stage that reads the user's images (its family and ``input_values``): stage 1."""
    return jungle.context[0] if jungle.context else jungle


def chain_margin(jungle: Jungle, tile) -> int:
    """Context a tile needs: the sum of every stage's margin."""
    later = (*jungle.context[1:], jungle) if jungle.context else ()
    return input_stage(jungle).family.margin(tile) + sum(s.family.margin(None) for s in later)


def cheap_pad(reach: int | None, shapes) -> int:
    """``reach`` if padding every image of these (H, W) ``shapes`` by it adds at most a
    quarter to the pixels (so training reads probes unclamped), else 0."""
    if not reach:
        return 0
    plain = sum(h * w for h, w in shapes)
    padded = sum((h + 2 * reach) * (w + 2 * reach) for h, w in shapes)
    return reach if padded <= 1.25 * plain else 0


def store_subset(store: ImageStore, images) -> ImageStore:
    """The store of images ``images`` (indices) of ``store``: a view sharing its memory,
    so that an out-of-fold fit reads its images without a second store."""
    index = np.asarray(images, np.int64)
    integral_offset = store.integral_offset[index] if store.integral_offset.size else \
        store.integral_offset
    return dataclasses.replace(
        store, offset=store.offset[index], height=store.height[index],
        width=store.width[index], integral_offset=integral_offset,
        depth=None if store.depth is None else store.depth[index])


def clone(model, **params):
    """An unfitted copy of an estimator, with ``params`` changed (feature families are
    immutable values, so they are shared, not copied)."""
    return type(model)(**{**model.get_params(deep=False), **params})


def fold_of(shapes: list[tuple[int, int]], folds: int, seed: int) -> list[np.ndarray]:
    """The fold of every pixel of images of these (H, W) ``shapes``: with at least
    ``folds`` images, whole images, a random permutation dealt round the folds (their
    sizes differ by one at most); with fewer (napari's one painted slice), every image's
    :data:`BLOCK`-pixel squares, each in a fold drawn at random."""
    n = len(shapes)
    rng = np.random.default_rng(seed)
    if n >= folds:
        unit = np.empty(n, np.int64)
        unit[rng.permutation(n)] = np.arange(n) % folds
        return [np.full(shape, unit[i]) for i, shape in enumerate(shapes)]
    return [np.repeat(np.repeat(rng.integers(0, folds, (-(-h // BLOCK), -(-w // BLOCK))),
                                BLOCK, 0), BLOCK, 1)[:h, :w] for h, w in shapes]


def out_of_fold(model, inputs: list, labels: list, store: ImageStore, classes: np.ndarray,
                folds: int, seed: int) -> list[np.ndarray]:
    """(H * W, C) probability map of every input from a clone of ``model`` fitted on the
    other ``folds - 1`` folds (``store`` holds every input, prepared by the model's
    features; ``classes``: those of all the images, columns of the maps; a class a fold
    model lacks gets 0 there).

    Folds are images, or with fewer images than folds squares of them (:func:`fold_of`);
    a fold model trains on the other folds' labels only, read from ``store``
    (:func:`store_subset`: no store of its own). Where those show one class (a few
    strokes), the fold's maps say that class, as a model of it would; where they show
    none, every class alike."""
    n = len(inputs)
    fold_maps = fold_of([np.shape(lab) for lab in labels], folds, seed)
    hidden = _UNUSED
    part_model = clone(model, ignore=(*model.ignore, hidden))
    maps = [np.zeros((np.size(lab), classes.size), np.float32) for lab in labels]
    for f in range(folds):
        mine = [np.asarray(fold == f) for fold in fold_maps]
        rest = [i for i in range(n) if not mine[i].all()]
        part, seen = None, np.empty(0, classes.dtype)
        try:
            if rest:
                part = part_model.fit(
                    [inputs[i] for i in rest],
                    [np.where(mine[i], np.int32(hidden), np.asarray(labels[i], np.int32))
                     for i in rest], store=store_subset(store, rest))
        except TooFewClasses as err:  # a few strokes: the other folds show one class
            seen = err.classes
        for i in range(n):
            if mine[i].any():
                keep = mine[i].ravel()
                if part is not None:
                    columns = np.searchsorted(classes, part.classes_)
                    maps[i][np.ix_(keep, columns)] = part.jungle_.classify_image(
                        store, i)[1][keep]
                elif seen.size:  # what a model of one class says everywhere
                    maps[i][keep, np.searchsorted(classes, seen[0])] = 1
                else:  # no labels outside this fold: nothing known
                    maps[i][keep] = 1 / classes.size
    return maps


def fit_chain(segmenter, images: list, labels: list, progress, store: ImageStore | None):
    """Fit ``segmenter.auto_context`` stages; returns (earlier stage jungles, the last
    stage's fitted estimator). ``store``: the images prepared by stage 1's features."""
    from ._input import training_values

    base = segmenter._family()
    if not isinstance(base, ColourFeatures):
        raise ValueError(f"auto_context needs colour features, not {type(base).__name__}")
    values = None  # the training images as stage 1 reads them, when this fit makes its store
    if store is None:
        values = training_values(images, base)[0]
        store = base.prepare_fitted(values, cheap_pad(base.point_reach, image_shapes(values)))
    stage = clone(segmenter, auto_context=1)
    current = clone(stage).fit(images, labels, progress=progress, store=store)
    seed = int(current.jungle_.metadata["seed"])
    stages, inputs, current_store = [current.jungle_], images, store
    base = base.with_quantiser(store.quantiser)  # stage 1's codes, or float32 values
    family = context_family(base, store.n_channels, current.classes_.size, store.quantiser)
    del store  # later stores are made again from the images, or copy the one before them
    for s in range(1, int(segmenter.auto_context)):
        maps = out_of_fold(stage, inputs, labels, current_store, current.classes_,
                           int(segmenter.context_folds), seed + s)
        stage = clone(stage, features=family)
        if values is None:  # the caller's store: copy stage 1's planes from it
            current_store = stage_store(family, current_store, maps)
        else:  # made again from the images: the stage's store is freed first
            inputs = current_store = None
            current_store = stage_store(family, None, maps, base, values)
        del maps
        inputs = store_images(current_store)
        current = clone(stage).fit(inputs, labels, progress=progress, store=current_store)
        stages.append(current.jungle_)
    return stages[:-1], current
