"""funcgrad.scipy.stats: values against SciPy, gradients against JAX and finite differences.

Every function of every distribution is compared with ``scipy.stats`` on
arrays that reach outside the support (where SciPy gives ``-inf``, 0 or 1);
every one is checked by finite differences at order 2 in both modes in
each float argument it is differentiable in, and where ``jax.scipy.stats``
has the function, its first and second derivatives are compared with JAX's.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import stats

X = np.array([-0.7, 0.2, 0.9, 1.6, 3.1])
Q = np.array([0.05, 0.3, 0.5, 0.8, 0.97])
K = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 2.5, 7.0])

# distribution -> (the value argument, the parameters as SciPy takes them, and the
# positions of the parameters each function is differentiable in)
CONTINUOUS = {
    "norm": ((0.5, 2.0), None),
    "expon": ((0.1, 1.5), None),
    "uniform": ((-0.5, 2.5), None),
    "laplace": ((0.3, 1.5), None),
    "cauchy": ((0.3, 1.5), None),
    "logistic": ((0.3, 1.5), None),
    "t": ((3.5, 0.3, 1.5), None),
    "gamma": ((2.5, -0.2, 1.5), None),
    "chi2": ((3.0, -0.2, 1.5), None),
    "beta": ((2.0, 3.5, -0.8, 4.5), None),
    "lognorm": ((0.6, 0.1, 2.0), None),
    "pareto": ((3.0, 0.2, 1.1), None),
    "gumbel_r": ((0.3, 1.5), None),
    "gumbel_l": ((0.3, 1.5), None),
}
DISCRETE = {
    "poisson": (2.5,),
    "bernoulli": (0.3,),
    "binom": (5, 0.3),
    "geom": (0.3,),
    "nbinom": (2.5, 0.4),
    "betabinom": (5, 1.5, 2.0),
}
# shape parameters whose cdf-side derivatives go through a refused special function
REFUSED_SHAPES = {"t": {0}, "gamma": {0}, "chi2": {0}, "beta": {0, 1}}


def _methods(module):
    return [m for m in ("logpdf", "pdf", "logpmf", "pmf", "cdf", "logcdf", "sf", "logsf",
                        "ppf", "isf") if hasattr(module, m)]


def _value_cases():
    for name, (params, _) in CONTINUOUS.items():
        for m in _methods(getattr(stats, name)):
            yield pytest.param(name, m, params, id=f"{name}.{m}")
    for name, params in DISCRETE.items():
        for m in _methods(getattr(stats, name)):
            yield pytest.param(name, m, params, id=f"{name}.{m}")


@pytest.mark.parametrize("name, method, params", list(_value_cases()))
def test_values_match_scipy(name, method, params):
    ours, theirs = getattr(getattr(stats, name), method), getattr(getattr(st, name), method)
    first = Q if method in ("ppf", "isf") else (K if name in DISCRETE else X)
    with np.errstate(all="ignore"):
        want = theirs(first, *params)
        got = ours(first, *params)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert np.asarray(got).dtype == np.float64
    # float32 data stays float32
    with np.errstate(all="ignore"):
        got32 = ours(first.astype(np.float32), *[np.float32(p) for p in params])
    assert np.asarray(got32).dtype == np.float32, (name, method, np.asarray(got32).dtype)


def _inside(name):
    """Points strictly inside the support, away from kinks (laplace's loc)."""
    return {"expon": X[2:], "uniform": X[1:3], "gamma": X[2:], "chi2": X[2:],
            "beta": X[1:4], "laplace": X[[0, 2, 3]],
            "lognorm": X[2:], "pareto": X[3:]}.get(name, X)


def _grad_cases():
    for name, (params, _) in CONTINUOUS.items():
        for m in _methods(getattr(stats, name)):
            yield pytest.param(name, m, params, id=f"{name}.{m}")


@pytest.mark.parametrize("name, method, params", list(_grad_cases()))
def test_continuous_gradients_by_finite_differences(name, method, params):
    fun = getattr(getattr(stats, name), method)
    first = np.array([0.3, 0.45, 0.8]) if method in ("ppf", "isf") else _inside(name)
    refused = REFUSED_SHAPES.get(name, set()) if method not in ("logpdf", "pdf") else set()
    traced = [i for i in range(len(params)) if i not in refused]
    args = [first] + [np.float64(params[i]) for i in traced]

    def f(v, *ps):
        full = list(params)
        for i, p in zip(traced, ps, strict=True):
            full[i] = p
        return fun(v, *full)

    fg.check_grads(f, tuple(args), order=2, modes=("rev", "fwd"))


def _discrete_grad_cases():
    for name, params in DISCRETE.items():
        for m in _methods(getattr(stats, name)):
            if m == "ppf":  # a step function: refused (test_discrete_ppf_...)
                continue
            yield pytest.param(name, m, params, id=f"{name}.{m}")


@pytest.mark.parametrize("name, method, params", list(_discrete_grad_cases()))
def test_discrete_gradients_in_the_probability_parameter(name, method, params):
    fun = getattr(getattr(stats, name), method)
    k = np.array([0.0, 1.0, 2.0, 3.0]) if name != "geom" else np.array([1.0, 2.0, 4.0])
    if name == "bernoulli":  # sf(1) = 0: its log is -inf
        k = np.array([0.0]) if method == "logsf" else np.array([0.0, 1.0])
    if method in ("cdf", "logcdf", "sf", "logsf") and name == "binom":
        k = np.array([0.0, 1.0, 3.0])
    *shape, p = params
    fg.check_grads(lambda p: fun(k, *shape, p), (np.float64(p),), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("name, method, position", [
    ("gamma", "cdf", 1), ("t", "cdf", 1), ("beta", "sf", 2), ("chi2", "ppf", 1),
    ("binom", "cdf", 1),
])
def test_derivatives_in_shape_parameters_that_do_not_exist_are_refused(name, method, position):
    module = getattr(stats, name)
    args = {"gamma": (1.0, 2.5), "t": (1.0, 3.5), "beta": (0.4, 2.0, 3.0), "chi2": (0.4, 3.0),
            "binom": (2.0, 5.0, 0.3)}[name]
    with pytest.raises(TypeError, match="not differentiable in its argument"):
        fg.grad(getattr(module, method), position)(*args)


DISCRETE_PPF = {"poisson": ("q", "mu"), "binom": ("q", "n", "p"), "nbinom": ("q", "n", "p")}


@pytest.mark.parametrize("name", sorted(DISCRETE_PPF))
def test_discrete_ppf_values_at_the_edges_match_scipy(name):
    q = np.array([0.0, 1e-12, 0.1, 0.5, 0.9, 1 - 1e-12, 1.0, -0.2, 1.2, np.nan])
    params = DISCRETE[name]
    for loc in (0.0, -2.0):
        with np.errstate(all="ignore"):
            want = getattr(st, name).ppf(q, *params, loc)
        np.testing.assert_array_equal(getattr(stats, name).ppf(q, *params, loc), want)
    # broadcast over array parameters, as SciPy
    grid = np.array([[0.2], [0.7]])
    mid = np.array([params[-1] * 0.5, params[-1]])
    args = (*params[:-1], mid)
    np.testing.assert_array_equal(getattr(stats, name).ppf(grid, *args),
                                  getattr(st, name).ppf(grid, *args))


@pytest.mark.parametrize("name", sorted(DISCRETE_PPF))
def test_discrete_ppf_refuses_derivatives_in_q_and_the_parameters(name):
    ppf, params = getattr(stats, name).ppf, (0.4, *DISCRETE[name])
    for position, arg in enumerate(DISCRETE_PPF[name]):
        def f(v, position=position):
            full = list(params)
            full[position] = v
            return ppf(*full)

        x = np.float64(params[position])
        for attempt in (lambda x=x: fg.grad(f)(x), lambda x=x: fg.jvp(f, (x,), (1.0,)),
                        lambda x=x: fg.hessian(f)(x)):
            with pytest.raises(TypeError, match=f"{name}.ppf is not differentiable in its "
                                                f"argument '{arg}'"):
                attempt()


@pytest.mark.parametrize("name", sorted(DISCRETE_PPF))
def test_discrete_ppf_is_a_shift_in_loc(name):
    ppf, params = getattr(stats, name).ppf, DISCRETE[name]
    q = np.array([0.1, 0.5, 0.9])
    fg.check_grads(lambda loc: ppf(q, *params, loc), (np.float64(1.5),), order=2,
                   modes=("rev", "fwd"))
    np.testing.assert_array_equal(fg.jacobian(lambda loc: ppf(q, *params, loc))(1.5),
                                  np.ones(3))
    np.testing.assert_array_equal(fg.hessian(lambda loc: ppf(0.5, *params, loc))(1.5), 0.0)
    # vmap batches it by broadcasting
    out = fg.vmap(lambda q: ppf(q, *params, 1.0))(q)
    np.testing.assert_array_equal(out, getattr(st, name).ppf(q, *params, 1.0))


def test_multinomial_against_scipy_and_finite_differences():
    p = np.array([0.2, 0.5, 0.3])
    x = np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 3.0], [1.0, 1.0, 0.0], [4.0, -1.0, 0.0]])
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(stats.multinomial.logpmf(x, 3, p),
                                   st.multinomial.logpmf(x, 3, p))
    fg.check_grads(lambda p: stats.multinomial.logpmf(x[:2], 3, p), (p,), order=2)


