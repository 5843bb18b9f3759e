"""Run configurations: one YAML file per benchmark, validated when loaded.

A configuration has up to five top-level keys::

    dataset: stanford        # kinect | faces | fasseg | stanford | uci | napari
    features: {family: colour, ...}   # image data only; required unless dataset is uci
    jungle: {n_estimators: 3, ...}    # JungleSegmenter / JungleClassifier parameters
    sampling: {strategy: random, ...} # image data only
    seed: 0

Keys left out take the estimator's defaults. A top-level key set to ``null`` counts as left
out. Every key, type, range and choice is checked; a violation raises :class:`ConfigError`
whose message names the source (file) and the dotted key, e.g.
``configs/stanford.yaml: jungle.max_width: must be >= 2, got 1``.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from ._classes import SEARCHES, JungleClassifier
from ._criterion import CRITERIA
from ._features import COLOUR_KINDS
from ._schedules import SCHEDULES
from .features import ColourFeatures, DepthFeatures
from .sampling import STRATEGIES
from .segmenter import JungleSegmenter

#: Values of the top-level ``dataset`` key.
DATASETS: tuple[str, ...] = ("kinect", "faces", "fasseg", "stanford", "uci", "napari")

#: The dataset whose rows are tabular: no ``features`` or ``sampling`` sections.
TABULAR_DATASET = "uci"

_TOP_KEYS = ("dataset", "features", "jungle", "sampling", "seed")
_SECTIONS = ("features", "jungle", "sampling")
# Config attribute holding each top-level key.
_ATTRIBUTES = {"dataset": "dataset", "features": "feature_params", "jungle": "jungle_params",
               "sampling": "sampling_params", "seed": "seed"}


class ConfigError(ValueError):
    """An invalid configuration; the message names the source and the dotted key."""


class _Invalid(Exception):
    """A value breaks its rule; the caller adds the source and the key to the message."""


Check = Callable[[Any], Any]
"""Validates one value and returns it normalised (lists become tuples), or raises _Invalid."""


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"


def _integer(minimum: int, maximum: int | None = None, *, nullable: bool = False,
             words: tuple[str, ...] = ()) -> Check:
    """An int (never a bool) in ``minimum..maximum``, or None if nullable, or one of words."""
    bounds = f">= {minimum}" if maximum is None else f"between {minimum} and {maximum}"
    expected = " or ".join([f"an integer {bounds}", *map(repr, words)]
                           + (["null"] if nullable else []))

    def check(value: Any) -> Any:
        if (value is None and nullable) or (isinstance(value, str) and value in words):
            return value
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise _Invalid(f"expected {expected}, got {_describe(value)}")
        if value < minimum or (maximum is not None and value > maximum):
            raise _Invalid(f"must be {bounds}, got {value}")
        return int(value)

    return check


def _positive_real(value: Any) -> float:
    """A finite int or float (never a bool) above zero."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise _Invalid(f"expected a number > 0, got {_describe(value)}")
    if not (math.isfinite(value) and value > 0):
        raise _Invalid(f"must be a finite number > 0, got {value}")
    return float(value)


def _nullable(check: Check) -> Check:
    """``check``, or None (null) as it is."""
    def nullable(value: Any) -> Any:
        return None if value is None else check(value)

    return nullable


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"expected true or false, got {_describe(value)}")
    return value


def _choice(options: tuple[str, ...]) -> Check:
    """One of a few strings."""
    def check(value: Any) -> str:
        if not isinstance(value, str) or value not in options:
            raise _Invalid(f"must be one of {', '.join(options)}; got {_describe(value)}")
        return value

    return check


def _list_of(item: Check, *, non_empty: bool = False, unique: bool = False) -> Check:
    """A list whose items pass ``item``; returned as a tuple."""
    def check(value: Any) -> tuple:
        if not isinstance(value, (list, tuple)):
            raise _Invalid(f"expected a list, got {_describe(value)}")
        if non_empty and not value:
            raise _Invalid("must not be empty")
        items = []
        for i, element in enumerate(value):
            try:
                items.append(item(element))
            except _Invalid as error:
                raise _Invalid(f"item {i}: {error}") from None
        if unique and len(set(items)) != len(items):
            raise _Invalid(f"items must not repeat, got {list(value)}")
        return tuple(items)

    return check


