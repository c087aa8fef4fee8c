"""Complex ``funcgrad.scipy.linalg`` and ``scipy.sparse.linalg`` against references
we did not write (issue 28 item 2): values against SciPy, gradients against JAX's
(``jax.scipy.linalg`` and the dense ``jnp.linalg.solve`` for the Krylov solvers),
and second order against finite differences (``fg.check_grads``).

Every case is a complex matrix; Hermitian positive definite ones are built as
``M M^H + n I`` from a free complex ``M``, so that both libraries see the same
function whatever part of the input they read.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.sparse.linalg as ssl

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import linalg as L
from funcgrad.scipy.sparse import linalg as SL

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
jsl = jax.scipy.linalg

N = 3
_rng = np.random.default_rng(28)


def _c(*shape):
    return _rng.normal(size=shape) + 1j * _rng.normal(size=shape)


M = _c(N, N)
G = M + 2.0 * np.eye(N)                   # general
U = np.triu(_c(N, N)) + 3.0 * np.eye(N)   # upper triangular
H = M @ M.conj().T + N * np.eye(N)        # Hermitian positive definite
B = _c(N)
W = _c(N, N)                              # weights making a real loss of any output


def _hpd(m, xp):
    return m @ xp.conj(xp.transpose(m)) + N * xp.eye(N)


def _loss(out, xp):
    out = xp.reshape(out, (-1,))
    return xp.real(xp.sum(xp.reshape(W, (-1,))[: out.shape[0]] * out))


TRIANGULAR = [(trans, lower, unit) for trans in (0, 1, 2, "N", "T", "C")
              for lower in (False, True) for unit in (False, True)]


@pytest.mark.parametrize("trans, lower, unit", TRIANGULAR)
def test_solve_triangular(trans, lower, unit):
    a = U.T if lower else U
    got = L.solve_triangular(a, B, trans=trans, lower=lower, unit_diagonal=unit)
    np.testing.assert_allclose(got, sl.solve_triangular(a, B, trans=trans, lower=lower,
                                                        unit_diagonal=unit), rtol=1e-12)
    jtrans = {"N": 0, "T": 1, "C": 2}.get(trans, trans)

    def f(a, b, lib, xp):
        return _loss(lib.solve_triangular(a, b, trans=jtrans if lib is jsl else trans,
                                          lower=lower, unit_diagonal=unit), xp)

    got = fg.grad(f, argnums=(0, 1))(a, B, L, fnp)
    want = jax.grad(f, argnums=(0, 1))(a, B, jsl, jnp)
    tri = np.tril if lower else np.triu  # the gradient in a lies in the triangle read
    want_a = tri(np.asarray(want[0]), (-1 if lower else 1) if unit else 0)
    np.testing.assert_allclose(got[0], want_a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_cho_factor_and_cho_solve(lower):
    np.testing.assert_allclose(L.cholesky(H, lower=lower), sl.cholesky(H, lower=lower),
                               rtol=1e-12)
    np.testing.assert_allclose(L.cholesky([[2, 1j], [-1j, 2]]),
                               sl.cholesky([[2, 1j], [-1j, 2]]), rtol=1e-12)
    c, low = L.cho_factor(H, lower=lower)
    np.testing.assert_allclose(L.cho_solve((c, low), B), sl.cho_solve(sl.cho_factor(
        H, lower=lower), B), rtol=1e-12)

    def chol(m, lib, xp):
        return _loss(lib.cholesky(_hpd(m, xp), lower=lower), xp)

    def solved(m, b, lib, xp):
        return _loss(lib.cho_solve(lib.cho_factor(_hpd(m, xp), lower=lower), b), xp)

    np.testing.assert_allclose(fg.grad(chol)(M, L, fnp), jax.grad(chol)(M, jsl, jnp),
                               rtol=1e-10, atol=1e-12)
    got = fg.grad(solved, argnums=(0, 1))(M, B, L, fnp)
    want = jax.grad(solved, argnums=(0, 1))(M, B, jsl, jnp)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    fg.check_grads(lambda m: chol(m, L, fnp), (M,), order=2)


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_factor_and_lu_solve(trans):
    lu, piv = L.lu_factor(G)
    want_lu, want_piv = sl.lu_factor(G)
    np.testing.assert_allclose(lu, want_lu, rtol=1e-12)
    np.testing.assert_array_equal(piv, want_piv)
    np.testing.assert_allclose(L.lu_solve((lu, piv), B, trans=trans),
                               sl.lu_solve((want_lu, want_piv), B, trans=trans), rtol=1e-12)

    def f(a, b, lib, xp):
        return _loss(lib.lu_solve(lib.lu_factor(a), b, trans=trans), xp)

    got = fg.grad(f, argnums=(0, 1))(G, B, L, fnp)
    want = jax.grad(f, argnums=(0, 1))(G, B, jsl, jnp)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    fg.check_grads(lambda a: f(a, B, L, fnp), (G,), order=2)


DENSE = {
    "solve": lambda a, lib: lib.solve(a, B),
    "inv": lambda a, lib: lib.inv(a),
    "det": lambda a, lib: lib.det(a),
    "expm": lambda a, lib: lib.expm(0.3 * a),
}


@pytest.mark.parametrize("name", sorted(DENSE))
def test_dense_functions(name):
    fun = DENSE[name]
    np.testing.assert_allclose(fun(G, L), fun(G, sl), rtol=1e-11)
    xp = {L: fnp, jsl: jnp}
    got = fg.grad(lambda a: _loss(fun(a, L), fnp))(G)
    want = jax.grad(lambda a: _loss(fun(a, jsl), jnp))(G)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)
    assert xp  # both namespaces were used
    fg.check_grads(lambda a: _loss(fun(a, L), fnp), (G,), order=2)


KRYLOV = [("cg", "hpd"), ("cg", "real"), ("bicgstab", "general"), ("gmres", "general"),
          ("bicgstab", "real"), ("gmres", "real")]


def _matrix(kind, m, xp):
    if kind == "hpd":
        return _hpd(m, xp)
    if kind == "real":
        return xp.real(_hpd(m, xp))
    return m + 2.0 * xp.eye(N)


@pytest.mark.parametrize("name, kind", KRYLOV)
def test_krylov_solvers_on_complex_systems(name, kind):
    a = _matrix(kind, M, np)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: the imaginary part is kept
        x, info = getattr(SL, name)(a, B, rtol=1e-13, atol=1e-15)
        want, want_info = getattr(ssl, name)(a, B, rtol=1e-13, atol=1e-15)
    assert info == want_info == 0 and x.dtype == np.complex128
    np.testing.assert_allclose(x, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a @ x, B, rtol=1e-10, atol=1e-12)

    def f(m, b):
        return _loss(getattr(SL, name)(_matrix(kind, m, fnp), b, rtol=1e-13, atol=1e-15)[0],
                     fnp)

    def ref(m, b):
        return _loss(jnp.linalg.solve(_matrix(kind, m, jnp), b), jnp)

    got = fg.grad(f, argnums=(0, 1))(M, B)
    want = jax.grad(ref, argnums=(0, 1))(M, B)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)
    real_b = np.real(B)  # a real right-hand side of a complex system: a complex solution
    np.testing.assert_allclose(fg.grad(lambda b: f(M, b))(real_b),
                               jax.grad(lambda b: ref(M, b))(real_b), rtol=1e-8, atol=1e-10)
    fg.check_grads(f, (M, B), order=2, rtol=1e-4, atol=1e-6)  # through A's solve again


def test_cg_of_a_real_matrix_and_a_complex_b_keeps_the_imaginary_part():
    a = np.real(H)
    x, info = SL.cg(a, B, rtol=1e-13)
    assert info == 0
    np.testing.assert_allclose(x, np.linalg.solve(a, B), rtol=1e-10)
    x, info = SL.cg(lambda v: a @ v, B, rtol=1e-13)  # A as a function: its dtype probed
    np.testing.assert_allclose(x, np.linalg.solve(a, B), rtol=1e-10)
    x, info = SL.gmres(lambda v: G @ v, np.real(B), rtol=1e-13)  # complex A, real b
    np.testing.assert_allclose(x, np.linalg.solve(G, np.real(B)), rtol=1e-9)