def test_dirichlet_against_scipy_and_finite_differences():
    alpha = np.array([1.5, 2.0, 3.0])
    x = np.array([[0.2, 0.3], [0.3, 0.3], [0.5, 0.4]])
    np.testing.assert_allclose(stats.dirichlet.logpdf(x, alpha), st.dirichlet.logpdf(x, alpha))
    np.testing.assert_allclose(stats.dirichlet.pdf(x[:, 0], alpha),
                               st.dirichlet.pdf(x[:, 0], alpha))
    fg.check_grads(stats.dirichlet.logpdf, (x, alpha), order=2)
    with pytest.raises(ValueError, match="first axis"):
        stats.dirichlet.logpdf(x.T, alpha)


def _spd(rng, d):
    a = rng.standard_normal((d, d))
    return a @ a.T + d * np.eye(d)


def test_multivariate_normal_against_scipy():
    rng = np.random.default_rng(0)
    cov, mean = _spd(rng, 3), rng.standard_normal(3)
    x = rng.standard_normal((4, 3))
    for point in (x, x[0]):
        np.testing.assert_allclose(stats.multivariate_normal.logpdf(point, mean, cov),
                                   st.multivariate_normal.logpdf(point, mean, cov))
    np.testing.assert_allclose(stats.multivariate_normal.pdf(x, mean, np.array([1.0, 2.0, 0.5])),
                               st.multivariate_normal.pdf(x, mean, np.array([1.0, 2.0, 0.5])))
    np.testing.assert_allclose(stats.multivariate_normal.logpdf(x, mean, 2.0),
                               st.multivariate_normal.logpdf(x, mean, 2.0))
    np.testing.assert_allclose(stats.multivariate_normal.logpdf(x[:, 0], None, 2.0),
                               st.multivariate_normal.logpdf(x[:, 0], None, 2.0))
    fg.check_grads(lambda x, m, c: stats.multivariate_normal.logpdf(x, m, c @ c.T),
                   (x, mean, np.linalg.cholesky(cov)), order=2)
    # allow_singular=True with a regular covariance: the same density, every derivative
    np.testing.assert_allclose(stats.multivariate_normal.logpdf(x, mean, cov, True),
                               st.multivariate_normal.logpdf(x, mean, cov, True))
    fg.check_grads(lambda x, m, c: stats.multivariate_normal.logpdf(x, m, c @ c.T, True),
                   (x, mean, np.linalg.cholesky(cov)), order=2)


