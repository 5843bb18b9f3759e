"""Run configurations: one YAML file per benchmark and preset, validated when loaded.

A configuration has up to five top-level keys::

    dataset: stanford        # kinect | faces | fasseg | stanford | uci | napari
    features: {family: colour, ...}   # image data only; required unless dataset is uci
    jungle: {n_estimators: 3, ...}    # JungleSegmenter / JungleClassifier parameters
    sampling: {strategy: random, ...} # image data only
    seed: 0

Keys left out take the estimator's defaults. A top-level key set to ``null`` counts as left
out. The allowed keys and values are not written down here: they are the estimators' and
feature families' own ``_parameter_constraints`` (``docs/parameters.md`` lists them, made by
:func:`parameter_table`). A violation raises :class:`ConfigError` whose message names the
source (file) and the dotted key, e.g.
``configs/stanford.yaml: jungle.max_width: must be an int in the range [2, 1048576] or None,
got int 1``.
"""
from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from ._validation import Integral, Interval, StrOptions, describe, satisfies
from .features import FAMILIES, FeatureFamily
from .jungle import JungleClassifier
from .segmentation import JungleSegmenter

#: Values of the top-level ``dataset`` key.
DATASETS: tuple[str, ...] = ("kinect", "faces", "fasseg", "stanford", "uci", "napari")

#: The dataset whose rows are tabular: no ``features`` or ``sampling`` sections.
TABULAR_DATASET = "uci"

#: Image feature families a ``features`` section may name.
IMAGE_FAMILIES = {name: cls for name, cls in FAMILIES.items() if name != "tabular"}

#: Keys of the ``sampling`` section and the JungleSegmenter parameter each sets.
SAMPLING_KEYS = {"strategy": "sampling", "samples_per_image": "samples_per_image",
                 "images_per_dag": "images_per_dag", "ignore": "ignore",
                 "correct_prior": "correct_prior"}

_NOT_JUNGLE = {"features", "random_state", *SAMPLING_KEYS.values()}
_TOP_KEYS = ("dataset", "features", "jungle", "sampling", "seed")
_SECTIONS = ("features", "jungle", "sampling")
# Config attribute holding each top-level key.
_ATTRIBUTES = {"dataset": "dataset", "features": "feature_params", "jungle": "jungle_params",
               "sampling": "sampling_params", "seed": "seed"}
_DATASET = [StrOptions(DATASETS)]
_SEED = [Interval(Integral, 0, None, closed="left")]


class ConfigError(ValueError):
    """An invalid configuration; the message names the source and the dotted key."""


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"


def _normalised(value: Any) -> Any:
    """Lists as tuples (read-only, comparable)."""
    return tuple(_normalised(v) for v in value) if isinstance(value, (list, tuple)) else value


def _plain(value: Any) -> Any:
    """Tuples back to lists, for YAML and JSON."""
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def _error(source: str, key: str, message: str) -> ConfigError:
    return ConfigError(f"{source}: {key}: {message}")


def _checked(value: Any, constraints: list, key: str, source: str) -> Any:
    if not satisfies(constraints, value):
        raise _error(source, key, f"must be {describe(constraints)}, got {_describe(value)}")
    return _normalised(value)


def jungle_schema(tabular: bool) -> dict[str, list]:
    """Constraints of the ``jungle`` section: the estimator's parameters but for the
    feature family, the seed and the sampling keys."""
    estimator = JungleClassifier if tabular else JungleSegmenter
    return {key: value for key, value in estimator._parameter_constraints.items()
            if key not in _NOT_JUNGLE}


def sampling_schema() -> dict[str, list]:
    """Constraints of the ``sampling`` section."""
    return {key: JungleSegmenter._parameter_constraints[param]
            for key, param in SAMPLING_KEYS.items()}


def _section(value: Any, schema: Mapping[str, list], key: str,
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
    """Validate the ``features`` section key by key, then as a whole (the family's own
    rules between its options)."""
    if not isinstance(value, Mapping):
        raise _error(source, "features", f"expected a mapping, got {_describe(value)}")
    names = ", ".join(IMAGE_FAMILIES)
    if "family" not in value:
        raise _error(source, "features.family", f"missing; must be one of {names}")
    family = _checked(value["family"], [StrOptions(IMAGE_FAMILIES)], "features.family",
                      source)
    cls = IMAGE_FAMILIES[family]
    features = _section(value, {"family": [str], **cls._parameter_constraints}, "features",
                        source)
    try:
        cls(**{k: v for k, v in features.items() if k != "family"})
    except ValueError as error:  # a rule between options, e.g. "n_channels is required ..."
        first, _, rest = str(error).partition(" ")
        known = first in cls._parameter_constraints
        raise _error(source, f"features.{first}" if known else "features",
                     rest if known else str(error)) from None
    return features


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
            self.jungle_params, jungle_schema(tabular), "jungle", source)
        sampling = empty if self.sampling_params is None else _section(
            self.sampling_params, sampling_schema(), "sampling", source)
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

    def features(self) -> FeatureFamily:
        """Build the feature family of an image configuration.

        Returns
        -------
        FeatureFamily
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
        return IMAGE_FAMILIES[self.feature_params["family"]](**params)

    def estimator(self) -> JungleSegmenter | JungleClassifier:
        """Build the unfitted estimator the configuration describes.

        Returns
        -------
        JungleSegmenter or JungleClassifier
            For image data a :class:`~jungleseg.JungleSegmenter` with the feature family, the
            jungle parameters and the sampling keys (see :data:`SAMPLING_KEYS`); for
            ``dataset: uci`` a :class:`~jungleseg.JungleClassifier` with the jungle
            parameters. ``seed`` becomes ``random_state`` in both.
        """
        if self.dataset == TABULAR_DATASET:
            return JungleClassifier(**self.jungle_params, random_state=self.seed)
        sampling = {SAMPLING_KEYS[key]: value for key, value in self.sampling_params.items()}
        return JungleSegmenter(self.features(), **self.jungle_params, **sampling,
                               random_state=self.seed)


def parse_overrides(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``["jungle.max_width=128", ...]`` as ``{"jungle.max_width": 128}``: values are read
    as YAML, so numbers, booleans, null and lists come out typed."""
    overrides = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--set takes KEY=VALUE, got {pair!r}")
        overrides[key.strip()] = yaml.safe_load(value)
    return overrides


