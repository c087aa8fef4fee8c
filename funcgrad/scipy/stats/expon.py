"""The exponential distribution (``funcgrad.scipy.stats.expon``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import expon
>>> bool(numpy.allclose(fg.grad(expon.logpdf, 1)(2.0, 0.5, 1.5),
...                     1 / 1.5))
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ._util import NEG_INF, document, promote, public, safe, where

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    z = (x - loc) / scale
    return where(z >= 0, -z - fnp.log(scale), NEG_INF)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    z = (x - loc) / scale
    return where(z >= 0, -fnp.expm1(-safe(z >= 0, z, 0.0)), 0.0)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logsf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    z = (x - loc) / scale
    return where(z >= 0, -z, 0.0)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc - scale * fnp.log1p(-q)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc - scale * fnp.log(q)


document(globals(), "expon", {'cdf': ('The distribution function, ``P(X <= x)``.', '1.5, 0.5, 2.0'), 'isf': ('The inverse of :func:`sf`.', '0.3, 0.5, 2.0'), 'logcdf': ('``log cdf``.', '1.5, 0.5, 2.0'), 'logpdf': ('``log pdf(x)``: the log density.', '1.5, 0.5, 2.0'), 'logsf': ('``log sf``.', '1.5, 0.5, 2.0'), 'pdf': ('The density.', '1.5, 0.5, 2.0'), 'ppf': ('The quantile function, the inverse of :func:`cdf`.', '0.3, 0.5, 2.0'), 'sf': ('The survival function, ``1 - cdf``.', '1.5, 0.5, 2.0')})
public(globals(), __all__)