def test_multivariate_normal_entropy_against_scipy():
    rng = np.random.default_rng(1)
    cov, mean = _spd(rng, 3), rng.standard_normal(3)
    for c in (cov, np.array([1.0, 2.0, 0.5]), 2.0):
        np.testing.assert_allclose(stats.multivariate_normal.entropy(mean, c),
                                   st.multivariate_normal.entropy(mean, c))
    # d/dcov of log det cov / 2 is inv(cov) / 2 (symmetric); the mean does not enter
    g_mean, g_cov = fg.grad(stats.multivariate_normal.entropy, (0, 1))(mean, cov)
    np.testing.assert_allclose(g_mean, np.zeros(3), atol=1e-15)
    np.testing.assert_allclose(g_cov, 0.5 * np.linalg.inv(cov))
    fg.check_grads(lambda c: stats.multivariate_normal.entropy(mean, c @ c.T),
                   (np.linalg.cholesky(cov),), order=2)
    np.testing.assert_allclose(stats.multivariate_normal.entropy(mean, cov, True),
                               st.multivariate_normal.entropy(mean, cov))


def _singular_case(rng):
    # variance in the first two coordinates only: the support is mean + span(e0, e1)
    cov = np.zeros((4, 4))
    cov[:2, :2] = [[1.0, 0.3], [0.3, 0.5]]
    mean = np.concatenate([rng.standard_normal(2), [0.5, -1.0]])
    inside = np.concatenate([rng.standard_normal((3, 2)), np.tile(mean[2:], (3, 1))], axis=1)
    return cov, mean, inside