_FEATURE_SCHEMAS: dict[str, dict[str, Check]] = {
    "colour": {
        "family": _choice(("colour", "depth")),
        "max_offset": _integer(0),
        "kinds": _list_of(_choice(tuple(COLOUR_KINDS)), non_empty=True, unique=True),
        "max_box": _integer(0),
        "input": _choice(("rgb", "grey", "channels")),
        "smoothing_scales": _list_of(_positive_real),
        "n_channels": _integer(1),
        "position": _boolean,
        "gradient": _boolean,
        "hessian": _boolean,
        "centred": _boolean,
        "box_filters": _list_of(_integer(1), unique=True),
    },
    "depth": {
        "family": _choice(("colour", "depth")),
        "max_offset": _positive_real,
        "focal_length": _positive_real,
    },
}


def _jungle_schema(tabular: bool) -> dict[str, Check]:
    """Jungle parameters; tabular data also accept ``n_candidate_features: sqrt``."""
    return {
        "n_estimators": _integer(1),
        "max_width": _integer(2, nullable=True),
        "schedule": _choice(SCHEDULES),
        "max_depth": _integer(0, nullable=True),
        "criterion": _choice(tuple(CRITERIA)),
        "n_candidate_features": _integer(1, words=("sqrt",) if tabular else ()),
        "n_thresholds": _integer(1),
        "lsearch_steps": _integer(0),
        "search": _choice(SEARCHES),
        "min_samples_split": _integer(2),
        "min_samples_leaf": _integer(1),
        **({} if tabular else {"smoothing": _integer(0), "guided_eps": _nullable(_positive_real)}),
    }


_SAMPLING_SCHEMA: dict[str, Check] = {
    "strategy": _choice(STRATEGIES),
    "samples_per_image": _integer(1),
    "images_per_dag": _integer(1, nullable=True),
    "ignore": _list_of(_integer(0, 65535)),
    "correct_prior": _boolean,
}

_DATASET = _choice(DATASETS)
_SEED = _integer(0)


def _error(source: str, key: str, message: str) -> ConfigError:
    return ConfigError(f"{source}: {key}: {message}")


def _checked(value: Any, check: Check, key: str, source: str) -> Any:
    try:
        return check(value)
    except _Invalid as error:
        raise _error(source, key, str(error)) from None


def _section(value: Any, schema: Mapping[str, Check], key: str,
             source: str) -> MappingProxyType:
    """Validate a mapping against a schema; keys come out in schema order."""
    if not isinstance(value, Mapping):
        raise _error(source, key, f"expected a mapping, got {_describe(value)}")
    for name in value:
        if name not in schema:
            raise _error(source, f"{key}.{name}",
                         f"unknown key; allowed keys: {', '.join(schema)}")
    return MappingProxyType({name: _checked(value[name], schema[name], f"{key}.{name}", source)
                             for name in schema if name in value})


def _features_section(value: Any, source: str) -> MappingProxyType:
    if not isinstance(value, Mapping):
        raise _error(source, "features", f"expected a mapping, got {_describe(value)}")
    if "family" not in value:
        raise _error(source, "features.family", "missing; must be one of colour, depth")
    family = _checked(value["family"], _choice(tuple(_FEATURE_SCHEMAS)), "features.family",
                      source)
    features = _section(value, _FEATURE_SCHEMAS[family], "features", source)
    if features.get("input") == "channels" and "n_channels" not in features:
        raise _error(source, "features.n_channels", "required with input: channels")
    if "n_channels" in features and features.get("input") != "channels":
        raise _error(source, "features.n_channels", "only allowed with input: channels")
    return features


