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


#: Test files that take longest (fresh virtual environments, the docs build, the paper's
#: figures, clusters): run first, so that with ``-n 2`` the other worker fills in around them
#: rather than one worker finishing them alone at the end.
LONGEST_FIRST = ("tests/test_readme.py", "tests/test_docs.py", "tests/test_doc_commands.py",
                 "tests/benchmarks/test_paper.py", "tests/distributed/",
                 "tests/cli/test_commands.py")
#: Folders whose tests share one package-scoped fixture (a LocalCluster): one worker each.
ONE_WORKER_FOLDERS = ("tests/distributed/",)


def work_unit(nodeid: str) -> str:
    """What ``-n 2 --dist loadfile`` gives one worker whole: the test's file (its module
    fixtures are built once and its tests run in file order), or its folder if it is one of
    :data:`ONE_WORKER_FOLDERS`."""
    path = nodeid.split("::", 1)[0]
    return next((folder for folder in ONE_WORKER_FOLDERS if path.startswith(folder)), path)


def rank(item) -> int:
    unit = work_unit(item.nodeid)
    return next((i for i, name in enumerate(LONGEST_FIRST) if unit.startswith(name)),
                len(LONGEST_FIRST))


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--run-slow"):
        skip = pytest.mark.skip(reason="slow: run with --run-slow")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip)
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: units in the order above
        items.sort(key=rank)  # stable: file order within each unit


def pytest_configure(config):
    # Hand the units out in collection order (as sorted above): pytest-xdist would otherwise
    # start with the files that have most tests, and leave the longest tests for the end.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with :func:`work_unit` as its unit."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class WorkUnitScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return WorkUnitScheduling(config, log)


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
