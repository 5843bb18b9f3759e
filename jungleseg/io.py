"""Model files: jungles in HDF5, written atomically and validated on load.

Layout (``docs/model-format.md`` describes it for other programs)::

    /                      attrs: format = "jungleseg-model", format_version, library_version,
                                  features (JSON), training (JSON), metadata (JSON)
    /classes               class values, int64 (C,)
    /dags/<g>/level_start  int32 (n_levels + 1,)
    /dags/<g>/feature_kind uint8 (n_nodes,)
    ...                    feature_params, threshold, left, right, leaf_value (see DAG)
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import h5py
import numpy as np

from ._validation import describe, satisfies
from ._version import __version__
from .features import family_from_dict
from .jungle import DAG, Jungle, ModelError
from .jungle._dag import _DTYPES
from .segmentation import SEGMENTATION_CONSTRAINTS

FORMAT = "jungleseg-model"
FORMAT_VERSION = 1
_MAX_ELEMENTS = 1 << 31  # refuse datasets that claim more elements than this


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


def save_model(jungle: Jungle, path: str | os.PathLike) -> Path:
    """Write ``jungle`` to ``path`` atomically: a crash mid-save leaves any previous file
    at ``path`` untouched (the data go to a temporary file that is renamed at the end)."""
    path = Path(path)
    jungle.validate()
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = FORMAT
            f.attrs["format_version"] = FORMAT_VERSION
            f.attrs["library_version"] = __version__
            f.attrs["features"] = json.dumps(jungle.family.to_dict())
            f.attrs["training"] = json.dumps(jungle.params, default=_json_default)
            f.attrs["metadata"] = json.dumps(jungle.metadata, default=_json_default)
            f.create_dataset("classes", data=np.asarray(jungle.classes, np.int64))
            dags = f.create_group("dags")
            for g, dag in enumerate(jungle.dags):
                group = dags.create_group(str(g))
                for name, array in dag.arrays().items():
                    group.create_dataset(name, data=array, compression="gzip", shuffle=True)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _read(group, name: str, path: Path, where: str) -> np.ndarray:
    if name not in group or not isinstance(group[name], h5py.Dataset):
        raise ModelFileError(f"{path}: missing dataset {where}{name}")
    ds = group[name]
    if ds.size > _MAX_ELEMENTS:
        raise ModelFileError(f"{path}: dataset {where}{name} claims {ds.size} elements")
    expected = _DTYPES.get(name)
    if expected is not None and ds.dtype != expected:
        raise ModelFileError(f"{path}: {where}{name} has dtype {ds.dtype}, expected "
                             f"{np.dtype(expected).name}")
    return ds[()]


def _attr_json(f, name: str, path: Path):
    if name not in f.attrs:
        raise ModelFileError(f"{path}: missing attribute '{name}'")
    try:
        return json.loads(f.attrs[name])
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


def load_model(path: str | os.PathLike) -> Jungle:
    """Read and fully validate a model file; raise :class:`ModelFileError` naming the
    file and the problem for anything that is not a well-formed model."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such model file")
    try:
        with h5py.File(path, "r") as f:
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
            try:
                family = family_from_dict(_attr_json(f, "features", path))
            except (TypeError, ValueError) as err:
                raise ModelFileError(f"{path}: bad feature specification: {err}") from None
            params = _attr_json(f, "training", path)
            metadata = _attr_json(f, "metadata", path)
            classes = _read(f, "classes", path, "/")
            if classes.ndim != 1 or classes.size < 1 or classes.dtype.kind not in "iu":
                raise ModelFileError(f"{path}: /classes must be a non-empty integer vector")
            if "dags" not in f or not isinstance(f["dags"], h5py.Group) or not len(f["dags"]):
                raise ModelFileError(f"{path}: missing group /dags")
            names = sorted(f["dags"], key=lambda k: int(k) if k.isdigit() else -1)
            if names != [str(g) for g in range(len(names))]:
                raise ModelFileError(f"{path}: /dags must hold groups 0..{len(names) - 1}")
            dags = [DAG(**{name: _read(f["dags"][g], name, path, f"/dags/{g}/")
                           for name in _DTYPES}) for g in names]
    except ModelFileError:
        raise
    except (OSError, KeyError, ValueError, TypeError) as err:
        raise ModelFileError(f"{path}: unreadable model file ({err})") from None
    params = params if isinstance(params, dict) else {}
    metadata = metadata if isinstance(metadata, dict) else {}
    problem = _segmentation_problem(params, metadata)
    if problem:
        raise ModelFileError(f"{path}: {problem}")
    jungle = Jungle(dags, classes, family, params, metadata)
    try:
        jungle.validate()
    except ModelError as err:
        raise ModelFileError(f"{path}: {err}") from None
    return jungle
