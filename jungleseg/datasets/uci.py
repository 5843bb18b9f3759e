"""Classification sets in libsvm text format (UCI letter, pendigits, satimage, USPS, DNA, MNIST).

Each line of a libsvm file is ``label idx:value idx:value ...`` with 1-based feature indices;
omitted features are zero. :func:`load_libsvm` parses one file into a dense ``float32`` matrix,
:func:`load_uci` pools the files of one set from :data:`UCI_SETS`, and :func:`paper_splits` makes
the random 50/50 train/test splits of the decision-jungle paper's protocol.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

import numpy as np

from ._paths import dataset_dir

#: Folder name of the sets inside the data root.
FOLDER = "uci"


@dataclass(frozen=True)
class UciSet:
    """Description of one classification set.

    Attributes
    ----------
    files : tuple of str
        File names inside the ``uci`` folder; :func:`load_uci` pools them in this order.
    n_samples : int
        Number of rows over all files.
    n_features : int
        Number of features.
    n_classes : int
        Number of classes.
    description : str
        Origin of the set.
    """

    files: tuple[str, ...]
    n_samples: int
    n_features: int
    n_classes: int
    description: str


#: The sets of the shared ``uci`` folder, by name.
UCI_SETS: dict[str, UciSet] = {
    "letter": UciSet(("letter.libsvm",), 20000, 16, 26, "UCI letter recognition, labels 1..26"),
    "pendigits": UciSet(
        ("pendigits.libsvm",), 10992, 16, 10, "UCI pen-based digits, train+test merged"
    ),
    "satimage": UciSet(
        ("satimage.libsvm",), 6435, 36, 6, "UCI Statlog satellite image, train+test merged"
    ),
    "usps": UciSet(("usps.libsvm", "usps.t.libsvm"), 9298, 256, 10, "USPS 16x16 digits in [0, 1]"),
    "dna": UciSet(("dna.libsvm", "dna.t.libsvm"), 3186, 180, 3, "Statlog DNA, binary features"),
    "mnist5k": UciSet(("mnist5k.libsvm",), 5000, 784, 10, "MNIST subset, 500 per class"),
    "mnist10k": UciSet(("mnist10k.libsvm",), 10000, 784, 10, "the official MNIST test set"),
}


def _parse_error(path: Path, lineno: int, message: str) -> ValueError:
    """Build the error for a malformed line, naming the file and the line number."""
    return ValueError(f"{path}, line {lineno}: {message}")


def load_libsvm(
    path: str | os.PathLike[str], n_features: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Read a libsvm text file into a dense matrix.

    Parameters
    ----------
    path : str or os.PathLike
        File with lines ``label idx:value ...``; indices are 1-based, omitted features are
        zero, blank lines and text after ``#`` are ignored.
    n_features : int, optional
        Number of columns. Defaults to the largest index in the file.

    Returns
    -------
    X : numpy.ndarray
        ``float32`` array of shape (n_samples, n_features).
    y : numpy.ndarray
        Labels as given in the file: ``int64`` if all are integral, else ``float64``.

    Raises
    ------
    ValueError
        On a malformed line (a token that is not ``idx:value``, a non-integer index or an index
        below 1, a non-numeric value or label) or an index above ``n_features``; the message
        names the file and the line number.
    """
    path = Path(path)
    labels: list[float] = []
    indices: list[int] = []
    values: list[float] = []
    counts: list[int] = []
    with path.open() as handle:
        for lineno, line in enumerate(handle, 1):
            if "#" in line:
                line = line[: line.index("#")]
            tokens = line.split()
            if not tokens:
                continue
            try:
                labels.append(float(tokens[0]))
            except ValueError:
                raise _parse_error(path, lineno, f"label {tokens[0]!r} is not a number") from None
            pairs = tokens[1:]
            numbers = " ".join(pairs).replace(":", " ").split()
            if (
                len(numbers) != 2 * len(pairs)
                or sum(map(str.count, pairs, repeat(":"))) != len(pairs)
                or not all(map(str.__contains__, pairs, repeat(":")))
            ):
                bad = next(p for p in pairs if len(p.split(":")) != 2 or "" in p.split(":"))
                raise _parse_error(path, lineno, f"token {bad!r} is not of the form idx:value")
            try:
                line_indices = list(map(int, numbers[0::2]))
            except ValueError:
                bad = next(t for t in numbers[0::2] if not _converts(t, int))
                raise _parse_error(path, lineno, f"index {bad!r} is not an integer") from None
            try:
                line_values = list(map(float, numbers[1::2]))
            except ValueError:
                bad = next(t for t in numbers[1::2] if not _converts(t, float))
                raise _parse_error(path, lineno, f"value {bad!r} is not a number") from None
            if line_indices and min(line_indices) < 1:
                raise _parse_error(path, lineno, f"index {min(line_indices)} is below 1")
            if n_features is not None and line_indices and max(line_indices) > n_features:
                raise _parse_error(
                    path, lineno, f"index {max(line_indices)} exceeds n_features={n_features}"
                )
            indices += line_indices
            values += line_values
            counts.append(len(line_indices))
    columns = np.array(indices, dtype=np.int64) - 1
    width = n_features if n_features is not None else int(columns.max(initial=-1)) + 1
    X = np.zeros((len(labels), width), dtype=np.float32)
    X[np.repeat(np.arange(len(labels)), counts), columns] = values
    y = np.array(labels, dtype=np.float64)
    if np.all(y == np.round(y)):
        y = y.astype(np.int64)
    return X, y


