"""Sphinx configuration: the user guide is Markdown (MyST), the reference is autodoc.

Build with ``sphinx-build -W --keep-going -b html docs build/docs`` (CI does, with
warnings as errors).  The examples on the Markdown pages run in the test suite
(``tests/test_docs.py``); the docstrings' examples run under ``pytest --doctest-modules``.
"""

from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's funcgrad, installed or not

import funcgrad

project = "funcgrad"
author = "the funcgrad developers"
copyright = "the funcgrad developers"
version = release = funcgrad.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_typehints = "none"  # the docstrings say what each argument is
autodoc_member_order = "bysource"
autodoc_preserve_defaults = True
add_module_names = False

html_theme = "furo" if __import__("importlib.util").util.find_spec("furo") else "alabaster"
html_title = f"funcgrad {release}"
