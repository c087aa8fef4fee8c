"""funcgrad.scipy.special beyond the primitive table (tests/rows_scipy.py).

The table checks every function at order 2 in both modes by finite
differences, on the strict stand-in device and on Dask.  Here: values of the
compositions against SciPy, derivatives against JAX's (and autograd's),
the refusals of derivatives SciPy's functions have none for, the dispatch of
other namespaces, and that ``import funcgrad`` does not import SciPy.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest
import scipy.special as ss

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import _backend, special

RNG = np.random.default_rng(0)


def egrad(f):
    """The elementwise derivative of an elementwise ``f`` (autograd's ``elementwise_grad``)."""
    return lambda x: fg.grad(lambda x: fnp.sum(f(x)))(x)


POS = 0.5 + RNG.uniform(0, 3, 5)
UNIT = RNG.uniform(0.1, 0.9, 5)
REAL = RNG.standard_normal(5) * 2


def test_the_api_names_exist():
    names = ["gamma", "gammaln", "digamma", "psi", "polygamma", "beta", "betaln", "betainc", "gammainc", "gammaincc", "erf", "erfc", "erfinv", "erfcinv", "ndtr", "ndtri", "log_ndtr", "logit", "expit", "logsumexp", "xlogy", "xlog1py", "entr", "multigammaln", "i0", "i0e", "i1", "i1e", "j0", "j1", "y0", "y1", "zeta"]
    assert not [n for n in names if not hasattr(special, n)]
    assert special.psi is special.digamma
    assert set(special.__all__) == set(dir(special)) - {n for n in dir(special) if n[:2] == "__"}


def test_compositions_match_scipy():
    a = RNG.standard_normal((3, 4))
    b = RNG.uniform(0.1, 2, (3, 4))
    np.testing.assert_allclose(special.logsumexp(a), ss.logsumexp(a))
    np.testing.assert_allclose(special.logsumexp(a, axis=1, b=b), ss.logsumexp(a, axis=1, b=b))
    np.testing.assert_allclose(special.logsumexp(a, axis=(0, 1), keepdims=True),
                               ss.logsumexp(a, axis=(0, 1), keepdims=True))
    signed = special.logsumexp(a, axis=0, b=b - 1, return_sign=True)
    for got, want in zip(signed, ss.logsumexp(a, axis=0, b=b - 1, return_sign=True), strict=True):
        np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(special.multigammaln(POS + 2, 4), ss.multigammaln(POS + 2, 4))
    np.testing.assert_allclose(special.softmax(a), ss.softmax(a))
    np.testing.assert_allclose(special.log_softmax(a, axis=1), ss.log_softmax(a, axis=1))
    np.testing.assert_allclose(special.zeta(POS + 1), ss.zeta(POS + 1))
    np.testing.assert_allclose(special.polygamma(np.array([0, 1, 2, 3, 4]), POS),
                               ss.polygamma(np.array([0, 1, 2, 3, 4]), POS))
    with pytest.raises(ValueError, match="exceed"):
        special.multigammaln(np.array([0.5, 3.0]), 3)
    with pytest.raises(ValueError, match="positive integer"):
        special.multigammaln(3.0, 1.5)


def test_dtypes_are_kept():
    for dt in (np.float16, np.float32, np.float64):
        x = POS.astype(dt)
        for f in (special.gammaln, special.digamma, special.erf, special.i0e, special.ndtr):
            assert f(x).dtype == dt, (f.name, dt)
        assert special.polygamma(2, x).dtype == dt
        assert special.zeta(3.0, x).dtype == dt


# -- derivatives against references --------------------------------------------------------


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


# (ours, JAX's name, the other arguments as data before/after x, inputs): the derivative
# in x, and its derivative, elementwise.  JAX compiles each slowly: a few here, autograd's
# below and finite differences (the table) for the rest.
JAX_CASES = [
    (special.gammaln, "gammaln", (), (), POS),
    (special.log_ndtr, "log_ndtr", (), (), REAL - 3),
    (special.i1e, "i1e", (), (), REAL),
    (lambda y: special.xlogy(1.5, y), "xlogy", (1.5,), (), POS),
]


def test_first_and_second_derivatives_match_jax():
    jax = _jax()
    import jax.scipy.special as jss

    for ours, name, before, after, xs in JAX_CASES:
        def theirs(x, name=name, before=before, after=after):
            return getattr(jss, name)(*before, x, *after)

        d1 = jax.vmap(jax.grad(theirs))(xs)
        d2 = jax.vmap(jax.grad(jax.grad(theirs)))(xs)
        np.testing.assert_allclose(egrad(ours)(xs), d1, rtol=1e-8, err_msg=name)
        np.testing.assert_allclose(egrad(egrad(ours))(xs), d2,
                                   rtol=1e-7, err_msg=name)


def test_logsumexp_with_weights_matches_jax():
    jax = _jax()
    import jax.scipy.special as jss

    a, b = RNG.standard_normal((3, 4)), RNG.uniform(0.1, 2, (3, 4))
    got = fg.grad(lambda a, b: special.logsumexp(a, axis=1, b=b).sum(), (0, 1))(a, b)
    want = jax.grad(lambda a, b: jss.logsumexp(a, axis=1, b=b).sum(), (0, 1))(a, b)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10)


