"""Reading napari layers as one input, without Qt: channels, spatial axes, scale.

napari lines layers up on their *last* axes (a 2-D layer over a 3-D one covers its last
two axes), and shows the last two axes of the world as the canvas. So a channels-last
layer (H, W, C) is drawn as W x C planes, and a (H, W) Labels layer painted over it covers
W x C: the paint lands on the wrong axes. napari's own convention keeps channels out of
the spatial axes: ``channel_axis`` splits them into one layer per channel, or a channel
axis comes first (a slider). This module turns the chosen layers into one channels-last
input with its spatial axes, scale and translate, and checks that a scribble layer covers
exactly those axes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NO_CHANNEL_AXIS = "none"


@dataclass(frozen=True)
class Input:
    """What the session reads: ``data`` (..., H, W) or (..., H, W, C) channels last
    (RGB: colour last), the image ``kind``, and per spatial axis (every axis of ``data``
    but the channels) its world axis, scale and translate."""

    data: object
    kind: str
    world_axes: tuple[int, ...]
    scale: tuple[float, ...]
    translate: tuple[float, ...]
    channel_names: tuple[str, ...] = ()

    @property
    def shape(self) -> tuple[int, ...]:
        """The spatial shape (leading axes, then H, W)."""
        return tuple(int(n) for n in np.shape(self.data)[:len(self.world_axes)])


def _world_axes(ndim: int, world_ndim: int) -> list[int]:
    """The world axes of a layer of ``ndim`` axes: napari lines layers up on the right."""
    return list(range(world_ndim - ndim, world_ndim))


def read_input(layers: list, kind: str, channel_axis: int | None, world_ndim: int) -> Input:
    """One input from the chosen image layers (napari ``Image`` layers or anything with
    ``name, data, ndim, rgb, scale, translate``).

    Several layers are the channels of one input, in order (napari's ``channel_axis``
    split); one layer with ``channel_axis`` has its channels moved last; otherwise the
    layer is read as ``kind`` says (a 'channels' layer then holds channels last). Raises
    ValueError naming the layer and the problem.
    """
    if not layers:
        raise ValueError("choose an image layer to train on")
    first = layers[0]
    if len(layers) > 1:
        if channel_axis is not None:
            raise ValueError("give channels either as several layers or as a channel axis "
                             "of one layer, not both")
        for layer in layers:
            if layer.rgb:
                raise ValueError(f"layer {layer.name!r} is RGB: channels combine grey layers")
            for what in ("shape", "scale", "translate"):
                mine = np.shape(layer.data) if what == "shape" else tuple(getattr(layer, what))
                theirs = (np.shape(first.data) if what == "shape"
                          else tuple(getattr(first, what)))
                if not np.array_equal(mine, theirs):
                    raise ValueError(f"channel layers differ: {layer.name!r} has {what} "
                                     f"{tuple(mine)}, {first.name!r} has {tuple(theirs)}")
        axes = _world_axes(first.ndim, world_ndim)
        return Input(_stacked([layer.data for layer in layers]), "channels", tuple(axes),
                     tuple(first.scale), tuple(first.translate),
                     tuple(layer.name for layer in layers))
    axes = _world_axes(first.ndim, world_ndim)
    scale, translate = list(first.scale), list(first.translate)
    if channel_axis is not None:
        if first.rgb:
            raise ValueError(f"layer {first.name!r} is RGB: its colours are its channels")
        axis = channel_axis % first.ndim
        n = np.shape(first.data)[axis]
        for values in (axes, scale, translate):
            del values[axis]
        return Input(np.moveaxis(first.data, axis, -1), "channels", tuple(axes), tuple(scale),
                     tuple(translate), tuple(f"{first.name}[{c}]" for c in range(n)))
    if kind == "channels" and not first.rgb:  # channels last: not a spatial axis
        del axes[-1], scale[-1], translate[-1]
    return Input(first.data, kind, tuple(axes), tuple(scale), tuple(translate))


def _stacked(arrays: list):
    """The arrays stacked on a new last axis: without a copy when they are the channels of
    one channels-last NumPy array (napari's ``channel_axis`` shows each channel of an
    array in memory as a view into it; a copy of a volume's channels costs a press a
    tenth of a second or more); lazily for dask arrays (NumPy dispatches ``np.stack`` to
    them); else a copy."""
    joined = _channels_view(arrays)
    return np.stack(arrays, axis=-1) if joined is None else joined


def _root(array: np.ndarray):
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array.base if array.base is not None else array


def _channels_view(arrays: list) -> np.ndarray | None:
    """A read-only view with the arrays as its last axis, if they are equal-shaped,
    equally strided views into one buffer a constant step apart (element ``[..., c]`` of
    the view is then element ``[...]`` of ``arrays[c]``, nothing else) and the view is
    C-contiguous; else None."""
    first = arrays[0]
    if len(arrays) < 2 or not all(isinstance(a, np.ndarray) for a in arrays):
        return None
    if any(a.shape != first.shape or a.strides != first.strides or a.dtype != first.dtype
           or _root(a) is not _root(first) for a in arrays):
        return None
    starts = [a.__array_interface__["data"][0] for a in arrays]
    step = starts[1] - starts[0]
    if step == 0 or any(b - a != step for a, b in zip(starts, starts[1:])):
        return None
    view = np.lib.stride_tricks.as_strided(first, first.shape + (len(arrays),),
                                           first.strides + (step,), writeable=False)
    return view if view.flags.c_contiguous else None  # the layout the kernels are built for


def check_scribbles(inp: Input, labels, world_ndim: int) -> None:
    """Raise ValueError unless the Labels layer ``labels`` covers exactly the input's
    spatial axes, with the same shape, scale and translate, so that paint lands on the
    voxels it is drawn over."""
    axes = tuple(_world_axes(labels.ndim, world_ndim))
    if axes != inp.world_axes:
        raise ValueError(
            f"the scribbles layer {labels.name!r} covers world axes {axes}, but the image's "
            f"spatial axes are {inp.world_axes}: napari lines layers up on their last axes, "
            "so paint over a channels-last layer lands on the channel axis. Split the "
            "channels into layers (or move them first) and paint on a layer of the image's "
            "spatial shape")
    shape = tuple(np.shape(labels.data))
    if shape != inp.shape:
        raise ValueError(f"the labels layer has shape {shape} but the image needs labels of "
                         f"shape {inp.shape}")
    for what in ("scale", "translate"):
        mine = tuple(float(v) for v in getattr(labels, what))
        theirs = tuple(float(v) for v in getattr(inp, what))
        if not np.allclose(mine, theirs):
            raise ValueError(f"the scribbles layer {labels.name!r} has {what} {mine} but the "
                             f"image has {theirs}: paint would land beside the voxels it is "
                             "drawn over")


def split_channels(data, axis: int) -> list:
    """The channels of ``data`` along ``axis``, each an array of the other axes."""
    return [np.take(data, c, axis=axis) for c in range(np.shape(data)[axis])]


def split_into_layers(viewer, layer, axis: int) -> list:
    """Replace ``layer`` in ``viewer`` by one image layer per channel along ``axis`` (as
    napari's ``channel_axis`` does), on the layer's spatial scale and translate."""
    keep = [a for a in range(layer.ndim) if a != axis % layer.ndim]
    scale, translate = np.asarray(layer.scale)[keep], np.asarray(layer.translate)[keep]
    added = [viewer.add_image(np.asarray(data), name=f"{layer.name} [{c}]", scale=scale,
                              translate=translate, blending="additive")
             for c, data in enumerate(split_channels(layer.data, axis))]
    viewer.layers.remove(layer)
    return added


def visible_index(inp: Input, point: tuple, n_axes: int) -> tuple[int, ...]:
    """The index along the input's first ``n_axes`` spatial axes of the viewer's world
    position ``point`` (napari's ``dims.point``), within the input."""
    index = []
    for k in range(n_axes):
        axis = inp.world_axes[k]
        world = point[axis] if axis < len(point) else 0.0
        step = int(round((world - inp.translate[k]) / inp.scale[k]))
        index.append(min(max(step, 0), inp.shape[k] - 1))
    return tuple(index)
