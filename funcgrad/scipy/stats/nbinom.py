"""The negative binomial distribution: failures before ``n`` successes of probability ``p`` (``funcgrad.scipy.stats.nbinom``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import nbinom
>>> bool(numpy.allclose(fg.grad(nbinom.logpmf, 2)(3, 2.5, 0.25),
...                     2.5 / 0.25 - 3 / 0.75))
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._family import discrete
from ._util import NEG_INF, document, floor, promote, public, safe, where

__all__ = ["cdf", "logcdf", "logpmf", "logsf", "pmf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = promote(k, n, p, loc)
    k = k - loc
    valid = (k >= 0) & (k == floor(k))
    ks = safe(valid, k, 0.0)
    return where(valid, special.gammaln(n + ks) - special.gammaln(ks + 1) - special.gammaln(n)
                 + n * fnp.log(p) + special.xlog1py(ks, -p), NEG_INF)


def cdf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = promote(k, n, p, loc)
    kf = floor(k - loc)
    inside = kf >= 0
    return where(inside, special.betainc(n, safe(inside, kf, 0.0) + 1, p), 0.0)


def sf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = promote(k, n, p, loc)
    kf = floor(k - loc)
    inside = kf >= 0
    return where(inside, special.betainc(safe(inside, kf, 0.0) + 1, n, 1 - p), 1.0)


pmf, logcdf, logsf, ppf, _ppf = discrete(globals(), "nbinom", "0.4, 2.5, 0.25")


document(globals(), "nbinom", {'cdf': ('The distribution function, ``P(X <= x)``.', '3, 2.5, 0.25'), 'logcdf': ('``log cdf``.', '3, 2.5, 0.25'), 'logpmf': ('``log pmf(k)``: the log probability of ``k``.', '3, 2.5, 0.25'), 'logsf': ('``log sf``.', '3, 2.5, 0.25'), 'pmf': ('The probability of ``k``.', '3, 2.5, 0.25'), 'sf': ('The survival function, ``1 - cdf``.', '3, 2.5, 0.25')})
public(globals(), __all__)
