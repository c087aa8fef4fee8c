"""Issue 28's smaller items, each against a reference we did not write (JAX, NumPy,
SciPy, closed forms): the exponent derivative of a complex power, and more below."""

from __future__ import annotations

import cmath

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


@pytest.mark.parametrize("base", [-2 + 0j, -1.5 + 0.7j, -0.3 - 2j, 2 + 1j, -2.0])
def test_the_exponent_derivative_of_a_complex_power_uses_the_principal_log(base):
    w = 0.5 + 0.1j
    for lift in (lambda b: b, np.asarray, lambda b: fnp.asarray(np.asarray(b))):
        got = fg.grad(lambda v, lift=lift: fnp.real(lift(base) ** v))(w)
        want = jax.grad(lambda v: jnp.real(jnp.asarray(base, complex) ** v))(w)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    # second order, holomorphic: d^2/dw^2 b^w = b^w log(b)^2 (principal branch)
    d2 = fg.grad(fg.grad(lambda v: np.asarray(complex(base)) ** v, holomorphic=True),
                 holomorphic=True)(w)
    np.testing.assert_allclose(d2, complex(base) ** w * cmath.log(base) ** 2, rtol=1e-12)


def test_a_traced_complex_base_and_exponent_match_jax():
    def f(z, w, m):
        return m.real((z ** w) * m.conj(z)).sum()

    z = np.array([-2.0 + 0.5j, -0.5 - 1.0j, 1.5 + 0.2j])
    w = np.array([0.3 - 0.2j, 1.7 + 0.4j, -0.6 + 0.1j])
    got = fg.grad(lambda z, w: f(z, w, fnp), argnums=(0, 1))(z, w)
    want = jax.grad(lambda z, w: f(z, w, jnp), argnums=(0, 1))(z, w)
    for g, h in zip(got, want):
        np.testing.assert_allclose(g, h, rtol=1e-11)
    fg.check_grads(lambda z, w: f(z, w, fnp), (z, w), order=2)


def test_a_negative_real_base_with_a_real_exponent_has_no_real_derivative():
    # (-2)^w is not differentiable in real w: NaN, as JAX and autograd say (not 0)
    assert np.isnan(fg.grad(lambda w: (-2.0) ** w)(2.0))
    assert np.isnan(jax.grad(lambda w: (-2.0) ** w)(2.0))
    assert fg.grad(lambda w: 0.0 ** w)(2.0) == 0.0 == jax.grad(lambda w: 0.0 ** w)(2.0)
    np.testing.assert_allclose(fg.grad(lambda w: 2.0 ** w)(2.0), 4 * np.log(2.0))
