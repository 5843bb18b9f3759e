"""Choosing the channels of an input image or volume by name or index."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike


def pick_channels(image: ArrayLike, channels: Sequence[int | str] | None = None,
                  names: Sequence[str] | None = None, axis: int = -1) -> np.ndarray:
    """``image`` with its channel axis last, keeping ``channels`` in the order given.

    Parameters
    ----------
    image : array
        An image or volume with a channel axis.
    channels : sequence of int or str, optional
        Channel indices (negative counting from the end) or names; None keeps all.
    names : sequence of str, optional
        The name of each channel along ``axis`` (e.g. a file's stain names); needed to
        choose by name.
    axis : int
        The channel axis of ``image``.

    Returns
    -------
    ndarray
        (..., len(channels)) channels last; a view where NumPy can make one.

    Examples
    --------
    >>> stack = np.zeros((3, 4, 5))                # (C, H, W)
    >>> pick_channels(stack, ["dapi", 0], names=["dapi", "actin", "gfp"], axis=0).shape
    (4, 5, 2)
    """
    image = np.moveaxis(np.asarray(image), axis, -1)
    n = image.shape[-1]
    if names is not None and len(names) != n:
        raise ValueError(f"{len(names)} channel names for {n} channels")
    if channels is None:
        return image
    index = []
    for channel in channels:
        if isinstance(channel, str):
            if names is None or channel not in names:
                known = ", ".join(map(repr, names)) if names is not None else "none given"
                raise ValueError(f"no channel named {channel!r} (channels: {known})")
            index.append(list(names).index(channel))
        elif isinstance(channel, (int, np.integer)) and not isinstance(channel, bool) \
                and -n <= channel < n:
            index.append(int(channel) % n)
        else:
            raise ValueError(f"channel {channel!r} is not a name or an index in "
                             f"{-n}..{n - 1}")
    if not index:
        raise ValueError("choose at least one channel")
    return image[..., index]
