"""funcgrad.scipy.linalg: values against SciPy, derivatives by finite differences (order 2,
both modes) and against JAX, symmetric gradients, the stand-in device."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import linalg

RNG = np.random.default_rng(0)
N = 3
A = RNG.standard_normal((N, N)) + N * np.eye(N)
LOW = np.tril(A)
UP = np.triu(A)
B = RNG.standard_normal((N, 2))
V = RNG.standard_normal(N)
SPD = A @ A.T + np.eye(N)


def test_values_match_scipy():
    for lower, tri in ((True, LOW), (False, UP)):
        for trans in (0, 1, "T"):
            for unit in (False, True):
                for b in (B, V):
                    np.testing.assert_allclose(
                        linalg.solve_triangular(tri, b, trans=trans, lower=lower,
                                                unit_diagonal=unit),
                        sl.solve_triangular(tri, b, trans=trans, lower=lower,
                                            unit_diagonal=unit))
    for lower in (True, False):
        c = linalg.cho_factor(SPD, lower=lower)
        np.testing.assert_allclose(linalg.cho_solve(c, B), sl.cho_solve(sl.cho_factor(SPD), B))
        np.testing.assert_allclose(linalg.cholesky(SPD, lower=lower),
                                   sl.cholesky(SPD, lower=lower))
    lu, piv = linalg.lu_factor(A)
    slu, spiv = sl.lu_factor(A)
    np.testing.assert_allclose(lu, slu)
    np.testing.assert_array_equal(piv, spiv)
    for trans in (0, 1):
        np.testing.assert_allclose(linalg.lu_solve((lu, piv), B, trans=trans),
                                   sl.lu_solve((slu, spiv), B, trans=trans))
    np.testing.assert_allclose(linalg.expm(A / 3), sl.expm(A / 3))
    np.testing.assert_allclose(linalg.sqrtm(SPD), sl.sqrtm(SPD))
    np.testing.assert_allclose(linalg.solve_sylvester(A, SPD, B @ B.T),
                               sl.solve_sylvester(A, SPD, B @ B.T))
    assert linalg.inv is fnp.linalg.inv and linalg.solve is fnp.linalg.solve


CASES = {
    "solve_triangular-lower": (lambda a, b: linalg.solve_triangular(a, b, lower=True), (LOW, B)),
    "solve_triangular-upper-T": (lambda a, b: linalg.solve_triangular(a, b, trans=1), (UP, V)),
    "solve_triangular-unit": (lambda a, b: linalg.solve_triangular(
        a, b, trans=1, lower=True, unit_diagonal=True), (LOW, B)),
    "cho_solve": (lambda a, b: linalg.cho_solve(linalg.cho_factor(a), b), (SPD, B)),
    "cho_solve-lower": (lambda a, b: linalg.cho_solve(linalg.cho_factor(a, lower=True), b),
                        (SPD, V)),
    "lu_factor": (lambda a: linalg.lu_factor(a)[0], (A,)),
    "lu_solve": (lambda a, b: linalg.lu_solve(linalg.lu_factor(a), b), (A, B)),
    "lu_solve-T": (lambda a, b: linalg.lu_solve(linalg.lu_factor(a), b, trans=1), (A, V)),
    "expm": (linalg.expm, (A / 3,)),
    "sqrtm": (linalg.sqrtm, (SPD,)),
    "solve_sylvester": (linalg.solve_sylvester, (A, SPD, B @ B.T)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_derivatives_by_finite_differences(name):
    fun, args = CASES[name]
    if name.startswith("cho"):  # a symmetric argument: perturb it symmetrically
        inner = fun
        fun = lambda a, b: inner((a + a.T) / 2, b)
    fg.check_grads(fun, args, order=2, modes=("rev", "fwd"))


def test_cho_factor_gradient_is_symmetric():
    g = fg.grad(lambda a: fnp.sum(linalg.cho_solve(linalg.cho_factor(a), V) ** 2))(SPD)
    np.testing.assert_allclose(g, g.T, atol=1e-12)
    # and equals the derivative along symmetric perturbations
    sym = fg.grad(lambda a: fnp.sum(fnp.linalg.solve((a + a.T) / 2, V) ** 2))(SPD)
    np.testing.assert_allclose(g, sym, atol=1e-12)


def test_derivatives_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    pairs = [
        (lambda a, b: fnp.sum(linalg.solve_triangular(a, b, lower=True) ** 2),
         lambda a, b: jnp.sum(jsl.solve_triangular(a, b, lower=True) ** 2), (LOW, B)),
        (lambda a, b: fnp.sum(linalg.lu_solve(linalg.lu_factor(a), b) ** 2),
         lambda a, b: jnp.sum(jsl.lu_solve(jsl.lu_factor(a), b) ** 2), (A, B)),
    ]
    for ours, theirs, args in pairs:
        for got, want in zip(fg.grad(ours, (0, 1))(*args), jax.grad(theirs, (0, 1))(*args),
                             strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_shapes_are_checked():
    with pytest.raises(ValueError, match="square"):
        linalg.expm(np.ones((2, 3)))
    with pytest.raises(ValueError, match="b of shape"):
        linalg.solve_triangular(LOW, np.ones(4))


def test_on_the_standin_device(standin):
    a, b = standin.put(LOW), standin.put(B)
    g = fg.grad(lambda a: fnp.sum(linalg.solve_triangular(a, b, lower=True)))(a)
    want = fg.grad(lambda a: fnp.sum(linalg.solve_triangular(a, B, lower=True)))(LOW)
    assert type(g) is standin.StrictArray
    np.testing.assert_allclose(standin.get(g), want)
    g = fg.grad(lambda a: fnp.sum(linalg.lu_solve(linalg.lu_factor(a), b)))(standin.put(A))
    want = fg.grad(lambda a: fnp.sum(linalg.lu_solve(linalg.lu_factor(a), B)))(A)
    np.testing.assert_allclose(standin.get(g), want)


@pytest.mark.parametrize("l_and_u,n", [((1, 1), 5), ((0, 2), 4), ((2, 0), 4), ((3, 3), 2)])
def test_solve_banded(l_and_u, n):
    rng = np.random.default_rng(n)
    ab = rng.standard_normal((sum(l_and_u) + 1, n))
    ab[l_and_u[1]] += 4.0  # a well-conditioned main diagonal
    for b in (rng.standard_normal(n), rng.standard_normal((n, 2))):
        np.testing.assert_allclose(linalg.solve_banded(l_and_u, ab, b),
                                   sl.solve_banded(l_and_u, ab, b))
        fg.check_grads(lambda ab, b: linalg.solve_banded(l_and_u, ab, b), (ab, b), order=2)
    # the corners of ab outside the band are not read: their gradient is zero
    g = fg.grad(lambda ab: fnp.sum(linalg.solve_banded(l_and_u, ab, np.ones(n))))(ab)
    low, up = l_and_u
    for k in range(1, up + 1):
        np.testing.assert_array_equal(g[up - k, :k], 0.0)
    for k in range(1, low + 1):
        np.testing.assert_array_equal(g[up + k, n - k:], 0.0)
    with pytest.raises(ValueError, match="ab of shape"):
        linalg.solve_banded((l_and_u[0] + 1, l_and_u[1]), ab, np.ones(n))


def test_solve_banded_on_the_standin_device(standin):
    ab = np.stack([np.full(3, 0.5), np.full(3, 4.0), np.full(3, -1.0)])
    g = fg.grad(lambda ab: fnp.sum(linalg.solve_banded((1, 1), ab, standin.put(V))))(
        standin.put(ab))
    want = fg.grad(lambda ab: fnp.sum(linalg.solve_banded((1, 1), ab, V)))(ab)
    assert type(g) is standin.StrictArray
    np.testing.assert_allclose(standin.get(g), want)
