"""Sphinx configuration of the jungleseg site.

Build it with ``python -m sphinx -W --keep-going -b html docs docs/_build/html``.
``JUNGLESEG_DOCS_GALLERY=0`` skips running the gallery's examples (their pages are
then made from the sources alone).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))
sys.path.insert(0, str(DOCS / "_ext"))

import jungleseg  # noqa: E402 (importable once the repository is on sys.path)

# The gallery reads the real data from the folder the tests use (JUNGLESEG_DATA, default
# ../shared/data beside the repository); examples run with the examples folder as cwd.
os.environ.setdefault("JUNGLESEG_DATA", str(DOCS.parent.parent / "shared" / "data"))

project = "jungleseg"
author = "the jungleseg developers"
copyright = "the jungleseg developers"
version = release = jungleseg.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "results_table",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "_ext", "examples/README.rst", "paper/*/cache",
                    "**/GALLERY_HEADER.rst",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.md5", "auto_examples/*.json"]

# MyST: headings get anchors down to level 3, so pages can link to sections
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "dollarmath"]
suppress_warnings = [
    "myst.header",  # generated pages (claims tables) start at level 2
    "toc.no_title",  # the paper's generated objective tables are bare tables
]

# API reference: one page per public name, from the numpydoc docstrings
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# The gallery: every docs/examples/plot_*.py runs and makes its own figure.
run_gallery = os.environ.get("JUNGLESEG_DOCS_GALLERY", "1") != "0"
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_" if run_gallery else r"^$",
    "plot_gallery": "True" if run_gallery else "False",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "show_memory": False,
    "min_reported_time": 5,
}

html_theme = "pydata_sphinx_theme"
html_title = f"jungleseg {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "header_links_before_dropdown": 7,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False
