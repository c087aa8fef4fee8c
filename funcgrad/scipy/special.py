"""``funcgrad.scipy.special``: SciPy's special functions, differentiable (layer 7).

Each elementwise function is a primitive computing SciPy's function on the
device of its inputs (``cupyx.scipy.special`` for CuPy); its derivative rules
are written in funcgrad functions -- ``gammaln``'s derivative is
:func:`digamma`, ``digamma``'s is ``polygamma(1, .)``, ``polygamma(n, .)``'s
is ``polygamma(n + 1, .)`` -- so every order works, in both modes.  Where
SciPy's function is not differentiable in an argument (an order ``n``, the
``a`` and ``b`` of :func:`betainc`), asking for that derivative raises a
:class:`~funcgrad.errors.FuncgradTypeError` naming the argument.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(fg.grad(special.gammaln)(4.0)) == float(special.digamma(4.0))
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy
import scipy.special as _sp

from .. import numpy as fnp
from ..batching import innermost_raw
from ..errors import FuncgradTypeError, FuncgradValueError
from ..numpy._core import lazy, raw, xp_of
from ..numpy._linear import bcast, unbroadcast
from ..numpy.reductions import normalize_axes
from ..primitive import BinaryPrimitive, Primitive, UnaryPrimitive, defjvp, defvjp
from ..translation import guarded
from . import _backend

__all__ = [
    "beta", "betainc", "betaincinv", "betaln", "digamma", "entr", "erf", "erfc", "erfcinv",
    "erfcx", "erfinv", "exp1", "expi", "expit", "expn", "gamma", "gammainc", "gammaincc",
    "gammainccinv", "gammaincinv", "gammaln", "gammasgn", "i0", "i0e", "i1", "i1e", "iv", "ive",
    "j0", "j1", "jv", "kl_div", "log_expit", "log_ndtr", "log_softmax", "loggamma", "logit",
    "logsumexp", "multigammaln", "ndtr", "ndtri", "poch", "polygamma", "psi", "rel_entr", "rgamma",
    "softmax", "spence", "stdtr", "stdtrit", "xlog1py", "xlogy", "y0", "y1", "yv", "zeta",
]


def __dir__() -> list:  # the public names only
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


# Python floats: a NumPy float64 constant would promote a float32 gradient.
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _special(name: str, nin: int, doc: str, scipy_name: str | None = None,
             qualname: str | None = None) -> Primitive:
    """A primitive computing ``scipy.special.<scipy_name>`` on the device of its inputs."""
    sname = scipy_name or name
    reference = getattr(_sp, sname)

    def impl(*args):
        return _backend.fit(_backend.call("special", sname, args), args)

    def numpy_impl(*args):
        return _backend.fit(reference(*args), args)

    impl.__name__ = impl.__qualname__ = name
    kind = {1: UnaryPrimitive, 2: BinaryPrimitive}.get(nin, Primitive)
    prim = kind(impl, name, numpy_impl=numpy_impl)
    prim.library = True
    prim.elementwise = True  # a ufunc: batched by broadcasting
    prim.__doc__ = doc
    prim.__module__ = __name__  # pickles by reference
    prim.__qualname__ = qualname or name
    return prim


def _refuse(fun: str, position: int, arg: str, why: str):
    """A rule that refuses the derivative in argument ``arg`` of ``fun``."""

    def rule(*_args: Any, **_kwargs: Any) -> Any:
        raise FuncgradTypeError(
            f"funcgrad.scipy.special.{fun} is not differentiable in its argument {arg!r} "
            f"(argument {position}): {why}"
        )

    return rule


def _rules(prim: Primitive, *derivatives: Any) -> None:
    """VJP and JVP rules from one partial derivative per argument (``d(ans, *args)``),
    or a refusing rule; each derivative is elementwise, broadcast to the output."""

    vjps, jvps = [], []
    for i, d in enumerate(derivatives):
        if d is None or getattr(d, "refuses", False):
            vjps.append(d)
            jvps.append(d)
            continue
        vjps.append(_vjp_of(d, i))
        jvps.append(_jvp_of(d))
    defvjp(prim, *vjps)
    defjvp(prim, *jvps)


def _shape(x: Any) -> tuple:
    return getattr(x, "shape", ())


def _vjp_of(d, i):
    return lambda g, ans, *args: unbroadcast(g * d(ans, *args), _shape(args[i]))


def _jvp_of(d):
    return lambda t, ans, *args: bcast(t * d(ans, *args), ans)


def _no(fun: str, position: int, arg: str, why: str):
    rule = _refuse(fun, position, arg, why)
    rule.refuses = True
    return rule


def _safe_ratio(x: Any, y: Any) -> Any:
    """``x / y``, 0 where ``x == 0`` (also where ``y`` is 0 there): the ``x log y``
    convention of :func:`xlogy`."""
    if type(x) in (int, float) or isinstance(x, numpy.generic):  # a constant
        return x / y if x != 0 else fnp.zeros_like(y)
    xv = raw(x)
    zero = xp_of(xv).equal(xv, 0)
    return fnp.where(zero, 0.0, x / fnp.where(zero, 1.0, y))


# -- gamma and related functions ------------------------------------------------

gamma = _special("gamma", 1, """The gamma function, ``Γ(x)`` (real or complex).

