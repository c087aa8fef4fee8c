"""The left-skewed Gumbel distribution (``funcgrad.scipy.stats.gumbel_l``): ``-X`` for ``X``
right-skewed.

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy.stats import gumbel_l
>>> bool(numpy.allclose(fg.grad(gumbel_l.logpdf)(0.0), 0.0))   # the mode
True
"""

from __future__ import annotations

from typing import Any

from . import gumbel_r as _r
from ._util import document, promote, public

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return _r.logpdf(-x, -loc, scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return _r.pdf(-x, -loc, scale)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return _r.sf(-x, -loc, scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return _r.logsf(-x, -loc, scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return _r.cdf(-x, -loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return _r.logcdf(-x, -loc, scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return -_r.isf(q, -loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return -_r.ppf(q, -loc, scale)


_A = "1.5, 0.5, 2.0"
_Q = "0.3, 0.5, 2.0"
document(globals(), "gumbel_l", {
    "logpdf": ("``log pdf(x)``: the log density.", _A), "pdf": ("The density.", _A),
    "cdf": ("The distribution function, ``P(X <= x)``.", _A), "logcdf": ("``log cdf``.", _A),
    "sf": ("The survival function, ``1 - cdf``.", _A), "logsf": ("``log sf``.", _A),
    "ppf": ("The quantile function, the inverse of :func:`cdf`.", _Q),
    "isf": ("The inverse of :func:`sf`.", _Q),
})
public(globals(), __all__)
