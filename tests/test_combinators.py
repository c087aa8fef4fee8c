"""API.md §3: the combinators, against closed forms, each other and finite differences.

grad / value_and_grad / vjp with argnums and has_aux over pytrees; nesting
without perturbation confusion; forward mode; Jacobians, Hessians and
Hessian-vector products agreeing with each other; checkpoint and custom_vjp.
"""

from __future__ import annotations

import collections

import numpy as np
import pyrsistent
import pytest
from numeric import numgrad, numjac

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import tree as fgtree

RNG = np.random.default_rng(11)


# --- argnums, has_aux ---------------------------------------------------------------

def f3(x, y, z):
    return (x * y * y).sum() + fnp.sin(z).sum() * x.sum()


X3 = (np.array([1.0, 2.0]), np.array([0.5, -1.5]), np.array([0.3, 0.4, 0.5]))


def df3(argnum):
    x, y, z = X3
    return [y * y + np.sin(z).sum(), 2 * x * y, np.cos(z) * x.sum()][argnum]


@pytest.mark.parametrize("argnums", [0, 1, 2, -1, -3])
def test_grad_int_argnums(argnums):
    got = fg.grad(f3, argnums=argnums)(*X3)
    assert type(got) is np.ndarray
    np.testing.assert_allclose(got, df3(argnums % 3), rtol=1e-14)


@pytest.mark.parametrize("argnums", [(0,), (0, 1), (2, 0), (0, 1, 2), (1, -1)])
def test_grad_tuple_argnums(argnums):
    got = fg.grad(f3, argnums=argnums)(*X3)
    assert type(got) is tuple and len(got) == len(argnums)
    for g, a in zip(got, argnums, strict=True):
        np.testing.assert_allclose(g, df3(a % 3), rtol=1e-14)


@pytest.mark.parametrize("argnums", [3, -4, (0, 5)])
def test_argnums_out_of_range_is_an_error(argnums):
    with pytest.raises((ValueError, TypeError)):
        fg.grad(f3, argnums=argnums)(*X3)


def test_grad_has_aux():
    def f(x):
        y = fnp.sin(x)
        return (y * y).sum(), {"y": y, "n": 3}

    g, aux = fg.grad(f, has_aux=True)(np.array([0.2, 0.9]))
    np.testing.assert_allclose(g, 2 * np.sin([0.2, 0.9]) * np.cos([0.2, 0.9]), rtol=1e-14)
    assert set(aux) == {"y", "n"} and aux["n"] == 3
    assert type(aux["y"]) is np.ndarray  # not a Node
    np.testing.assert_allclose(aux["y"], np.sin([0.2, 0.9]))


def test_value_and_grad_with_and_without_aux():
    f = lambda x: (x ** 3).sum()
    value, g = fg.value_and_grad(f)(np.array([1.0, 2.0]))
    assert type(value) is not fg.Node and float(value) == 9.0
    np.testing.assert_array_equal(g, [3.0, 12.0])
    (value, aux), g = fg.value_and_grad(lambda x: (f(x), x * 2.0), has_aux=True)(
        np.array([1.0, 2.0]))
    assert float(value) == 9.0
    np.testing.assert_array_equal(aux, [2.0, 4.0]) and type(aux) is not fg.Node
    np.testing.assert_array_equal(g, [3.0, 12.0])
    (_, (g0, g1)) = fg.value_and_grad(f3, argnums=(0, 1))(*X3)
    np.testing.assert_allclose(g0, df3(0)) and np.testing.assert_allclose(g1, df3(1))


def test_vjp_returns_a_tuple_one_per_primal():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    out, f_vjp = fg.vjp(lambda a, b: a * b + fnp.sin(a), x, y)
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, x * y + np.sin(x))
    ct = np.array([1.0, -2.0, 0.5])
    gx, gy = f_vjp(ct)
    np.testing.assert_allclose(gx, ct * (y + np.cos(x)))
    np.testing.assert_allclose(gy, ct * x)
    gx2, _ = f_vjp(2 * ct)  # vjp_fn is reusable and linear
    np.testing.assert_allclose(gx2, 2 * gx)


def test_vjp_has_aux():
    out, f_vjp, aux = fg.vjp(lambda a: (a * a, {"twice": a * 2.0}), np.array([3.0]),
                             has_aux=True)
    np.testing.assert_array_equal(out, [9.0])
    np.testing.assert_array_equal(aux["twice"], [6.0])
    assert type(aux["twice"]) is not fg.Node
    (g,) = f_vjp(np.array([1.0]))
    np.testing.assert_array_equal(g, [6.0])


