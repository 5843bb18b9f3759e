"""Progress bars whose time estimate ignores the first item.

The first item of a command's loop (a training level, an image) also pays for loading or
compiling the kernels it runs: a one-time cost that says nothing about the items after
it. A plain bar spreads it over all of them (a first training level that compiles for two
minutes predicts half an hour for sixteen levels). These bars show the rate and the time
left from the second item on, measured from the end of the first; before that, ``?``.
"""
from __future__ import annotations

from collections.abc import Iterable

from tqdm import tqdm


class _AfterFirst(tqdm):
    """tqdm whose rate counts the items after the first, from when the first ended."""

    def update(self, n: float = 1):
        if not self.disable and getattr(self, "_first", None) is None and self.n + n >= 1:
            self._first = (self.n + n, self._time())
        return super().update(n)

    @property
    def format_dict(self):
        info = super().format_dict
        if self.disable:
            return info
        if getattr(self, "_first", None) is None and self.n >= 1:  # iterating: no update()
            self._first = (self.n, self._time())
        first = getattr(self, "_first", None)
        if first is None or self.n <= first[0]:
            info["rate"] = 0  # shown as '?': nothing measured yet
        else:
            info["rate"] = (self.n - first[0]) / max(self._time() - first[1], 1e-9)
        return info


def progress_bar(iterable: Iterable | None = None, total: int | None = None,
                 desc: str | None = None, disable: bool = False) -> tqdm:
    """A tqdm bar (closed when done, ``leave=False``) whose rate and time left count
    from the end of the first item on."""
    return _AfterFirst(iterable, total=total, desc=desc, disable=disable, leave=False)
