"""A trained jungle: its DAGs, classes, feature family and training parameters."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike

from ..features import FeatureFamily, ImageStore, Samples
from ._dag import DAG, ModelError
from ._predict import predict_image, predict_proba


@dataclass(eq=False)
class Jungle:
    """An ensemble of decision DAGs; probabilities average the DAGs' leaf distributions."""

    dags: list[DAG]
    classes: np.ndarray
    family: FeatureFamily
    params: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)  # class names, colours, data fingerprint...

    @property
    def n_classes(self) -> int:
        return int(len(self.classes))

    @property
    def node_count(self) -> int:
        """Split and leaf nodes of all DAGs together."""
        return sum(d.n_nodes for d in self.dags)

    @property
    def nbytes(self) -> int:
        """Byte size of the DAGs' arrays."""
        return sum(d.nbytes for d in self.dags)

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

    def predict_proba(self, store: ImageStore, samples: Samples) -> np.ndarray:
        """Class probabilities (n_samples, n_classes), float32."""
        self.family.check_store(store)
        return predict_proba(*self._packed, store.as_tuple(), samples.image, samples.row,
                             samples.col)

    def predict_image(self, store: ImageStore, image: int = 0, mask: ArrayLike | None = None
                      ) -> np.ndarray:
        """Class probabilities (H, W, n_classes) float32 of one image of the store;
        pixels outside ``mask`` (where given) stay zero."""
        self.family.check_store(store)
        if store.ndim == 3:
            raise ValueError("a volume is traversed by predict_volume, not predict_image")
        mask = np.zeros((0, 0), np.uint8) if mask is None else np.ascontiguousarray(mask, np.uint8)
        h, w = int(store.height[image]), int(store.width[image])
        if mask.size and mask.shape != (h, w):
            raise ValueError(f"mask shape {mask.shape} does not match the image ({h}, {w})")
        reach = self.point_reach
        direct = reach is not None and store.pad >= reach
        return predict_image(*self._packed, store.as_tuple(), image, mask, direct)

    def predict_volume(self, store: ImageStore, image: int = 0,
                       slices: ArrayLike | None = None) -> np.ndarray:
        """Class probabilities (d, H, W, n_classes) float32 of slices ``slices`` (default:
        all) of one volume of a store of volumes.

        Each slice is traversed as a 2-D image: a view of the store whose images are the
        volume's slices, and the split nodes rewritten as the 2-D point kinds that read the
        same voxels there (:meth:`VolumeFeatures.planar_nodes`), so volumes share the
        traversal kernel with images.
        """
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
        out = np.empty((n, int(height[image]), int(width[image]), self.n_classes), np.float32)
        no_mask = np.zeros((0, 0), np.uint8)
        for j in range(n):
            out[j] = predict_image(node_start, leaf_start, kind, params, threshold, left, right,
                                   leaf_value, view, j, no_mask, True)
        return out

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