AUTOGRAD = ["gamma", "gammaln", "digamma", "erf", "erfc", "erfinv", "erfcinv", "expit", "logit",
            "i0", "i1", "j0", "j1", "y0", "y1"]


def test_derivatives_match_autograd():
    ag = pytest.importorskip("autograd")
    import autograd.scipy.special as asp

    domain = {"erfinv": UNIT - 0.5, "erfcinv": UNIT + 0.5, "logit": UNIT}
    for name in AUTOGRAD:
        xs = domain.get(name, POS)
        want = ag.elementwise_grad(ag.elementwise_grad(getattr(asp, name)))(xs)
        got = egrad(egrad(getattr(special, name)))(xs)
        np.testing.assert_allclose(got, want, rtol=1e-9, err_msg=name)
    for ours, theirs, xs in [
        (lambda x: special.polygamma(2, x), lambda x: asp.polygamma(2, x), POS),
        (lambda x: special.betainc(2.0, 3.5, x), lambda x: asp.betainc(2.0, 3.5, x), UNIT),
        (lambda x: special.gammainc(2.5, x), lambda x: asp.gammainc(2.5, x), POS),
        (lambda x: special.gammaincc(2.5, x), lambda x: asp.gammaincc(2.5, x), POS),
        (lambda x: special.iv(1.5, x), lambda x: asp.iv(1.5, x), POS),
        (lambda x: special.ive(1.5, x), lambda x: asp.ive(1.5, x), POS),
        (lambda x: special.multigammaln(x + 2, 3), lambda x: asp.multigammaln(x + 2, 3), POS),
    ]:
        np.testing.assert_allclose(egrad(ours)(xs), ag.elementwise_grad(theirs)(xs), rtol=1e-9)


def test_third_order_of_gammaln_is_polygamma_2():
    d3 = fg.grad(fg.grad(fg.grad(special.gammaln)))(2.5)
    np.testing.assert_allclose(d3, ss.polygamma(2, 2.5))
    _, t = fg.jvp(fg.grad(fg.grad(special.gammaln)), (2.5,), (1.0,))
    np.testing.assert_allclose(t, ss.polygamma(2, 2.5))


def test_xlogy_derivative_at_zero_follows_its_convention():
    # x log y is 0 where x == 0: its derivative in y is 0 there, even at y == 0
    assert fg.grad(special.xlogy, 1)(0.0, 0.0) == 0.0
    assert fg.grad(special.xlog1py, 1)(0.0, -1.0) == 0.0
    np.testing.assert_allclose(fg.grad(special.xlogy, 1)(2.0, 4.0), 0.5)


