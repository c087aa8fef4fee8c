"""API.md §3: linearize (against jax.linearize) and elementwise_grad (against autograd).

``linearize`` must not recompute the primal: counters in a user primitive
and in the primitive its JVP rule calls show that both run once, however
many times ``jvp_fn`` is evaluated.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

X = np.array([0.3, -1.2, 2.0])
TS = [np.array([1.0, -0.5, 2.0]), np.array([0.0, 3.0, -1.0]), np.ones(3)]


def f(np_mod):
    return lambda x, w: np_mod.tanh(w @ x) * np_mod.sin(x) + x ** 3


W = np.array([[1.0, 0.5, -0.2], [0.0, 1.0, 0.3], [0.4, -0.1, 1.0]])


def test_against_jax_linearize():
    out, f_jvp = fg.linearize(f(fnp), X, W)
    jout, jf_jvp = jax.linearize(f(jnp), X, W)
    np.testing.assert_allclose(out, jout, rtol=1e-15)
    rng = np.random.default_rng(0)
    for t in TS:
        tw = rng.normal(size=W.shape)
        np.testing.assert_allclose(f_jvp(t, tw), jf_jvp(t, tw), rtol=1e-13)
        np.testing.assert_allclose(f_jvp(t, tw), fg.jvp(f(fnp), (X, W), (t, tw))[1], rtol=1e-14)


def test_the_primal_and_the_coefficients_run_once():
    calls = {"fun": 0, "sin": 0, "cos": 0}

    @fg.primitive
    def my_cos(x):
        calls["cos"] += 1
        return np.cos(x)

    @fg.primitive
    def my_sin(x):
        calls["sin"] += 1
        return np.sin(x)

    fg.defjvp(my_sin, lambda t, ans, x: t * my_cos(x))

    def fun(x):
        calls["fun"] += 1
        return my_sin(x) * x

    _out, f_jvp = fg.linearize(fun, X)
    assert calls == {"fun": 1, "sin": 1, "cos": 1}
    for t in TS * 3:
        np.testing.assert_allclose(f_jvp(t), (np.cos(X) * X + np.sin(X)) * t, rtol=1e-14)
    assert calls == {"fun": 1, "sin": 1, "cos": 1}
    # (fg.jvp, by contrast, recomputes everything each time)
    fg.jvp(fun, (X,), (TS[0],))
    assert calls == {"fun": 2, "sin": 2, "cos": 2}


def test_pytrees_and_has_aux():
    def g(p):
        return {"a": p["x"] * p["y"], "b": fnp.exp(p["x"])}, fnp.sum(p["x"])

    p = {"x": X, "y": 2 * X}
    out, f_jvp, aux = fg.linearize(g, p, has_aux=True)
    jout, jf_jvp, jaux = jax.linearize(
        lambda p: ({"a": p["x"] * p["y"], "b": jnp.exp(p["x"])}, jnp.sum(p["x"])), p,
        has_aux=True)
    np.testing.assert_allclose(aux, jaux)
    t = {"x": TS[0], "y": TS[1]}
    ours, theirs = f_jvp(t), jf_jvp(t)
    for k in ("a", "b"):
        np.testing.assert_allclose(out[k], jout[k], rtol=1e-15)
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-14)


def test_differentiable_inside_a_traced_function():
    def inner(y):
        return fnp.sin(y) * y

    def ours(x):
        _, f_jvp = fg.linearize(inner, x)
        return fnp.sum(f_jvp(TS[0]) ** 2)

    def theirs(x):
        _, f_jvp = jax.linearize(lambda y: jnp.sin(y) * y, x)
        return jnp.sum(f_jvp(TS[0]) ** 2)

    np.testing.assert_allclose(fg.grad(ours)(X), jax.grad(theirs)(X), rtol=1e-13)
    np.testing.assert_allclose(fg.hessian(ours)(X), jax.jit(jax.hessian(theirs))(X), rtol=1e-12)
    # in the tangent too: jvp_fn is linear, its gradient is the transposed map
    _, f_jvp = fg.linearize(inner, X)
    np.testing.assert_allclose(fg.grad(lambda t: fnp.sum(f_jvp(t)))(TS[0]),
                               np.cos(X) * X + np.sin(X), rtol=1e-14)


def test_through_derived_jvps_custom_vjp_and_checkpoint():
    cube = fg.primitive(lambda x: x ** 3)  # a VJP rule only: its JVP is derived
    fg.defvjp(cube, lambda g, ans, x: g * 3 * x ** 2)
    smooth = fg.custom_vjp(lambda x: fnp.sin(x))
    smooth.defvjp(lambda x: (fnp.sin(x), x), lambda x, g: (g * fnp.cos(x),))
    saved = fg.checkpoint(lambda x: fnp.exp(fnp.sin(x)))

    def chain(x):
        return cube(smooth(saved(x)))

    for fun in (cube, smooth, saved, chain):
        _, f_jvp = fg.linearize(fun, X)
        for t in TS:
            np.testing.assert_allclose(f_jvp(t), fg.jvp(fun, (X,), (t,))[1], rtol=1e-14)
    fg.check_grads(lambda x: fnp.sum(fg.linearize(chain, x)[1](TS[0]) ** 2), (X,), order=1)


def test_constant_outputs_and_identity():
    _out, f_jvp = fg.linearize(lambda x: (x, np.ones(2)), X)
    t_out = f_jvp(TS[0])
    np.testing.assert_allclose(t_out[0], TS[0])
    assert t_out[0] is not TS[0]  # owned by the caller
    np.testing.assert_allclose(t_out[1], np.zeros(2))


def test_wrong_tangents_are_refused():
    _, f_jvp = fg.linearize(fnp.sin, X)
    with pytest.raises(ValueError, match="1 tangents"):
        f_jvp(X, X)
    with pytest.raises(ValueError, match="shape"):
        f_jvp(np.ones(2))


# -- elementwise_grad ------------------------------------------------------------

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")


def test_elementwise_grad_against_autograd():
    ours = fg.elementwise_grad(lambda x: fnp.tanh(x) * fnp.exp(x))(X)
    theirs = autograd.elementwise_grad(lambda x: anp.tanh(x) * anp.exp(x))(X)
    np.testing.assert_allclose(ours, theirs, rtol=1e-14)
    np.testing.assert_allclose(ours, np.diag(fg.jacobian(lambda x: fnp.tanh(x) * fnp.exp(x))(X)),
                               rtol=1e-14)


def test_elementwise_grad_argnums_and_second_order():
    def f2(x, y):
        return fnp.sin(x) * y ** 2

    gx, gy = fg.elementwise_grad(f2, argnum=(0, 1))(X, TS[0])
    ax, ay = autograd.elementwise_grad(lambda x, y: anp.sin(x) * y ** 2, argnum=(0, 1))(X, TS[0])
    np.testing.assert_allclose(gx, ax, rtol=1e-14)
    np.testing.assert_allclose(gy, ay, rtol=1e-14)
    np.testing.assert_allclose(fg.elementwise_grad(f2, argnums=1)(X, TS[0]), ay, rtol=1e-14)
    # nested: the second derivative of an elementwise function, elementwise
    d2 = fg.elementwise_grad(fg.elementwise_grad(fnp.sin))(X)
    np.testing.assert_allclose(d2, -np.sin(X), rtol=1e-14)
    ad2 = autograd.elementwise_grad(autograd.elementwise_grad(anp.sin))(X)
    np.testing.assert_allclose(d2, ad2, rtol=1e-14)
    fg.check_grads(fg.elementwise_grad(lambda x: fnp.tanh(x) * x), (X,), order=2)


def test_elementwise_grad_of_a_pytree_output_sums_every_leaf():
    g = fg.elementwise_grad(lambda x: {"a": x * 2.0, "b": [x ** 2]})(X)
    np.testing.assert_allclose(g, 2.0 + 2 * X)
