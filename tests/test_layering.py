"""The layering of CONTRIBUTING.md, kept by parsing every module's imports.

A module imports only from its own layer or below.  Imports inside functions
count too: a lazy import is still a dependency.  There are no exceptions:
Node (layer 2) gets its operators from ``funcgrad.numpy`` (layer 4), which
installs them on the class when it is imported, as STYLE.md asks.
"""

from __future__ import annotations

import ast
import pathlib
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "funcgrad"

# CONTRIBUTING.md's table: module (or package prefix) -> layer.
LAYERS = {
    "funcgrad.errors": 0,
    "funcgrad.pickling": 0,  # pickling by reference: the name an object is imported by
    "funcgrad.context": 0,  # BackpropId, recording, backprop_scope, the collector pause
    "funcgrad.tree": 1,
    "funcgrad.translation": 1,  # other libraries' errors as documented ones
    "funcgrad.backend": 1,
    "funcgrad.backends": 1,  # and every funcgrad.backends.* module (backends/dask.py)
    "funcgrad.node": 2,
    "funcgrad.arrays": 2,  # array-likes and arrays that run primitives (replay's, vmap's)
    "funcgrad.primitive": 3,
    "funcgrad.hooks": 3,
    "funcgrad.numpy": 4,  # and every funcgrad.numpy.* module
    "funcgrad.numpy.random": 4,  # fnp.random, also fg.random
    "funcgrad.backprop": 5,
    "funcgrad.forward": 5,
    "funcgrad.batching": 5,
    "funcgrad.arguments": 6,  # argnums and the dtype checks of the combinators
    "funcgrad.combinators": 6,
    "funcgrad.jacobians": 6,  # jacobian, jacfwd, hessian, hvp
    "funcgrad.vectorize": 6,
    "funcgrad.graph": 6,
    "funcgrad.custom": 6,
    "funcgrad.checks": 6,
    "funcgrad.tracer": 6,
    "funcgrad.plan": 6,
    "funcgrad.reads": 6,
    "funcgrad.replay": 6,
    "funcgrad.draws": 6,  # fnp.random's draws as plan steps; other generators refused
    "funcgrad.transforms": 6,  # linearize, elementwise_grad
    "funcgrad.implicit": 6,  # custom_root, custom_linear_solve
    "funcgrad.scipy": 7,  # module or package
    "funcgrad.drawing": 6,  # SVG drawings of graphs and plans, no Graphviz needed
    "funcgrad.nn": 7,  # module or package
    "funcgrad.demo": 7,
    "funcgrad.optim": 7,  # sgd, momentum, adam, rmsprop: init/update over pytrees
    "funcgrad.dask": 7,  # fg.dask: data-parallel gradients on a Dask cluster
    "funcgrad": 7,  # __init__: re-exports only
    "funcgrad.__main__": 7,
}

# Third-party packages each low layer may use (L0: stdlib, and attrs for the base class
# of FrozenNodeError, attrs' frozen error).
THIRD_PARTY = {
    0: {"attrs"},
    1: {"numpy", "pyrsistent", "optree", "cupy", "array_api_compat", "dask"},
    2: {"numpy", "pyrsistent", "optree", "cupy", "array_api_compat", "attrs"},
}

# Dask is imported by one module only, funcgrad/backends/dask.py (the provider that
# funcgrad/backends/__init__.py registers with the backend, called when a Dask array
# first reaches it): ``import funcgrad`` stays light.
DASK_IMPORTERS = {"funcgrad.backends.dask"}



def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int | None:
    """The layer of a funcgrad module: its own entry, else its nearest package's."""
    name = module
    while name:
        if name in LAYERS and (name != "funcgrad" or module == "funcgrad"):
            return LAYERS[name]
        name = name.rpartition(".")[0]
    return None


