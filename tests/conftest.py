"""Shared pytest fixtures."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from jungleseg.datasets._paths import ENV_VAR
from jungleseg.datasets._paths import data_root as resolve_data_root

REPOSITORY = Path(__file__).resolve().parents[1]

# Benchmarks that tests run at tiny sizes write their figures here, not over the committed
# ones in benchmarks/results/ (read by the docs); subprocesses inherit it.
os.environ.setdefault("JUNGLESEG_RESULTS", tempfile.mkdtemp(prefix="jungleseg-results-"))


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true",
                     help="also run the tests marked slow (minutes each; CI runs them)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def data_root() -> Path:
    """Folder of the real benchmark data (``stanford_background/``, ``fasseg/``, ``uci/``).

    Taken from ``$JUNGLESEG_DATA`` if set, else ``../shared/data`` next to the repository (so
    tests work from any working directory). When the folder is missing the test is skipped,
    except on CI (``CI=true``), where the data must be present and the test fails instead.
    """
    folder = os.environ.get(ENV_VAR) or REPOSITORY.parent / "shared" / "data"
    try:
        return resolve_data_root(folder)
    except FileNotFoundError as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the real data are missing: {error}")
        pytest.skip(f"real data not available: {error}")
