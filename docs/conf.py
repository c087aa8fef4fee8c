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


# -- a summary table of a module's functions, made from the module itself ------------
# ``.. funcgrad-summary:: funcgrad.numpy`` lists every public function with its family
# (the module that defines it) and the first sentence of its docstring, each linked to
# its entry: a function added to the module appears without anyone editing the table.

import importlib  # noqa: E402
import re  # noqa: E402
import types  # noqa: E402

from docutils import nodes  # noqa: E402
from docutils.parsers.rst import Directive  # noqa: E402
from docutils.statemachine import StringList  # noqa: E402


def _first_sentence(doc: str) -> str:
    para = " ".join((doc or "").strip().split("\n\n")[0].split())
    match = re.match(r"(.+?[.:;])(\s|$)", para)
    return (match.group(1) if match else para).rstrip(":;") or "-"


class FuncgradSummary(Directive):
    required_arguments = 1

    def run(self):
        module = importlib.import_module(self.arguments[0])
        rows = []
        for name in sorted(dir(module)):
            value = getattr(module, name)
            if name.startswith("_") or not callable(value) or isinstance(
                    value, (type, types.ModuleType)):
                continue
            family = (getattr(value, "__module__", "") or "").rpartition(".")[2]
            rows.append((family, name, _first_sentence(getattr(value, "__doc__", ""))))
        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 18 14 68", "",
                 "   * - function", "     - family", "     - what it computes"]
        for family, name, text in sorted(rows):
            lines += [f"   * - :func:`~{module.__name__}.{name}`", f"     - {family}",
                      f"     - {text}"]
        holder = nodes.container()
        self.state.nested_parse(StringList(lines), self.content_offset, holder)
        return holder.children


def setup(app):
    app.add_directive("funcgrad-summary", FuncgradSummary)
    return {"parallel_read_safe": True}
