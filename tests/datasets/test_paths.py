"""Where the real data live: $JUNGLESEG_DATA, else ../shared/data."""

from __future__ import annotations

from pathlib import Path

import pytest

from jungleseg.datasets._paths import ENV_VAR, data_root


def test_data_root_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert data_root() == tmp_path.resolve()
    assert data_root(tmp_path / ".") == tmp_path.resolve()


def test_data_root_default_is_relative_to_cwd(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    assert data_root() == (tmp_path / "shared" / "data").resolve()


def test_data_root_missing_names_folder_and_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere"
    monkeypatch.setenv(ENV_VAR, str(missing))
    with pytest.raises(FileNotFoundError, match=ENV_VAR) as error:
        data_root()
    assert str(missing) in str(error.value)
