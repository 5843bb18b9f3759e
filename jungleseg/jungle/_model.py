"""A trained jungle: its DAGs, classes, feature family and training parameters."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numba
import numpy as np
from numpy.typing import ArrayLike

from .._validation import Interval, Real
from .._workers import threads, workers_for
from ..features import FeatureFamily, ImageStore, Samples
from ._dag import DAG, ModelError
from ._predict import (
    CLAMPED,
    DEPTH_STEPS,
    POINT_STEPS,
    predict_pixels,
    predict_proba,
    weighted_argmax,
)

#: Allowed values of ``prior_power``: a training parameter, stored in the model and
#: read at inference.
PRIOR_POWER = [Interval(Real, 0, 1, closed="both")]


@dataclass(eq=False)
class Jungle:
    """An ensemble of decision DAGs; probabilities average the DAGs' leaf distributions."""

    dags: list[DAG]
    classes: np.ndarray
    family: FeatureFamily
    params: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)  # class names, colours, data fingerprint...
    #: Auto-context: the earlier stages, in order (stage 1 reads the images; each later
    #: stage, this one last, reads stage 1's channels and the previous stage's maps).
    context: tuple = ()

    @property
    def n_classes(self) -> int:
        return int(len(self.classes))

    @property
    def node_count(self) -> int:
        """Split and leaf nodes of all DAGs together (of every auto-context stage)."""
        return sum(d.n_nodes for d in self.dags) + sum(s.node_count for s in self.context)

    @property
    def nbytes(self) -> int:
        """Byte size of the DAGs' arrays (of every auto-context stage)."""
        return sum(d.nbytes for d in self.dags) + sum(s.nbytes for s in self.context)

    @property
    def max_depth(self) -> int:
        return max(d.depth for d in self.dags)

    @property
    def max_feature_evaluations(self) -> int:
        """Most feature evaluations one sample can need: deepest path x ensemble size."""
        return self.max_depth * len(self.dags)

    @property
    def class_names(self) -> list[str]:
        """Each class's name from the metadata, else its value."""
        names = self.metadata.get("class_names", {})
        return [str(names.get(str(c), c)) for c in self.classes]

    def summary(self) -> dict:
        """What ``jungleseg info`` shows: classes and their names, DAGs, depth, nodes,
        bytes, the feature family, the training parameters and the other metadata."""
        return {
            "classes": {str(c): name for c, name in zip(self.classes, self.class_names)},
            "dags": len(self.dags),
            "stages": 1 + len(self.context),
            "depth": self.max_depth,
            "nodes": self.node_count,
            "bytes": self.nbytes,
            "features": self.family.to_dict(),
            "training": self.params,
            "metadata": {k: v for k, v in self.metadata.items() if k != "class_names"},
        }

    def validate(self) -> None:
        """Raise :class:`ModelError` unless every DAG is safe to traverse."""
        if not self.dags:
            raise ModelError("a jungle needs at least one DAG")
        for s, stage in enumerate(self.context):
            if stage.context:
                raise ModelError(f"auto-context stage {s} must not hold stages itself")
            if not np.array_equal(stage.classes, self.classes):
                raise ModelError(f"auto-context stage {s} has other classes than the model")
            stage.validate()
            if s and stage.family != self.family:
                raise ModelError(f"auto-context stage {s} reads other channels than the last")
        shares = self.metadata.get("class_shares")
        if shares is not None and not _positive_vector(shares, self.n_classes):
            raise ModelError(f"metadata class_shares must be {self.n_classes} finite numbers "
                             "above 0, one per class")
        if self.context:
            wanted = self.context[0].family.n_store_channels + self.n_classes
            if getattr(self.family, "n_channels", None) != wanted:
                raise ModelError(f"the last auto-context stage must read {wanted} channels "
                                 "(stage 1's and the class maps)")
        for g, dag in enumerate(self.dags):
            try:
                dag.validate(self.n_classes, self.family.n_params, self.family.kind_codes)
                problem = self.family.check_params(dag.feature_params[dag.left >= 0])
                if problem:
                    raise ModelError(problem)
            except ModelError as err:
                raise ModelError(f"DAG {g}: {err}") from None

    @cached_property
    def _packed(self) -> tuple:
        def cat(name):
            return np.ascontiguousarray(np.concatenate([getattr(d, name) for d in self.dags]))

        node_start = np.cumsum([0] + [d.n_nodes for d in self.dags]).astype(np.int64)
        leaf_start = np.cumsum([0] + [d.n_leaves for d in self.dags]).astype(np.int64)
        return (node_start, leaf_start, cat("feature_kind"), cat("feature_params"),
                cat("threshold"), cat("left"), cat("right"), cat("leaf_value"))

    @property
    def can_route_softly(self) -> bool:
        """Whether every DAG records its nodes' response spread (models trained before
        soft routing existed do not, and route hard only)."""
        return all(d.spread is not None for d in self.dags)

    @cached_property
    def _spread(self) -> np.ndarray:
        if not self.can_route_softly:
            return np.zeros(0, np.float32)
        return np.ascontiguousarray(np.concatenate([d.spread for d in self.dags]))

    @cached_property
    def _widest(self) -> int:
        """Nodes in the widest level of any DAG (bounds a pixel's soft-routing paths)."""
        return int(max(np.diff(d.level_start.astype(np.int64)).max() for d in self.dags))

    def soft_routing(self, soft: float | None = None, epsilon: float | None = None
                     ) -> tuple[float, float]:
        """The soft-routing factor and pruning epsilon to use: the given values, else the
        model's own (training parameters ``soft`` and ``soft_epsilon``, default 0 = hard
        routing and 0 = no pruning). ValueError if soft routing is asked of a model
        without per-node spreads."""
        soft = float(self.params.get("soft", 0.0) if soft is None else soft)
        epsilon = float(self.params.get("soft_epsilon", 0.0) if epsilon is None else epsilon)
        if not (np.isfinite(soft) and soft >= 0):
            raise ValueError(f"soft must be a finite number >= 0, got {soft!r}")
        if not 0 <= epsilon < 1:
            raise ValueError(f"soft_epsilon must lie in [0, 1), got {epsilon!r}")
        if soft > 0 and not self.can_route_softly:
            raise ValueError("this model records no per-node response spread (trained before "
                             "soft routing): retrain it to route softly, or use soft=0")
        return soft, epsilon

    def label_weights(self, prior_power: float | None = None) -> np.ndarray:
        """Per-class factors (n_classes,) float32 that labelling multiplies the
        probabilities by before taking the largest: ``share ** -prior_power``, where
        ``share`` is each class's share of the training samples (metadata
        ``class_shares``, the frequencies the leaf distributions are posteriors under).
        ``prior_power`` (default: the model's own, training parameter ``prior_power``,
        else 0) of 0 labels by the most probable class, the best pixel accuracy; 1
        divides the class frequencies out, balancing recall over classes; values between
        favour rarer classes less. ValueError for a power outside [0, 1] or a power above
        0 asked of a model that records no class shares."""
        power = float(self.params.get("prior_power", 0.0) if prior_power is None
                      else prior_power)
        if not 0 <= power <= 1:
            raise ValueError(f"prior_power must lie in [0, 1], got {prior_power!r}")
        if power == 0:
            return np.ones(self.n_classes, np.float32)
        shares = self.metadata.get("class_shares")
        if shares is None:
            raise ValueError("this model records no training class shares (trained before "
                             "prior_power existed): retrain it to use prior_power, or use 0")
        return (np.asarray(shares, np.float64) ** -power).astype(np.float32)

    def label_indices(self, proba: np.ndarray, axis: int = -1) -> np.ndarray:
        """Class indices that probabilities ``proba`` label (along ``axis``), as the
        traversal labels: the largest probability times :meth:`label_weights` (the
        first such class, as :func:`numpy.argmax` picks it)."""
        weights = self.label_weights()
        proba = np.moveaxis(np.asarray(proba), axis, -1)
        rows = np.ascontiguousarray(proba, np.result_type(proba.dtype, weights.dtype))
        return weighted_argmax(rows.reshape(-1, proba.shape[-1]), weights).reshape(
            proba.shape[:-1])  # in the type NumPy would multiply in

    def predict_proba(self, store: ImageStore, samples: Samples) -> np.ndarray:
        """Class probabilities (n_samples, n_classes), float32."""
        self.family.check_store(store)
        return predict_proba(*self._packed, store.as_tuple(), samples.image, samples.row,
                             samples.col)

    def predict_image(self, store: ImageStore, image: int = 0, mask: ArrayLike | None = None
                      ) -> np.ndarray:
        """Class probabilities (H, W, n_classes) float32 of one image of the store;
        pixels outside ``mask`` (where given) stay zero."""
        h, w = int(store.height[image]), int(store.width[image])
        return self.classify_image(store, image, _pixels(mask, h, w))[1].reshape(h, w, -1)

    def classify_image(self, store: ImageStore, image: int = 0, index=None,
                       probabilities: bool = True, soft: float | None = None,
                       epsilon: float | None = None, counts: dict | None = None
                       ) -> tuple[np.ndarray, np.ndarray | None]:
        """Class indices of the listed pixels of one image (flat ``row * width + col``,
        all pixels by default; as :meth:`label_indices` picks them), and with
        ``probabilities`` the (H * W, n_classes) float32 probabilities, zero at pixels not
        listed; without, no per-class array is made (the labels are the same). Probes
        are read at fixed steps where the store's border allows it (same result,
        faster). ``soft`` and ``epsilon``: soft routing (see :meth:`soft_routing`; 0
        routes hard). ``counts``, if given, receives ``visits``, the split nodes
        evaluated, and ``pixels``."""
        self.family.check_store(store)
        if store.ndim == 3:
            raise ValueError("a volume is traversed by predict_volume, not by image")
        h, w = int(store.height[image]), int(store.width[image])
        index = np.arange(h * w, dtype=np.int64) if index is None else np.asarray(index,
                                                                                   np.int64)
        soft, epsilon = self.soft_routing(soft, epsilon)
        proba = np.zeros((h * w if probabilities else 0, self.n_classes), np.float32)
        labels = np.empty(index.shape[0], np.int32)
        with threads(workers_for(index.shape[0] * self.max_feature_evaluations)):
            visits = predict_pixels(*self._packed, self._spread, self._widest,
                                    store.as_tuple(), image, index,
                                    self._read_mode(store, image, index), soft, epsilon,
                                    self.label_weights(), proba, labels,
                                    numba.get_num_threads())
        if counts is not None:
            counts.update(visits=int(visits), pixels=int(index.shape[0]))
        return labels, (proba if probabilities else None)

    def _read_mode(self, store: ImageStore, image: int, index: np.ndarray) -> int:
        """How traversal may read probes on this store: at fixed steps when its border
        reaches as far as every split node probes from the listed pixels."""
        reach = self.point_reach
        if reach is not None and store.pad >= reach:
            return POINT_STEPS
        if self.family.name == "depth" and store.border == "zero" and index.size:
            _, origin, _, width, stride, _, _, _ = store.as_tuple()
            w = int(width[image])
            at = origin[image] + (index // w) * stride[image] + index % w
            nearest = float(store.pixels[at].min())  # depth probes reach farthest there
            if nearest > 0 and store.pad >= int(np.ceil(self._largest_offset / nearest)) + 1:
                return DEPTH_STEPS
        return CLAMPED

    @cached_property
    def _largest_offset(self) -> float:
        """The largest parameter magnitude of any split node (for depth, in pixel-metres)."""
        return float(max(np.abs(d.feature_params[d.left >= 0]).max(initial=0)
                         for d in self.dags))

    def predict_volume(self, store: ImageStore, image: int = 0,
                       slices: ArrayLike | None = None, soft: float | None = None,
                       epsilon: float | None = None) -> np.ndarray:
        """Class probabilities (d, H, W, n_classes) float32 of slices ``slices`` (default:
        all) of one volume of a store of volumes.

        Each slice is traversed as a 2-D image: a view of the store whose images are the
        volume's slices, and the split nodes rewritten as the 2-D point kinds that read the
        same voxels there (:meth:`VolumeFeatures.planar_nodes`), so volumes share the
        traversal kernel with images. ``soft``, ``epsilon``: as for :meth:`classify_image`.
        """
        soft, epsilon = self.soft_routing(soft, epsilon)
        self.family.check_store(store)
        pixels, origin, height, width, stride, plane, integral, integral_offset = \
            store.as_tuple()
        depth = int(store.depth[image])
        z = np.arange(depth) if slices is None else np.asarray(slices, np.int64)
        if z.size and (z.min() < 0 or z.max() >= depth):
            raise ValueError(f"slices must lie in 0..{depth - 1}")
        node_start, leaf_start, kind, params, threshold, left, right, leaf_value = self._packed
        slice_rows = int(height[image]) + 2 * store.pad
        kind, params = self.family.planar_nodes(kind, params, slice_rows)
        n = z.size
        view = (pixels, origin[image] + (z + store.pad_z) * slice_rows * stride[image],
                np.full(n, height[image], height.dtype), np.full(n, width[image], width.dtype),
                np.full(n, stride[image], stride.dtype), np.full(n, plane[image], plane.dtype),
                integral, integral_offset)
        h, w = int(height[image]), int(width[image])
        out = np.empty((n, h * w, self.n_classes), np.float32)
        every_pixel = np.arange(h * w, dtype=np.int64)
        labels = np.empty(h * w, np.int32)
        weights = np.ones(self.n_classes, np.float32)  # labels unused: labelled_volume labels
        with threads(workers_for(h * w * self.max_feature_evaluations)):
            for j in range(n):
                predict_pixels(node_start, leaf_start, kind, params, threshold, left, right,
                               leaf_value, self._spread, self._widest, view, j, every_pixel,
                               POINT_STEPS, soft, epsilon, weights, out[j], labels,
                               numba.get_num_threads())
        return out.reshape(n, h, w, self.n_classes)

    @cached_property
    def point_reach(self) -> int | None:
        """How far the split nodes probe, in pixels, if all read single pixels at fixed
        offsets within the family's ``point_reach``; else None. Images packed with a
        border this wide are traversed without clamping probes (same result, faster)."""
        if self.family.point_reach is None:
            return None
        offsets = [np.abs(d.feature_params[d.left >= 0, :4]).max(initial=0) for d in self.dags]
        reach = int(max(offsets))
        return reach if reach <= self.family.point_reach else None


def checked_jungle(model, caller: str) -> Jungle:
    """``model`` if it is a :class:`Jungle`, else TypeError saying what ``caller`` takes
    (passing the fitted estimator itself is the usual slip: its model is its ``jungle_``)."""
    if isinstance(model, Jungle):
        return model
    hint = ("pass its jungle_" if isinstance(getattr(model, "jungle_", None), Jungle)
            else "pass a fitted estimator's jungle_, or a model from load_model")
    raise TypeError(f"{caller} takes a model (a Jungle), got a {type(model).__name__}: {hint}")


def integer_classes(classes: ArrayLike) -> np.ndarray | None:
    """``classes`` as int64 when every value is a whole number int64 holds (integers,
    booleans, or floats such as 0.0, 1.0 read from a CSV file), else None (strings, ...).
    Model files and the C export store class values as integers.

    >>> integer_classes(np.array([0.0, 2.0])), integer_classes(np.array(["a", "b"]))
    (array([0, 2]), None)
    """
    classes = np.asarray(classes)
    kind = classes.dtype.kind
    if kind == "f":
        whole = bool(np.all(np.isfinite(classes)) and np.all(classes == np.round(classes))
                     and np.all(np.abs(classes) < 2.0 ** 63))
    else:
        whole = kind in "ib" or (kind == "u" and int(classes.max(initial=0)) < 1 << 63)
    return classes.astype(np.int64) if whole else None


def class_sample(classes: np.ndarray) -> str:
    """The first values of ``classes`` as Python writes them, for an error message.

    >>> class_sample(np.array(["setosa", "versicolor", "virginica", "other"]))
    "'setosa', 'versicolor', 'virginica', ..."
    """
    shown = [repr(v.item() if isinstance(v, np.generic) else v) for v in classes[:3]]
    return ", ".join(shown + ["..."] * (len(classes) > 3))


def _positive_vector(values, n: int) -> bool:
    """Whether ``values`` (read from a file: anything) is a list of ``n`` finite numbers
    above 0."""
    return (isinstance(values, list) and len(values) == n
            and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                    and np.isfinite(v) and v > 0 for v in values))


def _pixels(mask, h: int, w: int) -> np.ndarray | None:
    """Flat indices of a mask's nonzero pixels (None: every pixel)."""
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.shape != (h, w):
        raise ValueError(f"mask shape {mask.shape} does not match the image ({h}, {w})")
    return np.flatnonzero(mask)
