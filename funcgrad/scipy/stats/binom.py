"""The binomial distribution of ``n`` trials of probability ``p`` (``funcgrad.scipy.stats.binom``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import binom
>>> bool(numpy.allclose(fg.grad(binom.logpmf, 2)(3, 10, 0.25),
...                     3 / 0.25 - 7 / 0.75))
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


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = promote(k, n, p, loc)
    k = k - loc
    valid = (k >= 0) & (k <= n) & (k == floor(k))
    ks = safe(valid, k, 0.0)
    combinations = special.gammaln(n + 1) - special.gammaln(ks + 1) - special.gammaln(n - ks + 1)
    return where(valid, combinations + special.xlogy(ks, p) + special.xlog1py(n - ks, -p), NEG_INF)


def cdf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = promote(k, n, p, loc)
    kf = floor(k - loc)
    inside = (kf >= 0) & (kf < n)
    ks = safe(inside, kf, 0.0)
    body = special.betainc(where(inside, n - ks, 1.0), ks + 1, 1 - p)
    return where(kf < 0, 0.0, where(inside, body, 1.0))


def sf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = promote(k, n, p, loc)
    kf = floor(k - loc)
    inside = (kf >= 0) & (kf < n)
    ks = safe(inside, kf, 0.0)
    body = special.betainc(ks + 1, where(inside, n - ks, 1.0), p)
    return where(kf < 0, 1.0, where(inside, body, 0.0))


pmf, logcdf, logsf, ppf, _ppf = discrete(globals(), "binom", "0.4, 10, 0.25")


document(globals(), "binom", {'cdf': ('The distribution function, ``P(X <= x)``.', '3, 10, 0.25'), 'logcdf': ('``log cdf``.', '3, 10, 0.25'), 'logpmf': ('``log pmf(k)``: the log probability of ``k``.', '3, 10, 0.25'), 'logsf': ('``log sf``.', '3, 10, 0.25'), 'pmf': ('The probability of ``k``.', '3, 10, 0.25'), 'sf': ('The survival function, ``1 - cdf``.', '3, 10, 0.25')})
public(globals(), __all__)