def _package_of(module: str) -> str:
    path = MODULES[module]
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _resolve(module: str, node: ast.ImportFrom) -> list[str]:
    if node.level:
        base = _package_of(module)
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        base = f"{base}.{node.module}" if node.module else base
    else:
        base = node.module or ""
    # `from pkg import sub` imports the submodule pkg.sub when there is one.
    subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
    return subs if subs and len(subs) == len(node.names) else [base, *subs]


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str):
        self.module = module
        self.found: list[tuple[str, int, str]] = []  # (imported, line, enclosing function)
        self._funcs: list[str] = []

    def _visit_func(self, node):
        self._funcs.append(node.name)
        self.generic_visit(node)
        self._funcs.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _visit_func

    def _where(self) -> str:
        return self._funcs[-1] if self._funcs else "<module>"

    def visit_Import(self, node: ast.Import):
        for a in node.names:
            self.found.append((a.name, node.lineno, self._where()))

    def visit_ImportFrom(self, node: ast.ImportFrom):
        for name in _resolve(self.module, node):
            self.found.append((name, node.lineno, self._where()))


def imports_of(module: str) -> list[tuple[str, int, str]]:
    visitor = _Imports(module)
    visitor.visit(ast.parse(MODULES[module].read_text(), filename=str(MODULES[module])))
    return visitor.found


def test_the_package_is_found():
    assert {"funcgrad", "funcgrad.node", "funcgrad.backprop", "funcgrad.numpy"} <= set(MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_has_a_layer(module):
    assert layer_of(module) is not None, (
        f"{module} is not in CONTRIBUTING.md's layer table: add it there and in LAYERS"
    )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_from_own_layer_or_below(module):
    mine = layer_of(module)
    bad = []
    for imported, line, where in imports_of(module):
        if imported.partition(".")[0] != "funcgrad":
            continue
        theirs = layer_of(imported)
        if theirs is None or theirs > mine:
            bad.append(f"line {line} (in {where}): imports {imported} (layer {theirs})")
    assert not bad, f"{module} (layer {mine}) reaches up:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "module", sorted(m for m in MODULES if layer_of(m) is not None and layer_of(m) <= 2)
)
def test_low_layers_use_only_their_third_party_packages(module):
    allowed = THIRD_PARTY[layer_of(module)]
    bad = []
    for imported, line, _ in imports_of(module):
        top = imported.partition(".")[0]
        if top in ("funcgrad", "__future__") or top in sys.stdlib_module_names:
            continue
        if top not in allowed:
            bad.append(f"line {line}: {imported}")
    assert not bad, f"{module} (layer {layer_of(module)}) imports:\n" + "\n".join(bad)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_only_the_dask_backend_imports_dask(module):
    found = [(i, line) for i, line, _ in imports_of(module)
             if i.partition(".")[0] in ("dask", "distributed")]
    if module in DASK_IMPORTERS:
        assert found, f"{module} is expected to import dask"
    else:
        assert not found, f"{module} imports dask ({found}): only {DASK_IMPORTERS} may"


# --- the checker itself ------------------------------------------------------

@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("funcgrad.errors", 0),
        ("funcgrad.numpy", 4),
        ("funcgrad.numpy.elementwise", 4),
        ("funcgrad.nn", 7),
        ("funcgrad", 7),
        ("funcgrad.somethingnew", None),
    ],
)
def test_layer_of(module, layer):
    assert layer_of(module) == layer


def test_relative_imports_resolve_in_functions_too():
    found = imports_of("funcgrad.forward")
    assert any(i == "funcgrad.backprop" and w == "<module>" for i, _, w in found)
    lazy = imports_of("funcgrad.numpy.creation")
    assert ("funcgrad.numpy.shape", "_build") in {(i, w) for i, _, w in lazy}


def test_node_reaches_no_higher_layer():
    # Node's operators are installed by funcgrad.numpy, not imported by node.py.
    assert not [i for i, _, _ in imports_of("funcgrad.node") if i.startswith("funcgrad.numpy")]