def _converts(text: str, convert: type) -> bool:
    """Tell whether ``convert(text)`` succeeds."""
    try:
        convert(text)
    except ValueError:
        return False
    return True


def load_uci(
    name: str, root: str | os.PathLike[str] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Load one set of :data:`UCI_SETS`, pooling its train and test files.

    Parameters
    ----------
    name : str
        Key of :data:`UCI_SETS`, e.g. ``"letter"``.
    root : str or os.PathLike, optional
        The ``uci`` folder, or the data root containing ``uci/``. Defaults to the folder found
        by :func:`jungleseg.datasets._paths.data_root`.

    Returns
    -------
    X : numpy.ndarray
        ``float32`` array of shape (n_samples, n_features).
    y : numpy.ndarray
        Labels as in the files (see :func:`load_libsvm`).

    Raises
    ------
    KeyError
        If ``name`` is not a key of :data:`UCI_SETS`.
    """
    if name not in UCI_SETS:
        raise KeyError(f"unknown set {name!r}; known sets: {sorted(UCI_SETS)}")
    spec = UCI_SETS[name]
    folder = dataset_dir(FOLDER, root)
    parts = [load_libsvm(folder / file, spec.n_features) for file in spec.files]
    X = np.concatenate([X for X, _ in parts])
    y = np.concatenate([y for _, y in parts])
    return X, y


def paper_splits(n: int, repeats: int = 5, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random 50/50 train/test splits of the decision-jungle paper's protocol.

    Parameters
    ----------
    n : int
        Number of samples.
    repeats : int, default 5
        Number of splits.
    seed : int, default 0
        Base seed; split ``r`` is drawn from ``numpy.random.SeedSequence([seed, r])``, so it
        does not depend on ``repeats``.

    Returns
    -------
    list of (numpy.ndarray, numpy.ndarray)
        ``(train_idx, test_idx)`` per repeat: sorted ``int64`` indices, ``n // 2`` for training
        and the other ``n - n // 2`` for testing.
    """
    splits = []
    for r in range(repeats):
        order = np.random.default_rng(np.random.SeedSequence([seed, r])).permutation(n)
        splits.append((np.sort(order[: n // 2]), np.sort(order[n // 2 :])))
    return splits
