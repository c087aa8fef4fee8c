"""The normal distribution, ``N(loc, scale²)`` (``funcgrad.scipy.stats.norm``).

>>> import funcgrad as fg
>>> from funcgrad.scipy.stats import norm
>>> float(fg.grad(norm.logpdf, 1)(1.0, 0.0, 1.0))   # d/dloc of log N(1 | loc, 1) at loc = 0
1.0
"""

from __future__ import annotations

from .. import special
from ._family import symmetric
from ._util import LOG_2PI, document, public

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


logpdf, pdf, cdf, logcdf, sf, logsf, ppf, isf = symmetric(
    globals(), lambda z: -0.5 * (z * z + LOG_2PI), special.ndtr, special.log_ndtr, special.ndtri)


document(globals(), "norm", {
    "logpdf": ("``log pdf(x)`` of the normal distribution.", "1.5, 0.5, 2.0"),
    "pdf": ("The density of the normal distribution.", "1.5, 0.5, 2.0"),
    "cdf": ("The distribution function ``P(X <= x)``.", "1.5, 0.5, 2.0"),
    "logcdf": ("``log cdf(x)``, accurate far in the lower tail.", "-30.0"),
    "sf": ("The survival function ``1 - cdf(x)``.", "1.5, 0.5, 2.0"),
    "logsf": ("``log sf(x)``, accurate far in the upper tail.", "30.0"),
    "ppf": ("The quantile function, the inverse of :func:`cdf`.", "0.3, 0.5, 2.0"),
    "isf": ("The inverse of :func:`sf`.", "0.3, 0.5, 2.0"),
})
public(globals(), __all__)
