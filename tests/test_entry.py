"""One way into a primitive: the unary and binary doors and the n-ary call are fast paths
of ``bind``, the general entry, and agree with it on every kind of argument.

Each case calls a primitive through its door and through ``bind`` directly and compares
the results: the value, the recorded Node (graphs, rank, arguments), the gradient at
first and second order against the closed form, and the error a failing call raises.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import FuncgradIndexError
from funcgrad.node import Node, backprop_scope, require_grad
from funcgrad.primitive import BinaryPrimitive, Primitive, UnaryPrimitive, bind, defvjp

X, Y = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.25, -0.5])


def _record(out):
    if type(out) is not Node:
        return ("raw", out.tolist())
    args = tuple(("node", a.value.tolist()) if type(a) is Node else ("raw", np.asarray(a).tolist())
                 for a in out.args)
    return (out.value.tolist(), out.graphs, out.rank, out.primitive, args)


def _arguments(kinds):
    """Raw arrays and Nodes, on one graph, two graphs, or finished ones, as ``kinds`` says."""
    x, y = require_grad(X), require_grad(Y)
    with backprop_scope("other") as other:
        y_other = require_grad(Y, other)
    table = {"raw": (X, Y), "node,raw": (x, Y), "raw,node": (X, y), "node,node": (x, y),
             "node,node_other": (x, y_other), "list": ([require_grad(np.array(0.3)), 1.0, 2.0], Y)}
    return table[kinds]


@pytest.mark.parametrize("kinds", ["raw", "node,raw", "raw,node", "node,node",
                                   "node,node_other", "list"])
def test_the_binary_door_records_what_bind_records(kinds):
    args = _arguments(kinds)
    assert _record(fnp.multiply(*args)) == _record(bind(fnp.multiply, args, {}))


@pytest.mark.parametrize("node", [False, True])
def test_the_unary_door_records_what_bind_records(node):
    x = require_grad(X) if node else X
    assert _record(fnp.sin(x)) == _record(bind(fnp.sin, (x,), {}))


def test_a_node_of_a_finished_graph_is_a_constant_through_every_door():
    with backprop_scope("done") as done:
        x = require_grad(X, done)
    y = require_grad(Y)  # on the default graph, still recorded on
    for out in (fnp.sin(x), fnp.multiply(x, Y), fnp.multiply(Y, x), fnp.multiply(x, x)):
        assert type(out) is not Node
    for out in (fnp.multiply(x, y), fnp.where(X > 0, x, y)):
        assert out.graphs == y.graphs
        assert not any(a is x for a in out.args)  # no reference kept to the constant
        assert any(a is y for a in out.args)
    assert np.allclose(fnp.where(X > 0, x, y).value, np.where(X > 0, X, Y))


@pytest.mark.parametrize("door", ["unary", "binary", "nary"])
def test_every_door_differentiates_to_the_closed_form_at_two_orders(door):
    cube = {"unary": UnaryPrimitive, "binary": BinaryPrimitive, "nary": Primitive}[door](
        (lambda x: x ** 3) if door == "unary" else
        (lambda x, k: k * x ** 3) if door == "binary" else (lambda x, k, c: k * x ** 3 + c))
    rules = {"unary": (lambda g, ans, x: g * 3.0 * x ** 2,),
             "binary": (lambda g, ans, x, k: g * 3.0 * k * x ** 2, lambda g, ans, x, k: g * x ** 3),
             "nary": (lambda g, ans, x, k, c: g * 3.0 * k * x ** 2, None, None)}[door]
    defvjp(cube, *rules)
    extra = {"unary": (), "binary": (2.0,), "nary": (2.0, 1.0)}[door]
    k = 1.0 if door == "unary" else 2.0
    f = lambda x: cube(x, *extra)
    for x in (0.5, -1.5):
        assert np.isclose(fg.grad(f)(x), 3.0 * k * x ** 2)
        assert np.isclose(fg.grad(fg.grad(f))(x), 6.0 * k * x)


def _indexing(kind):
    impls = {"unary": lambda x: x[10], "binary": lambda x, i: x[i], "nary": lambda x, i, j: x[i]}
    prim = {"unary": UnaryPrimitive, "binary": BinaryPrimitive, "nary": Primitive}[kind](
        impls[kind], f"pick_{kind}")
    defvjp(prim, lambda g, ans, x, *rest: g, *[None] * (0 if kind == "unary" else
                                                      1 if kind == "binary" else 2))
    return prim, {"unary": (), "binary": (10,), "nary": (10, 0)}[kind]


@pytest.mark.parametrize("kind", ["unary", "binary", "nary"])
@pytest.mark.parametrize("node", [False, True])
def test_every_door_translates_a_library_primitives_error_and_passes_a_users(kind, node):
    prim, rest = _indexing(kind)
    x = require_grad(X) if node else X
    with pytest.raises(IndexError) as user:  # a user primitive: its own error, unchanged
        prim(x, *rest)
    assert type(user.value) is IndexError
    prim.library = True  # as funcgrad's own primitives are
    with pytest.raises(FuncgradIndexError, match=rf"pick_{kind}: .*argument 0: a float64 ndarray"):
        prim(x, *rest)
    with pytest.raises(FuncgradIndexError, match=rf"pick_{kind}: "):
        bind(prim, (x, *rest), {})


@pytest.mark.parametrize("name", ["add", "subtract", "multiply"])
def test_float64_scalars_take_scalar_math_with_the_ufuncs_numbers_and_errstate(name):
    # Two float64 scalars go through NumPy's scalar math (the Python operator), not the
    # ufunc: the same bits, the same dtype, and np.errstate still decides over overflow.
    prim, ufunc = getattr(fnp, name), getattr(np, name)
    a, b = np.float64(0.1), np.float64(-2.7)
    for x, y in [(a, b), (require_grad(a), b), (a, require_grad(b)),
                 (require_grad(a), require_grad(b))]:
        out = prim(x, y)
        value = out.value if type(out) is Node else out
        assert type(value) is np.float64 and value.tobytes() == ufunc(a, b).tobytes()
    big = np.float64(1e308)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        prim(big, -big if name == "subtract" else big)
    with np.errstate(over="ignore"):
        assert np.isinf(prim(big, -big if name == "subtract" else big))
    # Derivatives through the path: x*x*x, (x+x)+(x+x), x-((x-x)-x) at 0.4.
    if name == "multiply":
        f, d1, d2 = (lambda x: prim(prim(x, x), x)), 3 * 0.4**2, 6 * 0.4
    elif name == "add":
        f, d1, d2 = (lambda x: prim(prim(x, x), prim(x, x))), 4.0, 0.0
    else:
        f, d1, d2 = (lambda x: prim(x, prim(prim(x, x), x))), 2.0, 0.0
    x0 = np.float64(0.4)
    assert np.isclose(fg.grad(f)(x0), d1) and np.isclose(fg.grad(fg.grad(f))(x0), d2)