Its derivative is ``Γ(x) ψ(x)`` (:func:`digamma`).

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.gamma(5.0)), round(float(fg.grad(special.gamma)(1.0)), 6)
(24.0, -0.577216)
""")
gammaln = _special("gammaln", 1, """``log |Γ(x)|``; its derivative is :func:`digamma`.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.gammaln(10.0)), 6), round(float(fg.grad(special.gammaln)(1.0)), 6)
(12.801827, -0.577216)
""")
digamma = _special("digamma", 1, """The digamma function ``ψ(x) = d/dx log Γ(x)`` (also :data:`psi`).

Its derivative is ``polygamma(1, x)``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.digamma(1.0)), 6), round(float(fg.grad(special.digamma)(1.0)), 6)
(-0.577216, 1.644934)
""")
psi = digamma
polygamma = _special("polygamma", 2, """The ``n``-th derivative of :func:`digamma`, ``ψ⁽ⁿ⁾(x)``.

Differentiable in ``x`` (its derivative is ``polygamma(n + 1, x)``); the
order ``n`` is integer data, and a derivative in it raises ``TypeError``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.polygamma(1, 1.0)), 6)   # π² / 6
1.644934
>>> round(float(fg.grad(lambda x: special.polygamma(1, x))(1.0)), 6)
-2.404114
""")
beta = _special("beta", 2, """The beta function ``B(a, b) = Γ(a) Γ(b) / Γ(a + b)``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.beta(2.0, 3.0)), round(float(fg.grad(special.beta)(2.0, 3.0)), 6)
(0.08333333333333333, -0.090278)
""")
betaln = _special("betaln", 2, """``log |B(a, b)|``, differentiable in ``a`` and ``b``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.betaln(2.0, 3.0)), 6), round(float(fg.grad(special.betaln, 1)(2.0, 3.0)), 6)
(-2.484907, -0.583333)
""")
betainc = _special("betainc", 3, """The regularized incomplete beta function ``I_x(a, b)``.

Differentiable in ``x`` (its derivative is the beta density); SciPy's
function has no derivative in ``a`` and ``b`` that funcgrad computes, and
asking for one raises ``TypeError``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.betainc(2.0, 3.0, 0.5)), round(float(fg.grad(special.betainc, 2)(2.0, 3.0, 0.5)), 6)
(0.6875, 1.5)
""")
gammainc = _special("gammainc", 2, """The regularized lower incomplete gamma function ``P(a, x)``.

Differentiable in ``x``; a derivative in ``a`` raises ``TypeError``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.gammainc(1.0, 1.0)), 6), round(float(fg.grad(special.gammainc, 1)(1.0, 1.0)), 6)
(0.632121, 0.367879)
""")
gammaincc = _special("gammaincc", 2, """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``.

