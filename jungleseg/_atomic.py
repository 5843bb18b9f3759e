"""Files written atomically: a reader, a crash or Ctrl-C never sees half a file.

Everything jungleseg writes as a whole (model files, label images, probability maps,
exported C sources) goes to a temporary file beside its target, which is renamed over the
target only once complete. A failed write removes the temporary file and leaves any
previous file at the target untouched.
"""
from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def temporary_beside(path: Path) -> Path:
    """A new empty file in ``path``'s folder, hidden (``.name.XXXXXXXX.tmp``) and created
    with mode 0666 less the umask, like any file the user writes (usually 0644), unlike
    ``tempfile.mkstemp``'s 0600."""
    folder = path.parent if str(path.parent) else Path(".")
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
    folder = path.parent if str(path.parent) else Path(".")
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
