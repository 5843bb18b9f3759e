"""Parameter constraints: declared once per class, checked and described from there.

Every estimator and feature family declares ``_parameter_constraints``, scikit-learn's
convention (a mapping from parameter name to a list of allowed kinds of value: an
:class:`Interval`, :class:`StrOptions`, ``"boolean"``, a type, ``None``...). From that one
declaration come the estimators' checks (scikit-learn's ``BaseEstimator._validate_params``),
the feature families' checks, the config file schema (:mod:`jungleseg.config`), the napari
widget's spin-box ranges and the table in ``docs/parameters.md``.

scikit-learn keeps this machinery in a private module; it is imported here alone, so that
a change there is mended in one place.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval as _Interval
from sklearn.utils._param_validation import (
    InvalidParameterError,
    Options,
    RealNotInt,
    _Booleans,
    make_constraint,
    validate_parameter_constraints,
)
from sklearn.utils._param_validation import StrOptions as _StrOptions

__all__ = ["Integral", "Interval", "InvalidParameterError", "ListOf", "Real", "RealNotInt",
           "StrOptions",
           "bounds", "check_params", "describe", "satisfies"]


class Interval(_Interval):
    """scikit-learn's numeric interval, which here never admits a bool: ``True`` is an
    int to Python, but never a count or a size in a config or a widget."""

    def is_satisfied_by(self, val: Any) -> bool:
        """Whether ``val`` is a number (not a bool) inside the interval."""
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


class StrOptions(_StrOptions):
    """scikit-learn's string choices, listed in the order given (a set's order changes
    from one process to the next, and so would every message and the docs table)."""

    def __init__(self, options):
        self.order = tuple(options)
        super().__init__(set(self.order))

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(o) for o in self.order)


class ListOf(Options):
    """A list or tuple whose items each satisfy ``item`` (a constraint).

    An :class:`Options` subclass only because scikit-learn's ``make_constraint`` accepts
    its own constraint classes alone.
    """

    def __init__(self, item, non_empty: bool = False, unique: bool = False):
        super().__init__((list, tuple), set())
        self.item = make_constraint(item)
        self.non_empty = non_empty
        self.unique = unique

    def is_satisfied_by(self, value: Any) -> bool:
        """Whether ``value`` is a list or tuple of satisfying items."""
        if not isinstance(value, (list, tuple)) or (self.non_empty and not value):
            return False
        if not all(self.item.is_satisfied_by(v) for v in value):
            return False
        return not self.unique or len(set(value)) == len(value)

    def __str__(self) -> str:
        words = ["a", *(["non-empty"] if self.non_empty else []), "list of"]
        return " ".join(words) + (" distinct " if self.unique else " ") + f"items, each {self.item}"


def check_params(constraints: Mapping[str, list], params: Mapping[str, Any], owner: str) -> None:
    """Raise :class:`InvalidParameterError` (a ValueError) for the first parameter of
    ``params`` that satisfies none of its constraints; ``owner`` names the class."""
    validate_parameter_constraints(
        {name: constraints[name] for name in params}, dict(params), caller_name=owner)


def satisfies(constraints: Sequence, value: Any) -> bool:
    """Whether ``value`` satisfies one of ``constraints``."""
    return any(make_constraint(c).is_satisfied_by(value) for c in constraints)


def describe(constraints: Sequence) -> str:
    """The allowed values in words, e.g. ``an int in the range [2, inf) or None``."""
    words = ["true or false" if isinstance(make_constraint(c), _Booleans)
             else str(make_constraint(c)) for c in constraints]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def bounds(constraints: Sequence) -> tuple[float | None, float | None]:
    """(low, high) of the first numeric interval among ``constraints``; None for an open
    end. For widgets: a spin box's range."""
    for c in constraints:
        if isinstance(c, Interval):
            return c.left, c.right
    raise ValueError(f"no numeric interval among {describe(constraints)}")
