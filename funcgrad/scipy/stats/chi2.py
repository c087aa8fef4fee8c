"""The chi-squared distribution with ``df`` degrees of freedom (``funcgrad.scipy.stats.chi2``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import chi2
>>> bool(numpy.allclose(fg.grad(chi2.logpdf, 0)(2.0, 4.0),
...                     (4.0 / 2 - 1) / 2.0 - 0.5))
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ._util import document, promote, public

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


from . import gamma as _gamma


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote(x, df, loc, scale)
    return _gamma.logpdf(x, 0.5 * df, loc, 2 * scale)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote(x, df, loc, scale)
    return _gamma.cdf(x, 0.5 * df, loc, 2 * scale)


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(cdf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote(x, df, loc, scale)
    return _gamma.sf(x, 0.5 * df, loc, 2 * scale)


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(sf(x, df, loc, scale))


def ppf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, df, loc, scale = promote(q, df, loc, scale)
    return _gamma.ppf(q, 0.5 * df, loc, 2 * scale)


def isf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, df, loc, scale = promote(q, df, loc, scale)
    return _gamma.isf(q, 0.5 * df, loc, 2 * scale)


document(globals(), "chi2", {'cdf': ('The distribution function, ``P(X <= x)``.', '1.5, 3.0, 0.5, 2.0'), 'isf': ('The inverse of :func:`sf`.', '0.3, 3.0, 0.5, 2.0'), 'logcdf': ('``log cdf``.', '1.5, 3.0, 0.5, 2.0'), 'logpdf': ('``log pdf(x)``: the log density.', '1.5, 3.0, 0.5, 2.0'), 'logsf': ('``log sf``.', '1.5, 3.0, 0.5, 2.0'), 'pdf': ('The density.', '1.5, 3.0, 0.5, 2.0'), 'ppf': ('The quantile function, the inverse of :func:`cdf`.', '0.3, 3.0, 0.5, 2.0'), 'sf': ('The survival function, ``1 - cdf``.', '1.5, 3.0, 0.5, 2.0')})
public(globals(), __all__)
