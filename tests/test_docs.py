"""The documentation: its Markdown pages' examples run, and it covers every public name.

Each ``python`` code block of a page under ``docs/`` runs, in order, in one
namespace per page: a block of ``>>>`` prompts as a doctest (its printed
output must match), any other block as a script (its ``assert``s must hold).
Warnings are errors, as in the README's test: an example that warns is wrong.

The reference pages (``docs/api/*.md``) must name every public name of the
public modules in an autodoc directive, so that a new name cannot go
undocumented.  Building the HTML (warnings as errors) is CI's job (``.ci/run``).
"""

from __future__ import annotations

import doctest
import importlib.util
import pathlib
import re
import warnings

import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(DOCS.glob("**/*.md"))
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _blocks(page: pathlib.Path) -> list[tuple[int, str]]:
    text = page.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in FENCE.finditer(text)]


def test_the_guide_has_examples():
    assert sum(len(_blocks(p)) for p in PAGES) >= 20


# Pages whose examples need an optional package.
NEEDS = {"dask.md": "distributed"}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_page_examples_run(page):
    if page.name in NEEDS:
        pytest.importorskip(NEEDS[page.name], reason=f"{page.name} needs {NEEDS[page.name]}")
    namespace: dict = {"__name__": f"docs.{page.stem}"}
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=FLAGS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for line, block in _blocks(page):
            where = f"{page.relative_to(DOCS)}:{line}"
            if block.lstrip().startswith(">>>"):
                test = parser.get_doctest(block, namespace, where, str(page), line - 1)
                out: list[str] = []
                result = runner.run(test, out=out.append, clear_globs=False)
                assert not result.failed, f"{where}: doctest failed\n{''.join(out)}"
                namespace = test.globs  # a DocTest runs in a copy: carry its names on
            else:
                exec(compile(block, where, "exec"), namespace)  # noqa: S102


def _public(module) -> set[str]:
    return {n for n in dir(module) if not n.startswith("_")}


# The reference documents each module's public names; submodules get pages of
# their own, and the constants (plain floats and None) are described in prose.
REFERENCE = [
    (fg, "funcgrad", _public(fg) - {"nn", "numpy", "optim", "tree", "dask", "random"}),
    (fnp, "funcgrad.numpy", _public(fnp) - {"linalg", "random", "fft", "pi", "e", "inf", "nan",
                                            "newaxis"}),
    (fnp.random, "funcgrad.numpy.random", _public(fnp.random)),
    (fnp.linalg, "funcgrad.numpy.linalg", _public(fnp.linalg)),
    (fnp.fft, "funcgrad.numpy.fft", _public(fnp.fft)),
    (fg.nn, "funcgrad.nn", _public(fg.nn)),
    (fg.tree, "funcgrad.tree", {"flatten", "unflatten", "flatten_up_to", "tree_map"}),
    (fg.optim, "funcgrad.optim", _public(fg.optim)),
]
if importlib.util.find_spec("scipy") is not None:  # API.md §10
    import funcgrad.scipy.optimize
    import funcgrad.scipy.sparse.linalg

    REFERENCE += [
        (funcgrad.scipy.optimize, "funcgrad.scipy.optimize", _public(funcgrad.scipy.optimize)),
        (funcgrad.scipy.sparse.linalg, "funcgrad.scipy.sparse.linalg",
         _public(funcgrad.scipy.sparse.linalg)),
    ]

import funcgrad.scipy.special
import funcgrad.scipy.stats

REFERENCE.append((fg.scipy.special, "funcgrad.scipy.special", _public(fg.scipy.special)))
REFERENCE += [(getattr(fg.scipy, m), f"funcgrad.scipy.{m}", _public(getattr(fg.scipy, m)))
              for m in ("linalg", "integrate", "signal")]
REFERENCE += [(getattr(fg.scipy.stats, d), f"funcgrad.scipy.stats.{d}",
               _public(getattr(fg.scipy.stats, d))) for d in fg.scipy.stats.__all__]
if importlib.util.find_spec("dask") is not None:  # fg.dask needs Dask (an extra)
    REFERENCE.append((fg.dask, "funcgrad.dask", _public(fg.dask)))
DIRECTIVE = re.compile(r"^\.\. (?:auto)?(?:function|class|data|exception):: ([\w.]+)", flags=re.MULTILINE)


def _documented() -> set[str]:
    found = set()
    for page in sorted((DOCS / "api").glob("*.md")):
        for name in DIRECTIVE.findall(page.read_text()):
            found.add(name)
    return found


@pytest.mark.parametrize("module, prefix, names", REFERENCE, ids=[r[1] for r in REFERENCE])
def test_reference_covers_every_public_name(module, prefix, names):
    documented = _documented()
    missing = sorted(n for n in names if f"{prefix}.{n}" not in documented)
    assert not missing, f"docs/api/ has no autodoc entry for {prefix}: {missing}"
    for full in documented:
        mod, _, name = full.rpartition(".")
        if mod == prefix:
            assert hasattr(module, name), f"docs/api/ documents {full}, which does not exist"
