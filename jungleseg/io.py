"""Model files: jungles in HDF5, written atomically, checksummed and validated on load.

Layout (``docs/guide/model-files.md`` describes it for other programs)::

    /                      attrs: format = "jungleseg-model", format_version, library_version,
                                  features (JSON), training (JSON), metadata (JSON), sha256
    /classes               class values, int64 (C,)
    /dags/<g>/level_start  int32 (n_levels + 1,)
    /dags/<g>/feature_kind uint8 (n_nodes,)
    ...                    feature_params, threshold, left, right, leaf_value (see DAG),
                           spread (float32 (n_nodes,), optional: soft routing's node scale)

Every dataset carries HDF5's Fletcher-32 checksum, and the HDF5 metadata the checksums of
the 1.8 file format; ``sha256`` covers the attributes and the arrays (:func:`content_digest`),
so a flipped byte or an edited attribute is reported on load instead of changing results.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import h5py
import numpy as np

from ._atomic import written_atomically
from ._validation import describe, satisfies
from ._version import __version__
from .features import family_from_dict
from .features._quantise import quantiser_from_arrays
from .jungle import DAG, Jungle, ModelError
from .jungle._dag import _DTYPES
from .jungle._model import checked_jungle, class_sample, integer_classes
from .segmentation import SEGMENTATION_CONSTRAINTS

FORMAT = "jungleseg-model"
#: Version 2 added the Fletcher-32 and SHA-256 checksums; version 1 files still load.
#: Version 3 (written only for auto-context models) adds ``/stages``. Version 4 (written
#: for models of quantised channel stores) adds ``quantiser`` to the ``features`` JSON of
#: the model and of its stages.
FORMAT_VERSION = 4
#: The version written for models of float32 stores without auto-context stages.
PLAIN_VERSION = 2
#: The version written for models of float32 stores with auto-context stages.
CONTEXT_VERSION = 3
#: The attributes of each auto-context stage group ``/stages/<s>``.
STAGE_ATTRIBUTES = ("features", "training", "metadata")
#: The root attributes the content digest covers, in this order.
DIGEST_ATTRIBUTES = ("format", "format_version", "library_version", "features", "training",
                     "metadata")
_MAX_ELEMENTS = 1 << 31  # refuse datasets that claim more elements than this
# gzip expands at most ~1032 times: a dataset claiming more bytes than this many times the
# file's size (plus 1 MiB) holds unwritten chunks or lies about its shape
_MAX_EXPANSION = 1100


class ModelFileError(ModelError):
    """A model file is missing, unreadable, corrupt, hostile or of an unknown version."""


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, tuple)):
        return list(value)
    if hasattr(value, "to_dict"):
        return value.to_dict()
    raise TypeError(f"cannot store {type(value).__name__} in a model file")


def content_digest(attributes: dict, arrays: list[tuple[str, np.ndarray]]) -> str:
    """SHA-256 (hex) of a model's root attributes :data:`DIGEST_ATTRIBUTES` (as text) and
    of its arrays (path, dtype, shape and bytes of each, in the order given: ``/classes``,
    then every DAG's arrays in DAG order). What ``save_model`` stores as ``sha256`` and
    ``load_model`` recomputes from what it read."""
    digest = hashlib.sha256()
    for name in DIGEST_ATTRIBUTES:
        digest.update(f"{name}={attributes[name]}\n".encode())
    for where, array in arrays:
        array = np.ascontiguousarray(array)
        digest.update(f"{where} {array.dtype.str} {array.shape}\n".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def features_dict(family) -> dict:
    """A family's JSON: its parameters, and its quantiser's arrays if it has one."""
    features = family.to_dict()
    if family.quantiser is not None:
        features["quantiser"] = {k: v.tolist() for k, v in family.quantiser.to_arrays().items()}
    return features


def _stage_texts(jungle: Jungle) -> dict:
    return {"features": json.dumps(features_dict(jungle.family)),
            "training": json.dumps(jungle.params, default=_json_default),
            "metadata": json.dumps(jungle.metadata, default=_json_default)}


def _model_arrays(jungle: Jungle) -> list[tuple[str, np.ndarray]]:
    """Every array a file holds, in digest order; an auto-context stage's attributes enter
    as UTF-8 byte arrays at ``/stages/<s>@<name>``, before its DAGs."""
    arrays = [("/classes", integer_classes(jungle.classes))]
    for g, dag in enumerate(jungle.dags):
        arrays += [(f"/dags/{g}/{name}", array) for name, array in dag.arrays().items()]
    for s, stage in enumerate(jungle.context):
        arrays += [(f"/stages/{s}@{name}", np.frombuffer(text.encode(), np.uint8))
                   for name, text in _stage_texts(stage).items()]
        for g, dag in enumerate(stage.dags):
            arrays += [(f"/stages/{s}/dags/{g}/{name}", array)
                       for name, array in dag.arrays().items()]
    return arrays


def save_model(jungle: Jungle, path: str | os.PathLike) -> Path:
    """Write ``jungle`` to ``path`` atomically: a crash mid-save leaves any previous file
    at ``path`` untouched (the data go to a temporary file that is renamed at the end).
    The file is readable like any other file the user writes (mode 0666 less the umask)."""
    path = Path(path)
    jungle = checked_jungle(jungle, "save_model")
    jungle.validate()
    if integer_classes(jungle.classes) is None:
        raise ModelError(f"model files hold integer class values; this model's classes are "
                         f"{class_sample(jungle.classes)}: fit on integer labels (e.g. "
                         "sklearn's LabelEncoder) to save it, or pickle the estimator")
    quantised = any(stage.family.quantiser is not None for stage in (jungle, *jungle.context))
    version = (FORMAT_VERSION if quantised else CONTEXT_VERSION if jungle.context
               else PLAIN_VERSION)
    attributes = {"format": FORMAT, "format_version": version,
                  "library_version": __version__, **_stage_texts(jungle)}
    arrays = _model_arrays(jungle)
    with written_atomically(path) as tmp, h5py.File(tmp, "w", libver=("v108", "v108")) as f:
        f.attrs.update(attributes)
        f.attrs["sha256"] = content_digest(attributes, arrays)
        for where, array in arrays:
            if "@" in where:  # an auto-context stage's attribute
                group, name = where.split("@")
                f.require_group(group).attrs[name] = array.tobytes().decode()
                continue
            compress = {"compression": "gzip", "shuffle": True} if array.size > 1 else {}
            f.create_dataset(where, data=array, fletcher32=True, **compress)
    return path


def _read(group, name: str, path: Path, where: str, limit: int) -> np.ndarray:
    if name not in group or not isinstance(group[name], h5py.Dataset):
        raise ModelFileError(f"{path}: missing dataset {where}{name}")
    ds = group[name]
    if ds.size > _MAX_ELEMENTS or ds.size * ds.dtype.itemsize > limit:
        raise ModelFileError(f"{path}: dataset {where}{name} claims {ds.size} elements, more "
                             "than the file can hold")
    expected = _DTYPES.get(name, np.float32 if name == "spread" else None)
    if expected is not None and ds.dtype != expected:
        raise ModelFileError(f"{path}: {where}{name} has dtype {ds.dtype}, expected "
                             f"{np.dtype(expected).name}")
    return ds[()]


def _attr_text(f, name: str, path: Path) -> str:
    if name not in f.attrs:
        raise ModelFileError(f"{path}: missing attribute '{name}'")
    value = f.attrs[name]
    if not isinstance(value, str):
        raise ModelFileError(f"{path}: attribute '{name}' is not text")
    return value


def _attr_json(text: str, name: str, path: Path):
    try:
        return json.loads(text)
    except (TypeError, ValueError) as err:
        raise ModelFileError(f"{path}: attribute '{name}' is not valid JSON: {err}") from None


def _segmentation_problem(params: dict, metadata: dict) -> str | None:
    """What is wrong with the training parameters segmentation reads, if anything."""
    for key, constraints in SEGMENTATION_CONSTRAINTS.items():
        if key in params and not satisfies(constraints, params[key]):
            return (f"training parameter {key} must be {describe(constraints)}, got "
                    f"{params[key]!r}")
    if params.get("guided_eps") is None:
        return None
    guide = metadata.get("guide")
    if (not isinstance(guide, list) or len(guide) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       and np.isfinite(v) for v in guide) or not guide[1] > 0):
        return (f"guided smoothing needs metadata 'guide' = [centre, scale > 0] (finite), "
                f"got {guide!r}")
    return None


def _read_dags(group, path: Path, where: str, limit: int) -> list[dict]:
    """The DAG arrays of ``group`` (the file or a stage group): ``dags/0``, ``dags/1``..."""
    if "dags" not in group or not isinstance(group["dags"], h5py.Group) or not len(group["dags"]):
        raise ModelFileError(f"{path}: missing group {where}dags")
    names = sorted(group["dags"], key=lambda k: int(k) if k.isdigit() else -1)
    if names != [str(g) for g in range(len(names))]:
        raise ModelFileError(f"{path}: {where}dags must hold groups 0..{len(names) - 1}")
    return [{name: _read(group["dags"][g], name, path, f"{where}dags/{g}/", limit)
             for name in (*_DTYPES, "spread")[:len(_DTYPES) + ("spread" in group["dags"][g])]}
            for g in names]


def _read_stages(f, path: Path, version: int, limit: int) -> list[tuple[dict, list]]:
    """(attribute texts, DAG arrays) of each auto-context stage (format 3)."""
    if "stages" not in f:
        return []
    if version < 3 or not isinstance(f["stages"], h5py.Group):
        raise ModelFileError(f"{path}: /stages needs format version 3")
    names = sorted(f["stages"], key=lambda k: int(k) if k.isdigit() else -1)
    if not names or names != [str(s) for s in range(len(names))]:
        raise ModelFileError(f"{path}: /stages must hold groups 0..{len(names) - 1}")
    stages = []
    for s in names:
        group = f["stages"][s]
        texts = {name: _attr_text(group, name, path) for name in STAGE_ATTRIBUTES}
        stages.append((texts, _read_dags(group, path, f"/stages/{s}/", limit)))
    return stages


def _read_file(f, path: Path) -> tuple:
    """Attributes and arrays of an open model file, checksum verified (format 2 on)."""
    if f.attrs.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not a jungleseg model (format attribute "
                             f"{f.attrs.get('format')!r})")
    version = f.attrs.get("format_version")
    if not isinstance(version, (int, np.integer)) or version < 1:
        raise ModelFileError(f"{path}: bad format_version {version!r}")
    if version > FORMAT_VERSION:
        raise ModelFileError(f"{path}: format version {version} is newer than this "
                             f"jungleseg ({__version__}) reads ({FORMAT_VERSION}); "
                             "upgrade jungleseg")
    texts = {name: _attr_text(f, name, path)
             for name in ("library_version", "features", "training", "metadata")}
    limit = _MAX_EXPANSION * path.stat().st_size + (1 << 20)
    classes = _read(f, "classes", path, "/", limit)
    dags = _read_dags(f, path, "/", limit)
    stages = _read_stages(f, path, int(version), limit)
    if version >= 2:
        stored = _attr_text(f, "sha256", path)
        arrays = [("/classes", classes)] + [(f"/dags/{g}/{name}", array)
                                            for g, dag in enumerate(dags)
                                            for name, array in dag.items()]
        for s, (stage_texts, stage_dags) in enumerate(stages):
            arrays += [(f"/stages/{s}@{name}", np.frombuffer(stage_texts[name].encode(),
                                                             np.uint8))
                       for name in STAGE_ATTRIBUTES]
            arrays += [(f"/stages/{s}/dags/{g}/{name}", array) for g, dag in enumerate(stage_dags)
                       for name, array in dag.items()]
        attributes = {**texts, "format": FORMAT, "format_version": int(version)}
        if content_digest(attributes, arrays) != stored:
            raise ModelFileError(f"{path}: content checksum (sha256) does not match: the file "
                                 "was changed or damaged after it was written")
    return texts, classes, dags, stages, int(version)


def _family(features, version: int):
    """The feature family of a ``features`` JSON dict, with its quantiser (format 4)."""
    if not isinstance(features, dict):
        raise ValueError(f"expected a JSON object, got {features!r}")
    features = dict(features)
    quantiser = features.pop("quantiser", None)
    family = family_from_dict(features)
    if quantiser is None:  # float32 channel values
        return family.with_quantiser(None)
    if version < 4:
        raise ValueError("a quantiser needs format version 4")
    if not isinstance(quantiser, dict) or set(quantiser) != {"low", "scale", "bits"}:
        raise ValueError("quantiser must hold low, scale and bits")
    quantiser = quantiser_from_arrays({k: np.asarray(v, np.float64 if k != "bits" else None)
                                       for k, v in quantiser.items()})
    if quantiser.n_channels != family.n_store_channels:
        raise ValueError(f"the quantiser maps {quantiser.n_channels} channels, the features "
                         f"make {family.n_store_channels}")
    return family.with_quantiser(quantiser)


def _stage(texts: dict, classes: np.ndarray, arrays: list, path: Path, where: str,
           version: int) -> Jungle:
    """One jungle (the model or an auto-context stage) from its attribute texts and arrays,
    its parameters checked (the arrays are validated with the whole model)."""
    try:
        family = _family(_attr_json(texts["features"], "features", path), version)
    except ModelFileError:
        raise
    except (TypeError, ValueError, AttributeError) as err:
        raise ModelFileError(f"{path}: {where}bad feature specification: {err}") from None
    params = _attr_json(texts["training"], "training", path)
    metadata = _attr_json(texts["metadata"], "metadata", path)
    params = params if isinstance(params, dict) else {}
    metadata = metadata if isinstance(metadata, dict) else {}
    problem = _segmentation_problem(params, metadata)
    if problem:
        raise ModelFileError(f"{path}: {where}{problem}")
    return Jungle([DAG(**dag) for dag in arrays], classes, family, params, metadata)


def load_model(path: str | os.PathLike) -> Jungle:
    """Read and fully validate a model file; raise :class:`ModelFileError` naming the
    file and the problem for anything that is not a well-formed model (any error of h5py
    or HDF5 included). Format 2 files must match their SHA-256 content checksum."""
    path = Path(path)
    if path.is_dir():
        raise ModelFileError(f"{path}: is a folder, not a model file")
    if not path.exists():
        raise ModelFileError(f"{path}: no such model file")
    try:
        with h5py.File(path, "r") as f:
            texts, classes, arrays, stages, version = _read_file(f, path)
    except ModelFileError:
        raise
    except Exception as err:  # noqa: BLE001 - whatever HDF5 makes of a damaged file
        detail = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ModelFileError(f"{path}: unreadable model file ({detail})") from None
    if classes.ndim != 1 or classes.size < 1 or classes.dtype.kind not in "iu":
        raise ModelFileError(f"{path}: /classes must be a non-empty integer vector")
    context = tuple(_stage(t, classes, d, path, f"stage {s}: ", version)
                    for s, (t, d) in enumerate(stages))
    jungle = _stage(texts, classes, arrays, path, "", version)
    jungle = Jungle(jungle.dags, classes, jungle.family, jungle.params, jungle.metadata, context)
    try:
        jungle.validate()
    except ModelError as err:
        raise ModelFileError(f"{path}: {err}") from None
    except Exception as err:  # noqa: BLE001 - arrays of the right dtype but absurd shapes
        raise ModelFileError(f"{path}: malformed arrays ({err})") from None
    return jungle
