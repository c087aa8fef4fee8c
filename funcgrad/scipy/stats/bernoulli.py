"""The Bernoulli distribution of success probability ``p`` (``funcgrad.scipy.stats.bernoulli``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import bernoulli
>>> bool(numpy.allclose(fg.grad(bernoulli.logpmf, 1)(1, 0.25),
...                     4.0))
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._util import NEG_INF, document, promote, public, safe, where

__all__ = ["cdf", "logcdf", "logpmf", "logsf", "pmf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = promote(k, p, loc)
    k = k - loc
    valid = (k == 0) | (k == 1)
    ks = safe(valid, k, 0.0)
    return where(valid, special.xlogy(ks, p) + special.xlog1py(1 - ks, -p), NEG_INF)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    return fnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = promote(k, p, loc)
    k = k - loc
    return where(k < 0, 0.0, where(k < 1, 1 - p, 1.0))


def logcdf(k: Any, p: Any, loc: Any = 0) -> Any:
    return fnp.log(cdf(k, p, loc))


def sf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = promote(k, p, loc)
    k = k - loc
    return where(k < 0, 1.0, where(k < 1, p, 0.0))


def logsf(k: Any, p: Any, loc: Any = 0) -> Any:
    return fnp.log(sf(k, p, loc))


document(globals(), "bernoulli", {'cdf': ('The distribution function, ``P(X <= x)``.', '0, 0.25'), 'logcdf': ('``log cdf``.', '0, 0.25'), 'logpmf': ('``log pmf(k)``: the log probability of ``k``.', '1, 0.25'), 'logsf': ('``log sf``.', '0, 0.25'), 'pmf': ('The probability of ``k``.', '0, 0.25'), 'sf': ('The survival function, ``1 - cdf``.', '0, 0.25')})
public(globals(), __all__)
