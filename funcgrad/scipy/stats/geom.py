"""The geometric distribution: trials up to the first success, of probability ``p`` (``funcgrad.scipy.stats.geom``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import geom
>>> bool(numpy.allclose(fg.grad(geom.logpmf, 1)(3, 0.25),
...                     1 / 0.25 - 2 / 0.75))
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._util import NEG_INF, document, floor, promote, public, safe, where

__all__ = ["cdf", "logcdf", "logpmf", "logsf", "pmf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = promote(k, p, loc)
    k = k - loc
    valid = (k >= 1) & (k == floor(k))
    ks = safe(valid, k, 1.0)
    return where(valid, special.xlog1py(ks - 1, -p) + fnp.log(p), NEG_INF)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    return fnp.exp(logpmf(k, p, loc))


def logsf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = promote(k, p, loc)
    kf = floor(k - loc)
    inside = kf >= 1
    return where(inside, safe(inside, kf, 0.0) * fnp.log1p(-p), 0.0)


def sf(k: Any, p: Any, loc: Any = 0) -> Any:
    return fnp.exp(logsf(k, p, loc))


def cdf(k: Any, p: Any, loc: Any = 0) -> Any:
    return -fnp.expm1(logsf(k, p, loc))


def logcdf(k: Any, p: Any, loc: Any = 0) -> Any:
    return fnp.log(cdf(k, p, loc))


document(globals(), "geom", {'cdf': ('The distribution function, ``P(X <= x)``.', '3, 0.25'), 'logcdf': ('``log cdf``.', '3, 0.25'), 'logpmf': ('``log pmf(k)``: the log probability of ``k``.', '3, 0.25'), 'logsf': ('``log sf``.', '3, 0.25'), 'pmf': ('The probability of ``k``.', '3, 0.25'), 'sf': ('The survival function, ``1 - cdf``.', '3, 0.25')})
public(globals(), __all__)
