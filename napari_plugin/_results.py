"""The widget's output layers: segmentation, uncertainty and probabilities, filled part by
part as the worker yields them, on the input's scale and translate, marked as outputs in
their metadata (so that they are never offered as inputs).

Results are written into NumPy arrays in place, once per part. Layers of more than
:data:`FEW_SLICES` slices of an input that is not in memory (dask, zarr), or larger than
:data:`DENSE_BYTES`, are chunked instead: in-memory zarr arrays with one compressed chunk
per slice, so a slice takes memory only once it is segmented, and then its compressed size
(label slices compress to a few percent; see docs/results/memory.md).

The uncertainty is computed only while its layer is shown: while it is hidden (as it is
at first) the parts' probabilities wait, up to :data:`WAITING_BYTES` of them, and are
turned into uncertainty when the layer is shown."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
from napari.utils.colormaps import DirectLabelColormap

from . import _session as session
from ._choices import OUTPUT_KEY

#: Output layers with more slices than this are chunked zarr arrays, unless the input is
#: in memory and the layer takes at most :data:`DENSE_BYTES`.
FEW_SLICES = 8
#: The largest dense output layer of an input in memory.
DENSE_BYTES = 1 << 28
#: Probabilities kept for a hidden uncertainty layer; beyond, the oldest become uncertainty.
WAITING_BYTES = 1 << 28


def blank(shape: tuple, dtype, in_memory: bool = False):
    """Zeros of ``shape`` for an output layer: a NumPy array up to :data:`FEW_SLICES`
    slices (the leading axes' product), or, for an input ``in_memory``, up to
    :data:`DENSE_BYTES`; else an in-memory zarr array chunked by slice."""
    shape = tuple(int(n) for n in shape)
    n_bytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    if (int(np.prod(shape[:-2], dtype=np.int64)) <= FEW_SLICES
            or (in_memory and n_bytes <= DENSE_BYTES)):
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
        #: per uncertainty layer (by name): the layer and its parts' waiting probabilities
        self._waiting: dict[str, tuple[object, OrderedDict]] = {}

    def _layer(self, name, shape, dtype, make, scale, translate, in_memory, **style):
        layers = self.viewer.layers
        old = layers[name] if name in layers else None
        if old is not None and old.data.shape == shape and np.allclose(old.scale, scale):
            return old
        if old is not None:
            index = layers.index(old)
            style.update(visible=old.visible, opacity=old.opacity)
            layers.remove(old)
        layer = make(blank(shape, dtype, in_memory), name=name, scale=scale,
                     translate=translate, metadata={OUTPUT_KEY: True}, **style)
        if old is not None:
            layers.move(layers.index(layer), index)
        return layer

    def prepare(self, name: str, shape: tuple, scale: tuple, translate: tuple, dtype,
                n_classes: int, probabilities: bool = False, in_memory: bool = False,
                colormap=None) -> tuple:
        """The output layers of spatial ``shape`` for labels of ``dtype`` and
        ``n_classes`` probabilities, created where missing (the layer being painted on
        stays selected); ``in_memory``: the input is a NumPy array (see :func:`blank`).
        Called when training ends, so that they are made while the worker segments."""
        scale, translate = tuple(scale), tuple(translate)
        active = self.viewer.layers.selection.active
        made = []
        if probabilities:
            made.append(self._layer(
                f"{name} probabilities", (n_classes,) + shape, np.float32,
                self.viewer.add_image, (1.0,) + scale, (0.0,) + translate, in_memory,
                colormap="viridis", contrast_limits=(0, 1), visible=False))
        unsure = self._layer(f"{name} uncertainty", shape, np.float32, self.viewer.add_image,
                             scale, translate, in_memory, colormap="magma",
                             contrast_limits=(0, 1), opacity=0.6, visible=False)
        if self._waiting.get(unsure.name, (None,))[0] is not unsure:
            self._waiting[unsure.name] = unsure, OrderedDict()
            unsure.events.visible.connect(lambda _: self._flush(unsure))
        seg = self._layer(f"{name} segmentation", shape, dtype, self.viewer.add_labels,
                          scale, translate, in_memory, opacity=0.6)
        if colormap is not None:
            seg.colormap = colormap
        if active is not None and active in self.viewer.layers:
            self.viewer.layers.selection.active = active
        return seg, unsure, (made[0] if made else None)

    def show(self, name: str, shape: tuple, scale: tuple, translate: tuple, key: tuple,
             labels: np.ndarray, proba: np.ndarray, probabilities: bool = False,
             colormap=None, in_memory: bool = False) -> None:
        """Put ``labels`` and ``proba`` (a slice, a volume or part of one) at ``key`` of the
        output layers of spatial ``shape`` (made by :meth:`prepare` where missing);
        ``probabilities``: fill that layer too."""
        seg, unsure, chances = self.prepare(name, shape, scale, translate, labels.dtype,
                                            proba.shape[-1], probabilities, in_memory,
                                            colormap)
        if chances is not None:
            chances.data[(slice(None),) + key] = np.moveaxis(proba, -1, 0)
            chances.refresh()
        waiting = self._waiting[unsure.name][1]
        place = tuple((k.start, k.stop) if isinstance(k, slice) else k for k in key)
        waiting.pop(place, None)  # a later part at the same place replaces it, in order
        waiting[place] = key, proba
        while waiting and (unsure.visible or sum(p.nbytes for _, p in waiting.values())
                           > WAITING_BYTES):
            self._write_oldest(unsure, waiting)
        seg.data[key] = labels
        seg.refresh()

    def _write_oldest(self, unsure, waiting: OrderedDict) -> None:
        key, proba = waiting.pop(next(iter(waiting)))
        unsure.data[key] = session.uncertainty(proba)
        if not waiting:
            unsure.refresh()

    def _flush(self, unsure) -> None:
        """The uncertainty layer was shown (or hidden): write the waiting parts."""
        entry = self._waiting.get(unsure.name)
        if unsure.visible and entry is not None and entry[0] is unsure:
            while entry[1]:
                self._write_oldest(unsure, entry[1])


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