Differentiable in ``x``; a derivative in ``a`` raises ``TypeError``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.gammaincc(1.0, 1.0)), 6), round(float(fg.grad(special.gammaincc, 1)(1.0, 1.0)), 6)
(0.367879, -0.367879)
""")

_rules(gamma, lambda ans, x: ans * digamma(x))
_rules(gammaln, lambda ans, x: digamma(x))
_rules(digamma, lambda ans, x: polygamma(1, x))
_rules(
    polygamma,
    _no("polygamma", 0, "n", "the order n is an integer"),
    lambda ans, n, x: polygamma(n + 1, x),
)
_rules(
    beta,
    lambda ans, a, b: ans * (digamma(a) - digamma(a + b)),
    lambda ans, a, b: ans * (digamma(b) - digamma(a + b)),
)
_rules(
    betaln,
    lambda ans, a, b: digamma(a) - digamma(a + b),
    lambda ans, a, b: digamma(b) - digamma(a + b),
)
_BETAINC_AB = "its derivative in the shape parameters a and b is not implemented"
_rules(
    betainc,
    _no("betainc", 0, "a", _BETAINC_AB),
    _no("betainc", 1, "b", _BETAINC_AB),
    lambda ans, a, b, x: fnp.exp(xlogy(a - 1, x) + xlog1py(b - 1, -x) - betaln(a, b)),
)
_GAMMAINC_A = "its derivative in the shape parameter a is not implemented"


def _gamma_density(a, x):
    return fnp.exp(xlogy(a - 1, x) - x - gammaln(a))


_rules(gammainc, _no("gammainc", 0, "a", _GAMMAINC_A), lambda ans, a, x: _gamma_density(a, x))
_rules(gammaincc, _no("gammaincc", 0, "a", _GAMMAINC_A), lambda ans, a, x: -_gamma_density(a, x))

gammaincinv = _special("gammaincinv", 2, """The inverse of :func:`gammainc` in ``x``: ``P(a, gammaincinv(a, q)) = q``.

Differentiable in ``q`` (one over the gamma density at the result); a
derivative in ``a`` raises ``TypeError``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.gammaincinv(1.0, 0.5)), 6), round(float(fg.grad(special.gammaincinv, 1)(1.0, 0.5)), 6)
(0.693147, 2.0)
""")
gammainccinv = _special("gammainccinv", 2, """The inverse of :func:`gammaincc` in ``x``.

Differentiable in ``q``; a derivative in ``a`` raises ``TypeError``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.gammainccinv(1.0, 0.5)), 6), round(float(fg.grad(special.gammainccinv, 1)(1.0, 0.5)), 6)
(0.693147, -2.0)
""")
betaincinv = _special("betaincinv", 3, """The inverse of :func:`betainc` in ``x``: ``I(a, b, betaincinv(a, b, q)) = q``.

