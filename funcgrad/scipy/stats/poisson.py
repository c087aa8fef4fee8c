"""The Poisson distribution of mean ``mu`` (``funcgrad.scipy.stats.poisson``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import poisson
>>> bool(numpy.allclose(fg.grad(poisson.logpmf, 1)(3, 2.0),
...                     3 / 2.0 - 1))
True
"""

from __future__ import annotations

from typing import Any

from .. import special
from ._family import discrete
from ._util import NEG_INF, document, floor, promote, public, safe, where

__all__ = ["cdf", "logcdf", "logpmf", "logsf", "pmf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k, mu, loc = promote(k, mu, loc)
    k = k - loc
    valid = (k >= 0) & (k == floor(k))
    ks = safe(valid, k, 0.0)
    return where(valid, special.xlogy(ks, mu) - special.gammaln(ks + 1) - mu, NEG_INF)


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k, mu, loc = promote(k, mu, loc)
    kf = floor(k - loc)
    inside = kf >= 0
    return where(inside, special.gammaincc(safe(inside, kf, 0.0) + 1, mu), 0.0)


def sf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k, mu, loc = promote(k, mu, loc)
    kf = floor(k - loc)
    inside = kf >= 0
    return where(inside, special.gammainc(safe(inside, kf, 0.0) + 1, mu), 1.0)


pmf, logcdf, logsf, ppf, _ppf = discrete(globals(), "poisson", "0.4, 2.0")


document(globals(), "poisson", {'cdf': ('The distribution function, ``P(X <= x)``.', '3, 2.0'), 'logcdf': ('``log cdf``.', '3, 2.0'), 'logpmf': ('``log pmf(k)``: the log probability of ``k``.', '3, 2.0'), 'logsf': ('``log sf``.', '3, 2.0'), 'pmf': ('The probability of ``k``.', '3, 2.0'), 'sf': ('The survival function, ``1 - cdf``.', '3, 2.0')})
public(globals(), __all__)
