"""The right-skewed Gumbel distribution (``funcgrad.scipy.stats.gumbel_r``).

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy.stats import gumbel_r
>>> bool(numpy.allclose(fg.grad(gumbel_r.logpdf)(0.0), 0.0))   # the mode
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ._util import continuous_docs, document, promote, public

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    z = (x - loc) / scale
    return -z - fnp.exp(-z) - fnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return -fnp.exp(-(x - loc) / scale)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logcdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return -fnp.expm1(logcdf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(sf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc - scale * fnp.log(-fnp.log(q))


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc - scale * fnp.log(-fnp.log1p(-q))


document(globals(), "gumbel_r", continuous_docs("1.5, 0.5, 2.0", "0.3, 0.5, 2.0"))
public(globals(), __all__)
