"""Atomic writes: the target is replaced whole or not at all."""
import os
import stat

import pytest

from jungleseg._atomic import temporary_beside, written_atomically


def test_a_complete_write_replaces_the_target(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with written_atomically(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".out.txt.")
        tmp.write_text("new")
        assert target.read_text() == "old"  # not visible before the block ends
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt])
def test_a_failed_write_leaves_the_target_and_no_temporary(tmp_path, error):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(error), written_atomically(target) as tmp:
        tmp.write_text("half")
        raise error
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_new_target_is_not_created_by_a_failed_write(tmp_path):
    with pytest.raises(RuntimeError), written_atomically(tmp_path / "new.bin") as tmp:
        tmp.write_bytes(b"x")
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []


def test_temporary_files_follow_the_umask_and_are_unique(tmp_path):
    previous = os.umask(0o027)
    try:
        first = temporary_beside(tmp_path / "a.png")
        second = temporary_beside(tmp_path / "a.png")
    finally:
        os.umask(previous)
    assert first != second
    assert stat.S_IMODE(first.stat().st_mode) == 0o640
    with pytest.raises(FileNotFoundError):
        temporary_beside(tmp_path / "missing" / "a.png")


def test_a_folder_or_a_missing_folder_is_named_not_the_temporary(tmp_path):
    with pytest.raises(IsADirectoryError, match=f"^{tmp_path}: is a folder; give the path"):
        with written_atomically(tmp_path):
            pass
    with pytest.raises(FileNotFoundError, match=f"^{tmp_path / 'no'}: no such folder$"):
        with written_atomically(tmp_path / "no" / "m.h5"):
            pass
    assert os.listdir(tmp_path) == []
