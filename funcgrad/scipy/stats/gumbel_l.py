"""The left-skewed Gumbel distribution (``funcgrad.scipy.stats.gumbel_l``): ``-X`` for ``X``
right-skewed.

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy.stats import gumbel_l
>>> bool(numpy.allclose(fg.grad(gumbel_l.logpdf)(0.0), 0.0))   # the mode
True
"""

from __future__ import annotations

from . import gumbel_r as _r
from ._family import mirror
from ._util import continuous_docs, document, public

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


logpdf, pdf, cdf, logcdf, sf, logsf, ppf, isf = mirror(globals(), _r)


document(globals(), "gumbel_l", continuous_docs("1.5, 0.5, 2.0", "0.3, 0.5, 2.0"))
public(globals(), __all__)
