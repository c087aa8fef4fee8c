"""Student's t distribution (``funcgrad.scipy.stats.t``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import t
>>> bool(numpy.allclose(fg.grad(t.logpdf, 0)(0.0, 3.0),
...                     0.0))
True
"""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as fnp
from .. import special
from ._util import document, promote, public

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote(x, df, loc, scale)
    z = (x - loc) / scale
    return (special.gammaln(0.5 * (df + 1)) - special.gammaln(0.5 * df)
            - 0.5 * fnp.log(df * math.pi) - fnp.log(scale) - 0.5 * (df + 1) * fnp.log1p(z * z / df))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote(x, df, loc, scale)
    return special.stdtr(df, (x - loc) / scale)


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(cdf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote(x, df, loc, scale)
    return special.stdtr(df, (loc - x) / scale)


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.log(sf(x, df, loc, scale))


def ppf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, df, loc, scale = promote(q, df, loc, scale)
    return loc + scale * special.stdtrit(df, q)


def isf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, df, loc, scale = promote(q, df, loc, scale)
    return loc - scale * special.stdtrit(df, q)


document(globals(), "t", {'cdf': ('The distribution function, ``P(X <= x)``.', '1.5, 3.0, 0.5, 2.0'), 'isf': ('The inverse of :func:`sf`.', '0.3, 3.0, 0.5, 2.0'), 'logcdf': ('``log cdf``.', '1.5, 3.0, 0.5, 2.0'), 'logpdf': ('``log pdf(x)``: the log density.', '1.5, 3.0, 0.5, 2.0'), 'logsf': ('``log sf``.', '1.5, 3.0, 0.5, 2.0'), 'pdf': ('The density.', '1.5, 3.0, 0.5, 2.0'), 'ppf': ('The quantile function, the inverse of :func:`cdf`.', '0.3, 3.0, 0.5, 2.0'), 'sf': ('The survival function, ``1 - cdf``.', '1.5, 3.0, 0.5, 2.0')})
public(globals(), __all__)
