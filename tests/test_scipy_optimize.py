"""API.md §10: funcgrad.scipy.optimize.minimize.

SciPy gets exact derivatives, method by method (a method that needs a Hessian
fails without one, so finishing shows it got it); the argmin of a quadratic
``½ xᵀ Q x - cᵀ x`` is ``Q⁻¹ c``, differentiable in ``c`` and ``Q`` in closed
form; a non-quadratic problem is checked at second order against the
implicit derivative in closed form.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("scipy")
import scipy.optimize

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy.optimize import minimize

RNG = np.random.default_rng(5)
_R = RNG.normal(size=(4, 4))
Q = _R @ _R.T + 4 * np.eye(4)
C = RNG.normal(size=4)
METHODS = ["BFGS", "L-BFGS-B", "CG", "Newton-CG", "trust-ncg", "trust-krylov", "trust-exact",
           "dogleg", "TNC", "SLSQP", "trust-constr", "Nelder-Mead", "Powell"]
# (trust-krylov's own arithmetic makes a NaN at tol=1e-10 with SciPy's rosen_hess_prod too)
TIGHT = {"Nelder-Mead": 1e-13, "Powell": 1e-13, "trust-krylov": 1e-8}
OPTIONS = {"Nelder-Mead": {"maxiter": 20000, "maxfev": 20000}, "Powell": {"maxfev": 20000},
           "TNC": {"maxfun": 10000}}


def quadratic(x, Q, c):
    return 0.5 * x @ Q @ x - c @ x


def rosen(x):
    return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("method", METHODS)
def test_rosenbrock_every_method(method):
    x0 = np.array([-1.2, 1.0, 0.8])
    res = minimize(rosen, x0, method=method, tol=TIGHT.get(method, 1e-10),
                   options=OPTIONS.get(method))
    assert isinstance(res, scipy.optimize.OptimizeResult)
    np.testing.assert_allclose(res.x, np.ones(3), atol=1e-3)
    if method not in OPTIONS:  # given the gradient: exact to the tolerance
        np.testing.assert_allclose(res.x, np.ones(3), atol=2e-5)


def test_hands_scipy_the_exact_derivatives():
    x0 = np.array([-1.2, 1.0, 0.8])
    ours = minimize(rosen, x0, method="trust-exact")
    theirs = scipy.optimize.minimize(scipy.optimize.rosen, x0, method="trust-exact",
                                     jac=scipy.optimize.rosen_der, hess=scipy.optimize.rosen_hess)
    assert ours.nit == theirs.nit and ours.nfev == theirs.nfev
    np.testing.assert_allclose(ours.x, theirs.x, rtol=1e-12)
    ours = minimize(rosen, x0, method="Newton-CG")
    theirs = scipy.optimize.minimize(scipy.optimize.rosen, x0, method="Newton-CG",
                                     jac=scipy.optimize.rosen_der,
                                     hessp=scipy.optimize.rosen_hess_prod)
    assert ours.nit == theirs.nit
    np.testing.assert_allclose(ours.x, theirs.x, rtol=1e-10)


@pytest.mark.parametrize("method", ["BFGS", "Newton-CG", "trust-exact", "Nelder-Mead"])
def test_quadratic_argmin_and_its_derivatives(method):
    tol = 1e-14 if method == "Nelder-Mead" else 1e-12
    opts = {"maxiter": 40000, "maxfev": 40000, "xatol": 1e-12, "fatol": 1e-16} \
        if method == "Nelder-Mead" else None

    def argmin(Q, c):
        return minimize(quadratic, np.zeros(4), (Q, c), method=method, tol=tol,
                        options=opts).x

    inv = np.linalg.inv(Q)
    x = argmin(Q, C)
    np.testing.assert_allclose(x, inv @ C, rtol=1e-5 if method == "Nelder-Mead" else 1e-8)
    # dx/dc = Q⁻¹ (the derivative is exact at the solution found)
    np.testing.assert_allclose(fg.jacobian(argmin, argnums=1)(Q, C), inv, rtol=1e-10)
    np.testing.assert_allclose(fg.jacfwd(argmin, argnums=1)(Q, C), inv, rtol=1e-10)
    # dx/dQ_jk = -Q⁻¹ E_jk x: with x exact, -inv[:, j] x_k (for the non-symmetric partials)
    dQ = fg.jacobian(argmin, argnums=0)(Q, C)
    xe = fg.value_of(x)
    sym_x = 0.5 * (np.einsum("ij,k->ijk", inv, xe) + np.einsum("ik,j->ijk", inv, xe))
    np.testing.assert_allclose(dQ, -sym_x, rtol=1e-5 if method == "Nelder-Mead" else 1e-7,
                               atol=1e-9)


def test_second_order_in_the_parameters():
    # argmin of sum(x^4/4 + x^2/2 - c x): x^3 + x = c, dx/dc = 1/(3x²+1),
    # d²x/dc² = -6x / (3x²+1)³ (entrywise)
    def argmin(c):
        return minimize(lambda x, c: fnp.sum(x ** 4 / 4 + x ** 2 / 2 - c * x), np.zeros(3), (c,),
                        method="trust-exact", tol=1e-14).x

    c = np.array([2.0, -1.0, 0.5])
    x = argmin(c)
    np.testing.assert_allclose(x ** 3 + x, c, rtol=1e-9)
    np.testing.assert_allclose(fg.elementwise_grad(argmin)(c), 1 / (3 * x ** 2 + 1), rtol=1e-12)
    d2 = fg.elementwise_grad(fg.elementwise_grad(argmin))(c)
    np.testing.assert_allclose(d2, -6 * x / (3 * x ** 2 + 1) ** 3, rtol=1e-11)
    h = fg.hessian(lambda c: fnp.sum(argmin(c)))(c)
    np.testing.assert_allclose(h, np.diag(-6 * x / (3 * x ** 2 + 1) ** 3), rtol=1e-11,
                               atol=1e-14)


def test_value_is_differentiable_and_pytree_x0():
    # min over {w, b} of sum((w * t + b - y)^2) + lam (w^2 + b^2): envelope theorem for fun
    t = np.linspace(-1.0, 1.0, 5)
    y = 2 * t + 0.5

    def fit(lam):
        res = minimize(lambda p, lam: fnp.sum((p["w"] * t + p["b"] - y) ** 2)
                       + lam * (p["w"] ** 2 + p["b"] ** 2),
                       {"w": np.array(0.0), "b": np.array(0.0)}, (lam,), tol=1e-12)
        return res

    res = fit(0.1)
    A = np.stack([t, np.ones(5)], axis=1)
    expected = np.linalg.solve(A.T @ A + 0.1 * np.eye(2), A.T @ y)
    np.testing.assert_allclose([res.x["w"], res.x["b"]], expected, rtol=1e-8)
    dfun = fg.grad(lambda lam: fit(lam).fun)(0.1)  # ∂/∂lam at the argmin: |p*|²
    np.testing.assert_allclose(dfun, expected @ expected, rtol=1e-7)
    dw = fg.grad(lambda lam: fit(lam).x["w"])(0.1)
    expected_dw = -np.linalg.solve(A.T @ A + 0.1 * np.eye(2), expected)[0]
    np.testing.assert_allclose(dw, expected_dw, rtol=1e-7)


def test_a_closed_over_parameter_is_differentiated_too():
    def argmin(c):
        return minimize(lambda x: fnp.sum((x - c) ** 2 * fnp.exp(x)), np.zeros(2), tol=1e-12).x

    c = np.array([0.5, -0.3])
    np.testing.assert_allclose(argmin(c), c, rtol=1e-7)
    np.testing.assert_allclose(fg.jacobian(argmin)(c), np.eye(2), rtol=1e-7, atol=1e-9)


def test_import_funcgrad_does_not_import_scipy():
    code = "import sys, funcgrad; assert 'scipy' not in sys.modules, 'scipy imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(
        __import__("pathlib").Path(__file__).resolve().parent.parent))


def test_bounds_an_active_bound_holds_its_entry():
    # min |x - c|^2 over x >= 0: x = max(c, 0); dx/dc = 1 where c > 0, 0 where clipped
    def argmin(c):
        return minimize(lambda x, c: fnp.sum((x - c) ** 2 * (1 + x ** 2)), np.ones(3), (c,),
                        bounds=[(0.0, None)] * 3, tol=1e-14).x

    c = np.array([0.5, -0.7, 2.0])
    x = argmin(c)
    np.testing.assert_allclose(x, np.maximum(c, 0.0), atol=1e-8)
    J = fg.jacobian(argmin)(c)
    # free entries: x = c exactly, so dx/dc = 1 there
    np.testing.assert_allclose(J, np.diag([1.0, 0.0, 1.0]), atol=1e-7)
    np.testing.assert_allclose(fg.jacfwd(argmin)(c), J, atol=1e-12)


def test_differentiating_a_constrained_result_is_refused():
    cons = [{"type": "eq", "fun": lambda x: np.sum(x) - 1.0}]

    def argmin(c):
        return minimize(lambda x, c: fnp.sum((x - c) ** 2), np.zeros(2), (c,),
                        constraints=cons).x

    x = argmin(np.array([1.0, 2.0]))
    np.testing.assert_allclose(x, [0.0, 1.0], atol=1e-6)  # the value is SciPy's
    with pytest.raises(fg.FuncgradError, match="constraints"):
        fg.jacobian(argmin)(np.array([1.0, 2.0]))


def test_on_another_device(standin):
    # SciPy iterates on a host copy; the function, its derivatives and x stay on the device
    Qd, Cd = standin.put(Q), standin.put(C)

    def argmin(Q, c):
        return minimize(quadratic, standin.put(np.zeros(4)), (Q, c), method="trust-exact",
                        tol=1e-12).x

    x = argmin(Qd, Cd)
    assert fg.device_of(x) == standin.DEVICE
    inv = np.linalg.inv(Q)
    np.testing.assert_allclose(standin.get(x), inv @ C, rtol=1e-8)
    J = fg.jacobian(argmin, argnums=1)(Qd, Cd)
    np.testing.assert_allclose(standin.get(J), inv, rtol=1e-10)
    x0 = np.array([-1.2, 1.0, 0.8])
    res = minimize(rosen, standin.put(x0), method="Newton-CG", tol=1e-10)
    host = minimize(rosen, x0, method="Newton-CG", tol=1e-10)
    assert res.nit == host.nit
    np.testing.assert_allclose(standin.get(res.x), host.x, rtol=1e-12)
    np.testing.assert_allclose(host.x, np.ones(3), atol=1e-6)
    x = minimize(lambda x, c: fnp.sum((x - c) ** 2), standin.put(np.ones(2)),
                 (standin.put(np.array([0.5, -1.0])),), bounds=[(0.0, None)] * 2).x
    np.testing.assert_allclose(standin.get(x), [0.5, 0.0], atol=1e-8)
