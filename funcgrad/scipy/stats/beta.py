"""The beta distribution of shapes ``a`` and ``b`` (``funcgrad.scipy.stats.beta``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import beta
>>> bool(numpy.allclose(fg.grad(beta.logpdf, 0)(0.5, 2.0, 2.0),
...                     0.0))
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


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote(x, a, b, loc, scale)
    z = (x - loc) / scale
    inside = (z >= 0) & (z <= 1)
    zs = safe(inside, z, 0.5)
    return where(inside, special.xlogy(a - 1, zs) + special.xlog1py(b - 1, -zs)
                 - special.betaln(a, b) - fnp.log(scale), NEG_INF)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote(x, a, b, loc, scale)
    return special.betainc(a, b, fnp.clip((x - loc) / scale, 0.0, 1.0))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote(x, a, b, loc, scale)
    return special.betainc(b, a, fnp.clip((loc + scale - x) / scale, 0.0, 1.0))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(sf(x, a, b, loc, scale))


def ppf(q: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, a, b, loc, scale = promote(q, a, b, loc, scale)
    return loc + scale * special.betaincinv(a, b, q)


def isf(q: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, a, b, loc, scale = promote(q, a, b, loc, scale)
    return loc + scale * (1 - special.betaincinv(b, a, q))


document(globals(), "beta", {'cdf': ('The distribution function, ``P(X <= x)``.', '1.5, 2.0, 3.0, 0.5, 2.0'), 'isf': ('The inverse of :func:`sf`.', '0.3, 2.0, 3.0, 0.5, 2.0'), 'logcdf': ('``log cdf``.', '1.5, 2.0, 3.0, 0.5, 2.0'), 'logpdf': ('``log pdf(x)``: the log density.', '1.5, 2.0, 3.0, 0.5, 2.0'), 'logsf': ('``log sf``.', '1.5, 2.0, 3.0, 0.5, 2.0'), 'pdf': ('The density.', '1.5, 2.0, 3.0, 0.5, 2.0'), 'ppf': ('The quantile function, the inverse of :func:`cdf`.', '0.3, 2.0, 3.0, 0.5, 2.0'), 'sf': ('The survival function, ``1 - cdf``.', '1.5, 2.0, 3.0, 0.5, 2.0')})
public(globals(), __all__)
