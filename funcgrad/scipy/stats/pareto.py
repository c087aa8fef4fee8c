"""The Pareto distribution of shape ``b`` on ``x >= loc + scale`` (``funcgrad.scipy.stats.pareto``).

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy.stats import pareto
>>> bool(numpy.allclose(fg.grad(pareto.logpdf)(2.0, 3.0), -2.0))   # -(b + 1) / x
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ._util import NEG_INF, continuous_docs, document, promote, public, safe, where

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


document(globals(), "pareto", continuous_docs("2.5, 3.0, 0.2, 1.5", "0.3, 3.0, 0.2, 1.5"))
public(globals(), __all__)