def test_multivariate_normal_with_a_singular_covariance_matches_scipy():
    rng = np.random.default_rng(6)
    cov, mean, inside = _singular_case(rng)
    x = np.concatenate([inside, rng.standard_normal((1, 4))])  # the last point is off it
    mvn = stats.multivariate_normal
    for fun in ("logpdf", "pdf"):
        np.testing.assert_allclose(getattr(mvn, fun)(x, mean, cov, allow_singular=True),
                                   getattr(st.multivariate_normal, fun)(x, mean, cov,
                                                                        allow_singular=True))
    assert mvn.logpdf(x, mean, cov, allow_singular=True)[-1] == -np.inf
    np.testing.assert_allclose(mvn.entropy(mean, cov, allow_singular=True),
                               st.multivariate_normal(mean, cov, allow_singular=True).entropy())
    with pytest.raises(np.linalg.LinAlgError):  # without allow_singular, as SciPy
        np.asarray(mvn.logpdf(x, mean, cov))
    with pytest.raises(ValueError, match="positive semidefinite"):
        mvn.logpdf(x, mean, -np.eye(4), allow_singular=True)


def test_multivariate_normal_singular_derivatives_on_the_support():
    # autograd's test_mvn_sing_cov: x moves within the support, the mean anywhere
    rng = np.random.default_rng(7)
    cov, mean, inside = _singular_case(rng)
    mvn = stats.multivariate_normal
    for fun in (mvn.logpdf, mvn.pdf):
        def f(x2, m, fun=fun):
            x = fnp.concatenate([x2, m[2:]])
            return fun(x, m, cov, allow_singular=True)

        fg.check_grads(f, (inside[0, :2], mean), order=2, modes=("rev", "fwd"))
    # the derivative in x within the support: -pinv(cov) (x - mean), as autograd's
    g = fg.grad(mvn.logpdf)(inside[0], mean, cov, True)
    np.testing.assert_allclose(g, -np.linalg.pinv(cov) @ (inside[0] - mean), atol=1e-12)
    for fun in (lambda c: mvn.logpdf(inside[0], mean, c, True),
                lambda c: mvn.entropy(mean, c, True)):
        with pytest.raises(TypeError, match="not differentiable in its argument 'cov'"):
            fg.grad(fun)(cov)


def test_multivariate_normal_covariance_gradient_is_symmetric():
    rng = np.random.default_rng(1)
    cov, x = _spd(rng, 3), rng.standard_normal(3)
    g = fg.grad(lambda c: stats.multivariate_normal.logpdf(x, None, c))(cov)
    np.testing.assert_allclose(g, g.T, atol=1e-12)
    inv = np.linalg.inv(cov)
    np.testing.assert_allclose(g, -0.5 * (inv - inv @ np.outer(x, x) @ inv), atol=1e-12)


