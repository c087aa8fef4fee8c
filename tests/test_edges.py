"""Derivatives at the edges: 0-d intermediates, integer powers at 0, mixed
precisions, moments of one element, empty reductions, products near zero.

Each at orders 1 to 3, in reverse and forward mode, against closed forms or
finite differences (``fg.check_grads``).
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _nest(fun, order, mode):
    """The ``order``-th derivative of a scalar function of one scalar, by ``mode``."""
    for _ in range(order):
        fun = fg.grad(fun) if mode == "rev" else _fwd_derivative(fun)
    return fun


def _fwd_derivative(fun):
    return lambda x: fg.jvp(fun, (x,), (fnp.ones_like(x),))[1]


def _jacobians(fun, order, mode):
    """The ``order``-th derivative tensor of ``fun`` (a function of one array), by ``mode``."""
    for _ in range(order):
        fun = fg.jacobian(fun) if mode == "rev" else fg.jacfwd(fun)
    return fun


ORDERS = [1, 2, 3]
MODES = ["rev", "fwd"]


# -- power of a 0-d intermediate (numpy.float64 is a subclass of float) ------------


def test_mixed_second_derivative_of_power_of_a_0d_intermediate():
    x, y = 1.3, 1.7
    # d²/dx dy x**y = x**(y-1) (1 + y log x)
    want = x ** (y - 1) * (1 + y * math.log(x))
    got = fg.grad(lambda x: fg.grad(lambda x, y: fnp.power(x * 1.0, y), 1)(x, y))(x)
    assert got == pytest.approx(want, rel=1e-12)
    got = fg.grad(lambda y: fg.grad(lambda x, y: fnp.power(x * 1.0, y), 0)(x, y))(y)
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("mode", MODES)
def test_power_of_0d_intermediates(order, mode):
    fg.check_grads(lambda x, y: fnp.power(x * 1.0, y * 1.0), (1.3, 1.7), order=order,
                   modes=(mode,))
    fg.check_grads(lambda y: fnp.power(np.float64(1.3), y), (1.7,), order=order, modes=(mode,))
    # d^n/dy^n 1.3**y = 1.3**y log(1.3)^n, with the base a NumPy scalar constant
    d = _nest(lambda y: fnp.power(np.float64(1.3), y), order, mode)
    assert float(d(np.array(1.7))) == pytest.approx(1.3**1.7 * math.log(1.3) ** order, rel=1e-12)


# -- x ** k with a Python int k at 0 ------------------------------------------------


@pytest.mark.parametrize("k", [0, 1, 2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_integer_powers_have_finite_derivatives_of_every_order_at_zero(k, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0 * inf on the way
        for order in range(1, k + 3):
            d = _nest(lambda x: x**k, order, mode)
            want = math.factorial(k) if order == k else 0.0
            assert float(d(np.array(0.0))) == want, (k, order)
            d = _nest(lambda x: fnp.power(x, k), order, mode)
            assert float(d(np.array(0.0))) == want, (k, order)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("mode", MODES)
def test_integer_powers_against_finite_differences_at_and_near_zero(order, mode):
    x = np.array([0.0, 0.3, -0.7])
    for k in (0, 1, 2, 3):
        fg.check_grads(lambda x, k=k: x**k, (x,), order=order, modes=(mode,))
    # an array exponent holding 0: x ** 0 is 1, of derivative 0 (not NaN) at x = 0
    fg.check_grads(lambda x: fnp.power(x, np.array([0.0, 2.0, 3.0])), (x,), order=order,
                   modes=(mode,))


# -- float32 meeting float64 ----------------------------------------------------------

A32 = np.array([1.0, -2.0, 0.5], np.float32)
B64 = np.array([3.0, 4.0, -1.0])
MASK = np.array([True, False, True])
MIXED = {
    "add": lambda a: fnp.add(a, B64),
    "add-r": lambda a: fnp.add(B64, a),
    "subtract": lambda a: fnp.subtract(a, B64),
    "subtract-r": lambda a: fnp.subtract(B64, a),
    "where": lambda a: fnp.where(MASK, a, B64),
    "where-r": lambda a: fnp.where(MASK, B64, a),
    "add-broadcast": lambda a: fnp.add(a[:1], B64),
    "operator": lambda a: a + B64 - (B64 - a),
}


@pytest.mark.parametrize("name", sorted(MIXED))
@pytest.mark.parametrize("order", ORDERS)
def test_tangents_take_the_output_dtype(name, order):
    fun = MIXED[name]

    def tangent_of(f):  # x -> jvp of f along ones: again a function of x
        return lambda x: fg.jvp(f, (x,), (fnp.ones_like(x),))[1]

    f = fun
    for _ in range(order):
        f = tangent_of(f)
    assert f(A32).dtype == np.float64
    # reverse mode: gradients keep the input's dtype
    def g(a):
        return fnp.sum(fun(a) * fun(a))

    for _ in range(order - 1):
        g = _along_rev(g, np.ones(3, np.float32))
    assert fg.grad(g)(A32).dtype == np.float32
    fg.check_grads(fun, (A32,), order=order)


# -- moments of one element -------------------------------------------------------


@pytest.mark.parametrize("name", ["std", "var"])
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("mode", MODES)
def test_moments_of_one_element_have_zero_derivatives(name, order, mode):
    f = getattr(fnp, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = _nest(f, order, mode)
        assert float(d(np.array(2.0))) == 0.0
        # over an axis of length 1 they are 0 whatever x is: so are their derivatives
        j = _jacobians(lambda x: f(x, axis=1), order, mode)(np.array([[1.0], [3.0]]))
        assert j.shape == (2,) + (2, 1) * order and not j.any()
    fg.check_grads(lambda x: f(x, axis=1, keepdims=True), (np.array([[1.0], [3.0]]),),
                   order=order, modes=(mode,))
    fg.check_grads(f, (np.array(2.0),), order=order, modes=(mode,))


def test_std_is_still_sqrt_of_var_elsewhere():
    x = np.array([[1.0, 2.0, 4.0], [0.5, 0.5, 0.5]])  # second row: variance 0
    np.testing.assert_allclose(fnp.std(x, axis=1), np.std(x, axis=1))
    fg.check_grads(lambda x: fnp.std(x, axis=1), (x[:1],), order=3)
    g = fg.jacobian(lambda x: fnp.std(x, axis=1))(x)
    assert np.isfinite(g).all() and not g[1].any()  # the zero subgradient at equal values
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(fnp.std(np.array([1.0]), ddof=1))  # N - ddof = 0: NaN, as NumPy


# -- reductions of empty arrays keep their axes -------------------------------------


@pytest.mark.parametrize("name", ["mean", "var", "std"])
@pytest.mark.parametrize("axis", [0, 1, None, (0, 1), -1])
@pytest.mark.parametrize("shape", [(0, 3), (2, 0)])
def test_empty_reductions_keep_their_axes(name, axis, shape):
    x = np.zeros(shape)
    f = getattr(fnp, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy warns of empty slices: so may we
        want = getattr(np, name)(x, axis=axis, keepdims=True)
        got = f(x, axis=axis, keepdims=True)
        assert got.shape == want.shape and got.dtype == want.dtype
        for order in ORDERS:
            for mode in MODES:
                j = _jacobians(lambda x: f(x, axis=axis, keepdims=True), order, mode)(x)
                assert j.shape == want.shape + shape * order


# -- products near (not at) zero ----------------------------------------------------

NEAR_ZERO = np.array([1e-9, 2.0, -3e-8, 0.5])


def _prod_derivative(x, idx):
    """d^n prod(x) / dx[i1]...dx[in]: the product of the other factors if distinct, else 0."""
    if len(set(idx)) < len(idx):
        return 0.0
    return math.prod(x[k] for k in range(len(x)) if k not in idx)


def _directional(fun, vs, mode):
    """x -> the ``len(vs)``-th derivative of scalar ``fun`` at x along ``vs``, by ``mode``.

    One gradient (or one jvp) per order, nested: no Jacobian is formed.
    """
    for v in vs:
        fun = _along_rev(fun, v) if mode == "rev" else _along_fwd(fun, v)
    return fun


def _along_rev(f, v):
    return lambda x: fnp.sum(fg.grad(f)(x) * v)


def _along_fwd(f, v):
    return lambda x: fg.jvp(f, (x,), (v,))[1]


def _contract(x, vs, weights=None):
    """sum over idx of weights-or-1 * d^n prod / dx[idx] * vs[0][i1] ... vs[n-1][in]."""
    total = 0.0
    for idx in itertools.product(range(len(x)), repeat=len(vs)):
        term = _prod_derivative(x, idx)
        for v, i in zip(vs, idx, strict=True):
            term *= v[i]
        total += term
    return total


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("mode", MODES)
def test_prod_is_exact_near_zero_at_high_orders(order, mode):
    rng = np.random.default_rng(order)
    vs = [rng.standard_normal(NEAR_ZERO.shape) for _ in range(order)]
    want = _contract(NEAR_ZERO, vs)
    got = float(_directional(fnp.prod, vs, mode)(NEAR_ZERO))
    assert got == pytest.approx(want, rel=1e-13, abs=1e-300)
    # the last running product is the whole product: the same derivatives
    got = float(_directional(lambda x: fnp.cumprod(x)[-1], vs, mode)(NEAR_ZERO))
    assert got == pytest.approx(want, rel=1e-13, abs=1e-300)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("mode", MODES)
def test_cumprod_is_exact_near_zero_at_high_orders(order, mode):
    x = np.array([[0.7, -2e-9, 1.5], [4e-8, 3.0, 1e-7]])
    rng = np.random.default_rng(10 + order)
    u = rng.standard_normal(x.shape)
    vs = [rng.standard_normal(x.shape) for _ in range(order)]
    # <u, cumprod(x, axis=1)> = sum over rows r and k of u[r, k] prod(x[r, :k+1])
    want = sum(
        u[r, k] * _contract(x[r, : k + 1], [v[r, : k + 1] for v in vs])
        for r in range(2) for k in range(3)
    )
    got = float(_directional(lambda x: fnp.sum(u * fnp.cumprod(x, axis=1)), vs, mode)(x))
    assert got == pytest.approx(want, rel=1e-13, abs=1e-300)
    if order <= 3:
        fg.check_grads(lambda x: fnp.cumprod(x, axis=1), (x,), order=order, modes=(mode,))
        fg.check_grads(lambda x: fnp.prod(x, axis=0), (x,), order=order, modes=(mode,))
