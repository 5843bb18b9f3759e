"""libsvm files and the UCI sets, with the paper's splits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jungleseg.datasets import uci


def test_load_libsvm_small(tmp_path: Path) -> None:
    path = tmp_path / "small.libsvm"
    path.write_text(
        "# a comment line\n1 1:0.5 3:2\n\n-1 2:1.5   # trailing comment\n3\n   \n1 4:-1e-3\n"
    )
    X, y = uci.load_libsvm(path)
    expected = np.array(
        [[0.5, 0, 2, 0], [0, 1.5, 0, 0], [0, 0, 0, 0], [0, 0, 0, -1e-3]], dtype=np.float32
    )
    np.testing.assert_array_equal(X, expected)
    assert X.dtype == np.float32
    assert y.dtype == np.int64 and y.tolist() == [1, -1, 3, 1]
    X_wide, _ = uci.load_libsvm(path, n_features=6)
    assert X_wide.shape == (4, 6)


def test_load_libsvm_float_labels(tmp_path: Path) -> None:
    path = tmp_path / "regression.libsvm"
    path.write_text("0.5 1:1\n2 2:1\n")
    _, y = uci.load_libsvm(path)
    assert y.dtype == np.float64 and y.tolist() == [0.5, 2.0]


@pytest.mark.parametrize(
    "bad_line",
    ["1 2:x", "1 0:3", "1 -2:3", "1 2", "1 2:3:4 5", "1 2.5:1", "x 1:1", "1 :1", "1 7:1"],
)
def test_load_libsvm_malformed_line_names_line(tmp_path: Path, bad_line: str) -> None:
    path = tmp_path / "bad.libsvm"
    path.write_text(f"1 1:1\n\n{bad_line}\n2 2:2\n")
    with pytest.raises(ValueError, match=r"bad\.libsvm, line 3: "):
        uci.load_libsvm(path, n_features=5)


def test_uci_letter_and_pendigits(data_root: Path) -> None:
    X, y = uci.load_uci("letter", data_root)
    assert X.shape == (20000, 16) and X.dtype == np.float32
    assert len(np.unique(y)) == 26
    X, y = uci.load_uci("pendigits", data_root)
    assert X.shape == (10992, 16)
    assert sorted(np.unique(y).tolist()) == list(range(10))


def test_uci_pools_train_and_test(data_root: Path) -> None:
    spec = uci.UCI_SETS["dna"]
    X, y = uci.load_uci("dna", data_root)
    assert X.shape == (spec.n_samples, spec.n_features)
    assert len(np.unique(y)) == spec.n_classes


def test_paper_splits() -> None:
    splits = uci.paper_splits(11, repeats=5, seed=0)
    assert len(splits) == 5
    for train, test in splits:
        assert len(train) == 5 and len(test) == 6
        assert sorted(np.concatenate([train, test]).tolist()) == list(range(11))
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(splits, uci.paper_splits(11, 5, seed=0)))
    assert not np.array_equal(splits[0][0], splits[1][0])
    np.testing.assert_array_equal(uci.paper_splits(11, repeats=2)[1][0], splits[1][0])
