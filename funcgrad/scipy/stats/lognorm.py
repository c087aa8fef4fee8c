"""The log-normal distribution of shape ``s`` (``funcgrad.scipy.stats.lognorm``).

``log((x - loc) / scale)`` is normal with mean 0 and standard deviation ``s``.

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy.stats import lognorm
>>> bool(numpy.allclose(fg.grad(lognorm.logpdf)(1.0, 0.5), -1.0))   # -(1 + log x / s²) / x
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from .. import special
from ._util import LOG_2PI, NEG_INF, continuous_docs, document, promote, public, safe, where

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def _log_z(x, loc, scale):
    z = (x - loc) / scale
    inside = z > 0
    return inside, fnp.log(safe(inside, z, 1.0))


def logpdf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, s, loc, scale = promote(x, s, loc, scale)
    inside, lz = _log_z(x, loc, scale)
    u = lz / s
    return where(inside, -0.5 * (u * u + LOG_2PI) - fnp.log(s) - lz - fnp.log(scale), NEG_INF)


def pdf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return fnp.exp(logpdf(x, s, loc, scale))


def cdf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, s, loc, scale = promote(x, s, loc, scale)
    inside, lz = _log_z(x, loc, scale)
    return where(inside, special.ndtr(lz / s), 0.0)


def logcdf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, s, loc, scale = promote(x, s, loc, scale)
    inside, lz = _log_z(x, loc, scale)
    return where(inside, special.log_ndtr(lz / s), NEG_INF)


def sf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, s, loc, scale = promote(x, s, loc, scale)
    inside, lz = _log_z(x, loc, scale)
    return where(inside, special.ndtr(-lz / s), 1.0)


def logsf(x: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, s, loc, scale = promote(x, s, loc, scale)
    inside, lz = _log_z(x, loc, scale)
    return where(inside, special.log_ndtr(-lz / s), 0.0)


def ppf(q: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, s, loc, scale = promote(q, s, loc, scale)
    return loc + scale * fnp.exp(s * special.ndtri(q))


def isf(q: Any, s: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, s, loc, scale = promote(q, s, loc, scale)
    return loc + scale * fnp.exp(-s * special.ndtri(q))


document(globals(), "lognorm", continuous_docs("1.5, 0.6, 0.2, 2.0", "0.3, 0.6, 0.2, 2.0"))
public(globals(), __all__)