Differentiable in ``q``; a derivative in ``a`` or ``b`` raises ``TypeError``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.betaincinv(1.0, 1.0, 0.25)), float(fg.grad(special.betaincinv, 2)(1.0, 1.0, 0.25))
(0.25, 1.0)
""")
_rules(
    gammaincinv,
    _no("gammaincinv", 0, "a", _GAMMAINC_A),
    lambda ans, a, q: 1 / _gamma_density(a, ans),
)
_rules(
    gammainccinv,
    _no("gammainccinv", 0, "a", _GAMMAINC_A),
    lambda ans, a, q: -1 / _gamma_density(a, ans),
)
_rules(
    betaincinv,
    _no("betaincinv", 0, "a", _BETAINC_AB),
    _no("betaincinv", 1, "b", _BETAINC_AB),
    lambda ans, a, b, q: fnp.exp(betaln(a, b) - xlogy(a - 1, ans) - xlog1py(b - 1, -ans)),
)

# -- error function and the normal distribution ---------------------------------

erf = _special("erf", 1, """The error function ``erf(x) = 2/√π ∫₀ˣ exp(-t²) dt`` (real or complex).

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.erf(0.0)), round(float(fg.grad(special.erf)(0.0)), 6)   # 2/√π
(0.0, 1.128379)
""")
erfc = _special("erfc", 1, """``erfc(x) = 1 - erf(x)``, accurate where ``erf(x)`` is near 1.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.erfc(0.0)), round(float(fg.grad(special.erfc)(0.0)), 6)
(1.0, -1.128379)
""")
erfcx = _special("erfcx", 1, """The scaled complementary error function ``exp(x²) erfc(x)``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.erfcx(0.0)), round(float(fg.grad(special.erfcx)(0.0)), 6)
(1.0, -1.128379)
""")
erfinv = _special("erfinv", 1, """The inverse of :func:`erf` on ``(-1, 1)``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.erfinv(0.0)), round(float(fg.grad(special.erfinv)(0.0)), 6)   # √π/2
(0.0, 0.886227)
""")
erfcinv = _special("erfcinv", 1, """The inverse of :func:`erfc` on ``(0, 2)``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> abs(float(special.erfcinv(1.0))), round(float(fg.grad(special.erfcinv)(1.0)), 6)
(0.0, -0.886227)
""")
ndtr = _special("ndtr", 1, """The standard normal distribution function ``Φ(x)``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.ndtr(0.0)), round(float(fg.grad(special.ndtr)(0.0)), 6)   # 1/√(2π)
(0.5, 0.398942)
""")
ndtri = _special("ndtri", 1, """The inverse of :func:`ndtr`: the standard normal quantile function.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.ndtri(0.5)), round(float(fg.grad(special.ndtri)(0.5)), 6)   # √(2π)
(0.0, 2.506628)
""")
log_ndtr = _special("log_ndtr", 1, """``log Φ(x)``, accurate far into the lower tail.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.log_ndtr(-30.0)), 4), round(float(fg.grad(special.log_ndtr)(-30.0)), 4)
(-454.3212, 30.0333)
""")

_rules(erf, lambda ans, x: _TWO_OVER_SQRT_PI * fnp.exp(-x * x))
_rules(erfc, lambda ans, x: -_TWO_OVER_SQRT_PI * fnp.exp(-x * x))
_rules(erfcx, lambda ans, x: 2 * x * ans - _TWO_OVER_SQRT_PI)
_rules(erfinv, lambda ans, x: _SQRT_PI_OVER_TWO * fnp.exp(ans * ans))
_rules(erfcinv, lambda ans, x: -_SQRT_PI_OVER_TWO * fnp.exp(ans * ans))
_rules(ndtr, lambda ans, x: fnp.exp(-0.5 * x * x - _LOG_SQRT_2PI))
_rules(ndtri, lambda ans, x: _SQRT_2PI * fnp.exp(0.5 * ans * ans))
_rules(log_ndtr, lambda ans, x: fnp.exp(-0.5 * x * x - _LOG_SQRT_2PI - ans))

stdtr = _special("stdtr", 2, """Student's t distribution function with ``df`` degrees of freedom at ``t``.

Differentiable in ``t`` (the t density); a derivative in ``df`` raises ``TypeError``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.stdtr(3.0, 0.0)), round(float(fg.grad(special.stdtr, 1)(3.0, 0.0)), 6)
(0.5, 0.367553)
""")
stdtrit = _special("stdtrit", 2, """The inverse of :func:`stdtr` in ``t``: the t quantile function.

