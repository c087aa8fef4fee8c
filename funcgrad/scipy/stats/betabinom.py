"""The beta-binomial distribution (``funcgrad.scipy.stats.betabinom``): ``n`` trials whose
success probability is beta(``a``, ``b``) distributed.

>>> import numpy, scipy.stats
>>> from funcgrad.scipy.stats import betabinom
>>> bool(numpy.isclose(betabinom.pmf(2, 5, 1.5, 2.0), scipy.stats.betabinom.pmf(2, 5, 1.5, 2.0)))
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._util import NEG_INF, document, floor, promote, public, safe, where

__all__ = ["logpmf", "pmf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    k, n, a, b, loc = promote(k, n, a, b, loc)
    k = k - loc
    valid = (k >= 0) & (k <= n) & (k == floor(k))
    ks = safe(valid, k, 0.0)
    combinations = special.gammaln(n + 1) - special.gammaln(ks + 1) - special.gammaln(n - ks + 1)
    return where(valid, combinations + special.betaln(ks + a, n - ks + b) - special.betaln(a, b),
                 NEG_INF)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    return fnp.exp(logpmf(k, n, a, b, loc))


document(globals(), "betabinom", {
    "logpmf": ("``log pmf(k)``: the log probability of ``k``.", "2, 5, 1.5, 2.0"),
    "pmf": ("The probability of ``k``.", "2, 5, 1.5, 2.0"),
})
public(globals(), __all__)
