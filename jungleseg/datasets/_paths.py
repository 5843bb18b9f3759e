"""Location of the real benchmark data.

The data are never part of the repository. Every loader takes the folder as a parameter; when it
is omitted the folder comes from :func:`data_root`: the environment variable ``JUNGLESEG_DATA``
if set, else ``../shared/data`` relative to the current working directory.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the data folder.
ENV_VAR = "JUNGLESEG_DATA"

#: Default data folder, relative to the current working directory.
DEFAULT_RELATIVE = Path("..") / "shared" / "data"


def data_root(path: str | os.PathLike[str] | None = None) -> Path:
    """Resolve the folder holding the real benchmark data.

    Parameters
    ----------
    path : str or os.PathLike, optional
        Explicit folder. When omitted, the environment variable ``JUNGLESEG_DATA`` is used if
        set, else ``../shared/data`` relative to the current working directory.

    Returns
    -------
    pathlib.Path
        The absolute path of an existing folder.

    Raises
    ------
    FileNotFoundError
        If the folder does not exist. The message names the folder and how to point the
        project at another one.
    """
    if path is not None:
        folder, source = Path(path), "the path given"
    elif os.environ.get(ENV_VAR):
        folder, source = Path(os.environ[ENV_VAR]), f"${ENV_VAR}"
    else:
        folder, source = Path.cwd() / DEFAULT_RELATIVE, f"the default {DEFAULT_RELATIVE}"
    folder = folder.expanduser().resolve()
    if not folder.is_dir():
        raise FileNotFoundError(
            f"data folder {folder} (from {source}) does not exist; pass the folder explicitly "
            f"or set the environment variable {ENV_VAR} to the folder holding "
            "stanford_background/, fasseg/ and uci/"
        )
    return folder


def dataset_dir(name: str, root: str | os.PathLike[str] | None = None) -> Path:
    """Resolve the folder of one data set.

    Parameters
    ----------
    name : str
        Sub-folder of the data root, e.g. ``"stanford_background"``.
    root : str or os.PathLike, optional
        Either the data set's own folder or the data root containing ``name``. When omitted,
        ``data_root() / name`` is used.

    Returns
    -------
    pathlib.Path
        The data set's folder.

    Raises
    ------
    FileNotFoundError
        If the folder does not exist.
    """
    base = data_root(root)
    folder = base / name if (base / name).is_dir() or root is None else base
    if not folder.is_dir():
        raise FileNotFoundError(
            f"data set folder {folder} does not exist; set {ENV_VAR} or pass the folder"
        )
    return folder