Differentiable in ``p``; a derivative in ``df`` raises ``TypeError``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> abs(round(float(special.stdtrit(3.0, 0.5)), 12)), round(float(fg.grad(special.stdtrit, 1)(3.0, 0.5)), 6)
(0.0, 2.720699)
""")
_DF = "its derivative in the degrees of freedom df is not implemented"


def _t_logdensity(df, t):
    return (gammaln(0.5 * (df + 1)) - gammaln(0.5 * df) - 0.5 * fnp.log(df * math.pi)
            - 0.5 * (df + 1) * fnp.log1p(t * t / df))


_rules(stdtr, _no("stdtr", 0, "df", _DF), lambda ans, df, t: fnp.exp(_t_logdensity(df, t)))
_rules(stdtrit, _no("stdtrit", 0, "df", _DF),
       lambda ans, df, p: fnp.exp(-_t_logdensity(df, ans)))

# -- logistic functions -----------------------------------------------------------

logit = _special("logit", 1, """``log(p / (1 - p))``, the inverse of :func:`expit`.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.logit(0.5)), float(fg.grad(special.logit)(0.5))
(0.0, 4.0)
""")
expit = _special("expit", 1, """The logistic sigmoid ``1 / (1 + exp(-x))``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.expit(0.0)), float(fg.grad(special.expit)(0.0))
(0.5, 0.25)
""")
log_expit = _special("log_expit", 1, """``log(expit(x))``, accurate for large ``|x|``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.log_expit(-1000.0)), float(fg.grad(special.log_expit)(-1000.0))
(-1000.0, 1.0)
""")

_rules(logit, lambda ans, x: 1 / (x * (1 - x)))
_rules(expit, lambda ans, x: ans * (1 - ans))
_rules(log_expit, lambda ans, x: expit(-x))

# -- x log y and entropies ----------------------------------------------------------

xlogy = _special("xlogy", 2, """``x * log(y)``, 0 where ``x == 0`` (also where ``y == 0`` there).

Its derivative in ``x`` is ``log(y)`` and in ``y`` is ``x / y``, 0
where ``x == 0``, as the value's convention asks.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.xlogy(0.0, 0.0)), float(fg.grad(special.xlogy, 1)(0.0, 0.0))
(0.0, 0.0)
""")
xlog1py = _special("xlog1py", 2, """``x * log1p(y)``, 0 where ``x == 0``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.xlog1py(0.0, -1.0)), float(fg.grad(special.xlog1py, 1)(2.0, 1.0))
(0.0, 1.0)
""")
entr = _special("entr", 1, """The elementwise entropy ``-x log x`` (0 at 0, ``-inf`` below).

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.entr(1.0)), float(fg.grad(special.entr)(1.0))
(-0.0, -1.0)
""")
rel_entr = _special("rel_entr", 2, """The relative entropy ``x log(x / y)`` (0 where ``x == 0 <= y``).

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.rel_entr(1.0, 1.0)), float(fg.grad(special.rel_entr, 1)(1.0, 2.0))
(0.0, -0.5)
""")
kl_div = _special("kl_div", 2, """``x log(x / y) - x + y`` (0 where ``x == 0 <= y``).

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.kl_div(1.0, 1.0)), float(fg.grad(special.kl_div, 1)(1.0, 2.0))
(0.0, 0.5)
""")

_rules(xlogy, lambda ans, x, y: fnp.log(y), lambda ans, x, y: _safe_ratio(x, y))
_rules(
    xlog1py,
    lambda ans, x, y: fnp.log1p(y),
    lambda ans, x, y: _safe_ratio(x, 1 + y),
)
_rules(entr, lambda ans, x: -(fnp.log(x) + 1))
_rules(
    rel_entr,
    lambda ans, x, y: fnp.log(x) - fnp.log(y) + 1,
    lambda ans, x, y: -_safe_ratio(x, y),
)
_rules(
    kl_div,
    lambda ans, x, y: fnp.log(x) - fnp.log(y),
    lambda ans, x, y: 1 - _safe_ratio(x, y),
)

# -- Bessel functions ----------------------------------------------------------------

_ORDER = "the order v is data"

i0 = _special("i0", 1, """The modified Bessel function of the first kind of order 0; ``i0' = i1``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.i0(0.0)), float(fg.grad(special.i0)(0.0))
(1.0, 0.0)
""")
i1 = _special("i1", 1, """The modified Bessel function of the first kind of order 1.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.i1(0.0)), float(fg.grad(special.i1)(0.0))
(0.0, 0.5)
""")
i0e = _special("i0e", 1, """``exp(-|x|) i0(x)``, the exponentially scaled :func:`i0`.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.i0e(0.0)), round(float(fg.grad(special.i0e)(1.0)), 6)
(1.0, -0.257849)
""")
i1e = _special("i1e", 1, """``exp(-|x|) i1(x)``, the exponentially scaled :func:`i1`.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.i1e(0.0)), round(float(fg.grad(special.i1e)(1.0)), 6)
(0.0, 0.049939)
""")
iv = _special("iv", 2, """The modified Bessel function of the first kind of real order ``v``.

