"""The logistic distribution (``funcgrad.scipy.stats.logistic``).

>>> import numpy, scipy.stats, funcgrad as fg
>>> from funcgrad.scipy.stats import logistic
>>> bool(numpy.allclose(fg.grad(logistic.cdf, 0)(0.5, 0.5, 2.0),
...                     0.125))
True
"""

from __future__ import annotations

from ... import numpy as fnp
from .. import special
from ._family import symmetric
from ._util import document, public

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


logpdf, pdf, cdf, logcdf, sf, logsf, ppf, isf = symmetric(
    globals(), lambda z: -z - 2 * fnp.logaddexp(fnp.zeros_like(z), -z), special.expit,
    special.log_expit, special.logit)


document(globals(), "logistic", {'cdf': ('The distribution function, ``P(X <= x)``.', '1.5, 0.5, 2.0'), 'isf': ('The inverse of :func:`sf`.', '0.3, 0.5, 2.0'), 'logcdf': ('``log cdf``.', '1.5, 0.5, 2.0'), 'logpdf': ('``log pdf(x)``: the log density.', '1.5, 0.5, 2.0'), 'logsf': ('``log sf``.', '1.5, 0.5, 2.0'), 'pdf': ('The density.', '1.5, 0.5, 2.0'), 'ppf': ('The quantile function, the inverse of :func:`cdf`.', '0.3, 0.5, 2.0'), 'sf': ('The survival function, ``1 - cdf``.', '1.5, 0.5, 2.0')})
public(globals(), __all__)
