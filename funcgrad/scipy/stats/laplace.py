"""The Laplace (double exponential) distribution (``funcgrad.scipy.stats.laplace``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import laplace
>>> bool(numpy.allclose(fg.grad(laplace.logpdf, 0)(2.0, 0.5, 1.5),
...                     -1 / 1.5))
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ._util import document, promote, public, safe, where

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return -fnp.abs((x - loc) / scale) - fnp.log(2 * scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, loc, scale))


def _lower(z: Any) -> Any:
    """``P(Z <= z)`` of the standard Laplace distribution, each side smooth."""
    low = z < 0
    return where(low, 0.5 * fnp.exp(safe(low, z, 0.0)), 1 - 0.5 * fnp.exp(-safe(low, 0.0, z)))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return _lower((x - loc) / scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return _lower((loc - x) / scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(sf(x, loc, scale))


def _quantile(q: Any) -> Any:
    low = q < 0.5
    return where(low, fnp.log(2 * safe(low, q, 0.25)), -fnp.log(2 - 2 * safe(low, 0.75, q)))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc + scale * _quantile(q)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc - scale * _quantile(q)


document(globals(), "laplace", {'cdf': ('The distribution function, ``P(X <= x)``.', '1.5, 0.5, 2.0'), 'isf': ('The inverse of :func:`sf`.', '0.3, 0.5, 2.0'), 'logcdf': ('``log cdf``.', '-1.5, 0.5, 2.0'), 'logpdf': ('``log pdf(x)``: the log density.', '1.5, 0.5, 2.0'), 'logsf': ('``log sf``.', '1.5, 0.5, 2.0'), 'pdf': ('The density.', '1.5, 0.5, 2.0'), 'ppf': ('The quantile function, the inverse of :func:`cdf`.', '0.3, 0.5, 2.0'), 'sf': ('The survival function, ``1 - cdf``.', '1.5, 0.5, 2.0')})
public(globals(), __all__)
