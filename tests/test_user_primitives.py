"""User primitives (fg.primitive, defvjp, defjvp) in every mode and to second order."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _vjp_only_cube():
    cube = fg.primitive(lambda x: x ** 3)
    fg.defvjp(cube, lambda g, ans, x: g * 3.0 * x * x)
    return cube


def _vjp_only_mul():
    mul = fg.primitive(lambda x, y: x * y)
    fg.defvjp(mul, lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)
    return mul


X = np.array([0.5, -1.5, 2.0])


def test_forward_mode_is_derived_from_the_vjp():
    cube = _vjp_only_cube()
    v = np.array([1.0, 2.0, -1.0])
    _, t = fg.jvp(cube, (X,), (v,))
    np.testing.assert_allclose(t, 3 * X ** 2 * v)
    np.testing.assert_allclose(fg.jacfwd(cube)(X), np.diag(3 * X ** 2))


@pytest.mark.parametrize("hess", [fg.hessian, lambda f: fg.jacobian(fg.jacobian(f))],
                         ids=["hessian", "jacrev-jacrev"])
def test_second_order_of_a_vjp_only_primitive(hess):
    cube = _vjp_only_cube()
    h = hess(lambda x: fnp.sum(cube(x)))(X)
    np.testing.assert_allclose(h, np.diag(6 * X))


def test_hvp_and_check_grads_of_a_two_argument_vjp_only_primitive():
    mul = _vjp_only_mul()
    y = np.array([2.0, 3.0, -1.0])

    def f(x, y):
        return fnp.sum(mul(x, y) * x)  # sum(x^2 y)

    hv = fg.hvp(f, (X, y), (np.ones(3), np.zeros(3)))
    np.testing.assert_allclose(hv[0], 2 * y)
    np.testing.assert_allclose(hv[1], 2 * X)
    fg.check_grads(f, (X, y), order=2, modes=("rev", "fwd"))


def test_a_given_jvp_rule_is_the_one_forward_mode_uses():
    # A deliberately different JVP rule (twice the truth) shows that it is used.
    sq = fg.primitive(lambda x: x * x)
    fg.defvjp(sq, lambda g, ans, x: g * 2.0 * x)
    fg.defjvp(sq, lambda t, ans, x: t * 4.0 * x)
    _, t = fg.jvp(sq, (X,), (np.ones(3),))
    np.testing.assert_allclose(t, 4.0 * X)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(sq(x)))(X), 2.0 * X)


def test_a_primitive_with_only_a_jvp_rule_works_in_forward_mode():
    sq = fg.primitive(lambda x: x * x)
    fg.defjvp(sq, lambda t, ans, x: t * 2.0 * x)
    _, t = fg.jvp(sq, (X,), (np.ones(3),))
    np.testing.assert_allclose(t, 2.0 * X)
    with pytest.raises(fg.MissingRuleError, match="VJP"):
        fg.grad(lambda x: fnp.sum(sq(x)))(X)