def _plain(value: Any) -> Any:
    """Tuples back to lists, for YAML and JSON."""
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True)
class Config:
    """A validated run configuration.

    Build one with :func:`load_config` or :meth:`from_dict`; the constructor validates and
    normalises its arguments the same way (sequences become tuples, sections read-only
    mappings). The section attributes are named ``*_params`` so that :meth:`features` can
    build the feature family.

    Parameters
    ----------
    dataset : str or None
        One of :data:`DATASETS`; ``"uci"`` makes a tabular configuration. None: an image
        configuration for no particular data set.
    feature_params : mapping or None
        The ``features`` section: the family (``family: colour`` or ``family: depth``) and its
        parameters. Required for image configurations, not allowed for ``dataset: uci``.
    jungle_params : mapping or None
        The ``jungle`` section; keys left out take the estimator's defaults.
    sampling_params : mapping or None
        The ``sampling`` section (``strategy``, ``samples_per_image``, ``images_per_dag``,
        ``ignore``); not allowed for ``dataset: uci``.
    seed : int or None
        ``random_state`` of the estimator; None leaves it unseeded.
    source : str
        Where the configuration came from (a file name), named in error messages. Not
        compared by ``==``.

    Raises
    ------
    ConfigError
        If a key is unknown or missing, a value has the wrong type, is out of range or is not
        among the allowed choices.
    """

    dataset: str | None = None
    feature_params: Mapping[str, Any] | None = None
    jungle_params: Mapping[str, Any] | None = None
    sampling_params: Mapping[str, Any] | None = None
    seed: int | None = None
    source: str = field(default="<dict>", compare=False)

    def __post_init__(self) -> None:
        source = self.source
        dataset = None if self.dataset is None else _checked(self.dataset, _DATASET, "dataset",
                                                             source)
        tabular = dataset == TABULAR_DATASET
        if tabular:
            for name in ("features", "sampling"):
                if getattr(self, _ATTRIBUTES[name]) is not None:
                    raise _error(source, name, f"not allowed for dataset {TABULAR_DATASET} "
                                               "(tabular data)")
            features = None
        elif self.feature_params is None:
            raise _error(source, "features", "missing; image configurations need a features "
                                             "section with a family (colour or depth)")
        else:
            features = _features_section(self.feature_params, source)
        empty = MappingProxyType({})
        jungle = empty if self.jungle_params is None else _section(
            self.jungle_params, _jungle_schema(tabular), "jungle", source)
        sampling = empty if self.sampling_params is None else _section(
            self.sampling_params, _SAMPLING_SCHEMA, "sampling", source)
        seed = None if self.seed is None else _checked(self.seed, _SEED, "seed", source)
        for name, value in (("dataset", dataset), ("feature_params", features),
                            ("jungle_params", jungle), ("sampling_params", sampling),
                            ("seed", seed)):
            object.__setattr__(self, name, value)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<dict>") -> Config:
        """Validate a configuration given as nested mappings.

        Parameters
        ----------
        data : mapping
            Top-level keys ``dataset``, ``features``, ``jungle``, ``sampling``, ``seed``.
        source : str, default "<dict>"
            Name of the origin, used in error messages.

        Returns
        -------
        Config
            The validated configuration.

        Raises
        ------
        ConfigError
            If ``data`` is not a mapping or any key or value is invalid.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: expected a mapping with keys {', '.join(_TOP_KEYS)}, "
                              f"got {_describe(data)}")
        for name in data:
            if name not in _TOP_KEYS:
                raise _error(source, str(name), f"unknown key; allowed keys: "
                                                f"{', '.join(_TOP_KEYS)}")
        return cls(**{_ATTRIBUTES[name]: value for name, value in data.items()}, source=source)

    def to_dict(self) -> dict[str, Any]:
        """The configuration as plain dicts and lists, without the keys left out.

        Returns
        -------
        dict
            ``Config.from_dict(config.to_dict()) == config``; suitable for ``yaml.safe_dump``.
        """
        out: dict[str, Any] = {}
        if self.dataset is not None:
            out["dataset"] = self.dataset
        for name in _SECTIONS:
            section = getattr(self, _ATTRIBUTES[name])
            if section:
                out[name] = {key: _plain(value) for key, value in section.items()}
        if self.seed is not None:
            out["seed"] = self.seed
        return out

    def with_overrides(self, overrides: Mapping[str, Any]) -> Config:
        """A new configuration with some values replaced, validated again.

        Parameters
        ----------
        overrides : mapping of str to value
            Dotted keys, e.g. ``{"jungle.max_width": 128, "seed": 3}``. A section name alone
            replaces the whole section; None for a top-level key removes it.

        Returns
        -------
        Config
            The new configuration; this one is unchanged.

        Raises
        ------
        ConfigError
            If a key is unknown or a new value is invalid; the message names the source (with
            "(with overrides)") and the dotted key.
        """
        source = f"{self.source} (with overrides)"
        data = self.to_dict()
        for dotted, value in overrides.items():
            parts = str(dotted).split(".")
            known = parts[0] in _TOP_KEYS and (
                len(parts) == 1 or (len(parts) == 2 and parts[0] in _SECTIONS))
            if not known:
                raise _error(source, str(dotted), "unknown override key; expected a top-level "
                             f"key ({', '.join(_TOP_KEYS)}) or <section>.<key> with a section "
                             f"among {', '.join(_SECTIONS)}")
            if len(parts) == 1:
                data[parts[0]] = value
            else:
                section, key = parts
                data[section] = {**(data.get(section) or {}), key: value}
        return type(self).from_dict(data, source=source)

    def features(self) -> ColourFeatures | DepthFeatures:
        """Build the feature family of an image configuration.

        Returns
        -------
        ColourFeatures or DepthFeatures
            The family named by ``features.family`` with the section's parameters.

        Raises
        ------
        ConfigError
            For a tabular (``dataset: uci``) configuration, which has no image features.
        """
        if self.feature_params is None:
            raise ConfigError(f"{self.source}: features: a {TABULAR_DATASET} configuration has "
                              "no image features")
        params = {key: value for key, value in self.feature_params.items() if key != "family"}
        if self.feature_params["family"] == "depth":
            return DepthFeatures(**params)
        return ColourFeatures(**params)

    def estimator(self) -> JungleSegmenter | JungleClassifier:
        """Build the unfitted estimator the configuration describes.

        Returns
        -------
        JungleSegmenter or JungleClassifier
            For image data a :class:`~jungleseg.JungleSegmenter` with the feature family, the
            jungle parameters, ``sampling.strategy`` as ``sampling`` and the other sampling
            keys as they are; for ``dataset: uci`` a :class:`~jungleseg.JungleClassifier`
            with the jungle parameters. ``seed`` becomes ``random_state`` in both.
        """
        if self.dataset == TABULAR_DATASET:
            return JungleClassifier(**self.jungle_params, random_state=self.seed)
        sampling = {("sampling" if key == "strategy" else key): value
                    for key, value in self.sampling_params.items()}
        return JungleSegmenter(self.features(), **self.jungle_params, **sampling,
                               random_state=self.seed)


def parse_overrides(pairs) -> dict[str, Any]:
    """``["jungle.max_width=128", ...]`` as ``{"jungle.max_width": 128}``: values are read
    as YAML, so numbers, booleans, null and lists come out typed."""
    overrides = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--set takes KEY=VALUE, got {pair!r}")
        overrides[key.strip()] = yaml.safe_load(value)
    return overrides


def load_config(path: str | Path) -> Config:
    """Read and validate a YAML configuration file.

    Parameters
    ----------
    path : str or pathlib.Path
        The YAML file.

    Returns
    -------
    Config
        The validated configuration; its ``source`` is ``path``.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ConfigError
        If the file is not valid YAML or the configuration is invalid; the message names the
        file.
    """
    source = str(path)
    try:
        data = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as error:
        raise ConfigError(f"{source}: not valid YAML: {error}") from None
    return Config.from_dict({} if data is None else data, source=source)
