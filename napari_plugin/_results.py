"""The widget's output layers: segmentation, uncertainty and probabilities, filled part by
part as the worker yields them, on the input's scale and translate, marked as outputs in
their metadata (so that they are never offered as inputs).

Layers of more than :data:`FEW_SLICES` slices are chunked, not dense: in-memory zarr arrays
with one compressed chunk per slice, so a slice takes memory only once it is segmented, and
then its compressed size (label slices compress to a few percent; see docs/results/memory.md)."""
from __future__ import annotations

import numpy as np
from napari.utils.colormaps import DirectLabelColormap

from . import _session as session
from ._choices import OUTPUT_KEY

#: Output layers with more slices than this are chunked zarr arrays, not dense arrays.
FEW_SLICES = 8


def blank(shape: tuple, dtype):
    """Zeros of ``shape`` for an output layer: a NumPy array up to :data:`FEW_SLICES`
    slices (the leading axes' product), else an in-memory zarr array chunked by slice."""
    shape = tuple(int(n) for n in shape)
    if int(np.prod(shape[:-2], dtype=np.int64)) <= FEW_SLICES:
        return np.zeros(shape, dtype)
    import zarr

    return zarr.zeros(shape, chunks=(1,) * (len(shape) - 2) + shape[-2:], dtype=dtype)


class ResultLayers:
    """Writes results into layers named after the input, created on first use with the
    input's spatial ``scale`` and ``translate``: the segmentation on top, visible; the
    uncertainty under it and the probabilities (if asked for) hidden, one click away.

    Later results go into the same layers, so the user's visibility, opacity and order
    stay; a layer whose shape or scale no longer fits is replaced in its place, with its
    visibility and opacity."""

    def __init__(self, viewer):
        self.viewer = viewer

    def _layer(self, name, shape, dtype, make, scale, translate, **style):
        layers = self.viewer.layers
        old = layers[name] if name in layers else None
        if old is not None and old.data.shape == shape and np.allclose(old.scale, scale):
            return old
        if old is not None:
            index = layers.index(old)
            style.update(visible=old.visible, opacity=old.opacity)
            layers.remove(old)
        layer = make(blank(shape, dtype), name=name, scale=scale, translate=translate,
                     metadata={OUTPUT_KEY: True}, **style)
        if old is not None:
            layers.move(layers.index(layer), index)
        return layer

    def show(self, name: str, shape: tuple, scale: tuple, translate: tuple, key: tuple,
             labels: np.ndarray, proba: np.ndarray, probabilities: bool = False,
             colormap=None) -> None:
        """Put ``labels`` and ``proba`` (a slice, a volume or part of one) at ``key`` of the
        output layers of spatial ``shape``; ``probabilities``: fill that layer too."""
        scale, translate = tuple(scale), tuple(translate)
        active = self.viewer.layers.selection.active  # stays the layer being painted on
        if probabilities:
            layer = self._layer(f"{name} probabilities", (proba.shape[-1],) + shape,
                                np.float32, self.viewer.add_image, (1.0,) + scale,
                                (0.0,) + translate, colormap="viridis",
                                contrast_limits=(0, 1), visible=False)
            layer.data[(slice(None),) + key] = np.moveaxis(proba, -1, 0)
            layer.refresh()
        unsure = self._layer(f"{name} uncertainty", shape, np.float32, self.viewer.add_image,
                             scale, translate, colormap="magma", contrast_limits=(0, 1),
                             opacity=0.6, visible=False)
        unsure.data[key] = session.uncertainty(proba)
        unsure.refresh()
        seg = self._layer(f"{name} segmentation", shape, labels.dtype, self.viewer.add_labels,
                          scale, translate, opacity=0.6)
        seg.data[key] = labels
        if colormap is not None:
            seg.colormap = colormap
        seg.refresh()
        if active is not None and active in self.viewer.layers:
            self.viewer.layers.selection.active = active


def class_colormap(scribble_layer, jungle):
    """The scribble layer's colours, else the model's class colours, else None."""
    if scribble_layer is not None:
        return scribble_layer.colormap
    colours = (jungle.metadata or {}).get("class_colours") if jungle else None
    if not colours:
        return None
    mapping = {int(k): np.append(np.asarray(v[:3], float) / 255, 1.0)
               for k, v in colours.items()}
    return DirectLabelColormap(color_dict={None: np.zeros(4), **mapping})