Differentiable in ``x``: ``iv'(v, x) = (iv(v - 1, x) + iv(v + 1, x)) / 2``;
the order ``v`` is data.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.iv(1.0, 0.0)), float(fg.grad(lambda x: special.iv(1.0, x))(0.0))
(0.0, 0.5)
""")
ive = _special("ive", 2, """``exp(-|x|) iv(v, x)``, the exponentially scaled :func:`iv`.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.ive(0.0, 0.0)), round(float(fg.grad(lambda x: special.ive(0.0, x))(1.0)), 6)
(1.0, -0.257849)
""")
j0 = _special("j0", 1, """The Bessel function of the first kind of order 0; ``j0' = -j1``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.j0(0.0)), float(fg.grad(special.j0)(0.0))
(1.0, -0.0)
""")
j1 = _special("j1", 1, """The Bessel function of the first kind of order 1.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.j1(0.0)), float(fg.grad(special.j1)(0.0))
(0.0, 0.5)
""")
jv = _special("jv", 2, """The Bessel function of the first kind of real order ``v``.

Differentiable in ``x``: ``jv'(v, x) = (jv(v - 1, x) - jv(v + 1, x)) / 2``;
the order ``v`` is data.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.jv(1.0, 0.0)), float(fg.grad(lambda x: special.jv(1.0, x))(0.0))
(0.0, 0.5)
""")
y0 = _special("y0", 1, """The Bessel function of the second kind of order 0; ``y0' = -y1``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.y0(1.0)), 6), round(float(fg.grad(special.y0)(1.0)), 6)
(0.088257, 0.781213)
""")
y1 = _special("y1", 1, """The Bessel function of the second kind of order 1.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.y1(1.0)), 6), round(float(fg.grad(special.y1)(1.0)), 6)
(-0.781213, 0.86947)
""")
yv = _special("yv", 2, """The Bessel function of the second kind of real order ``v``.

Differentiable in ``x``: ``yv'(v, x) = (yv(v - 1, x) - yv(v + 1, x)) / 2``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(fg.grad(lambda x: special.yv(1.0, x))(1.0)), 6)
0.86947
""")


def _sign(x):
    v = raw(x)
    return xp_of(v).sign(v)


_rules(i0, lambda ans, x: i1(x))
_rules(i1, lambda ans, x: 0.5 * (i0(x) + iv(2.0, x)))
_rules(iv, _no("iv", 0, "v", _ORDER), lambda ans, v, x: 0.5 * (iv(v - 1, x) + iv(v + 1, x)))
_rules(i0e, lambda ans, x: i1e(x) - _sign(x) * ans)
_rules(i1e, lambda ans, x: 0.5 * (i0e(x) + ive(2.0, x)) - _sign(x) * ans)
_rules(
    ive,
    _no("ive", 0, "v", _ORDER),
    lambda ans, v, x: 0.5 * (ive(v - 1, x) + ive(v + 1, x)) - _sign(x) * ans,
)
_rules(j0, lambda ans, x: -j1(x))
_rules(j1, lambda ans, x: 0.5 * (j0(x) - jv(2.0, x)))
_rules(jv, _no("jv", 0, "v", _ORDER), lambda ans, v, x: 0.5 * (jv(v - 1, x) - jv(v + 1, x)))
_rules(y0, lambda ans, x: -y1(x))
_rules(y1, lambda ans, x: 0.5 * (y0(x) - yv(2.0, x)))
_rules(yv, _no("yv", 0, "v", _ORDER), lambda ans, v, x: 0.5 * (yv(v - 1, x) - yv(v + 1, x)))

# -- more of SciPy's functions ---------------------------------------------------------------

rgamma = _special("rgamma", 1, """``1 / Γ(x)``, finite (zero) at the poles of ``Γ``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.rgamma(1.0)), round(float(fg.grad(special.rgamma)(1.0)), 6)
(1.0, 0.577216)
""")
loggamma = _special("loggamma", 1, """The principal branch of ``log Γ(x)`` (real for ``x > 0``,
complex for complex ``x``); its derivative is :func:`digamma`.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(fg.grad(special.loggamma)(1.0)), 6)
-0.577216
""")
gammasgn = _special("gammasgn", 1, """The sign of ``Γ(x)``: piecewise constant, its derivative 0.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.gammasgn(-0.5)), float(fg.grad(special.gammasgn)(-0.5))
(-1.0, 0.0)
""")
poch = _special("poch", 2, """The Pochhammer symbol ``(z)_m = Γ(z + m) / Γ(z)``, differentiable in
``z`` and ``m``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> float(special.poch(2.0, 3.0)), round(float(fg.grad(special.poch, 1)(2.0, 3.0)), 6)
(24.0, 36.146824)
""")
exp1 = _special("exp1", 1, """The exponential integral ``E₁(x) = ∫₁^∞ exp(-x t) / t dt``; its
derivative is ``-exp(-x) / x``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.exp1(1.0)), 6), round(float(fg.grad(special.exp1)(1.0)), 6)
(0.219384, -0.367879)
""")
expi = _special("expi", 1, """The exponential integral ``Ei(x)``; its derivative is ``exp(x) / x``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.expi(1.0)), 6), round(float(fg.grad(special.expi)(1.0)), 6)
(1.895118, 2.718282)
""")
expn = _special("expn", 2, """The generalized exponential integral ``E_n(x)`` of integer order ``n``.