# --- pytrees ---------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


def _leaves(tree):
    return fgtree.flatten(tree)[0]


def _weighted_sq(tree):
    """sum_k (k + 1) * sum(leaf_k ** 2); gradient: 2 (k + 1) leaf_k."""
    total = 0.0
    for k, leaf in enumerate(_leaves(tree)):
        total = total + (leaf * leaf).sum() * float(k + 1)
    return total


A, B, S = np.array([1.0, -2.0]), np.array([[0.5, 1.5], [2.5, -3.0]]), np.array(0.25)
TREES = {
    "tuple": (A, B),
    "list": [A, B, S],
    "dict": {"b": B, "a": A},
    "with_none": {"a": A, "nothing": None, "rest": (B, None)},
    "namedtuple": Point(A, B),
    "pmap": pyrsistent.pmap({"w": B, "b": A}),
    "pvector": pyrsistent.pvector([A, S, B]),
    "nested": {"layers": [Point(A, S), {"k": pyrsistent.pvector([B])}], "t": (S,)},
}


def _same_structure(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, (dict, pyrsistent.PMap)):
        assert set(a) == set(b)
        for k in a:
            _same_structure(a[k], b[k])
    elif isinstance(a, (tuple, list, pyrsistent.PVector)):
        assert len(a) == len(b)
        for u, v in zip(a, b, strict=True):
            _same_structure(u, v)
    elif a is None:
        assert b is None
    else:
        assert np.shape(a) == np.shape(b)


@pytest.mark.parametrize("name", sorted(TREES))
def test_grad_of_a_pytree_comes_back_in_the_same_structure(name):
    tree = TREES[name]
    g = fg.grad(_weighted_sq)(tree)
    _same_structure(tree, g)
    for k, (leaf, gleaf) in enumerate(zip(_leaves(tree), _leaves(g), strict=True)):
        assert type(gleaf) is not fg.Node
        np.testing.assert_allclose(gleaf, 2.0 * (k + 1) * leaf, rtol=1e-15)


@pytest.mark.parametrize("name", sorted(TREES))
def test_vjp_with_pytree_results_and_cotangents(name):
    tree = TREES[name]

    def f(t):  # the same structure out, each leaf squared and scaled
        return fgtree.tree_map(lambda v: v * v * 3.0, t)

    out, f_vjp = fg.vjp(f, tree)
    _same_structure(tree, out)
    ct = fgtree.tree_map(lambda v: np.full(np.shape(v), 2.0), tree)
    (g,) = f_vjp(ct)
    _same_structure(tree, g)
    for leaf, o, gleaf in zip(_leaves(tree), _leaves(out), _leaves(g), strict=True):
        np.testing.assert_allclose(o, 3 * leaf * leaf)
        np.testing.assert_allclose(gleaf, 12.0 * leaf)


def test_pytree_arguments_with_tuple_argnums():
    def f(params, x):
        return (params["w"] @ x + params["b"]).sum() * x.sum()

    params = {"w": np.array([[1.0, 2.0], [3.0, 4.0]]), "b": np.array([0.5, -0.5])}
    x = np.array([1.0, -1.0])
    gp, gx = fg.grad(f, argnums=(0, 1))(params, x)
    assert set(gp) == {"w", "b"}
    np.testing.assert_allclose(gp["w"], np.outer(np.ones(2), x) * x.sum())
    np.testing.assert_allclose(gp["b"], np.ones(2) * x.sum())
    np.testing.assert_allclose(gx, numgrad(lambda v: f(params, v), x), rtol=1e-7)


# --- errors and conventions -----------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3,), (2, 3), (0,)])
def test_grad_of_a_non_scalar_is_a_value_error_naming_the_shape(shape):
    with pytest.raises(ValueError, match=str(shape).replace("(", r"\(").replace(")", r"\)")):
        fg.grad(lambda x: x * 2.0)(np.ones(shape))
    with pytest.raises(ValueError):
        fg.value_and_grad(lambda x: x * 2.0)(np.ones(shape))