# -- against JAX ----------------------------------------------------------------------


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.stats as jst

    return jax, jst


# JAX compiles each function it differentiates, slowly: a few cheap ones here (the rest are
# checked by finite differences above and against autograd below).
JAX_CASES = [("norm", "logcdf", (-3.2, 0.5, 2.0)), ("t", "logpdf", (1.2, 3.5, 0.5, 2.0))]


def test_first_and_second_derivatives_match_jax():
    jax, jst = _jax()
    for name, method, args in JAX_CASES:
        ours = getattr(getattr(stats, name), method)
        theirs = getattr(getattr(jst, name), method)
        args = tuple(np.float64(a) for a in args)
        argnums = tuple(range(1 if name in DISCRETE else 0, len(args)))  # k is data
        np.testing.assert_allclose(ours(*args), theirs(*args), rtol=1e-10)
        np.testing.assert_allclose(np.array(fg.grad(ours, argnums)(*args)),
                                   np.array(jax.grad(theirs, argnums)(*args)), rtol=1e-8)
    f, g = stats.norm.logcdf, jst.norm.logcdf
    np.testing.assert_allclose(np.array(fg.hessian(f, (0, 2))(-3.2, 0.5, 2.0)),
                               np.array(jax.hessian(g, (0, 2))(-3.2, 0.5, 2.0)), rtol=1e-8)


AUTOGRAD_CASES = [
    ("norm", "logpdf", (1.2, 0.5, 2.0)), ("norm", "cdf", (1.2, 0.5, 2.0)),
    ("norm", "logcdf", (-3.2, 0.5, 2.0)), ("norm", "logsf", (1.2, 0.5, 2.0)),
    ("t", "logpdf", (1.2, 3.5, 0.5, 2.0)), ("gamma", "logpdf", (1.2, 2.5)),
    ("beta", "logpdf", (0.4, 2.0, 3.5)), ("chi2", "logpdf", (1.2, 3.0)),
    ("poisson", "logpmf", (3.0, 2.5)),
]


@pytest.mark.parametrize("name, method, args", AUTOGRAD_CASES,
                         ids=[f"{n}.{m}" for n, m, _ in AUTOGRAD_CASES])
def test_gradients_match_autograd(name, method, args):
    ag = pytest.importorskip("autograd")
    import importlib

    theirs = getattr(importlib.import_module(f"autograd.scipy.stats.{name}"), method)
    ours = getattr(getattr(stats, name), method)
    args = tuple(np.float64(a) for a in args)
    compared = 0
    for i in range(1 if name in DISCRETE else 0, len(args)):
        try:
            want = ag.grad(theirs, i)(*args)
        except (NotImplementedError, KeyError):  # autograd has no derivative in it
            continue
        np.testing.assert_allclose(fg.grad(ours, i)(*args), want, rtol=1e-9,
                                   err_msg=f"argument {i}")
        compared += 1
    assert compared


def test_multivariate_normal_matches_jax():
    jax, jst = _jax()
    rng = np.random.default_rng(2)
    cov, mean, pts = _spd(rng, 3), rng.standard_normal(3), rng.standard_normal((4, 3))

    def total(f):
        return lambda p, m, c: f(p, m, c).sum()

    got = fg.grad(total(stats.multivariate_normal.logpdf), (0, 1, 2))(pts, mean, cov)
    want = jax.grad(total(jst.multivariate_normal.logpdf), (0, 1, 2))(pts, mean, cov)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_dirichlet_and_multivariate_normal_match_autograd():
    ag = pytest.importorskip("autograd")
    import autograd.scipy.stats as ast

    alpha, x = np.array([1.5, 2.0, 3.0]), np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(fg.grad(stats.dirichlet.logpdf, 1)(x, alpha),
                               ag.grad(ast.dirichlet.logpdf, 1)(x, alpha), rtol=1e-10)
    rng = np.random.default_rng(4)
    cov, mean, pt = _spd(rng, 3), rng.standard_normal(3), rng.standard_normal(3)
    for i in (0, 1):
        np.testing.assert_allclose(
            fg.grad(stats.multivariate_normal.logpdf, i)(pt, mean, cov),
            ag.grad(ast.multivariate_normal.logpdf, i)(pt, mean, cov), rtol=1e-9)


