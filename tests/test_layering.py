"""The layering of CONTRIBUTING.md, kept by parsing every module's imports.

A module imports only from its own layer or below.  Imports inside functions
count too: a lazy import is still a dependency.  There are no exceptions:
Node (layer 2) gets its operators from ``funcgrad.numpy`` (layer 4), which
installs them on the class when it is imported, as STYLE.md asks.

Within a layer too, modules import each other in one order: the import graph
(top-level and function-level imports) has no circle, and a function-level
import of another funcgrad module is not a way around one: only the few named
below remain.
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
    "funcgrad.backprop_utils": 5,  # checks at the folds' edges: seeds, rule results
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


def imports_of(module: str, source: str | None = None) -> list[tuple[str, int, str]]:
    """(imported, line, enclosing function) of each import in ``module`` (or in ``source``,
    read as that module's text)."""
    visitor = _Imports(module)
    text = MODULES[module].read_text() if source is None else source
    visitor.visit(ast.parse(text, filename=str(MODULES[module])))
    return visitor.found


def _funcgrad_module(name: str) -> str | None:
    """The funcgrad module that an imported name is or lies in (None: not funcgrad's)."""
    if name.partition(".")[0] != "funcgrad":
        return None
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


# Function-level imports of funcgrad modules still in the tree, by (importer, imported):
# each with why it is lazy.  No module of funcgrad.numpy has one.
LAZY_IMPORTS = {
    # Dask support, loaded when a Dask array first arrives (dask is optional): the
    # backend only holds the provider that funcgrad.backends registered, so no circle.
    ("funcgrad.backends", "funcgrad.backends.dask"): "optional dependency: dask",
}

# The import edges a circle may still run through (see LAZY_IMPORTS): none other.
CIRCLE_EXCEPTIONS: set[tuple[str, str]] = set()


def import_graph() -> dict[str, set[str]]:
    """Module -> the funcgrad modules it imports (at the top or in a function)."""
    graph = {}
    for module in MODULES:
        targets = {_funcgrad_module(i) for i, _, _ in imports_of(module)}
        graph[module] = {t for t in targets if t is not None and t != module
                         and (module, t) not in CIRCLE_EXCEPTIONS}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of two or more modules (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, edges = work[-1]
            nxt = next((w for w in edges if w not in index or w in stack), None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    ring = stack[stack.index(node):]
                    del stack[stack.index(node):]
                    if len(ring) > 1:
                        found.append(sorted(ring))
            elif nxt in index:
                low[node] = min(low[node], index[nxt])
            else:
                index[nxt] = low[nxt] = len(index)
                stack.append(nxt)
                work.append((nxt, iter(sorted(graph[nxt]))))
    return found


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


def test_no_import_circle():
    found = circles(import_graph())
    assert not found, "modules that import each other in a circle:\n" + "\n".join(
        " -> ".join(ring) for ring in found)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_function_level_imports_are_only_the_named_ones(module):
    lazy = sorted({(t, line, where) for i, line, where in imports_of(module)
                   if where != "<module>" and (t := _funcgrad_module(i)) is not None})
    bad = [f"line {line} (in {where}): imports {t}" for t, line, where in lazy
           if (module, t) not in LAZY_IMPORTS]
    assert not bad, (f"{module} imports funcgrad modules inside functions (import them at "
                     "the top, in the layers' order; an optional dependency is named in "
                     "LAZY_IMPORTS):\n" + "\n".join(bad))


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
    source = "def f():\n    from .shape import reshape\n    from .. import node\n"
    lazy = imports_of("funcgrad.numpy.creation", source)
    assert {("funcgrad.numpy.shape", "f"), ("funcgrad.node", "f")} <= {(i, w) for i, _, w in lazy}


def test_circles_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert not circles({"a": {"b"}, "b": set()})


def test_node_reaches_no_higher_layer():
    # Node's operators are installed by funcgrad.numpy, not imported by node.py.
    assert not [i for i, _, _ in imports_of("funcgrad.node") if i.startswith("funcgrad.numpy")]