def test_grad_of_a_size_one_output_is_allowed():
    np.testing.assert_array_equal(fg.grad(lambda x: x * x)(np.array([3.0])), [6.0])
    np.testing.assert_array_equal(fg.grad(lambda x: x.reshape(1, 1) * 2.0)(np.array([3.0])),
                                  [2.0])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_unused_inputs_get_zeros_of_their_own_shape_and_dtype(dtype):
    y = np.ones((2, 3), dtype)
    gx, gy, gz = fg.grad(lambda x, y, z: (x * x).sum(), argnums=(0, 1, 2))(
        np.array([1.0, 2.0]), y, {"w": np.ones(4, dtype)})
    np.testing.assert_array_equal(gx, [2.0, 4.0])
    assert type(gy) is np.ndarray and gy.shape == (2, 3) and gy.dtype == dtype
    assert not gy.any()
    assert gz["w"].shape == (4,) and gz["w"].dtype == dtype and not gz["w"].any()
    g = fg.grad(lambda x: 3.0)(np.ones(2, dtype))  # constant output
    assert g.shape == (2,) and g.dtype == dtype and not g.any()


@pytest.mark.parametrize("shape", [(), (1,), (3,), (2, 2)])
def test_results_are_numpy_arrays_not_nodes(shape):
    x = np.full(shape, 0.5)
    results = {
        "grad": fg.grad(lambda v: (fnp.sin(v) * v).sum())(x),
        "value_and_grad.value": fg.value_and_grad(lambda v: (v * v).sum())(x)[0],
        "value_and_grad.grad": fg.value_and_grad(lambda v: (v * v).sum())(x)[1],
        "vjp.out": fg.vjp(lambda v: v * v, x)[0],
        "vjp_fn": fg.vjp(lambda v: v * v, x)[1](np.ones(shape))[0],
        "jvp.out": fg.jvp(lambda v: v * v, (x,), (np.ones(shape),))[0],
        "jvp.tangent": fg.jvp(lambda v: v * v, (x,), (np.ones(shape),))[1],
        "grad of grad": fg.grad(lambda v: fg.grad(lambda u: (u ** 3).sum())(v).sum())(x),
        "stop_gradient": fg.stop_gradient(x),
    }
    for name, r in results.items():
        assert type(r) is np.ndarray, (name, type(r))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_gradients_keep_the_input_dtype(dtype):
    x = np.array([0.5, 1.0, 2.0], dtype)
    for f in (lambda v: (v * 2.0).sum(), lambda v: (v / 3.0).sum(), lambda v: (v ** 2).sum(),
              lambda v: fnp.sin(v).sum(), lambda v: (1.0 - v).sum() * 0.5):
        g = fg.grad(f)(x)
        assert g.dtype == dtype, (f, g.dtype)
        assert fg.grad(fg.grad(lambda v, f=f: f(v)))(np.asarray(x[1])).dtype == dtype


@pytest.mark.parametrize("bad", [np.arange(3), np.array([True, False]), np.int64(3),
                                 np.array(2, np.int32)], ids=["int64", "bool", "int scalar",
                                                             "int32 0-d"])
def test_integer_input_to_grad_is_a_type_error(bad):
    with pytest.raises(TypeError) as info:
        fg.grad(lambda x: (x * 2.0).sum())(bad)
    assert isinstance(info.value, fg.FuncgradError)
    assert str(np.asarray(bad).dtype) in str(info.value)


def test_integer_data_next_to_a_float_argument_is_fine():
    idx = np.array([2, 0])
    g = fg.grad(lambda x, i: x[i].sum(), argnums=0)(np.array([1.0, 2.0, 3.0]), idx)
    np.testing.assert_array_equal(g, [1.0, 0.0, 1.0])


# --- nesting -----------------------------------------------------------------------------

THIRD = [  # f, f', f'', f'''
    ("sin", fnp.sin, np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x)),
    ("exp_times_x", lambda x: fnp.exp(x) * x, lambda x: np.exp(x) * (x + 1),
     lambda x: np.exp(x) * (x + 2), lambda x: np.exp(x) * (x + 3)),
    ("poly4", lambda x: x ** 4 + 3.0 * x ** 3 - x, lambda x: 4 * x ** 3 + 9 * x ** 2 - 1,
     lambda x: 12 * x ** 2 + 18 * x, lambda x: 24 * x + 18),
    ("x_tanh", lambda x: fnp.tanh(x) * x, lambda x: np.tanh(x) + x / np.cosh(x) ** 2,
     lambda x: 2 / np.cosh(x) ** 2 - 2 * x * np.tanh(x) / np.cosh(x) ** 2,
     lambda x: (-6 * np.tanh(x) + x * (4 * np.tanh(x) ** 2 - 2 / np.cosh(x) ** 2))
     / np.cosh(x) ** 2),
]


