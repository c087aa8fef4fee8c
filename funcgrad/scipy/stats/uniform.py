"""The uniform distribution on ``[loc, loc + scale]`` (``funcgrad.scipy.stats.uniform``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import uniform
>>> bool(numpy.allclose(fg.grad(uniform.cdf, 0)(1.0, 0.5, 2.0),
...                     0.5))
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ._util import NEG_INF, document, promote, public, where

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    z = (x - loc) / scale
    return where((z >= 0) & (z <= 1), -fnp.log(scale) + 0 * z, NEG_INF)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return fnp.clip((x - loc) / scale, 0.0, 1.0)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return fnp.clip((loc + scale - x) / scale, 0.0, 1.0)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(sf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc + scale * q


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc + scale * (1 - q)


document(globals(), "uniform", {'cdf': ('The distribution function, ``P(X <= x)``.', '1.5, 0.5, 2.0'), 'isf': ('The inverse of :func:`sf`.', '0.3, 0.5, 2.0'), 'logcdf': ('``log cdf``.', '1.5, 0.5, 2.0'), 'logpdf': ('``log pdf(x)``: the log density.', '1.5, 0.5, 2.0'), 'logsf': ('``log sf``.', '1.5, 0.5, 2.0'), 'pdf': ('The density.', '1.5, 0.5, 2.0'), 'ppf': ('The quantile function, the inverse of :func:`cdf`.', '0.3, 0.5, 2.0'), 'sf': ('The survival function, ``1 - cdf``.', '1.5, 0.5, 2.0')})
public(globals(), __all__)
