"""Files written atomically: a reader, a crash or Ctrl-C never sees half a file.

Everything jungleseg writes as a whole (model files, label images, probability maps,
exported C sources) goes to a temporary file beside its target, which is renamed over the
target only once complete. A failed write removes the temporary file and leaves any
previous file at the target untouched. A zarr array, written chunk by chunk, goes the
same way: to a hidden folder beside its target, put in place once its last chunk is
written (:func:`zarr_written_atomically`).
"""
from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def temporary_beside(path: Path) -> Path:
    """A new empty file in ``path``'s folder, hidden (``.name.XXXXXXXX.tmp``) and created
    with mode 0666 less the umask, like any file the user writes (usually 0644), unlike
    ``tempfile.mkstemp``'s 0600."""
    folder = path.parent  # Path("x").parent is Path(".")
    for _ in range(100):
        tmp = folder / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder}: cannot create a temporary file for {path.name}")


@contextmanager
def written_atomically(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path to write ``path``'s content to; when the block ends without
    an error, the content is flushed to disk and renamed over ``path``; on any error
    (Ctrl-C included) the temporary file is removed and ``path`` is left as it was. A
    ``path`` that is a folder, or in a folder that does not exist, is refused before
    anything is written (IsADirectoryError, FileNotFoundError), naming it.

    The temporary name has no image suffix, so writers that pick a format by suffix
    must be given the format.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "notes.txt"
    >>> with written_atomically(target) as tmp:
    ...     _ = tmp.write_text("complete")
    >>> target.read_text()
    'complete'
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder; give the path of a file")
    folder = path.parent  # Path("x").parent is Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    tmp = temporary_beside(path)
    try:
        yield tmp
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def zarr_written_atomically(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` to write a zarr array to, chunk by chunk:
    a hidden folder whose name ends with ``path``'s (``.XXXXXXXX.labels.zarr``, so an
    ``.ome.zarr`` stays one). When the block ends without an error, it takes the place of
    ``path``; a previous zarr there is removed only then. On any error (Ctrl-C included)
    it is removed and ``path`` is left as it was: no half-written zarr, whose unwritten
    chunks would read as label 0, is ever at ``path``.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "labels.zarr"
    >>> with zarr_written_atomically(target) as tmp:
    ...     (tmp / "chunk").parent.mkdir()
    ...     _ = (tmp / "chunk").write_text("complete")
    >>> (target / "chunk").read_text()
    'complete'
    """
    path = Path(path)
    folder = path.parent  # Path("x").parent is Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    tmp = folder / f".{secrets.token_hex(4)}.{path.name}"
    try:
        yield tmp
        if path.exists() or path.is_symlink():
            old = folder / f".{secrets.token_hex(4)}.{path.name}.old"
            os.replace(path, old)
            os.replace(tmp, path)
            _remove(old)
        else:
            os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise
