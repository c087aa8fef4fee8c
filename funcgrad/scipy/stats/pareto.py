"""The Pareto distribution of shape ``b`` on ``x >= loc + scale`` (``funcgrad.scipy.stats.pareto``).

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy.stats import pareto
>>> bool(numpy.allclose(fg.grad(pareto.logpdf)(2.0, 3.0), -2.0))   # -(b + 1) / x
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ._util import NEG_INF, document, promote, public, safe, where

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def _z(x, loc, scale):
    z = (x - loc) / scale
    inside = z >= 1
    return inside, safe(inside, z, 1.0)


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = promote(x, b, loc, scale)
    inside, z = _z(x, loc, scale)
    return where(inside, fnp.log(b) - (b + 1) * fnp.log(z) - fnp.log(scale), NEG_INF)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, b, loc, scale))


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = promote(x, b, loc, scale)
    inside, z = _z(x, loc, scale)
    return where(inside, -b * fnp.log(z), 0.0)


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logsf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return -fnp.expm1(logsf(x, b, loc, scale))


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(cdf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, b, loc, scale = promote(q, b, loc, scale)
    return loc + scale * fnp.exp(-fnp.log1p(-q) / b)


def isf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, b, loc, scale = promote(q, b, loc, scale)
    return loc + scale * fnp.exp(-fnp.log(q) / b)


_A = "2.5, 3.0, 0.2, 1.5"
_Q = "0.3, 3.0, 0.2, 1.5"
document(globals(), "pareto", {
    "logpdf": ("``log pdf(x)``: the log density.", _A), "pdf": ("The density.", _A),
    "cdf": ("The distribution function, ``P(X <= x)``.", _A), "logcdf": ("``log cdf``.", _A),
    "sf": ("The survival function, ``1 - cdf``.", _A), "logsf": ("``log sf``.", _A),
    "ppf": ("The quantile function, the inverse of :func:`cdf`.", _Q),
    "isf": ("The inverse of :func:`sf`.", _Q),
})
public(globals(), __all__)