Differentiable in ``x`` (``-E_{n-1}(x)``); the order ``n`` is data.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(fg.grad(lambda x: special.expn(2, x))(1.0)), 6)   # -E₁(1)
-0.219384
""")
spence = _special("spence", 1, """Spence's function (the dilogarithm ``Li₂(1 - z)``); its
derivative is ``log(z) / (1 - z)``.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special
>>> round(float(special.spence(1.0)), 6), round(float(fg.grad(special.spence)(2.0)), 6)
(0.0, -0.693147)
""")

_rules(rgamma, lambda ans, x: -ans * digamma(x))
_rules(loggamma, lambda ans, x: digamma(x))
_rules(gammasgn, lambda ans, x: fnp.zeros_like(x))
_rules(
    poch,
    lambda ans, z, m: ans * (digamma(z + m) - digamma(z)),
    lambda ans, z, m: ans * digamma(z + m),
)
_rules(exp1, lambda ans, x: -fnp.exp(-x) / x)
_rules(expi, lambda ans, x: fnp.exp(x) / x)
_rules(expn, _no("expn", 0, "n", "the order n is an integer"),
       lambda ans, n, x: -expn(n - 1, x))
_rules(spence, lambda ans, z: fnp.log(z) / (1 - z))

# -- zeta ---------------------------------------------------------------------------------

_zeta = _special("zeta", 2, """The Hurwitz zeta function (the primitive behind :func:`zeta`).

>>> from funcgrad.scipy import special
>>> round(float(special.zeta(2.0, 1.0)), 6)
1.644934
""", qualname="_zeta")
_rules(
    _zeta,
    _no("zeta", 0, "x", "its derivative in the exponent x is not implemented"),
    lambda ans, x, q: -x * _zeta(x + 1, q),
)


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function ``ζ(x, q) = Σₖ (k + q)^-x`` (Riemann's when ``q`` is None).

    Differentiable in ``q`` (``-x ζ(x + 1, q)``); a derivative in the exponent
    ``x`` raises ``TypeError``.

    >>> import funcgrad as fg
    >>> from funcgrad.scipy import special
    >>> round(float(special.zeta(2.0)), 6), round(float(fg.grad(special.zeta, 1)(2.0, 1.0)), 6)
    (1.644934, -2.404114)
    """
    return _zeta(x, 1.0 if q is None else q)


# -- compositions ---------------------------------------------------------------------------


