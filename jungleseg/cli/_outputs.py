"""What the command line writes: messages on lines of their own, output files and folders
checked before the work starts (by one rule), and a trained model that is never dropped.

The ``--out`` rule, the same for every command: a missing folder (the folder ``--out``
names, or the folder of the file it names) is created; an existing file where a folder is
needed, a folder where a file is needed, or a place where nothing can be written is an
error before any work starts.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

#: The ``--out`` rule, as the options' help texts say it.
OUT_RULE = "missing folders are created"


class LineTracker:
    """A stand-in for standard error that remembers whether the last character written
    ended a line, so that a message can start on a line of its own after a progress bar
    (tqdm ends its lines with a carriage return, not a newline)."""

    def __init__(self, stream):
        self.stream = stream
        self.last = "\n"

    def write(self, text: str) -> int:
        if text:
            self.last = text[-1]
        return self.stream.write(text)

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _line_start() -> None:
    """Move standard error to the start of a clean line: a newline unless the last
    character written was one (a carriage return suffices on a terminal, where the rest
    of the line is cleared)."""
    stream = sys.stderr
    last = getattr(stream, "last", None)
    if last is None or last == "\n":
        return
    terminal = getattr(stream, "isatty", lambda: False)()
    stream.write("\r\x1b[K" if terminal and last == "\r" else "\n")


def error(text: str) -> None:
    """Report an error on one line of standard error, starting at column 0, as every
    command does: ``jungleseg: error: ...``."""
    _line_start()
    print(f"jungleseg: error: {text}", file=sys.stderr, flush=True)


def warn(text: str) -> None:
    """Report a warning on one line of standard error: ``jungleseg: warning: ...``."""
    _line_start()
    print(f"jungleseg: warning: {text}", file=sys.stderr, flush=True)


def writable_file(path, what: str) -> Path:
    """``path`` if a file can be written there, else ValueError naming it. Its folder is
    created if missing (the ``--out`` rule); a folder at ``path`` is refused. Writing is
    tried, not guessed: permissions say nothing to root, and a read-only disk says
    nothing to permissions. A zarr output (``NAME.zarr``) is a folder of chunks and may
    exist: it is replaced."""
    path = Path(path)
    if path.is_dir() and path.suffix.lower() != ".zarr":
        raise ValueError(f"{path}: is a folder; {what} needs a file name")
    folder = path.parent if str(path.parent) else Path(".")
    _try_writing(folder, what, create=True)
    return path


def writable_folder(path, what: str) -> Path:
    """``path``, created if missing, if files can be written in it; else ValueError."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path}: is a file; {what} needs a folder")
    _try_writing(path, what, create=True)
    return path


def _try_writing(folder: Path, what: str, create: bool = False) -> None:
    for parent in (folder, *folder.parents):
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"{parent}: is a file; {what} needs a folder there")
            break
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
    from ..io import save_model

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
