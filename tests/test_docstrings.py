"""Every public callable has a docstring of its own with an example, and the examples run.

``pytest --doctest-modules`` runs the examples of functions and classes, but it
does not collect every *instance*: the ufunc primitives of ``funcgrad.numpy``
(``fnp.sin``...) carry their docstrings as attributes, so the examples of all
Primitive instances run here too.  A primitive made from a function without a
docstring, or a ufunc primitive left with the generic text, has no example and
fails the first test.
"""

from __future__ import annotations

import doctest
import inspect

import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitive import Primitive

MODULES = {
    "funcgrad": fg,
    "funcgrad.numpy": fnp,
    "funcgrad.numpy.linalg": fnp.linalg,
    "funcgrad.numpy.random": fnp.random,
    "funcgrad.numpy.fft": fnp.fft,
    "funcgrad.nn": fg.nn,
    "funcgrad.optim": fg.optim,
}
try:  # API.md §10 (SciPy is a dependency; funcgrad.scipy is imported on its own)
    import funcgrad.scipy.optimize
    import funcgrad.scipy.sparse.linalg

    MODULES["funcgrad.scipy.optimize"] = funcgrad.scipy.optimize
    MODULES["funcgrad.scipy.sparse.linalg"] = funcgrad.scipy.sparse.linalg
except ImportError:
    pass

import funcgrad.scipy

MODULES["funcgrad.scipy.special"] = fg.scipy.special
MODULES.update({f"funcgrad.scipy.{m}": getattr(fg.scipy, m)
                for m in ("linalg", "integrate", "signal")})
MODULES.update({f"funcgrad.scipy.stats.{d}": getattr(fg.scipy.stats, d)
                for d in fg.scipy.stats.__all__})
TREE = ["flatten", "unflatten", "flatten_up_to", "tree_map"]  # fg.tree's documented names


def _public_callables() -> list[tuple[str, object]]:
    found = []
    for prefix, module in MODULES.items():
        for name in dir(module):
            value = getattr(module, name)
            if name.startswith("_") or inspect.ismodule(value) or not callable(value):
                continue
            if inspect.isclass(value) and value.__module__.split(".")[0] == "numpy":
                continue  # NumPy's dtype names (fnp.float32...): NumPy's own classes
            found.append((f"{prefix}.{name}", value))
    found += [(f"funcgrad.tree.{name}", getattr(fg.tree, name)) for name in TREE]
    return found


CALLABLES = _public_callables()
IDS = [name for name, _ in CALLABLES]


def _own_doc(obj: object) -> str:
    """The docstring ``obj`` carries itself (not its class's, not a base class's)."""
    if inspect.isclass(obj):
        return obj.__dict__.get("__doc__") or ""
    doc = getattr(obj, "__doc__", None) or ""
    if not (inspect.isroutine(obj) or inspect.isclass(obj)) and doc == type(obj).__doc__:
        return ""  # an instance showing its class's docstring
    return doc


def test_there_are_many_public_callables():
    assert len(CALLABLES) > 150


@pytest.mark.parametrize("name, obj", CALLABLES, ids=IDS)
def test_public_callable_has_its_own_docstring_with_an_example(name, obj):
    doc = _own_doc(obj)
    assert doc.strip(), f"{name} has no docstring of its own (help() shows its class's)"
    assert ">>>" in doc, f"{name}'s docstring has no example (a '>>>' line)"
    if isinstance(obj, Primitive):
        assert "in the namespace of the inputs, differentiable." not in doc, (
            f"{name} has the generic ufunc docstring"
        )


INSTANCES = [(n, o) for n, o in CALLABLES if not (inspect.isroutine(o) or inspect.isclass(o))]


@pytest.mark.parametrize("name, obj", INSTANCES, ids=[n for n, _ in INSTANCES])
def test_examples_of_primitive_instances_run(name, obj):
    # Each example imports what it uses, as the rest of the docstrings do.
    test = doctest.DocTestParser().get_doctest(_own_doc(obj), {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out: list[str] = []
    result = runner.run(test, out=out.append)
    assert result.attempted and not result.failed, "".join(out)


def test_grad_explains_argnums_has_aux_and_pytrees():
    doc = fg.grad.__doc__.lower()
    for word in ("argnums", "has_aux", "pytree", ">>>"):
        assert word in doc, f"fg.grad's docstring does not mention {word!r}"
    assert "argnums=(" in doc and "has_aux=true" in doc, "fg.grad has no example of each"