def multigammaln(a: Any, d: int) -> Any:
    """The log of the multivariate gamma function of dimension ``d``, differentiable in ``a``.

    ``log Γ_d(a) = d(d-1)/4 log π + Σ_{j<d} gammaln(a - j/2)``; every entry of
    ``a`` must exceed ``(d - 1) / 2``, as SciPy requires.

    >>> import funcgrad as fg
    >>> from funcgrad.scipy import special
    >>> round(float(special.multigammaln(3.0, 2)), 6)
    1.550195
    """
    if isinstance(d, bool) or not isinstance(d, (int, numpy.integer)) or d < 1:
        raise FuncgradValueError(
            f"multigammaln: the dimension d must be a positive integer, got {d!r}"
        )
    d = int(d)
    if not lazy(a):
        v = raw(fnp.asarray(a)) if isinstance(a, (list, tuple)) else raw(a)
        v = innermost_raw(v)  # under fg.vmap: every example's values at once
        if bool(xp_of(v).any(xp_of(v).less_equal(v, 0.5 * (d - 1)))):
            raise FuncgradValueError(
                f"multigammaln: every entry of a must exceed (d - 1) / 2 = {0.5 * (d - 1)}"
            )
    out = gammaln(a)
    for j in range(1, d):
        out = out + gammaln(a - 0.5 * j)
    return out + 0.25 * d * (d - 1) * math.log(math.pi)


def _max_shift(a: Any, axes: tuple) -> Any:
    """The max of ``a`` over ``axes`` (kept), raw, 0 where not finite."""
    v = raw(fnp.asarray(a))
    xp = xp_of(v)
    if v.size == 0:
        return xp.zeros(tuple(1 if i in axes else n for i, n in enumerate(v.shape)), v.dtype)
    m = xp.max(v, axis=axes, keepdims=True)
    return xp.where(xp.isfinite(m), m, xp.zeros((), m.dtype))


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """``log(sum(b * exp(a), axis))`` without overflow, as SciPy's.

    ``b`` weights the terms (differentiable too); with ``return_sign`` the
    result is ``(log|s|, sign(s))`` for a sum ``s`` that may be negative, else
    a negative sum gives NaN.

    >>> import numpy, funcgrad as fg
    >>> from funcgrad.scipy import special
    >>> float(special.logsumexp(numpy.array([1000.0, 1000.0])))
    1000.6931471805599
    >>> fg.grad(special.logsumexp)(numpy.array([0.0, 0.0]))
    array([0.5, 0.5])
    """
    a = fnp.asarray(a) if isinstance(a, (list, tuple)) else a
    ndim = len(_shape(a))

    axes = normalize_axes(axis, ndim)
    m = _max_shift(a, axes)
    e = fnp.exp(a - m)
    if b is not None:
        e = fnp.multiply(e, b)
    s = fnp.sum(e, axis=axes, keepdims=True)
    sv = raw(s)
    xp = xp_of(sv)
    if return_sign:
        sign = xp.sign(sv)
        out = fnp.log(fnp.abs(s)) + m
    else:
        out = fnp.log(s) + m
    if not keepdims:
        out = fnp.squeeze(out, axis=axes) if axes else out
        if return_sign:
            sign = xp.squeeze(sign, axis=axes) if axes else sign
    return (out, sign) if return_sign else out


def softmax(x: Any, axis: Any = None) -> Any:
    """``exp(x - logsumexp(x, axis))``: SciPy's softmax (over every axis by default).

    >>> import numpy
    >>> from funcgrad.scipy import special
    >>> special.softmax(numpy.array([0.0, 0.0]))
    array([0.5, 0.5])
    """
    return fnp.exp(log_softmax(x, axis))


def log_softmax(x: Any, axis: Any = None) -> Any:
    """``x - logsumexp(x, axis, keepdims=True)`` (over every axis by default).

    >>> import numpy
    >>> from funcgrad.scipy import special
    >>> special.log_softmax(numpy.array([0.0, 1000.0]))
    array([-1000.,     0.])
    """
    return x - logsumexp(x, axis=axis, keepdims=True)


for _name in ("multigammaln", "logsumexp", "softmax", "log_softmax", "zeta"):
    globals()[_name] = guarded(globals()[_name], _name)
del _name