def test_a_bayesian_logistic_regression_posterior_gradient_matches_jax():
    jax, jst = _jax()
    import jax.numpy as jnp

    import funcgrad.numpy as fnp
    from funcgrad.scipy import special

    rng = np.random.default_rng(3)
    xs, w0 = rng.standard_normal((20, 3)), rng.standard_normal(3)
    ys = (rng.uniform(size=20) < 1 / (1 + np.exp(-xs @ w0))).astype(float)

    def ours(w):
        p = special.expit(xs @ w)
        return fnp.sum(stats.bernoulli.logpmf(ys, p)) + fnp.sum(stats.norm.logpdf(w, 0.0, 2.0))

    def theirs(w):
        p = jax.scipy.special.expit(xs @ w)
        return jnp.sum(jst.bernoulli.logpmf(ys, p)) + jnp.sum(jst.norm.logpdf(w, 0.0, 2.0))

    np.testing.assert_allclose(fg.grad(ours)(w0), jax.grad(theirs)(w0), rtol=1e-10)


def test_on_the_standin_device(standin):
    x, mu = np.array([0.3, 1.2, 2.5]), np.array([0.1, 0.2, -0.3])
    for fun in (lambda m, x: stats.norm.logpdf(x, m, 1.5), lambda m, x: stats.t.cdf(x, 3.0, m),
                lambda m, x: stats.gamma.logpdf(x, 2.0, m),
                lambda m, x: stats.poisson.logpmf(fnp.floor(x), fnp.exp(m))):
        want = fg.grad(lambda m, fun=fun: fnp.sum(fun(m, x)))(mu)
        got = fg.grad(lambda m, fun=fun: fnp.sum(fun(m, standin.put(x))))(standin.put(mu))
        assert type(got) is standin.StrictArray
        np.testing.assert_allclose(standin.get(got), want, rtol=1e-12)


def test_parameters_broadcast_and_their_gradients_sum_back():
    # autograd's test_scipy.py idea: every argument an array of its own broadcastable shape
    rng = np.random.default_rng(5)
    x, loc = rng.standard_normal((3, 4)), rng.standard_normal(4)
    scale, df = 0.5 + rng.uniform(size=(3, 1)), 2.0 + rng.uniform(size=(1, 4))
    np.testing.assert_allclose(stats.t.logpdf(x, df, loc, scale), st.t.logpdf(x, df, loc, scale))
    for fun, args in [(stats.norm.logpdf, (x, loc, scale)), (stats.norm.cdf, (x, loc, scale)),
                      (stats.t.logpdf, (x, df, loc, scale)),
                      (stats.gamma.logpdf, (np.abs(x) + 0.5, df, 0.0, scale))]:
        fg.check_grads(fun, args, order=2, modes=("rev", "fwd"))
        _, vjp_fn = fg.vjp(fun, *args)
        for a, g in zip(args, vjp_fn(np.ones((3, 4))), strict=True):
            assert np.shape(g) == np.shape(a)


def test_discrete_ppf_on_the_standin_device(standin):
    q, loc = np.array([0.1, 0.5, 0.9]), np.array([0.5, 1.0, 2.0])
    got = stats.poisson.ppf(standin.put(q), 2.5, standin.put(loc))
    assert type(got) is standin.StrictArray
    np.testing.assert_array_equal(standin.get(got), st.poisson.ppf(q, 2.5, loc))
    g = fg.grad(lambda l: fnp.sum(stats.binom.ppf(standin.put(q), 5, 0.3, l)))(standin.put(loc))
    assert type(g) is standin.StrictArray
    np.testing.assert_array_equal(standin.get(g), np.ones(3))
