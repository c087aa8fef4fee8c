"""API.md §7: what Dask ships to its workers survives pickling.

Primitives and ``DEFAULT_BACKPROP_ID`` pickle by reference (the very object
comes back); functions wrapped by combinators, ``custom_vjp`` functions and
users' primitives round-trip through cloudpickle, as Dask sends them; a Node
refuses to be pickled, saying why and what to ship instead.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.pickling import importable_name
from funcgrad.primitive import Primitive


def _library_primitives():
    import funcgrad.custom  # noqa: F401  (its multi-output item primitive)

    found = {}
    for name, module in sorted(sys.modules.items()):
        if name == "funcgrad" or name.startswith("funcgrad."):
            for attr, value in vars(module).items():
                if isinstance(value, Primitive) and id(value) not in found:
                    found[id(value)] = pytest.param(value, id=f"{name}.{attr}")
    return list(found.values())


@pytest.mark.parametrize("prim", _library_primitives())
def test_every_library_primitive_pickles_by_reference(prim):
    assert pickle.loads(pickle.dumps(prim)) is prim


def test_the_headline_primitives_pickle_by_reference():
    for prim in (fnp.tanh, fnp.sum, fnp.matmul, fnp.where, fnp.linalg.cholesky):
        assert pickle.loads(pickle.dumps(prim)) is prim


def test_the_default_graph_pickles_by_reference_and_others_by_name():
    assert pickle.loads(pickle.dumps(fg.DEFAULT_BACKPROP_ID)) is fg.DEFAULT_BACKPROP_ID
    with fg.backprop_scope("weights") as bp:
        back = pickle.loads(pickle.dumps(bp))
    assert back.name == "weights" and back is not bp  # a graph is local to its process


def test_pickling_a_node_raises_a_type_error_saying_what_to_ship():
    x = fg.require_grad(np.ones(3))
    for what in (x, [x, 1.0], fg.backprop([(x * x).sum()], [x])):
        with pytest.raises(TypeError) as info:
            pickle.dumps(what)
        message = str(info.value)
        assert isinstance(info.value, fg.FuncgradError)
        assert "Node" in message and "local to the graph" in message and "raw arrays" in message


def test_a_function_closing_over_a_node_cannot_be_shipped():
    cloudpickle = pytest.importorskip("cloudpickle")

    def f(w):
        inner = fg.require_grad(np.ones(2))
        return lambda: inner * w

    with pytest.raises(TypeError, match="local to the graph"):
        cloudpickle.dumps(f(2.0))


# --- cloudpickle: what Dask does with functions ---------------------------------------


def _round_trip(obj):
    cloudpickle = pytest.importorskip("cloudpickle")
    return pickle.loads(cloudpickle.dumps(obj))  # workers unpickle with plain pickle


def _loss(w, x):
    return fnp.sum(fnp.tanh(x @ w) ** 2)


X = np.random.default_rng(0).standard_normal((5, 3))
W = np.array([0.3, -0.2, 0.5])


def test_combinator_wrapped_functions_round_trip_through_cloudpickle():
    scale = 0.5  # a closed-over constant travels with the function
    local = lambda w, x: _loss(w, x) * scale
    for make in (fg.grad, fg.value_and_grad, fg.hessian, fg.jacobian, fg.jacfwd):
        wrapped = make(local)
        back = _round_trip(wrapped)
        got, want = back(W, X), wrapped(W, X)
        for g, w in zip(fg.tree.flatten(got)[0], fg.tree.flatten(want)[0], strict=True):
            np.testing.assert_array_equal(g, w)
    nested = _round_trip(fg.grad(lambda w: fnp.sum(fg.grad(local)(w, X) ** 2)))
    np.testing.assert_allclose(nested(W), fg.grad(lambda w: fnp.sum(fg.grad(local)(w, X) ** 2))(W))
    ckpt = _round_trip(fg.grad(fg.checkpoint(local)))
    np.testing.assert_allclose(ckpt(W, X), fg.grad(local)(W, X), rtol=1e-15)


@fg.custom_vjp
def clipped_square(x):
    return x * x


clipped_square.defvjp(lambda x: (x * x, x), lambda x, g: (fnp.clip(2 * x, -1.0, 1.0) * g,))


def test_custom_vjp_functions_round_trip():
    x = np.array([-2.0, 0.2, 3.0])
    expected = np.clip(2 * x, -1.0, 1.0)
    # module level: by reference, the same object
    assert pickle.loads(pickle.dumps(clipped_square)) is clipped_square
    # made in a function: by value, with its fwd and bwd
    local = fg.custom_vjp(lambda v: v * v)
    local.defvjp(lambda v: (v * v, v), lambda v, g: (fnp.clip(2 * v, -1.0, 1.0) * g,))
    back = _round_trip(local)
    assert back is not local
    np.testing.assert_array_equal(fg.grad(lambda v: fnp.sum(back(v)))(x), expected)
    np.testing.assert_array_equal(_round_trip(fg.grad(lambda v: fnp.sum(local(v))))(x), expected)


def test_user_primitives_round_trip():
    def cube_impl(v):
        return v ** 3

    cube = fg.primitive(cube_impl)
    fg.defvjp(cube, lambda g, ans, v: g * 3 * v ** 2)
    fg.defjvp(cube, lambda t, ans, v: t * 3 * v ** 2)
    back = _round_trip(cube)
    assert isinstance(back, Primitive) and back.name == "cube_impl"
    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(fg.grad(lambda v: fnp.sum(back(v)))(x), 3 * x ** 2)
    np.testing.assert_array_equal(fg.jvp(back, (x,), (np.ones(2),))[1], 3 * x ** 2)
    fg.check_grads(back, (x,), order=2)


def test_pickles_written_before_the_pickling_module_still_load():
    # Before funcgrad.pickling, a primitive pickled as primitive._by_reference(module, name).
    module, name = importable_name(fnp.sin)
    old = f"cfuncgrad.primitive\n_by_reference\n(V{module}\nV{name}\ntR.".encode()
    assert pickle.loads(old) is fnp.sin
