"""API.md §10: funcgrad.scipy.sparse.linalg's cg, gmres and bicgstab.

Values are SciPy's own (the same call, compared with SciPy's answer);
derivatives, implicit through custom_linear_solve, are compared with closed
forms (``∂x/∂b = A⁻¹``) and with JAX differentiating ``jnp.linalg.solve``,
at first and second order.
"""

from __future__ import annotations

import numpy as np
import pytest

scipy_sla = pytest.importorskip("scipy.sparse.linalg")
import scipy.sparse

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy.sparse import linalg as fsla

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(3)
N = 6
_R = RNG.normal(size=(N, N))
SPD = _R @ _R.T + N * np.eye(N)
GENERAL = RNG.normal(size=(N, N)) + 2 * N * np.eye(N)
B = RNG.normal(size=N)
TIGHT = {"rtol": 1e-13, "atol": 0.0}

METHODS = [("cg", SPD), ("gmres", GENERAL), ("bicgstab", GENERAL)]


@pytest.mark.parametrize(("name", "A"), METHODS)
def test_values_are_scipys(name, A):
    ours = getattr(fsla, name)(A, B, rtol=1e-8)
    theirs = getattr(scipy_sla, name)(A, B, rtol=1e-8)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-14)
    assert ours[1] == theirs[1] == 0
    x0 = np.ones(N)
    ours = getattr(fsla, name)(A, B, x0, rtol=1e-30, maxiter=2)
    theirs = getattr(scipy_sla, name)(A, B, x0=x0, rtol=1e-30, maxiter=2)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-14)
    assert ours[1] == theirs[1] > 0  # not converged: SciPy's info


@pytest.mark.parametrize(("name", "A"), METHODS)
def test_derivative_in_b_is_the_inverse(name, A):
    solve = getattr(fsla, name)
    inv = np.linalg.inv(A)
    np.testing.assert_allclose(fg.jacobian(lambda b: solve(A, b, **TIGHT)[0])(B), inv,
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fg.jacfwd(lambda b: solve(A, b, **TIGHT)[0])(B), inv,
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("name", "A"), METHODS)
def test_derivatives_in_A_against_jax(name, A):
    solve = getattr(fsla, name)

    def loss(A, b):
        return fnp.sum(fnp.sin(solve(A, b, **TIGHT)[0]))

    def jloss(A, b):
        return jnp.sum(jnp.sin(jnp.linalg.solve(A, b)))

    g = fg.grad(loss, argnums=(0, 1))(A, B)
    jg = jax.jit(jax.grad(jloss, argnums=(0, 1)))(A, B)
    for ours, theirs in zip(g, jg, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(fg.hessian(loss, argnums=1)(A, B),
                               jax.jit(jax.hessian(jloss, argnums=1))(A, B), rtol=1e-7,
                               atol=1e-11)


def test_a_function_closing_over_parameters():
    # A(s) = SPD + s * diag(1..N), given as a function computing A @ v
    d = np.arange(1.0, N + 1)

    def x_of(s):
        return fsla.cg(lambda v: SPD @ v + s * d * v, B, **TIGHT)[0]

    def jx_of(s):
        return jnp.linalg.solve(SPD + s * jnp.diag(d), B)

    s = np.array(0.4)
    np.testing.assert_allclose(fg.jacobian(x_of)(s), jax.jit(jax.jacobian(jx_of))(s), rtol=1e-8)
    np.testing.assert_allclose(fg.jacfwd(fg.jacobian(x_of))(s),
                               jax.jit(jax.hessian(jx_of))(s), rtol=1e-7)


def test_sparse_matrices_and_linear_operators():
    S = scipy.sparse.csr_matrix(SPD * (np.abs(SPD) > 1.0))
    inv = np.linalg.inv(S.toarray())
    for A in (S, scipy_sla.aslinearoperator(S)):
        x, info = fsla.cg(A, B, **TIGHT)
        assert info == 0
        np.testing.assert_allclose(x, inv @ B, rtol=1e-10)
        g = fg.grad(lambda b, A=A: fnp.sum(fsla.cg(A, b, **TIGHT)[0] ** 2))(B)
        np.testing.assert_allclose(g, 2 * inv.T @ inv @ B, rtol=1e-9)
    G = scipy.sparse.csr_matrix(GENERAL)
    np.testing.assert_allclose(fg.jacobian(lambda b: fsla.gmres(G, b, **TIGHT)[0])(B),
                               np.linalg.inv(GENERAL), rtol=1e-9, atol=1e-12)


def test_preconditioner_is_scipys():
    M = np.diag(1 / np.diag(GENERAL))
    for name in ("gmres", "bicgstab"):
        ours = getattr(fsla, name)(GENERAL, B, rtol=1e-10, M=M)
        theirs = getattr(scipy_sla, name)(GENERAL, B, rtol=1e-10, M=M)
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-14)
        np.testing.assert_allclose(
            fg.jacobian(lambda b, name=name: getattr(fsla, name)(GENERAL, b, rtol=1e-13, M=M)[0])(B),
            np.linalg.inv(GENERAL), rtol=1e-9, atol=1e-12)


def test_a_derivative_solve_that_does_not_converge_warns():
    with pytest.warns(RuntimeWarning, match="did not converge"):
        fg.grad(lambda b: fsla.cg(SPD, b, rtol=1e-30, maxiter=1)[0][0])(B)


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="1-d"):
        fsla.cg(SPD, B[:, None])
    with pytest.raises(ValueError, match="shape"):
        fsla.cg(SPD[:3], B)


@pytest.mark.parametrize(("name", "A"), [("cg", SPD), ("bicgstab", GENERAL)])
def test_on_another_device(standin, name, A):
    # the same method in the device's namespace: SciPy's answer, derivatives on the device
    solve = getattr(fsla, name)
    Ad, bd = standin.put(A), standin.put(B)
    x, info = solve(Ad, bd, rtol=1e-12)
    assert info == 0 and fg.device_of(x) == standin.DEVICE
    np.testing.assert_allclose(standin.get(x), getattr(scipy_sla, name)(A, B, rtol=1e-12)[0],
                               rtol=1e-10)
    J = fg.jacobian(lambda b: solve(Ad, b, **TIGHT)[0])(bd)
    np.testing.assert_allclose(standin.get(J), np.linalg.inv(A), rtol=1e-9, atol=1e-12)
    g = fg.grad(lambda A: fnp.sum(solve(A, bd, **TIGHT)[0] ** 2))(Ad)
    inv = np.linalg.inv(A)
    x = inv @ B
    np.testing.assert_allclose(standin.get(g), -2 * np.outer(inv.T @ x, x), rtol=1e-8)
    x, info = solve(Ad, bd, standin.put(np.ones(N)), rtol=1e-30, maxiter=2)
    assert info == 2


def test_gmres_on_another_device_is_refused_by_name(standin):
    with pytest.raises(TypeError, match="gmres: runs on NumPy arrays"):
        fsla.gmres(standin.put(GENERAL), standin.put(B))
