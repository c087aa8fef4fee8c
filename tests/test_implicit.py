"""API.md §10: custom_root and custom_linear_solve, against jax.lax and closed forms.

The fixed point ``x = cos(a x)`` has ``dx/da = -x sin(ax) / (1 + a sin(ax))``;
a linear solve ``A(θ) x = b`` is compared with ``jnp.linalg.solve`` (which JAX
differentiates directly).  Derivatives at orders 1 to 3, both modes.  The
solver's steps are not recorded: the traced graph of a call does not grow
with the number of iterations, and derivatives never run ``solve`` on the
original problem again.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)


def iterate(steps):
    def solve(f, x):
        for _ in range(steps):
            x = x + f(x)  # x <- cos(a x)
        return x

    return solve


def scalar_solve(g, y):
    return y / g(1.0)


def fixed_point(a, steps=60):
    return fg.custom_root(lambda x: fnp.cos(a * x) - x, np.array(0.5), iterate(steps),
                          scalar_solve)


def jfixed_point(a):
    return jax.lax.custom_root(lambda x: jnp.cos(a * x) - x, 0.5, iterate(60), scalar_solve)


A0 = 0.7


def test_fixed_point_closed_form():
    x = fixed_point(A0)
    np.testing.assert_allclose(x, np.cos(A0 * x), rtol=1e-14)
    s = np.sin(A0 * x)
    np.testing.assert_allclose(fg.grad(fixed_point)(A0), -x * s / (1 + A0 * s), rtol=1e-12)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_fixed_point_against_jax_custom_root(order):
    ours, theirs = fixed_point, jfixed_point
    for _ in range(order):
        ours, theirs = fg.grad(ours), jax.grad(theirs)
    np.testing.assert_allclose(ours(A0), jax.jit(theirs)(A0), rtol=1e-10)


def test_fixed_point_forward_and_mixed_modes():
    d1 = jax.jit(jax.grad(jfixed_point))(A0)
    d2 = jax.jit(jax.grad(jax.grad(jfixed_point)))(A0)
    np.testing.assert_allclose(fg.jvp(fixed_point, (A0,), (1.0,))[1], d1, rtol=1e-12)
    np.testing.assert_allclose(fg.jacfwd(fg.jacfwd(fixed_point))(np.array(A0)), d2, rtol=1e-10)
    np.testing.assert_allclose(fg.hessian(fixed_point)(np.array(A0)), d2, rtol=1e-10)
    np.testing.assert_allclose(fg.jacfwd(fg.grad(fixed_point))(np.array(A0)), d2, rtol=1e-10)
    fg.check_grads(fixed_point, (A0,), order=2, rtol=1e-5)


def test_the_solver_is_not_recorded():
    calls = []

    def solve(f, x):
        calls.append(1)
        return iterate(300)(f, x)

    def root(a):
        return fg.custom_root(lambda x: fnp.cos(a * x) - x, np.array(0.5), solve, scalar_solve)

    sizes = [len(fg.trace(lambda a, n=n: fixed_point(a, n), np.array(A0))) for n in (50, 500)]
    assert sizes[0] == sizes[1]
    fg.hessian(root)(np.array(A0))
    assert len(calls) == 1


def test_vector_root_with_pytree_parameters():
    # x solves x + p["c"] * tanh(x) = p["b"], entry by entry
    p = {"b": np.array([1.0, -0.5, 2.0]), "c": np.array(0.5)}

    def solve(f, x):
        for _ in range(40):
            x = x - f(x) / 1.5
        return x

    def tangent_solve(g, y):
        return np.linalg.solve(fg.jacobian(g)(y), y)

    def root(p):
        return fg.custom_root(lambda x: x + p["c"] * fnp.tanh(x) - p["b"], np.zeros(3), solve,
                              tangent_solve)

    x = root(p)
    np.testing.assert_allclose(x + 0.5 * np.tanh(x), p["b"], rtol=1e-12)
    slope = 1 + 0.5 / np.cosh(x) ** 2  # ∂f/∂x, diagonal
    J = fg.jacobian(root)(p)
    np.testing.assert_allclose(J["b"], np.diag(1 / slope), rtol=1e-12)
    np.testing.assert_allclose(J["c"], -np.tanh(x) / slope, rtol=1e-12)
    Jf = fg.jacfwd(root)(p)
    for k in p:
        np.testing.assert_allclose(Jf[k], J[k], rtol=1e-12)
    fg.check_grads(lambda p: fnp.sum(root(p) ** 2), (p,), order=2, rtol=1e-5)


def test_initial_guess_gets_no_gradient_and_has_aux():
    def root(a):
        return fg.custom_root(lambda x: fnp.cos(a * x) - x, a * 0.5,
                              lambda f, x: (iterate(60)(f, x), "done"), scalar_solve,
                              has_aux=True)

    _x, aux = root(np.array(A0))
    assert aux == "done"
    np.testing.assert_allclose(fg.grad(lambda a: root(a)[0])(A0),
                               jax.jit(jax.grad(jfixed_point))(A0), rtol=1e-10)


def test_no_traced_parameter_gives_a_constant():
    x = fg.custom_root(lambda x: fnp.cos(x) - x, np.array(0.5), iterate(60), scalar_solve)
    assert type(x) is np.ndarray
    np.testing.assert_allclose(fg.grad(lambda a: a * fg.custom_root(
        lambda x: fnp.cos(x) - x, np.array(0.5), iterate(60), scalar_solve))(2.0), x)


def test_wrong_solutions_are_refused():
    with pytest.raises(ValueError, match="shape"):
        fg.custom_root(lambda x: x, np.zeros(2), lambda f, x: np.zeros(3), scalar_solve)
    with pytest.raises(TypeError, match="structure"):
        fg.custom_root(lambda x: (x, x), np.zeros(2), lambda f, x: x, scalar_solve)


# -- custom_linear_solve ---------------------------------------------------------

RNG = np.random.default_rng(1)
M = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
B = RNG.normal(size=4)
THETA = np.array(0.3)


def matrix(np_mod, th):
    return M + th * np_mod.outer(np_mod.arange(4.0), np_mod.ones(4))


def solve_dense(mv, b):
    n = b.shape[0]
    A = np.stack([np.asarray(mv(e)) for e in np.eye(n)], axis=1)  # A's columns from matvec
    return np.linalg.solve(A, b)


def lsolve(th, b, **kw):
    A = matrix(fnp, th)
    return fg.custom_linear_solve(lambda v: A @ v, b, solve_dense, solve_dense, **kw)


def jsolve(th, b):
    return jnp.linalg.solve(matrix(jnp, th), b)


def test_linear_solve_value_and_first_derivatives():
    np.testing.assert_allclose(lsolve(THETA, B), np.linalg.solve(matrix(np, THETA), B),
                               rtol=1e-13)
    theirs = jax.jit(jax.jacobian(jsolve, (0, 1)))(THETA, B)
    for argnums in (0, 1):
        np.testing.assert_allclose(fg.jacobian(lsolve, argnums)(THETA, B), theirs[argnums],
                                   rtol=1e-12)
        np.testing.assert_allclose(fg.jacfwd(lsolve, argnums)(THETA, B), theirs[argnums],
                                   rtol=1e-12)


def test_linear_solve_second_order():
    def loss(th, b):
        return fnp.sum(fnp.sin(lsolve(th, b)))

    def jloss(th, b):
        return jnp.sum(jnp.sin(jsolve(th, b)))

    theirs = jax.jit(jax.hessian(jloss, (0, 1)))(THETA, B)
    ours = fg.hessian(loss, (0, 1))(THETA, B)
    for i in (0, 1):
        for j in (0, 1):
            np.testing.assert_allclose(ours[i][j], theirs[i][j], rtol=1e-11, atol=1e-13)
    ours = fg.grad(lambda th: fnp.sum(fg.grad(loss, 1)(th, B) ** 2))(THETA)
    theirs = jax.jit(jax.grad(lambda th: jnp.sum(jax.grad(jloss, 1)(th, B) ** 2)))(THETA)
    np.testing.assert_allclose(ours, theirs, rtol=1e-11)


def test_linear_solve_against_jax_custom_linear_solve():
    def jlsolve(th, b):
        A = matrix(jnp, th)
        return jax.lax.custom_linear_solve(lambda v: A @ v, b,
                                           lambda mv, b: jnp.linalg.solve(A, b),
                                           lambda vm, b: jnp.linalg.solve(A.T, b))

    np.testing.assert_allclose(fg.jacobian(lsolve)(THETA, B),
                               jax.jit(jax.jacobian(jlsolve))(THETA, B), rtol=1e-12)


def test_symmetric_and_missing_transpose_solve():
    S = M @ M.T

    def sym(b, **kw):
        return fg.custom_linear_solve(lambda v: S @ v, b, solve_dense, **kw)

    np.testing.assert_allclose(fg.jacobian(lambda b: sym(b, symmetric=True))(B), np.linalg.inv(S),
                               rtol=1e-10)
    np.testing.assert_allclose(fg.jacfwd(sym)(B), np.linalg.inv(S), rtol=1e-10)  # forward: fine
    with pytest.raises(fg.FuncgradError, match="transpose_solve"):
        fg.jacobian(sym)(B)


def test_linear_solve_pytrees_and_aux():
    # [[2, 1], [1, 3]] acting on {"u": u, "v": v} (scalars), scaled by s
    def solve(mv, b):
        A = np.array([[2.0, 1.0], [1.0, 3.0]]) * float(np.asarray(mv({"u": 1.0, "v": 0.0})["u"]) / 2)
        x = np.linalg.solve(A, [b["u"], b["v"]])
        return {"u": x[0], "v": x[1]}, 7

    def x_of(s, b):
        return fg.custom_linear_solve(
            lambda x: {"u": s * (2 * x["u"] + x["v"]), "v": s * (x["u"] + 3 * x["v"])}, b,
            solve, symmetric=True, has_aux=True)

    b = {"u": np.array(1.0), "v": np.array(2.0)}
    x, aux = x_of(1.5, b)
    assert aux == 7
    expected = np.linalg.solve(1.5 * np.array([[2.0, 1.0], [1.0, 3.0]]), [1.0, 2.0])
    np.testing.assert_allclose([x["u"], x["v"]], expected, rtol=1e-14)
    g = fg.grad(lambda s: x_of(s, b)[0]["u"])(1.5)
    np.testing.assert_allclose(g, -expected[0] / 1.5, rtol=1e-13)  # x ∝ 1/s
    gb = fg.grad(lambda b: x_of(1.5, b)[0]["v"])(b)
    inv = np.linalg.inv(1.5 * np.array([[2.0, 1.0], [1.0, 3.0]]))
    np.testing.assert_allclose([gb["u"], gb["v"]], inv[1], rtol=1e-13)


def test_replay_and_checkpoint_of_implicit_solutions():
    replayed = fg.replay(fg.grad(fixed_point))
    for a in (0.7, 0.9, 0.7):
        np.testing.assert_allclose(replayed(np.array(a)), fg.grad(fixed_point)(np.array(a)),
                                   rtol=1e-14)

    def loss(th, b):
        return fnp.sum(fnp.sin(lsolve(th, b)))

    saved = fg.checkpoint(loss)
    np.testing.assert_allclose(fg.hessian(saved, 1)(THETA, B), fg.hessian(loss, 1)(THETA, B),
                               rtol=1e-13)
    np.testing.assert_allclose(fg.grad(saved)(THETA, B), fg.grad(loss)(THETA, B), rtol=1e-13)
    np.testing.assert_allclose(fg.hessian(saved)(THETA, B), fg.hessian(loss)(THETA, B),
                               rtol=1e-12)


class _CountSteps(fg.BackwardHook):
    def __init__(self):
        self.n = 0

    def backward_preprocess(self, node, in_values, out_grads):
        self.n += 1


def _richardson(iters):
    def solve(matvec, b):
        x = np.zeros_like(b)
        for _ in range(iters):
            x = x + 0.2 * (b - fg.value_of(matvec(x)))
        return x
    return solve


def test_a_symmetric_solve_keeps_no_solver_step_in_the_backward_fold():
    # Issue 28 item 12: the transposed map of a symmetric system is matvec itself,
    # replayed; it used to be a fold per solver step (65 after 60 steps, 185 after 180).
    def loss(a, iters):
        A = fnp.diag(a) + 0.1
        x = fg.custom_linear_solve(lambda v: A @ v, np.ones(3), _richardson(iters),
                                   symmetric=True)
        return fnp.sum(x * x)

    a = np.array([2.0, 3.0, 4.0])
    counts = []
    for iters in (60, 180):
        hook = _CountSteps()
        with fg.hooks(hook):
            g = fg.grad(loss)(a, iters)
        counts.append(hook.n)
        A = np.diag(a) + 0.1
        x = np.linalg.solve(A, np.ones(3))
        lam = np.linalg.solve(A, 2 * x)  # d/dA_ii of |x|^2 = -lam_i x_i
        np.testing.assert_allclose(g, -lam * x, rtol=1e-6)
    assert counts[0] == counts[1] < 10
    fg.check_grads(lambda a: loss(a, 200), (a,), order=2, rtol=1e-4, atol=1e-6)
