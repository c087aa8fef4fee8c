"""API.md §3 and §5: custom_jvp as JAX users expect it (issue 18, item 5).

A rule that differs on purpose from the function's own derivative shows that
the rule is what gets differentiated, in forward mode and, transposed, in
reverse mode, at first and second order: each result is compared with
``jax.custom_jvp`` given the same definitions.  A correct rule is compared
with finite differences; counters count the calls.
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
T = np.array([1.0, -0.5, 2.0])


def pair(np_mod, custom, sin, cos):
    """``sin`` with the rule ``t * 2 cos(x) + x * t`` (not sin's derivative), in fg or JAX."""

    @custom
    def f(x):
        return sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 2.0 * cos(x) * t + x * t

    return f


F = pair(fnp, fg.custom_jvp, fnp.sin, fnp.cos)
JF = pair(jnp, jax.custom_jvp, jnp.sin, jnp.cos)


def loss(f, np_mod):
    return lambda x: np_mod.sum(f(x) ** 2 * np_mod.exp(x / 4))


@pytest.mark.parametrize("transform", ["grad", "hessian", "jacfwd", "jacrev", "jacfwd_jacrev",
                                       "grad_grad"])
def test_against_jax_custom_jvp(transform):
    ours = {
        "grad": fg.grad(loss(F, fnp)),
        "hessian": fg.hessian(loss(F, fnp)),
        "jacfwd": fg.jacfwd(F),
        "jacrev": fg.jacobian(F),
        "jacfwd_jacrev": fg.jacfwd(fg.jacobian(loss(F, fnp))),
        "grad_grad": fg.grad(lambda x: fnp.sum(fg.grad(loss(F, fnp))(x) ** 2)),
    }[transform]
    theirs = {
        "grad": jax.grad(loss(JF, jnp)),
        "hessian": jax.hessian(loss(JF, jnp)),
        "jacfwd": jax.jacfwd(JF),
        "jacrev": jax.jacrev(JF),
        "jacfwd_jacrev": jax.jacfwd(jax.jacrev(loss(JF, jnp))),
        "grad_grad": jax.grad(lambda x: jnp.sum(jax.grad(loss(JF, jnp))(x) ** 2)),
    }[transform]
    np.testing.assert_allclose(ours(X), jax.jit(theirs)(X), rtol=1e-12, atol=1e-14)


def test_jvp_and_vjp_against_jax():
    out, tan = fg.jvp(F, (X,), (T,))
    jout, jtan = jax.jvp(JF, (X,), (T,))
    np.testing.assert_allclose(out, jout, rtol=1e-15)
    np.testing.assert_allclose(tan, jtan, rtol=1e-14)
    _, f_vjp = fg.vjp(F, X)
    _, jf_vjp = jax.vjp(JF, X)
    np.testing.assert_allclose(f_vjp(T)[0], jf_vjp(T)[0], rtol=1e-14)


def test_the_rule_is_used_not_the_function():
    np.testing.assert_allclose(fg.jacobian(F)(X), np.diag(2 * np.cos(X) + X), rtol=1e-14)
    np.testing.assert_allclose(fg.hessian(lambda x: fnp.sum(F(x)))(X),
                               np.diag(1 - 2 * np.sin(X)), rtol=1e-14)


def counted():
    calls = {"fun": 0, "jvp": 0}

    @fg.custom_jvp
    def softplus(x):
        calls["fun"] += 1
        return fnp.log1p(fnp.exp(x))

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        calls["jvp"] += 1
        (x,), (t,) = primals, tangents
        return softplus(x), t * fg.nn.sigmoid(x)

    return softplus, calls


def test_a_plain_call_runs_the_function_itself():
    f, calls = counted()
    np.testing.assert_allclose(f(X), np.log1p(np.exp(X)))
    assert calls == {"fun": 1, "jvp": 0}


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_one_derivative_runs_jvp_once(mode):
    f, calls = counted()
    sig = 1 / (1 + np.exp(-X))
    if mode == "rev":
        np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(f(x)))(X), sig, rtol=1e-14)
    else:
        np.testing.assert_allclose(fg.jvp(f, (X,), (T,))[1], sig * T, rtol=1e-14)
    # the rule's own call of the function runs the function: once
    assert calls == {"fun": 1, "jvp": 1}


def test_correct_rule_against_finite_differences_orders_1_and_2():
    f, _ = counted()
    fg.check_grads(f, (X,), order=2)
    fg.check_grads(lambda x: fnp.sum(f(x) * x), (X,), order=2)


def test_pytrees_in_and_out_several_outputs():
    @fg.custom_jvp
    def polar(p):
        return {"x": p["r"] * fnp.cos(p["a"]), "y": p["r"] * fnp.sin(p["a"])}

    @polar.defjvp
    def polar_jvp(primals, tangents):
        (p,), (t,) = primals, tangents
        c, s = fnp.cos(p["a"]), fnp.sin(p["a"])
        out = {"x": p["r"] * c, "y": p["r"] * s}
        return out, {"x": t["r"] * c - p["r"] * s * t["a"], "y": t["r"] * s + p["r"] * c * t["a"]}

    p = {"r": np.array([1.5, 2.0]), "a": np.array([0.3, -0.7])}

    def loss_p(p):
        o = polar(p)
        return fnp.sum(o["x"] ** 2 * o["y"])

    def jloss(p):
        r, a = p["r"], p["a"]
        return jnp.sum((r * jnp.cos(a)) ** 2 * r * jnp.sin(a))

    g, jg = fg.grad(loss_p)(p), jax.grad(jloss)(p)
    for k in p:
        np.testing.assert_allclose(g[k], jg[k], rtol=1e-13)
    h = fg.hessian(loss_p)(p)
    jh = jax.jit(jax.hessian(jloss))(p)
    for k in p:
        for m in p:
            np.testing.assert_allclose(h[k][m], jh[k][m], rtol=1e-12, atol=1e-13)
    fg.check_grads(polar, (p,), order=2)