def preset_paths() -> dict[str, Path]:
    """The configurations shipped with the package (``configs/``, installed as
    ``jungleseg.configs``), by name."""
    from importlib.resources import files

    folder = Path(str(files("jungleseg.configs")))
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def load_preset(name: str) -> Config:
    """The shipped configuration ``name`` (e.g. ``"stanford"``), read once per change of
    its file."""
    paths = preset_paths()
    if name not in paths:
        raise ValueError(f"unknown preset {name!r}; presets: {', '.join(paths)}")
    return _load_cached(paths[name], paths[name].stat().st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _load_cached(path: Path, mtime_ns: int) -> Config:
    return load_config(path)


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


def _parameter_docs(cls) -> dict[str, str]:
    """First sentence of each parameter's description in a numpydoc class docstring
    (a line ``a, b : type`` describes both)."""
    lines = (inspect.getdoc(cls) or "").splitlines()
    docs: dict[str, str] = {}
    if "Parameters" not in lines:
        return docs
    names: list[str] = []
    for line, after in zip(lines[lines.index("Parameters") + 2:], lines[lines.index(
            "Parameters") + 3:] + [""]):
        if after.startswith("---"):
            break  # the next section's heading
        if line and not line.startswith(" "):
            names = [n.strip() for n in line.split(" : ")[0].split(",") if n.strip()]
            for name in names:
                docs[name] = ""
        elif line.strip():
            for name in names:
                docs[name] = f"{docs[name]} {line.strip()}".strip()
    def first_sentence(text: str) -> str:
        text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text).replace("``", "`")
        return re.split(r"(?<=\.)\s(?=[A-Z(])", text)[0]

    return {name: first_sentence(text) for name, text in docs.items()}


def _table(title: str, schema: Mapping[str, list], defaults: Mapping[str, Any],
           docs: Mapping[str, str], names: Mapping[str, str] | None = None) -> list[str]:
    rows = [f"## {title}", "", "| key | allowed values | default | meaning |", "|---|---|---|---|"]
    for key, constraints in schema.items():
        param = (names or {}).get(key, key)
        default = defaults.get(param, inspect.Parameter.empty)
        shown = "" if default is inspect.Parameter.empty else f"`{_plain(default)!r}`"
        allowed = describe(constraints).replace("|", "\\|")
        rows.append(f"| `{key}` | {allowed} | {shown} | {docs.get(param, '')} |")
    return rows + [""]


def _defaults(cls) -> dict[str, Any]:
    return {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
            if name != "self"}


def parameter_table() -> str:
    """Markdown table of every configuration key: allowed values, default and meaning, all
    from the estimators' and families' declarations (``docs/parameters.md``)."""
    out = ["# Parameters", "",
           "Every key of a configuration file (`configs/*.yaml`), with the values it allows, its "
           "default and its meaning. The Python estimators take the same names (the `sampling` "
           "section's `strategy` is the `sampling` parameter). This page is generated from the "
           "code's own declarations by `jungleseg.config.parameter_table()`; a test keeps it "
           "current.", ""]
    image_docs = {**_parameter_docs(JungleClassifier), **{
        k: v for k, v in _parameter_docs(JungleSegmenter).items() if v and "As for" not in v}}
    out += _table("`jungle` (images: `JungleSegmenter`)", jungle_schema(False),
                  _defaults(JungleSegmenter), image_docs)
    tabular_only = {k: v for k, v in jungle_schema(True).items()
                    if k not in jungle_schema(False) or k == "n_candidate_features"}
    out += _table("`jungle`, tabular only (`dataset: uci`, `JungleClassifier`)", tabular_only,
                  _defaults(JungleClassifier), _parameter_docs(JungleClassifier))
    out += _table("`sampling`", sampling_schema(), _defaults(JungleSegmenter),
                  _parameter_docs(JungleSegmenter), SAMPLING_KEYS)
    for name, cls in IMAGE_FAMILIES.items():
        out += _table(f"`features` with `family: {name}` (`{cls.__name__}`)",
                      cls._parameter_constraints, _defaults(cls), _parameter_docs(cls))
    out += _table("top level", {"dataset": _DATASET, "seed": _SEED}, {}, {
        "dataset": "Which benchmark the configuration is for (`uci`: tabular).",
        "seed": "The estimator's `random_state`."})
    return "\n".join(out).rstrip() + "\n"
