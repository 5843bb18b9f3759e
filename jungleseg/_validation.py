"""Parameter constraints: declared once per class, checked and described from there.

Every estimator and feature family declares ``_parameter_constraints``, scikit-learn's
convention (a mapping from parameter name to a list of allowed kinds of value: an
:class:`Interval`, :class:`StrOptions`, ``"boolean"``, ``"random_state"``, a type,
``None``...). From that one declaration come the estimators' and the feature families'
checks, the config file schema (:mod:`jungleseg.config`), the napari widget's spin-box
ranges and the table in ``docs/parameters.md``.

The few kinds of constraint used here are implemented in this module, with
scikit-learn's meaning and wording, so that a command that never trains a
:class:`~jungleseg.JungleClassifier` never imports scikit-learn (about 2 s of start-up).
:func:`register_with_sklearn` makes scikit-learn's own tools (``check_estimator``) accept
them; :class:`InvalidParameterError` is scikit-learn's class, imported when one is raised.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = ["Integral", "Interval",
           "InvalidParameterError",  # noqa: F822 (scikit-learn's, given lazily by __getattr__)
           "ListOf", "Real", "RealNotInt", "StrOptions",
           "bounds", "check_params", "describe", "register_with_sklearn", "satisfies"]


class RealNotInt(Real):
    """Reals that are not ints: ``1.0`` is one, ``1`` is not (scikit-learn's type)."""


RealNotInt.register(float)


def _type_name(t: type) -> str:
    if t.__module__ == "builtins":
        return t.__qualname__
    if t is Real:
        return "float"
    if t is Integral:
        return "int"
    return f"{t.__module__}.{t.__qualname__}"


class _Constraint:
    """One kind of allowed value: ``is_satisfied_by`` and a description in words."""

    hidden = False

    def is_satisfied_by(self, val: Any) -> bool:
        raise NotImplementedError

    def __str__(self) -> str:
        raise NotImplementedError


class _InstancesOf(_Constraint):
    def __init__(self, type):
        self.type = type

    def is_satisfied_by(self, val: Any) -> bool:
        return isinstance(val, self.type)

    def __str__(self) -> str:
        return f"an instance of {_type_name(self.type)!r}"


class _NoneConstraint(_Constraint):
    def is_satisfied_by(self, val: Any) -> bool:
        return val is None

    def __str__(self) -> str:
        return "None"


class _AnyOf(_Constraint):
    """Several constraints under one name (``"boolean"``, ``"random_state"``)."""

    def __init__(self, constraints: list):
        self.constraints = constraints

    def is_satisfied_by(self, val: Any) -> bool:
        return any(c.is_satisfied_by(val) for c in self.constraints)

    def __str__(self) -> str:
        return _joined(self.constraints)


class _Booleans(_AnyOf):
    def __init__(self):
        super().__init__([_InstancesOf(bool), _InstancesOf(np.bool_)])


class _RandomStates(_AnyOf):
    def __init__(self):
        super().__init__([Interval(Integral, 0, 2**32 - 1, closed="both"),
                          _InstancesOf(np.random.RandomState), _NoneConstraint()])


class Interval(_Constraint):
    """Numbers of ``type`` (Integral, Real or RealNotInt) between ``left`` and ``right``
    (None: unbounded), ``closed`` "left", "right", "both" or "neither"; never a bool:
    ``True`` is an int to Python, but never a count or a size in a config or a widget."""

    def __init__(self, type, left, right, *, closed: str):
        if type not in (Integral, Real, RealNotInt):
            raise ValueError(f"type must be Integral, Real or RealNotInt, got {type}")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be 'left', 'right', 'both' or 'neither', got "
                             f"{closed!r}")
        self.type, self.left, self.right, self.closed = type, left, right, closed

    def __contains__(self, val: Any) -> bool:
        if not isinstance(val, Integral) and math.isnan(val):
            return False
        low = -math.inf if self.left is None else self.left
        high = math.inf if self.right is None else self.right
        above = val >= low if self.closed in ("left", "both") else val > low
        below = val <= high if self.closed in ("right", "both") else val < high
        return bool(above and below)

    def is_satisfied_by(self, val: Any) -> bool:
        """Whether ``val`` is a number (not a bool) of the type inside the interval."""
        return (isinstance(val, self.type) and not isinstance(val, (bool, np.bool_))
                and val in self)

    def __str__(self) -> str:
        real = self.type is not Integral
        left = "-inf" if self.left is None else float(self.left) if real else self.left
        right = "inf" if self.right is None else float(self.right) if real else self.right
        return (f"{'a float' if real else 'an int'} in the range "
                f"{'[' if self.closed in ('left', 'both') else '('}{left}, "
                f"{right}{']' if self.closed in ('right', 'both') else ')'}")


class Options(_Constraint):
    """Instances of ``type`` among ``options``."""

    def __init__(self, type, options):
        self.type, self.options = type, options
        self.deprecated: set = set()

    def is_satisfied_by(self, val: Any) -> bool:
        return isinstance(val, self.type) and val in self.options

    def __str__(self) -> str:
        return f"a {_type_name(self.type)} among {{{', '.join(map(repr, self.options))}}}"


class StrOptions(Options):
    """String choices, listed in the order given (a set's order changes from one process
    to the next, and so would every message and the docs table)."""

    def __init__(self, options):
        self.order = tuple(options)
        super().__init__(str, set(self.order))

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(o) for o in self.order)


class ListOf(Options):
    """A list or tuple whose items each satisfy ``item`` (a constraint)."""

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


def make_constraint(constraint: Any) -> _Constraint:
    """The constraint object a declaration stands for (scikit-learn's shorthands)."""
    if isinstance(constraint, _Constraint):
        return constraint
    if constraint is None:
        return _NoneConstraint()
    if isinstance(constraint, type):
        return _InstancesOf(constraint)
    if constraint == "boolean":
        return _Booleans()
    if constraint == "random_state":
        return _RandomStates()
    raise ValueError(f"unknown constraint {constraint!r}")


def _joined(constraints: Sequence) -> str:
    words = [str(c) for c in constraints]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def __getattr__(name: str):
    if name == "InvalidParameterError":  # scikit-learn's, which its own checks expect
        from sklearn.utils._param_validation import InvalidParameterError

        return InvalidParameterError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_params(constraints: Mapping[str, list], params: Mapping[str, Any], owner: str) -> None:
    """Raise :class:`InvalidParameterError` (a ValueError) for the first parameter of
    ``params`` that satisfies none of its constraints; ``owner`` names the class.

    The message is scikit-learn's: ``The 'n' parameter of Owner must be an int in the
    range [1, inf). Got 0 instead.``"""
    for name, value in params.items():
        kinds = [make_constraint(c) for c in constraints[name]]
        if not any(c.is_satisfied_by(value) for c in kinds):
            from sklearn.utils._param_validation import InvalidParameterError

            raise InvalidParameterError(f"The {name!r} parameter of {owner} must be "
                                        f"{_joined(kinds)}. Got {value!r} instead.")


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


def register_with_sklearn() -> None:
    """Make scikit-learn's tools (``make_constraint``, ``check_estimator``'s parameter
    checks) take these constraints for its own; called where scikit-learn is imported
    anyway (:mod:`jungleseg.jungle._classes`)."""
    from sklearn.utils import _param_validation as sk

    for ours, theirs in ((Interval, sk.Interval), (Options, sk.Options),
                         (StrOptions, sk.StrOptions)):
        theirs.register(ours)