# -- refusals -------------------------------------------------------------------------------

REFUSED = [
    (lambda n: special.polygamma(n, 2.0), 1.0, "polygamma", "n"),
    (lambda a: special.betainc(a, 2.0, 0.5), 1.5, "betainc", "a"),
    (lambda b: special.betainc(2.0, b, 0.5), 1.5, "betainc", "b"),
    (lambda a: special.gammainc(a, 1.0), 1.5, "gammainc", "a"),
    (lambda a: special.gammaincc(a, 1.0), 1.5, "gammaincc", "a"),
    (lambda a: special.gammaincinv(a, 0.3), 1.5, "gammaincinv", "a"),
    (lambda df: special.stdtr(df, 0.3), 3.0, "stdtr", "df"),
    (lambda x: special.zeta(x, 2.0), 3.0, "zeta", "x"),
    (special.zeta, 3.0, "zeta", "x"),
    (lambda v: special.iv(v, 1.0), 1.5, "iv", "v"),
    (lambda v: special.jv(v, 1.0), 1.5, "jv", "v"),
]


@pytest.mark.parametrize("fun, x, name, arg", REFUSED, ids=[f"{n}-{a}" for _, _, n, a in REFUSED])
def test_a_derivative_scipy_has_none_for_is_refused_naming_the_argument(fun, x, name, arg):
    for run in (lambda: fg.grad(fun)(x), lambda: fg.jvp(fun, (x,), (1.0,))):
        with pytest.raises(TypeError, match=f"{name} is not differentiable in its argument "
                                            f"'{arg}'") as info:
            run()
        assert isinstance(info.value, fg.FuncgradError)


def test_the_other_arguments_stay_differentiable_beside_a_refused_one():
    # betainc's x, with a and b traced on another graph that is not differentiated
    g = fg.grad(lambda x: fg.grad(lambda a: special.betainc(2.0, 3.0, x) * a)(1.0))(0.4)
    np.testing.assert_allclose(g, np.exp(np.log(0.4) + 2 * np.log(0.6) - ss.betaln(2, 3)))


# -- devices, replay, pickling, imports -----------------------------------------------------


def test_a_registered_module_computes_for_its_namespace(standin):
    calls = []

    class Fake:
        @staticmethod
        def gammaln(x):
            calls.append("gammaln")
            return standin.put(ss.gammaln(standin.get(x)))

    _backend.register(standin.xp, "special", Fake)
    try:
        x = standin.put(POS)
        got = fg.grad(lambda x: fnp.sum(special.gammaln(x)))(x)
        assert calls == ["gammaln"]  # its derivative is digamma: back on the host
        np.testing.assert_allclose(standin.get(got), ss.digamma(POS))
    finally:
        _backend.unregister(standin.xp, "special")


def test_functions_without_a_device_module_run_on_the_host_and_come_back(standin):
    x = standin.put(POS)
    out = special.i1e(x)
    assert type(out) is standin.StrictArray
    np.testing.assert_allclose(standin.get(out), ss.i1e(POS))


def test_replayed_gradients_equal_eager_ones():
    f = fg.replay(fg.grad(lambda x: fnp.sum(special.gammaln(x) * special.erf(x))))
    for _ in range(2):
        np.testing.assert_array_equal(f(POS), fg.grad(
            lambda x: fnp.sum(special.gammaln(x) * special.erf(x)))(POS))


def test_primitives_pickle_by_reference():
    for f in (special.gammaln, special.polygamma, special.betainc, special._zeta):
        assert pickle.loads(pickle.dumps(f)) is f


def test_import_funcgrad_does_not_import_scipy():
    code = ("import sys, funcgrad; assert not [m for m in sys.modules if m.startswith('scipy')]; "
            "import funcgrad as fg; fg.scipy.special; assert 'scipy.special' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(__import__("pathlib").Path(
        __file__).resolve().parent.parent))
