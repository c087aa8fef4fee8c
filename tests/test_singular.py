"""Rules at singular points: a zero cotangent (or tangent) times an infinite derivative
is 0, not NaN (as JAX fixed in jax-ml/jax#383).

Each function below is ``where(inside, f(x), 0)`` evaluated at the edge of ``f``'s
domain, where ``f'`` is infinite (``sqrt`` at 0, ``arcsin`` at 1...), and at one
point inside.  The masked branch receives a zero cotangent, so every derivative at
the edge is exactly 0, at first and second order, in both modes and in every
composition (forward over reverse, reverse over reverse, forward over forward,
reverse over forward); inside, they match finite differences.  No NumPy warning
is raised on the way (where the function's own value at the edge is finite).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

# name: (f(x) on its domain, the edge, the test for "inside", a point inside)
EDGES = {
    "sqrt": (fnp.sqrt, 0.0, lambda x: x > 0, 2.0),
    "x**0.5": (lambda x: x ** 0.5, 0.0, lambda x: x > 0, 2.0),
    "x**1.5": (lambda x: x ** 1.5, 0.0, lambda x: x > 0, 2.0),
    "x**-1": (lambda x: x ** -1.0, 0.0, lambda x: x > 0, 2.0),
    "log": (fnp.log, 0.0, lambda x: x > 0, 2.0),
    "log2": (fnp.log2, 0.0, lambda x: x > 0, 2.0),
    "log10": (fnp.log10, 0.0, lambda x: x > 0, 2.0),
    "log1p": (fnp.log1p, -1.0, lambda x: x > -1, 0.5),
    "reciprocal": (fnp.reciprocal, 0.0, lambda x: x > 0, 2.0),
    "divide": (lambda x: 3.0 / x, 0.0, lambda x: x > 0, 2.0),
    "arcsin": (fnp.arcsin, 1.0, lambda x: x < 1, 0.5),
    "arccos": (fnp.arccos, 1.0, lambda x: x < 1, 0.5),
    "arctanh": (fnp.arctanh, 1.0, lambda x: x < 1, 0.5),
    "arccosh": (fnp.arccosh, 1.0, lambda x: x > 1, 2.0),
    "norm": (lambda x: fnp.linalg.norm(fnp.stack([x, 2 * x]), axis=0), 0.0, lambda x: x > 0,
             2.0),
}


# Functions whose value at the edge is finite: no warning at all there.
QUIET = {"sqrt", "x**0.5", "x**1.5", "arcsin", "arccos", "arccosh", "norm"}


def _masked(name):
    f, _, inside, _ = EDGES[name]

    def g(x):  # no "double where" guarding f's argument: none is needed
        return fnp.sum(fnp.where(inside(x), f(x), 0.0))

    return g


def _derivatives(fun, x):
    """Gradient and Hessian in every composition of the two modes (their row, or
    entry, for the edge ``x[0]``; ``v`` is the direction of ``x[0]``)."""
    v = np.array([1.0, 0.0])
    return {
        "grad (rev)": fg.grad(fun)(x),
        "jvp (fwd)": fg.jvp(fun, (x,), (v,))[1],
        "hessian (fwd over rev)": fg.hessian(fun)(x),
        "jacobian of grad (rev over rev)": fg.jacobian(fg.grad(fun))(x),
        "jacfwd of jacfwd (fwd over fwd)": fg.jacfwd(fg.jacfwd(fun))(x),
        "hvp (rev over fwd)": fg.hvp(fun, (x,), (v,)),
    }


@pytest.mark.parametrize("name", list(EDGES))
def test_zero_cotangent_times_infinite_derivative_is_zero(name):
    _, edge, _, inside = EDGES[name]
    fun = _masked(name)
    x = np.array([edge, inside])
    with warnings.catch_warnings():
        # f(edge) itself may warn (log(0) = -inf, as in NumPy); its derivatives never do
        warnings.simplefilter("error" if name in QUIET else "ignore")
        for what, d in _derivatives(fun, x).items():
            d = np.asarray(d)
            assert np.all(np.isfinite(d)), f"{name}: {what} is not finite: {d}"
            edge_part = d if d.ndim == 0 else (d[0] if d.ndim == 1 and "hvp" not in what
                                               else d[..., 0] if d.ndim == 2 else d)
            assert np.all(edge_part == 0), f"{name}: {what} at the edge: {d}"
    # inside the domain they are the true derivatives, at first and second order
    fg.check_grads(fun, (np.array([inside, inside + 0.1])
                         if name not in ("arcsin", "arccos", "arctanh")
                         else np.array([inside, inside - 0.2]),), order=2)


def test_complex_sqrt_and_log_at_zero():
    z = np.array([0j, 1 + 1j])

    def fun(z):
        keep = fnp.abs(z) > 0
        return fnp.sum(fnp.real(fnp.where(keep, fnp.sqrt(z) + fnp.log(fnp.where(keep, z, 1.0)),
                                          0.0)))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = fg.grad(fun)(z)
        t = fg.jvp(fun, (z,), (np.ones(2, complex),))[1]
        hv = fg.jvp(fg.grad(fun), (z,), (np.ones(2, complex),))[1]
    assert g[0] == 0 and hv[0] == 0 and np.isfinite(t)
    np.testing.assert_allclose(g[1], 0.5 / np.sqrt(z[1]) + 1 / z[1])  # real(h): grad is h'


def test_a_real_nan_is_kept_where_the_cotangent_is_not_zero():
    """The safe product masks only zero factors: sqrt'(0) = inf still reaches a
    nonzero cotangent, as it should."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fg.grad(fnp.sqrt)(0.0) == np.inf
        assert np.isnan(fg.grad(lambda x: fnp.sqrt(x) - fnp.sqrt(x))(0.0))
