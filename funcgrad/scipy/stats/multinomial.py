"""The multinomial distribution of ``n`` trials with probabilities ``p``
(``funcgrad.scipy.stats.multinomial``): counts ``x`` along the last axis.

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy.stats import multinomial
>>> fg.grad(multinomial.logpmf, 2)(numpy.array([1.0, 2.0]), 3, numpy.array([0.5, 0.5]))
array([2., 4.])
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._util import NEG_INF, document, floor, promote, public, safe, where

__all__ = ["logpmf", "pmf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpmf(x: Any, n: Any, p: Any) -> Any:
    x, n, p = promote(x, n, p)
    total = fnp.sum(x, axis=-1)
    valid = fnp.all(fnp.asarray((x >= 0) & (x == floor(x))), axis=-1) & (total == n)
    xs = safe(x >= 0, x, 0.0)
    out = (special.gammaln(n + 1) - fnp.sum(special.gammaln(xs + 1), axis=-1)
           + fnp.sum(special.xlogy(xs, p), axis=-1))
    return where(valid, out, NEG_INF)


def pmf(x: Any, n: Any, p: Any) -> Any:
    return fnp.exp(logpmf(x, n, p))


_A = "numpy.array([1.0, 2.0, 0.0]), 3, numpy.array([0.2, 0.5, 0.3])"
document(globals(), "multinomial", {
    "logpmf": ("``log pmf(x)``: the log probability of the counts ``x``.", _A),
    "pmf": ("The probability of the counts ``x``.", _A),
})
public(globals(), __all__)
