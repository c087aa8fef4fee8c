"""API.md §3 and §5: custom_vjp as JAX users expect it (issue 10, part 4).

A plain call runs the function itself; one gradient runs ``fwd`` once and
``bwd`` once, whatever the number of outputs; keyword arguments are data; every
order works in both modes.  Counters count the calls; derivatives are checked
against closed forms and finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import numgrad

import funcgrad as fg
import funcgrad.numpy as fnp

X = np.array([0.3, -1.2, 2.0])


def three_outputs():
    """(sin x, cos x, x^3) with a correct bwd, and counters of every call."""
    calls = {"fun": 0, "fwd": 0, "bwd": 0}

    @fg.custom_vjp
    def f(x):
        calls["fun"] += 1
        return fnp.sin(x), fnp.cos(x), x ** 3

    def fwd(x):
        calls["fwd"] += 1
        return (fnp.sin(x), fnp.cos(x), x ** 3), x

    def bwd(x, g):
        calls["bwd"] += 1
        ga, gb, gc = g
        return (ga * fnp.cos(x) - gb * fnp.sin(x) + gc * 3.0 * x * x,)

    f.defvjp(fwd, bwd)
    return f, calls


def loss_of(f):
    def loss(x):
        a, b, c = f(x)
        return fnp.sum(a * b + c * a)
    return loss


def d1(x):  # d/dx [sin x cos x + x^3 sin x]
    return np.cos(2 * x) + 3 * x * x * np.sin(x) + x ** 3 * np.cos(x)


def d2(x):
    return -2 * np.sin(2 * x) + 6 * x * np.sin(x) + 6 * x * x * np.cos(x) - x ** 3 * np.sin(x)


def test_a_plain_call_runs_the_function_itself():
    f, calls = three_outputs()
    _, _, c = f(X)
    np.testing.assert_allclose(c, X ** 3)
    assert calls == {"fun": 1, "fwd": 0, "bwd": 0}


def test_one_grad_runs_fwd_once_and_bwd_once():
    f, calls = three_outputs()
    np.testing.assert_allclose(fg.grad(loss_of(f))(X), d1(X), rtol=1e-14)
    assert calls == {"fun": 0, "fwd": 1, "bwd": 1}


def test_one_jvp_runs_fwd_once_and_bwd_once():
    f, calls = three_outputs()
    t = np.array([1.0, -2.0, 0.5])
    _, tan = fg.jvp(loss_of(f), (X,), (t,))
    np.testing.assert_allclose(tan, np.dot(d1(X), t), rtol=1e-14)
    assert calls == {"fun": 0, "fwd": 1, "bwd": 1}
    _, (ta, tb, tc) = fg.jvp(f, (X,), (t,))
    np.testing.assert_allclose(ta, np.cos(X) * t, rtol=1e-15)
    np.testing.assert_allclose(tb, -np.sin(X) * t, rtol=1e-15)
    np.testing.assert_allclose(tc, 3 * X * X * t, rtol=1e-15)


def test_second_order_both_modes_through_the_residuals():
    f, calls = three_outputs()
    loss = loss_of(f)
    np.testing.assert_allclose(fg.grad(lambda x: fg.grad(loss)(x).sum())(X), d2(X), rtol=1e-13)
    # fwd once; bwd once for the inner gradient and once more because the outer
    # one also goes back through the outputs f(x) that the inner gradient used.
    assert calls == {"fun": 0, "fwd": 1, "bwd": 2}
    np.testing.assert_allclose(fg.hessian(loss)(X), np.diag(d2(X)), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(fg.jacfwd(fg.jacfwd(loss))(X), np.diag(d2(X)), rtol=1e-13,
                               atol=1e-15)
    np.testing.assert_allclose(fg.jacfwd(fg.grad(loss))(X), np.diag(d2(X)), rtol=1e-13,
                               atol=1e-15)
    t = np.array([1.0, 0.5, -1.0])
    np.testing.assert_allclose(fg.hvp(loss, (X,), (t,)), d2(X) * t, rtol=1e-13)
    np.testing.assert_allclose(fg.grad(loss)(X), numgrad(loss, X), rtol=1e-7)
    third = fg.grad(lambda x: fg.grad(lambda y: fg.grad(loss)(y).sum())(x).sum())(X)
    np.testing.assert_allclose(third, numgrad(lambda x: float(np.sum(d2(x))), X), rtol=1e-6)
    fg.check_grads(loss, (X,), order=2)


def test_unused_outputs_get_zero_cotangents():
    f, calls = three_outputs()
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(f(x)[2]))(X), 3 * X * X, rtol=1e-15)
    (g,) = fg.vjp(f, X)[1]((None, np.ones(3), None))
    np.testing.assert_allclose(g, -np.sin(X), rtol=1e-15)
    assert calls["bwd"] == 2


def test_keyword_arguments_pass_through_as_data():
    seen = []

    @fg.custom_vjp
    def scaled_sin(x, scale=1.0, *, shift=0.0):
        return fnp.sin(x * scale) + shift

    def fwd(x, scale=1.0, *, shift=0.0):
        seen.append((scale, shift))
        return fnp.sin(x * scale) + shift, (x, scale)

    def bwd(res, g):
        x, scale = res
        return (g * fnp.cos(x * scale) * scale,)

    scaled_sin.defvjp(fwd, bwd)
    np.testing.assert_allclose(scaled_sin(X, scale=2.0, shift=1.0), np.sin(2 * X) + 1.0)
    f = lambda x: fnp.sum(scaled_sin(x, scale=2.0, shift=1.0))
    np.testing.assert_allclose(fg.grad(f)(X), 2 * np.cos(2 * X), rtol=1e-15)
    np.testing.assert_allclose(fg.grad(lambda x: fg.grad(f)(x).sum())(X), -4 * np.sin(2 * X),
                               rtol=1e-14)
    assert seen == [(2.0, 1.0), (2.0, 1.0)]


def test_bwd_may_return_none_for_an_argument():
    @fg.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, x), lambda x, g: (None, g * x))
    gx, gy = fg.grad(lambda x, y: fnp.sum(f(x, y)), argnums=(0, 1))(X, X + 1.0)
    np.testing.assert_array_equal(gx, np.zeros(3))
    np.testing.assert_allclose(gy, X)


def test_bwd_of_the_wrong_length_is_named():
    @fg.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, None), lambda res, g: (g,))
    with pytest.raises(TypeError, match="custom_vjp f: bwd must return a tuple of 2"):
        fg.grad(lambda x: fnp.sum(f(x, 2.0)))(X)


def test_pytree_arguments_and_integer_outputs():
    @fg.custom_vjp
    def f(p):
        return fnp.sum(p["w"] * p["b"]), np.argmax(fg.value_of(p["w"]))

    def fwd(p):
        return f.fun(p), p

    f.defvjp(fwd, lambda p, g: ({"w": g[0] * p["b"], "b": g[0] * p["w"] * 10.0},))
    p = {"w": np.array([1.0, 3.0]), "b": np.array([2.0, 5.0])}
    g = fg.grad(lambda p: f(p)[0])(p)
    np.testing.assert_allclose(g["w"], [2.0, 5.0])
    np.testing.assert_allclose(g["b"], [10.0, 30.0])  # the custom rule, not the true one
    assert fg.value_and_grad(lambda p: (f(p)[0], f(p)[1]), has_aux=True)(p)[0][1] == 1


def test_fwd_may_call_the_function_itself_as_jax_users_write_it():
    # JAX's docs write ``def f_fwd(x): return f(x), residuals``: no recursion.
    calls = {"fwd": 0, "bwd": 0}

    @fg.custom_vjp
    def f(x):
        return fnp.sin(x) * 2.0

    def f_fwd(x):
        calls["fwd"] += 1
        return f(x), fnp.cos(x)

    def f_bwd(cos_x, g):
        calls["bwd"] += 1
        return (2.0 * cos_x * g,)

    f.defvjp(f_fwd, f_bwd)
    x = np.array(0.4)
    np.testing.assert_allclose(f(x), 2 * np.sin(x))
    np.testing.assert_allclose(fg.grad(f)(x), 2 * np.cos(x), rtol=1e-14)
    assert calls == {"fwd": 1, "bwd": 1}
    np.testing.assert_allclose(fg.grad(fg.grad(f))(x), -2 * np.sin(x), rtol=1e-14)
    np.testing.assert_allclose(fg.jvp(f, (x,), (np.array(3.0),))[1], 6 * np.cos(x), rtol=1e-14)
