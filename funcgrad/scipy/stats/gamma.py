"""The gamma distribution of shape ``a`` (``funcgrad.scipy.stats.gamma``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import gamma
>>> bool(numpy.allclose(fg.grad(gamma.logpdf, 1)(2.0, 3.0),
...                     scipy.special.digamma(3.0) * -1 + numpy.log(2.0)))
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._util import NEG_INF, document, promote, public, safe, where

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = promote(x, a, loc, scale)
    z = (x - loc) / scale
    inside = z >= 0
    zs = safe(inside, z, 1.0)
    return where(inside, special.xlogy(a - 1, zs) - zs - special.gammaln(a) - fnp.log(scale),
                 NEG_INF)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, a, loc, scale))


def _z(x, loc, scale):
    z = (x - loc) / scale
    return safe(z >= 0, z, 0.0)


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = promote(x, a, loc, scale)
    return special.gammainc(a, _z(x, loc, scale))


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = promote(x, a, loc, scale)
    return special.gammaincc(a, _z(x, loc, scale))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(sf(x, a, loc, scale))


def ppf(q: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, a, loc, scale = promote(q, a, loc, scale)
    return loc + scale * special.gammaincinv(a, q)


def isf(q: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, a, loc, scale = promote(q, a, loc, scale)
    return loc + scale * special.gammainccinv(a, q)


document(globals(), "gamma", {'cdf': ('The distribution function, ``P(X <= x)``.', '1.5, 3.0, 0.5, 2.0'), 'isf': ('The inverse of :func:`sf`.', '0.3, 3.0, 0.5, 2.0'), 'logcdf': ('``log cdf``.', '1.5, 3.0, 0.5, 2.0'), 'logpdf': ('``log pdf(x)``: the log density.', '1.5, 3.0, 0.5, 2.0'), 'logsf': ('``log sf``.', '1.5, 3.0, 0.5, 2.0'), 'pdf': ('The density.', '1.5, 3.0, 0.5, 2.0'), 'ppf': ('The quantile function, the inverse of :func:`cdf`.', '0.3, 3.0, 0.5, 2.0'), 'sf': ('The survival function, ``1 - cdf``.', '1.5, 3.0, 0.5, 2.0')})
public(globals(), __all__)
