"""The normal distribution, ``N(loc, scale²)`` (``funcgrad.scipy.stats.norm``).

>>> import funcgrad as fg
>>> from funcgrad.scipy.stats import norm
>>> float(fg.grad(norm.logpdf, 1)(1.0, 0.0, 1.0))   # d/dloc of log N(1 | loc, 1) at loc = 0
1.0
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._util import LOG_2PI, document, promote, public

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    z = (x - loc) / scale
    return -0.5 * (z * z + LOG_2PI) - fnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return special.ndtr((loc - x) / scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return special.log_ndtr((loc - x) / scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc + scale * special.ndtri(q)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc - scale * special.ndtri(q)


document(globals(), "norm", {
    "logpdf": ("``log pdf(x)`` of the normal distribution.", "1.5, 0.5, 2.0"),
    "pdf": ("The density of the normal distribution.", "1.5, 0.5, 2.0"),
    "cdf": ("The distribution function ``P(X <= x)``.", "1.5, 0.5, 2.0"),
    "logcdf": ("``log cdf(x)``, accurate far in the lower tail.", "-30.0"),
    "sf": ("The survival function ``1 - cdf(x)``.", "1.5, 0.5, 2.0"),
    "logsf": ("``log sf(x)``, accurate far in the upper tail.", "30.0"),
    "ppf": ("The quantile function, the inverse of :func:`cdf`.", "0.3, 0.5, 2.0"),
    "isf": ("The inverse of :func:`sf`.", "0.3, 0.5, 2.0"),
})
public(globals(), __all__)
