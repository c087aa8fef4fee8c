"""eigh and cholesky: gradients in the symmetric convention of JAX and PyTorch, checked
against JAX itself (float64), at first and second order, in both modes."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = np.random.default_rng(3)
Q = np.linalg.qr(RNG.standard_normal((4, 4)))[0]
A = (Q * np.array([-1.0, 0.5, 2.0, 3.5])) @ Q.T  # symmetric, eigenvalues well apart
SPD = A + 2.0 * np.eye(4)  # eigenvalues 1 ... 5.5
WEIGHTS = RNG.standard_normal((4, 4))


def eig_values(m, lib):
    return lib.sum(lib.linalg.eigh(m)[0] * lib.arange(1.0, 5.0))


def eig_function(m, lib):  # v diag(sin w) v^T: independent of the eigenvectors' signs
    w, v = lib.linalg.eigh(m)
    return lib.sum((v * lib.sin(w)) @ v.T * WEIGHTS)


def chol(m, lib):
    return lib.sum(lib.linalg.cholesky(m) * WEIGHTS)


CASES = [("eigh-values", eig_values, A), ("eigh-function", eig_function, A),
         ("cholesky", chol, SPD)]


@pytest.mark.parametrize("name, f, a", CASES, ids=[c[0] for c in CASES])
def test_gradient_and_hessian_match_jax(name, f, a):
    ours = fg.grad(lambda m: f(m, fnp))(a)
    theirs = np.asarray(jax.grad(lambda m: f(m, jnp))(jnp.asarray(a)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(ours, ours.T, atol=1e-12)  # symmetric, whatever the triangle
    # Second order: a Hessian-vector product along a symmetric direction, both modes.
    d = RNG.standard_normal((4, 4))
    d = d + d.T
    ours_hvp = fg.hvp(lambda m: f(m, fnp), (a,), (d,))
    theirs_hvp = jax.jvp(jax.grad(lambda m: f(m, jnp)), (jnp.asarray(a),), (jnp.asarray(d),))[1]
    np.testing.assert_allclose(ours_hvp, np.asarray(theirs_hvp), rtol=1e-8, atol=1e-10)
    rev = fg.jacrev(fg.grad(lambda m: f(m, fnp)))(a)
    np.testing.assert_allclose(np.tensordot(rev, d, 2), ours_hvp, rtol=1e-8, atol=1e-10)


def test_the_triangle_read_does_not_change_the_gradient():
    up = fg.grad(lambda m: fnp.sum(fnp.linalg.eigh(m, UPLO="U")[0] * fnp.arange(1.0, 5.0)))(A)
    low = fg.grad(lambda m: eig_values(m, fnp))(A)
    np.testing.assert_allclose(up, low, atol=1e-12)


def test_tangents_act_through_their_symmetric_part():
    t = RNG.standard_normal((4, 4))  # not symmetric
    for f, a in ((eig_function, A), (chol, SPD)):
        def ours(m, f=f):
            return f(m, fnp)

        _, lhs = fg.jvp(ours, (a,), (t,))
        _, rhs = fg.jvp(ours, (a,), ((t + t.T) / 2,))
        np.testing.assert_allclose(lhs, rhs, rtol=1e-12)
        # and agree with the gradient: <grad, t> = jvp along t
        np.testing.assert_allclose(np.sum(fg.grad(ours)(a) * t), lhs, rtol=1e-10)


def test_at_exactly_repeated_eigenvalues_jax_gives_nan_we_give_the_documented_finite_value():
    a = np.diag([1.0, 1.0, 3.0])
    theirs = np.asarray(jax.grad(lambda m: jnp.sum(jnp.linalg.eigh(m)[1] ** 3))(jnp.asarray(a)))
    ours = fg.grad(lambda m: fnp.sum(fnp.linalg.eigh(m)[1] ** 3))(a)
    assert np.isnan(theirs).any() and np.isfinite(ours).all()
    # Spectral functions are fine in both at ties.
    np.testing.assert_allclose(
        fg.grad(lambda m: fnp.sum(fnp.linalg.eigh(m)[0] ** 2))(a),
        np.asarray(jax.grad(lambda m: jnp.sum(jnp.linalg.eigh(m)[0] ** 2))(jnp.asarray(a))),
        atol=1e-12)
