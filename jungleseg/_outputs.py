"""Where the command line writes: output files and folders checked before the work starts,
and a trained model that is never dropped."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path


def writable_file(path, what: str) -> Path:
    """``path`` if a file can be written there, else ValueError naming it: not a folder,
    in an existing folder where a file can be created (tried, not guessed: permissions
    say nothing to root, and a read-only disk says nothing to permissions). A zarr
    output (``NAME.zarr``) is a folder of chunks and may exist: it is replaced."""
    path = Path(path)
    if path.is_dir() and path.suffix.lower() != ".zarr":
        raise ValueError(f"{path}: is a folder; {what} needs a file name")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"{folder}: no such folder (for {what} {path.name}); create it first")
    _try_writing(folder)
    return path


def writable_folder(path, what: str) -> Path:
    """``path``, created if missing, if files can be written in it; else ValueError."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path}: is a file; {what} needs a folder")
    _try_writing(path, create=True)
    return path


def _try_writing(folder: Path, create: bool = False) -> None:
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        raise ValueError(f"{folder}: cannot write here ({err.strerror or err})") from None


def save_or_rescue(jungle, path: Path) -> Path:
    """Save the model at ``path``; if that fails after all, in the working folder or
    else the temporary folder, and say so: a trained model is never dropped."""
    from .io import save_model

    try:
        return save_model(jungle, path)
    except OSError as first:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for folder in (Path.cwd(), Path(tempfile.gettempdir())):
            rescue = folder / f"{path.stem}.rescued-{stamp}{path.suffix or '.h5'}"
            try:
                save_model(jungle, rescue)
            except OSError:
                continue
            raise OSError(f"{path}: could not write the model ({first.strerror or first}); "
                          f"it was saved to {rescue} instead") from None
        raise