def test_identity_and_constant_tangents():
    ident = fg.custom_jvp(lambda x, y: (x * 1.0, y * 1.0))
    ident.defjvp(lambda p, t: ((p[0] * 1.0, p[1] * 1.0), (t[0], fnp.zeros_like(p[1]))))
    g = fg.grad(lambda x, y: fnp.sum(ident(x, y)[0] + 3 * ident(x, y)[1]), argnums=(0, 1))(X, X)
    np.testing.assert_allclose(g[0], np.ones(3))
    np.testing.assert_allclose(g[1], np.zeros(3))  # the rule says: no tangent


def test_keyword_arguments_and_nondiff_argnums_are_data():
    from functools import partial

    @partial(fg.custom_jvp, nondiff_argnums=(0,))
    def power(n, x, scale=1.0):
        return scale * x ** n

    @power.defjvp
    def power_jvp(n, primals, tangents, scale=1.0):
        (x,), (t,) = primals, tangents
        return power(n, x, scale=scale), scale * n * x ** (n - 1) * t

    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def jpower(n, x):
        return x ** n

    @jpower.defjvp
    def jpower_jvp(n, primals, tangents):
        (x,), (t,) = primals, tangents
        return jpower(n, x), n * x ** (n - 1) * t

    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(power(3, x, scale=2.0)))(X),
                               2 * jax.grad(lambda x: jnp.sum(jpower(3, x)))(X), rtol=1e-14)
    np.testing.assert_allclose(fg.hessian(lambda x: fnp.sum(power(3, x)))(X),
                               jax.jit(jax.hessian(lambda x: jnp.sum(jpower(3, x))))(X),
                               rtol=1e-14)


def test_integer_data_gets_no_tangent():
    @fg.custom_jvp
    def pick(x, i):
        return x[i]

    seen = []

    @pick.defjvp
    def pick_jvp(primals, tangents):
        (x, i), (t, ti) = primals, tangents
        seen.append(ti)
        return x[i], t[i]

    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(pick(x, np.array([2, 0]))))(X),
                               [1.0, 0.0, 1.0])
    assert seen == [None]


def test_a_closed_over_traced_value_is_refused():
    def outer(w):
        f = fg.custom_jvp(lambda x: x * w)
        f.defjvp(lambda p, t: (p[0] * w, t[0] * w))
        return fnp.sum(f(X))

    with pytest.raises(fg.FuncgradError, match="closes over"):
        fg.grad(outer)(np.array(2.0))


def test_nested_in_other_combinators():
    f = F
    # inside checkpoint, at second order
    np.testing.assert_allclose(fg.hessian(lambda x: fnp.sum(fg.checkpoint(f)(x) ** 2))(X),
                               fg.hessian(lambda x: fnp.sum(f(x) ** 2))(X), rtol=1e-13)
    # inside a custom_vjp's fwd and bwd
    g = fg.custom_vjp(lambda x: f(x))
    g.defvjp(lambda x: (f(x), x), lambda x, ct: (fg.vjp(f, x)[1](ct)[0],))
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(g(x)))(X), 2 * np.cos(X) + X,
                               rtol=1e-14)
    # linearize, hvp and replay
    _out, f_jvp = fg.linearize(f, X)
    np.testing.assert_allclose(f_jvp(T), (2 * np.cos(X) + X) * T, rtol=1e-14)
    np.testing.assert_allclose(fg.hvp(lambda x: fnp.sum(f(x)), (X,), (T,)),
                               (1 - 2 * np.sin(X)) * T, rtol=1e-14)
    replayed = fg.replay(fg.grad(lambda x: fnp.sum(f(x))))
    for x in (X, X + 1.0):
        np.testing.assert_allclose(replayed(x), 2 * np.cos(x) + x, rtol=1e-14)


def test_defjvps_one_rule_per_argument():
    f = fg.custom_jvp(lambda x, y: fnp.sin(x) * y)
    f.defjvps(lambda t, ans, x, y: fnp.cos(x) * t * y, lambda t, ans, x, y: fnp.sin(x) * t)
    fg.check_grads(f, (X, T), order=2)


def test_bad_rules_are_reported():
    f = fg.custom_jvp(lambda x: x * 2.0)
    with pytest.raises(TypeError, match="callable"):
        f.defjvp(3)
    f.defjvp(lambda p, t: p[0] * 2.0)
    with pytest.raises(TypeError, match="pair"):
        fg.grad(lambda x: fnp.sum(f(x)))(X)
    f.defjvp(lambda p, t: (p[0] * 2.0, fnp.sum(t[0])))
    with pytest.raises(ValueError, match="shape"):
        fg.grad(lambda x: fnp.sum(f(x)))(X)
    f.defjvp(lambda p, t: (p[0] * 2.0, (t[0], t[0])))
    with pytest.raises(TypeError, match="structure"):
        fg.grad(lambda x: fnp.sum(f(x)))(X)


def test_without_a_rule_the_function_is_differentiated():
    f = fg.custom_jvp(fnp.sin)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(f(x)))(X), np.cos(X))


def test_pickles_with_cloudpickle():
    cloudpickle = pytest.importorskip("cloudpickle")
    f = cloudpickle.loads(cloudpickle.dumps(F))
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(f(x)))(X), 2 * np.cos(X) + X)