@pytest.mark.parametrize(("name", "f", "d1", "d2", "d3"), THIRD, ids=[t[0] for t in THIRD])
@pytest.mark.parametrize("x", [-1.3, 0.0, 0.7, 2.1])
def test_grad_grad_grad_matches_closed_forms(name, f, d1, d2, d3, x):
    x = np.array(x)
    np.testing.assert_allclose(fg.grad(f)(x), d1(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fg.grad(fg.grad(f))(x), d2(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fg.grad(fg.grad(fg.grad(f)))(x), d3(x), rtol=1e-11, atol=1e-11)


def test_perturbation_confusion_is_avoided():
    assert fg.grad(lambda x: x * fg.grad(lambda y: x + y)(1.0))(1.0) == 1.0


@pytest.mark.parametrize("x0", [1.0, 2.5, -3.0])
def test_nested_grad_classic(x0):
    # d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x
    f = lambda x: x * fg.grad(lambda y: x * y)(2.0)
    assert float(fg.grad(f)(x0)) == 2 * x0
    # the same in forward mode: jvp sees the inner derivative as x, too
    _, t = fg.jvp(f, (np.array(x0),), (np.array(1.0),))
    assert float(t) == 2 * x0


def test_inner_grad_of_an_outer_variable_is_a_node_inside_the_trace():
    seen = []

    def outer(x):
        inner = fg.grad(lambda y: x * y * y)(3.0)  # 6x, depends on x
        seen.append(type(inner))
        return inner

    np.testing.assert_array_equal(fg.grad(outer)(np.array(2.0)), 6.0)
    assert seen == [fg.Node]


def test_jvp_inside_grad_and_grad_inside_jvp():
    f = lambda x: fnp.sin(x) * x
    d2 = lambda x: 2 * np.cos(x) - x * np.sin(x)
    x0 = np.array(0.8)
    rev_over_fwd = fg.grad(lambda x: fg.jvp(f, (x,), (np.array(1.0),))[1])(x0)
    fwd_over_rev = fg.jvp(fg.grad(f), (x0,), (np.array(1.0),))[1]
    fwd_over_fwd = fg.jvp(lambda x: fg.jvp(f, (x,), (np.array(1.0),))[1], (x0,),
                          (np.array(1.0),))[1]
    for got in (rev_over_fwd, fwd_over_rev, fwd_over_fwd):
        np.testing.assert_allclose(got, d2(x0), rtol=1e-13)


# --- forward mode, Jacobians, Hessians ----------------------------------------------------------

def vec_fun(x):  # R^3 -> R^2
    return fnp.stack([x[0] * x[1] * x[2], fnp.sin(x[0]) + x[2] ** 2])


def vec_jac(x):
    return np.array([[x[1] * x[2], x[0] * x[2], x[0] * x[1]],
                     [np.cos(x[0]), 0.0, 2 * x[2]]])


X_VEC = np.array([0.5, -1.0, 2.0])


def test_jvp_matches_jacobian_times_tangent():
    t = np.array([1.0, 2.0, -1.0])
    out, tout = fg.jvp(vec_fun, (X_VEC,), (t,))
    np.testing.assert_allclose(out, [X_VEC.prod(), np.sin(0.5) + 4.0])
    np.testing.assert_allclose(tout, vec_jac(X_VEC) @ t, rtol=1e-14)


def test_jvp_of_several_primals_sums_their_contributions():
    f = lambda a, b: a * b + fnp.exp(a)
    a, b, ta, tb = (np.array(v) for v in (0.3, 2.0, 1.5, -0.5))
    _, t = fg.jvp(f, (a, b), (ta, tb))
    np.testing.assert_allclose(t, (b + np.exp(a)) * ta + a * tb, rtol=1e-14)


def test_jvp_tangent_shape_mismatch_is_a_value_error():
    with pytest.raises(ValueError):
        fg.jvp(fnp.sin, (np.ones(3),), (np.ones(2),))


def test_jacobian_jacrev_and_jacfwd_agree_with_the_closed_form():
    expected = vec_jac(X_VEC)
    for jac in (fg.jacobian, fg.jacrev, fg.jacfwd):
        got = jac(vec_fun)(X_VEC)
        assert type(got) is np.ndarray and got.shape == (2, 3)
        np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-15)
    assert fg.jacrev is fg.jacobian or np.array_equal(fg.jacrev(vec_fun)(X_VEC),
                                                       fg.jacobian(vec_fun)(X_VEC))


def test_jacobian_shape_is_out_shape_plus_in_shape():
    W = RNG.standard_normal((2, 3, 4))
    f = lambda m: fnp.tanh(W @ m)  # (2,3,4) @ (4,5) -> (2,3,5)
    m = RNG.standard_normal((4, 5))
    rev, fwd = fg.jacobian(f)(m), fg.jacfwd(f)(m)
    assert rev.shape == fwd.shape == (2, 3, 5, 4, 5)
    np.testing.assert_allclose(rev, fwd, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(rev, numjac(lambda v: np.tanh(W @ v), m), rtol=1e-6, atol=1e-8)


def test_jacobian_with_tuple_argnums():
    f = lambda a, b: a * b.sum()
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    ja, jb = fg.jacobian(f, argnums=(0, 1))(a, b)
    fa, fb = fg.jacfwd(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ja, 12.0 * np.eye(2))
    np.testing.assert_allclose(jb, np.outer(a, np.ones(3)))
    np.testing.assert_allclose(fa, ja) and np.testing.assert_allclose(fb, jb)


def scal_fun(x):  # sum(x^4)/12 + x0 x1 x2
    return (x ** 4).sum() / 12.0 + x[0] * x[1] * x[2]


def scal_hess(x):
    h = np.diag(x ** 2)
    h[0, 1] = h[1, 0] = x[2]
    h[0, 2] = h[2, 0] = x[1]
    h[1, 2] = h[2, 1] = x[0]
    return h


def test_hessian_matches_closed_form_and_jacfwd_of_jacrev():
    h = fg.hessian(scal_fun)(X_VEC)
    assert h.shape == (3, 3)
    np.testing.assert_allclose(h, scal_hess(X_VEC), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(fg.jacfwd(fg.jacrev(scal_fun))(X_VEC), h, rtol=1e-14)
    np.testing.assert_allclose(fg.jacrev(fg.jacrev(scal_fun))(X_VEC), h, rtol=1e-14)
    np.testing.assert_allclose(fg.jacfwd(fg.grad(scal_fun))(X_VEC), h, rtol=1e-14)


def test_hvp_is_hessian_times_vector():
    v = np.array([0.3, -2.0, 1.0])
    hv = fg.hvp(scal_fun, (X_VEC,), (v,))
    np.testing.assert_allclose(hv, fg.hessian(scal_fun)(X_VEC) @ v, rtol=1e-14)
    np.testing.assert_allclose(hv, scal_hess(X_VEC) @ v, rtol=1e-14)
    # jvp of grad is the same product
    np.testing.assert_allclose(fg.jvp(fg.grad(scal_fun), (X_VEC,), (v,))[1], hv, rtol=1e-14)


def test_hvp_of_two_primals():
    f = lambda a, b: (a * a * b).sum()  # H = [[2b, 2a], [2a, 0]] blockwise
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    ta, tb = np.array([1.0, 0.5]), np.array([-1.0, 2.0])
    ha, hb = fg.hvp(f, (a, b), (ta, tb))
    np.testing.assert_allclose(ha, 2 * b * ta + 2 * a * tb)
    np.testing.assert_allclose(hb, 2 * a * ta)


def test_grad_of_hvp_is_a_third_derivative():
    # g(x) = sum(x^4)/12: H = diag(x^2); v.Hv = sum(x^2 v^2); its gradient is 2 x v^2
    g = lambda x: (x ** 4).sum() / 12.0
    v = np.array([1.0, -2.0, 0.5])
    got = fg.grad(lambda x: (fg.hvp(g, (x,), (v,)) * v).sum())(X_VEC)
    np.testing.assert_allclose(got, 2 * X_VEC * v ** 2, rtol=1e-14)


def test_second_order_against_finite_differences_of_the_gradient():
    f = lambda x: (fnp.exp(fnp.sin(x) * x[::-1]) / (1.0 + x * x)).sum()
    x = RNG.standard_normal(4)
    g = fg.grad(f)
    np.testing.assert_allclose(g(x), numgrad(f, x), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(fg.hessian(f)(x), numjac(g, x), rtol=1e-6, atol=1e-8)


# --- stop_gradient, checkpoint, custom_vjp -------------------------------------------------

def test_stop_gradient():
    assert float(fg.grad(lambda x: x * fg.stop_gradient(x))(np.array(3.0))) == 3.0
    assert float(fg.grad(lambda x: fg.stop_gradient(x * x) + x)(np.array(3.0))) == 1.0
    a = np.ones(2)
    assert fg.stop_gradient(a) is a
    tree = fg.grad(lambda p: (p["a"] * fg.stop_gradient(p)["a"]).sum())({"a": np.array([2.0])})
    np.testing.assert_array_equal(tree["a"], [2.0])


def test_stop_gradient_cuts_every_graph():
    with fg.backprop_scope("bp") as bp:
        x = fg.require_grad(np.array(2.0), bp)
        u = fg.require_grad(x)
        s = fg.stop_gradient(u * u)
        assert type(s) is not fg.Node
        assert not fg.is_grad_required(s) and not fg.is_grad_required(s, bp)


def _deep(x):
    for _ in range(5):
        x = fnp.sin(x) * 1.5 + x * x * 0.1
    return x.sum()


def test_checkpoint_gives_the_same_gradients_as_plain():
    x = np.array([0.2, -0.4, 0.9])
    plain, ckpt = _deep, fg.checkpoint(_deep)
    assert float(ckpt(x)) == float(plain(x))
    np.testing.assert_allclose(fg.grad(ckpt)(x), fg.grad(plain)(x), rtol=1e-14)
    np.testing.assert_allclose(fg.grad(ckpt)(x), numgrad(plain, x), rtol=1e-7)
    np.testing.assert_allclose(fg.hessian(ckpt)(x), fg.hessian(plain)(x), rtol=1e-13)
    t = np.array([1.0, 0.0, -1.0])
    np.testing.assert_allclose(fg.jvp(ckpt, (x,), (t,))[1], fg.jvp(plain, (x,), (t,))[1],
                               rtol=1e-14)


def test_checkpoint_recomputes_in_backward():
    calls = []

    def f(x):
        calls.append(1)
        return (fnp.sin(x) * x).sum()

    ranks = []
    ckpt = fg.checkpoint(f)

    def outer(x):
        y = ckpt(x)
        ranks.append(y.rank)  # one node over x: no intermediates kept
        return y

    g = fg.grad(outer)(np.array([0.5, 1.0]))
    assert ranks == [1]
    np.testing.assert_allclose(g, np.cos([0.5, 1.0]) * [0.5, 1.0] + np.sin([0.5, 1.0]))
    # The Python function runs once; backward replays its recorded program
    # (tests/test_closures.py counts the replayed primitive calls).
    assert len(calls) == 1


def _fake_cube():
    """sin in the forward pass, but the gradient of x^3 (3x^2) in the backward pass."""

    @fg.custom_vjp
    def f(x):
        return fnp.sin(x)

    f.defvjp(lambda x: (fnp.sin(x), x), lambda x, g: (g * 3.0 * x * x,))
    return f


def test_custom_vjp_rule_is_used():
    f = _fake_cube()
    x = np.array([0.5, -2.0])
    np.testing.assert_allclose(f(x), np.sin(x))  # the forward value is the true one
    np.testing.assert_allclose(fg.grad(lambda v: f(v).sum())(x), 3 * x ** 2)
    (g,) = fg.vjp(f, x)[1](np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, np.array([1.0, 2.0]) * 3 * x ** 2)


def test_custom_vjp_at_second_order_and_in_forward_mode():
    f = _fake_cube()
    x = np.array([0.5, -2.0])
    t = np.array([1.0, 3.0])
    np.testing.assert_allclose(fg.jvp(f, (x,), (t,))[1], 3 * x ** 2 * t)  # the custom rule
    h = lambda v: f(v).sum()
    np.testing.assert_allclose(fg.grad(lambda v: fg.grad(h)(v).sum())(x), 6 * x)
    np.testing.assert_allclose(fg.hessian(h)(x), np.diag(6 * x))
    np.testing.assert_allclose(fg.jacfwd(f)(x), np.diag(3 * x ** 2))
    np.testing.assert_allclose(fg.hvp(h, (x,), (t,)), 6 * x * t)


def test_custom_vjp_with_several_arguments():
    @fg.custom_vjp
    def mul(a, b):
        return a * b

    mul.defvjp(lambda a, b: (a * b, (a, b)), lambda res, g: (g * res[1] * 10.0, g * res[0]))
    a, b = np.array(2.0), np.array(3.0)
    ga, gb = fg.grad(mul, argnums=(0, 1))(a, b)
    assert float(ga) == 30.0 and float(gb) == 2.0
