"""Per-pixel segmentation with a decision jungle: train on label images, segment images."""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted

from .._memory import check_training_memory
from .._validation import Integral, Interval, ListOf, StrOptions
from ..features import ColourFeatures, DepthFeatures, FeatureFamily, ImageStore
from ..features._store import fingerprint_values
from ..jungle import Jungle, JungleBase, grow
from ..jungle._entries import by_image, every_sample
from ..jungle._grow import Progress
from ._context import cheap_pad, fit_chain, image_shapes
from ._input import training_values
from ._sampling import (
    STRATEGIES,
    crop_to_nonzero,
    label_values,
    sample_pixels,
    trained_classes,
)
from ._segment import SEGMENTATION_CONSTRAINTS, segment


class JungleSegmenter(JungleBase):
    """Decision-jungle pixel classifier for images.

    Parameters
    ----------
    features : FeatureFamily
        What a split may test: :class:`ColourFeatures` (RGB, grey or any channels),
        :class:`DepthFeatures`, or :class:`VolumeFeatures` for 3-D volumes. With depth
        features only foreground pixels (depth > 0) are classified and the label
        ``background`` is given elsewhere.
    n_estimators, max_width, schedule, max_depth, min_samples_split, min_samples_leaf,
    criterion, n_thresholds, lsearch_steps, search, growth, max_nodes, random_state
        As for :class:`JungleClassifier`.
    n_candidate_features : int
        Candidate features drawn per node.
    sampling : {'random', 'all', 'balanced'}
        How training pixels are picked from each image (see
        :func:`jungleseg.sample_pixels`); ``samples_per_image`` of them.
    correct_prior : bool
        After class-balanced sampling, rescale every leaf distribution by the ratio of
        each class's share of the labelled pixels to its share of the samples, so that
        probabilities are again posteriors under the true class frequencies.
    images_per_dag : int or None
        Train each DAG on its own random subset of this many images (disjoint while the
        images last), as the paper does for Kinect and faces; None: every DAG sees all.
    ignore : sequence of int
        Label values never trained on: void (255), unlabelled scribble pixels (0)...
    background : int
        Label given to pixels a depth model does not classify.
    smoothing : int
        Half-size r of the square box over which segmentation averages each class's
        probability before choosing labels (0: none); stored with the model. Averaging
        over neighbours removes isolated wrong pixels and small holes, at the price of
        rounding corners and erasing structures thinner than about r pixels.
    guided_eps : float or None
        Ridge penalty of edge-aware smoothing; None averages plainly. A number makes the
        smoothing edge-aware: a guided filter
        of radius ``smoothing`` steered by the image's first channel (grey intensity,
        CIELab lightness, the first of 'channels', depth), with this ridge penalty; the
        channel is first centred and divided by its standard deviation over the training
        pixels (stored with the model), so ``guided_eps`` does not depend on the image's
        value range. Boundaries then follow image edges (see
        :func:`jungleseg.guided_smoothing`); smaller values follow weaker edges.
    soft : float
        Soft-routing factor stored with the model (segmentation may override it); 0 routes
        hard. Above 0, split node i sends the share ``sigmoid((v - threshold) / T_i)`` of
        the path weight reaching it right and the rest left, with ``T_i = soft x`` the
        standard deviation of the node's training responses; weights add where paths meet
        and each DAG's vote is its leaves' distributions mixed by weight.
    soft_epsilon : float
        Pruning of soft routing: a split whose share for the branch the response does not
        pick would be at most this steps hard (the whole weight goes the picked way), so
        each path carries more than ``soft_epsilon`` and the weights still sum to 1
        (0: every branch of positive weight; >= 0.5: hard routing). Larger values follow
        fewer paths, so cost less.
    prior_power : float
        How far labels favour rarer classes, stored with the model (segmentation may
        override it): each pixel gets the class of the largest ``probability / share **
        prior_power``, where ``share`` is the class's share of the training samples
        (recorded as metadata ``class_shares``). 0 takes the most probable class, which
        maximises pixel accuracy; 1 divides the class frequencies out, which balances
        recall over classes; values between trade the two, and can raise the mean
        Jaccard index when classes are imbalanced. Probabilities are not changed.
    auto_context : int
        Stages of auto-context (1: none). Stage s + 1 also probes stage s's class
        probability maps as channels, at offsets like any channel; its training maps
        come from stages fitted on the other images (out of fold, see
        ``context_folds``), so it does not learn to trust stage s's optimism on its own
        training pixels. Colour features only; the model file holds every stage
        (``jungle_.context``).
    context_folds : int
        Folds of auto-context's out-of-fold maps. Each stage but the last is fitted once
        more per fold, on the other folds' images (fewer images than folds: squares of
        them); more folds give maps more like those of the stage fitted on every image,
        at a linear extra cost.

    Attributes
    ----------
    classes_ : ndarray
        The class values trained on.
    jungle_ : :class:`jungleseg.Jungle`
        The trained model (what :func:`jungleseg.save_model` writes).
    node_count_, model_bytes_ : int
        Nodes and bytes of the DAGs.
    n_samples_ : int
        Training pixels sampled.
    grow_stats_ : GrowStats
        Seconds per training stage and the objective per level.

    Examples
    --------
    >>> from jungleseg import ColourFeatures, JungleSegmenter
    >>> from jungleseg.datasets.faces import render_faces
    >>> images, labels = render_faces(4, seed=0, size=(64, 64))
    >>> seg = JungleSegmenter(ColourFeatures(max_offset=8), n_estimators=2, max_depth=6,
    ...                       samples_per_image=200, random_state=0)
    >>> seg.fit(images, labels).predict(images[0]).shape
    (64, 64)
    """

    _parameter_constraints: dict = {
        **JungleBase._parameter_constraints,
        **SEGMENTATION_CONSTRAINTS,
        "features": [FeatureFamily, None],
        "n_candidate_features": [Interval(Integral, 1, 1 << 16, closed="both")],
        "sampling": [StrOptions(STRATEGIES)],
        "samples_per_image": [Interval(Integral, 1, None, closed="left")],
        "correct_prior": ["boolean"],
        "images_per_dag": [Interval(Integral, 1, None, closed="left"), None],
        "ignore": [ListOf(Interval(Integral, 0, 65535, closed="both"))],
        "auto_context": [Interval(Integral, 1, 8, closed="both")],
        "context_folds": [Interval(Integral, 2, 16, closed="both")],
    }

    def __init__(self, features: FeatureFamily | None = None, n_estimators=3, max_width=256,
                 schedule="doubling", max_depth=20, min_samples_split=2, min_samples_leaf=1,
                 criterion="entropy", n_candidate_features=100, n_thresholds=16,
                 lsearch_steps=250, search="lsearch", growth="jungle", max_nodes=None,
                 sampling="random", samples_per_image=1000, correct_prior=False,
                 images_per_dag=None, ignore=(255,), background=0, smoothing=0, guided_eps=None,
                 soft=0.0, soft_epsilon=0.0, prior_power=0.0, auto_context=1, context_folds=2,
                 random_state=None):
        self.features = features
        self.n_estimators = n_estimators
        self.max_width = max_width
        self.schedule = schedule
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.criterion = criterion
        self.n_candidate_features = n_candidate_features
        self.n_thresholds = n_thresholds
        self.lsearch_steps = lsearch_steps
        self.search = search
        self.growth = growth
        self.max_nodes = max_nodes
        self.sampling = sampling
        self.samples_per_image = samples_per_image
        self.correct_prior = correct_prior
        self.images_per_dag = images_per_dag
        self.ignore = ignore
        self.background = background
        self.smoothing = smoothing
        self.guided_eps = guided_eps
        self.soft = soft
        self.soft_epsilon = soft_epsilon
        self.prior_power = prior_power
        self.auto_context = auto_context
        self.context_folds = context_folds
        self.random_state = random_state

    def _family(self) -> FeatureFamily:
        return self.features if self.features is not None else ColourFeatures()

    def fit(self, images: Sequence[ArrayLike], labels: Sequence[ArrayLike],
            progress: Progress | None = None, store: ImageStore | None = None,
            max_memory: int | None = None) -> JungleSegmenter:
        """Train on images and their label images.

        Parameters
        ----------
        images : sequence of arrays
            (H, W) grey or depth, (H, W, 3) RGB or (H, W, C) channel images, as the
            feature family reads them; with :class:`~jungleseg.VolumeFeatures`, (D, H, W)
            or (D, H, W, C) volumes.
        labels : sequence of (H, W) integer arrays
            Class values per pixel (per voxel for volumes: (D, H, W), painted on any
            slices); values in ``ignore`` are never trained on.
        progress : callable, optional
            ``progress(level, n_nodes)`` is called after each level; an exception it
            raises stops training (how a GUI cancels).
        store : ImageStore, optional
            ``features.prepare(images, pad=...)`` computed by the caller (the model reads
            what it holds: float32 values, or the codes of a family given its quantiser,
            ``features.with_quantiser(features.fitted_quantiser(images))``, as training
            without a store makes them), who can then
            segment those images from it (:func:`jungleseg.segment_prepared`) without
            computing their channels twice. On a store padded by
            ``features.point_reach`` probes are read without clamping; this method pads
            its own store so when that adds at most a quarter to its size. Same model
            either way.
        max_memory : int, optional
            Bytes training may use; None: the memory available when it starts. Before
            any store is made, training whose estimated peak
            (:func:`jungleseg._memory.training_bytes`, auto-context stages included)
            exceeds it is refused with a MemoryError giving the estimate and the budget.
            Not checked when ``store`` is given (it is held already).

        Returns
        -------
        JungleSegmenter
            This estimator, fitted.
        """
        if self.auto_context > 1:
            images, labels = self._checked_inputs(images, labels)
            if store is None:
                check_training_memory(self, images, labels, max_memory)
            return self._fit_stages(images, labels, progress, store)
        plan = self._plan(images, labels, store, max_memory)
        dags, stats = self._grow(plan, progress)
        return self._fitted(_summary(plan), dags, stats)

    def _checked_inputs(self, images, labels) -> tuple[list, list]:
        """The parameters, and images with label images that fit them (ValueError)."""
        self._validate_params()
        family = self._family()
        ndim = family.spatial_ndim
        if getattr(labels, "ndim", None) == ndim:  # one label image, not a sequence of them
            raise ValueError(f"labels is one label image of shape {np.shape(labels)}; fit takes "
                             "a sequence of images and one of label images: fit([image], "
                             "[labels])")
        images, labels = list(images), list(labels)
        if len(images) != len(labels) or not images:
            raise ValueError(f"got {len(images)} images and {len(labels)} label images (one "
                             "image: fit([image], [labels]))")
        if ndim == 3 and self.smoothing and self.guided_eps is not None:
            raise ValueError("edge-aware smoothing (guided_eps) is for 2-D images; volumes "
                             "average probabilities plainly (guided_eps: null)")
        for i, (im, lab) in enumerate(zip(images, labels)):
            if np.ndim(im) < ndim:
                raise ValueError(f"image {i} has shape {np.shape(im)}: {ndim} spatial axes "
                                 "needed")
            if np.shape(lab) != np.shape(im)[:ndim]:
                raise ValueError(f"image {i} is {np.shape(im)[:ndim]} but its labels are "
                                 f"{np.shape(lab)}")
        return images, [_checked_labels(lab, i) for i, lab in enumerate(labels)]

    def _plan(self, images, labels, store: ImageStore | None = None,
              max_memory: int | None = None) -> _Plan:
        """Everything before growth (:meth:`fit`'s checks, the memory check against
        ``max_memory`` when the store is to be made, the store, the samples and the
        entries), which every DAG's growth reads."""
        images, labels = self._checked_inputs(images, labels)
        family = self._family()
        ndim = family.spatial_ndim
        images, input_values = training_values(images, family)
        ignore = self._never_trained(family)
        values = np.unique(np.concatenate([label_values(lab) for lab in labels]))
        classes = trained_classes(values, ignore)
        self.classes_ = classes
        seed = self._seed()
        params = self._grow_params(len(classes), int(self.n_candidate_features), seed)
        start = time.perf_counter()
        if store is not None and (
                store.n_images != len(images) or store.n_channels != family.n_store_channels
                or store.ndim != ndim
                or any(store.shape(i) != np.shape(im)[:ndim] for i, im in enumerate(images))):
            raise ValueError("store does not hold these images prepared by these features")
        samples = sample_pixels(labels, classes, self.sampling, self.samples_per_image,
                                tuple(ignore), seed)
        stored = images
        if store is None:
            check_training_memory(self, images, labels, max_memory)
        if store is None and family.border == "zero":  # a probe off an image reads a 0 pixel
            stored, samples = crop_to_nonzero(images, samples)
        if store is None:
            store = family.prepare_fitted(stored, cheap_pad(family.point_reach,
                                                            image_shapes(stored)))
        # the model reads what the store holds: codes or float32 values
        family = family.with_quantiser(store.quantiser)
        family.check_store(store)
        if ndim == 3:  # row z H + y of a volume: its row in the store's taller plane
            height = store.height[samples.image]
            samples = dataclasses.replace(samples, row=store.rows(
                samples.image, samples.row // height, samples.row % height))
        prepare_seconds = time.perf_counter() - start
        if self.images_per_dag is None:
            entries = every_sample(len(samples), self.n_estimators)
        else:
            entries = by_image(samples.image, len(images), int(self.images_per_dag),
                               self.n_estimators, seed)
        ratio = self._class_ratio(labels, samples) if self.correct_prior else None
        return _Plan(store, samples, entries, params, family, classes, seed, input_values,
                     len(images), ratio, prepare_seconds)

    def _grow(self, plan: _Plan, progress: Progress | None = None, dags=None, merge=()
              ) -> tuple[list, object]:
        """The DAGs of the plan (global ids ``dags``, default all; ``merge`` as for
        :func:`jungleseg.jungle.grow`) and their growth statistics: one DAG grown alone
        equals the same DAG grown with the others."""
        reach = plan.family.point_reach
        grown, stats = grow(plan.store.as_tuple(), plan.samples, plan.family, plan.entries,
                            plan.params, progress,
                            unclamped=reach is not None and plan.store.pad >= reach,
                            dags=dags, merge=merge)
        stats.seconds["prepare"] = plan.prepare_seconds
        if plan.class_ratio is not None:
            grown = _reweighted(grown, plan.class_ratio)
        return grown, stats

    def _fitted(self, summary: dict, dags: list, stats) -> JungleSegmenter:
        """This estimator with the model of ``dags`` (all of them, in order) and the
        plan's :func:`_summary`."""
        self.classes_ = np.asarray(summary["classes"])
        self.grow_stats_ = stats
        family = self._family().with_quantiser(summary.get("quantiser"))
        self.jungle_ = Jungle(list(dags), self.classes_, family,
                              self.get_params(deep=False), dict(summary["metadata"]))
        self.node_count_ = self.jungle_.node_count
        self.model_bytes_ = self.jungle_.nbytes
        self.n_samples_ = summary["n_samples"]
        return self

    def _fit_stages(self, images, labels, progress, store) -> JungleSegmenter:
        """Auto-context: every stage (see ``_context``); the model is the last stage,
        holding the earlier ones as its context."""
        earlier, last = fit_chain(self, images, labels, progress, store)
        metadata = {**last.jungle_.metadata,
                    "input_values": earlier[0].metadata.get("input_values")}
        self.classes_ = last.classes_
        self.jungle_ = Jungle(last.jungle_.dags, last.classes_, last.jungle_.family,
                              self.get_params(deep=False),
                              {k: v for k, v in metadata.items() if v is not None},
                              tuple(earlier))
        self.grow_stats_ = last.grow_stats_
        self.node_count_ = self.jungle_.node_count
        self.model_bytes_ = self.jungle_.nbytes
        self.n_samples_ = last.n_samples_
        return self

    def _never_trained(self, family: FeatureFamily) -> set[int]:
        """Label values never sampled: ``ignore``, and for depth features ``background``."""
        ignored = {int(v) for v in self.ignore}
        if isinstance(family, DepthFeatures):
            ignored.add(int(self.background))
        return ignored

    def _class_ratio(self, labels, samples) -> np.ndarray:
        """Each class's share of the labelled pixels over its share of the samples."""
        pixels = np.array([sum(int((np.asarray(lab) == v).sum()) for lab in labels)
                           for v in self.classes_], np.float64)
        sampled = np.bincount(samples.label, minlength=len(self.classes_)).astype(np.float64)
        return (pixels / pixels.sum()) / np.maximum(sampled / sampled.sum(), 1e-12)

    def predict_proba(self, image: ArrayLike) -> np.ndarray:
        """Class probabilities (H, W, n_classes) float32; zero where not classified.

        Parameters
        ----------
        image : array
            One image, as ``fit`` takes them.
        """
        check_is_fitted(self, "jungle_")
        return segment(self.jungle_, image)[1]

    def predict(self, image: ArrayLike) -> np.ndarray:
        """Label image (H, W): the most probable class value of every pixel.

        Parameters
        ----------
        image : array
            One image, as ``fit`` takes them.
        """
        check_is_fitted(self, "jungle_")
        return segment(self.jungle_, image, probabilities=False)[0]


@dataclasses.dataclass(frozen=True)
class _Plan:
    """What every DAG's growth reads: see :meth:`JungleSegmenter._plan`."""

    store: ImageStore
    samples: object
    entries: object
    params: object
    family: FeatureFamily
    classes: np.ndarray
    seed: int
    input_values: dict | None
    n_images: int
    class_ratio: np.ndarray | None  # correct_prior: the leaf reweighting
    prepare_seconds: float


def _summary(plan: _Plan) -> dict:
    """The classes, sample count and model metadata of a plan: all a model needs besides
    its DAGs (small, so a task can return it)."""
    values = [plan.store.values_at(plan.samples, c) for c in range(plan.store.n_channels)]
    return summary_of(plan.classes, plan.seed, values, plan.samples.label, plan.n_images,
                      plan.input_values, plan.class_ratio, plan.family.quantiser)


def summary_of(classes: np.ndarray, seed: int, channel_values: list[np.ndarray],
               label: np.ndarray, n_images: int, input_values: dict | None,
               class_ratio: np.ndarray | None = None, quantiser=None) -> dict:
    """:func:`_summary` from each store channel's values at the samples (all of them, in
    order) and the samples' labels, however the store is held (data-parallel training
    gathers them from its shards); ``class_ratio``: the leaves' reweighting, if any
    (``correct_prior``); ``quantiser``: the store's (None: float32 values)."""
    metadata = {"seed": seed, "data_fingerprint": fingerprint_values(channel_values, label),
                "n_training_images": n_images, "guide": _guide_statistics(channel_values[0]),
                "class_shares": _class_shares(label, len(classes), class_ratio),
                **({"input_values": input_values} if input_values else {})}
    return {"classes": classes, "n_samples": int(label.shape[0]), "metadata": metadata,
            "quantiser": quantiser}


def _checked_labels(labels, i: int) -> np.ndarray:
    """A label image as an integer array, or ValueError saying what it holds instead."""
    labels = np.asarray(labels)
    if labels.dtype.kind in "ui":
        return labels
    if labels.dtype.kind == "b":
        return labels.astype(np.uint8)
    if labels.dtype == object and all(isinstance(v, (int, np.integer))
                                      and not isinstance(v, bool) for v in labels.ravel()):
        return labels.astype(np.int64)
    if labels.dtype.kind == "f":
        whole = bool(np.all(np.isfinite(labels)) and np.all(labels == np.round(labels)))
        hint = ("; its values are whole numbers: convert with .astype(np.uint8) or uint16"
                if whole else "")
        raise ValueError(f"label image {i} is {labels.dtype}: labels must be integer class "
                         f"values{hint}")
    kinds = sorted({type(v).__name__ for v in labels.ravel()[:100000]}) if labels.dtype == object \
        else [labels.dtype.name]
    raise ValueError(f"label image {i} holds {', '.join(kinds)} values: labels must be integer "
                     "class values (one integer array per image)")


def _class_shares(label: np.ndarray, n_classes: int, ratio: np.ndarray | None
                  ) -> list[float]:
    """Each class's share of the samples (class indices ``label``), times the leaves'
    reweighting ``ratio`` where given, renormalised: the class frequencies the leaf
    distributions are posteriors under. A class without samples (its probability is 0
    everywhere) gets half a sample's share, so that no share is 0."""
    shares = np.bincount(label, minlength=n_classes).astype(np.float64)
    if ratio is not None:
        shares *= ratio
    shares = np.maximum(shares / shares.sum(), 0.5 / max(len(label), 1))
    return [float(v) for v in shares / shares.sum()]


def _guide_statistics(values: np.ndarray) -> list[float]:
    """Mean and standard deviation (1 if zero) of channel 0's ``values`` at the training
    pixels: the centre and scale of the guide of edge-aware smoothing."""
    values = values.astype(np.float64)
    spread = float(values.std())
    return [float(values.mean()), spread if spread > 0 else 1.0]


def _reweighted(dags, ratio: np.ndarray):
    """The DAGs with every leaf distribution multiplied by ``ratio`` and renormalised."""
    out = []
    for dag in dags:
        value = dag.leaf_value.astype(np.float64) * ratio
        value /= value.sum(axis=1, keepdims=True)
        out.append(dataclasses.replace(dag, leaf_value=value.astype(np.float32)))
    return out
