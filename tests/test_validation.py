"""Parameter constraints: checks, descriptions and ranges from one declaration."""
from numbers import Integral, Real

import numpy as np
import pytest

from jungleseg._validation import (
    Interval,
    InvalidParameterError,
    ListOf,
    StrOptions,
    bounds,
    check_params,
    describe,
    satisfies,
)

CONSTRAINTS = {
    "count": [Interval(Integral, 1, 10, closed="both")],
    "scale": [Interval(Real, 0, None, closed="neither"), None],
    "mode": [StrOptions(("fast", "exact"))],
    "sizes": [ListOf(Interval(Integral, 1, None, closed="left"), non_empty=True, unique=True)],
    "flag": ["boolean"],
}


def test_valid_values_pass():
    check_params(CONSTRAINTS, {"count": 3, "scale": None, "mode": "exact", "sizes": (1, 4),
                               "flag": np.bool_(True)}, "Thing")
    check_params(CONSTRAINTS, {"count": np.int64(10), "scale": 0.5}, "Thing")


@pytest.mark.parametrize("name, value", [("count", 0), ("count", 11), ("count", True),
                                         ("count", 2.0), ("scale", 0), ("scale", "1"),
                                         ("mode", "slow"), ("sizes", []), ("sizes", [2, 2]),
                                         ("sizes", [0]), ("sizes", 3), ("flag", 1)])
def test_invalid_values_are_refused_naming_the_parameter(name, value):
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of Thing must be"):
        check_params(CONSTRAINTS, {name: value}, "Thing")
    assert not satisfies(CONSTRAINTS[name], value)


def test_descriptions_keep_the_declared_order_and_read_well():
    assert describe(CONSTRAINTS["mode"]) == "one of 'fast', 'exact'"
    assert describe(CONSTRAINTS["scale"]) == "a float in the range (0.0, inf) or None"
    assert describe(CONSTRAINTS["flag"]) == "true or false"
    assert describe(CONSTRAINTS["sizes"]).startswith("a non-empty list of distinct items")


def test_bounds_give_a_widget_its_range():
    assert bounds(CONSTRAINTS["count"]) == (1, 10)
    assert bounds(CONSTRAINTS["scale"]) == (0, None)
    with pytest.raises(ValueError, match="no numeric interval"):
        bounds(CONSTRAINTS["mode"])
