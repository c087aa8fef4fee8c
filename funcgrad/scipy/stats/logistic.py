"""The logistic distribution (``funcgrad.scipy.stats.logistic``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import logistic
>>> bool(numpy.allclose(fg.grad(logistic.cdf, 0)(0.5, 0.5, 2.0),
...                     0.125))
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._util import document, promote, public

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    z = (x - loc) / scale
    return -z - 2 * fnp.logaddexp(fnp.zeros_like(z), -z) - fnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return special.expit((x - loc) / scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return special.log_expit((x - loc) / scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return special.expit((loc - x) / scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return special.log_expit((loc - x) / scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc + scale * special.logit(q)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return loc - scale * special.logit(q)


document(globals(), "logistic", {'cdf': ('The distribution function, ``P(X <= x)``.', '1.5, 0.5, 2.0'), 'isf': ('The inverse of :func:`sf`.', '0.3, 0.5, 2.0'), 'logcdf': ('``log cdf``.', '1.5, 0.5, 2.0'), 'logpdf': ('``log pdf(x)``: the log density.', '1.5, 0.5, 2.0'), 'logsf': ('``log sf``.', '1.5, 0.5, 2.0'), 'pdf': ('The density.', '1.5, 0.5, 2.0'), 'ppf': ('The quantile function, the inverse of :func:`cdf`.', '0.3, 0.5, 2.0'), 'sf': ('The survival function, ``1 - cdf``.', '1.5, 0.5, 2.0')})
public(globals(), __all__)
