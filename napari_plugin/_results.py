"""The widget's output layers: segmentation, uncertainty and probabilities, filled part by
part as the worker yields them, on the input's scale and translate.

Layers of more than :data:`FEW_SLICES` slices are chunked, not dense: in-memory zarr arrays
with one compressed chunk per slice, so a slice takes memory only once it is segmented, and
then its compressed size (label slices compress to a few percent; see docs/memory.md)."""
from __future__ import annotations

import numpy as np
from napari.utils.colormaps import DirectLabelColormap

from . import _session as session

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
    """Writes results into layers named after the input, created (or replaced when their
    shape changed) on first use, with the input's spatial ``scale`` and ``translate``."""

    def __init__(self, viewer):
        self.viewer = viewer

    def _layer(self, name, shape, dtype, make, scale, translate):
        layer = self.viewer.layers[name] if name in self.viewer.layers else None
        if layer is not None and (layer.data.shape != shape
                                  or not np.allclose(layer.scale, scale)):
            self.viewer.layers.remove(layer)
            layer = None
        if layer is None:
            layer = make(blank(shape, dtype), name=name, scale=scale, translate=translate)
        return layer

    def show(self, name: str, shape: tuple, scale: tuple, translate: tuple, key: tuple,
             labels: np.ndarray, proba: np.ndarray, display: str, colormap=None) -> None:
        """Put ``labels`` and ``proba`` (a slice, a volume or part of one) at ``key`` of the
        output layers of spatial ``shape``; ``display`` says which extra layer to fill."""
        scale, translate = tuple(scale), tuple(translate)
        seg = self._layer(f"{name} segmentation", shape, labels.dtype, self.viewer.add_labels,
                          scale, translate)
        seg.data[key] = labels
        if colormap is not None:
            seg.colormap = colormap
        seg.refresh()
        if display == "uncertainty":
            layer = self._layer(f"{name} uncertainty", shape, np.float32,
                                lambda d, **kw: self.viewer.add_image(
                                    d, colormap="magma", contrast_limits=(0, 1), opacity=0.6,
                                    **kw), scale, translate)
            layer.data[key] = session.uncertainty(proba)
            layer.refresh()
        elif display == "probabilities":
            layer = self._layer(f"{name} probabilities", (proba.shape[-1],) + shape,
                                np.float32, lambda d, **kw: self.viewer.add_image(
                                    d, colormap="viridis", contrast_limits=(0, 1),
                                    visible=False, **kw),
                                (1.0,) + scale, (0.0,) + translate)
            layer.data[(slice(None),) + key] = np.moveaxis(proba, -1, 0)
            layer.refresh()


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
