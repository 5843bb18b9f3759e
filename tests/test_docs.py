"""The documentation site works as written: every Python block of its pages runs, no page
is too long to read, the README's links lead somewhere, and (slow) the Sphinx site builds
with warnings as errors, gallery included."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
#: Folders of docs/ that hold build outputs or generated files, not pages.
NOT_PAGES = ("_build", "generated", "auto_examples", "paper")


def pages() -> list[Path]:
    """The Markdown pages of the site (docs/**/*.md, without outputs and generated tables)."""
    return sorted(p for p in DOCS.rglob("*.md")
                  if not set(p.relative_to(DOCS).parts[:-1]) & set(NOT_PAGES))


def python_blocks() -> list[tuple[str, int, str]]:
    """(page, index, code) of every ```python block of every page, but those that
    tests/test_doc_commands.py runs among the page's commands."""
    from tests.test_doc_commands import runs_whole

    blocks = []
    for page in pages():
        if runs_whole(page):  # run with the page's commands, in page order
            continue
        found = re.findall(r"^```python\n(.*?)^```", page.read_text(),
                           flags=re.DOTALL | re.MULTILINE)
        blocks += [(str(page.relative_to(REPO)), i, code) for i, code in enumerate(found)]
    return blocks


BLOCKS = python_blocks()


def block_param(page: str, index: int, code: str):
    # Blocks that start a dask cluster spawn worker processes: a minute each on 2 cores.
    marks = [pytest.mark.slow] if "distributed.connect" in code else []
    return pytest.param(code, id=f"{page}:{index}", marks=marks)


def test_the_pages_have_python_blocks():
    assert len(BLOCKS) >= 6
    assert {page for page, _, _ in BLOCKS} >= {"docs/guide/segmenting.md",
                                                "docs/guide/volumes.md"}


@pytest.mark.parametrize("code", [block_param(*block) for block in BLOCKS])
def test_page_block_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # blocks may write files (models, zarr arrays)
    exec(compile(code, "docs python block", "exec"), {"__name__": "__main__"})  # noqa: S102


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_no_page_is_too_long(page):
    assert page.stat().st_size <= 26_000, f"{page} is {page.stat().st_size} bytes; split it"


def test_the_readme_is_short_and_its_links_lead_somewhere():
    text = (REPO / "README.md").read_text()
    assert len(text.encode()) <= 8_500
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert len(local) >= 10
    missing = [link for link in local if not (REPO / link).exists()]
    assert not missing, f"README links to missing files: {missing}"


@pytest.mark.slow
def test_the_site_builds_with_warnings_as_errors(tmp_path, data_root):
    """The README's build command, into a temporary folder, with the gallery run (its
    examples are sized to run in seconds each). Warnings, including MyST's for a link to a
    page or heading that does not exist, fail the build."""
    env = {**os.environ, "JUNGLESEG_DATA": str(data_root), "JUNGLESEG_DOCS_GALLERY": "1",
           "MPLBACKEND": "Agg"}
    out = tmp_path / "html"
    start = time.perf_counter()
    build = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
                            "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
                           check=False)
    seconds = time.perf_counter() - start
    assert build.returncode == 0, (build.stdout[-3000:], build.stderr[-5000:])
    print(f"docs built in {seconds:.0f} s")
    for page in pages():
        html = out / page.relative_to(DOCS).with_suffix(".html")
        assert html.exists(), f"{page} was not built"
    gallery = sorted((DOCS / "examples").glob("plot_*.py"))
    assert len(gallery) >= 6
    for example in gallery:
        built = out / "auto_examples" / example.with_suffix(".html").name
        assert "sphx-glr-single-img" in built.read_text() or "sphx-glr-multi-img" in \
            built.read_text(), f"{example.name} made no figure"
    api = (out / "api.html").read_text()
    import jungleseg
    for name in jungleseg.__all__:
        if name != "__version__":
            assert f"jungleseg.{name}" in api, f"{name} is missing from the API reference"
