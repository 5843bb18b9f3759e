"""Names a package gives on first use: the estimators import scikit-learn and the trainer
compiles kernels, seconds that ``jungleseg info`` or ``segment`` should not pay."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_attributes(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``where[name]`` (a module
    relative to the package) when ``name`` is first asked for.

    Examples
    --------
    >>> __getattr__ = lazy_attributes("jungleseg", {"JungleClassifier": ".jungle"})
    >>> __getattr__("JungleClassifier").__name__
    'JungleClassifier'
    """
    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(where[name], package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
