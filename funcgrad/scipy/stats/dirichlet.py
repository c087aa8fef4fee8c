"""The Dirichlet distribution of concentrations ``alpha`` (``funcgrad.scipy.stats.dirichlet``).

As SciPy's, ``x`` holds the components along its first axis: shape ``(K,)``
or ``(K, N)`` for ``N`` points, with ``alpha`` of shape ``(K,)``.

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy.stats import dirichlet
>>> g = fg.grad(dirichlet.logpdf, 1)(numpy.array([0.2, 0.3, 0.5]), numpy.ones(3))
>>> bool(numpy.allclose(g, numpy.log([0.2, 0.3, 0.5]) + 1.5))   # log x + ψ(3) - ψ(1)
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ...errors import FuncgradValueError
from .. import special
from ._util import document, promote, public

__all__ = ["logpdf", "pdf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpdf(x: Any, alpha: Any) -> Any:
    x, alpha = promote(x, alpha)
    if len(getattr(alpha, "shape", ())) != 1:
        raise FuncgradValueError(
            f"dirichlet: alpha must be a vector of concentrations, got shape {alpha.shape}"
        )
    k = alpha.shape[0]
    if not x.shape or x.shape[0] != k:
        raise FuncgradValueError(
            f"dirichlet: x of shape {x.shape} must hold the {k} components of alpha along its "
            "first axis"
        )
    a = fnp.reshape(alpha, (k,) + (1,) * (len(x.shape) - 1))
    log_b = fnp.sum(special.gammaln(alpha)) - special.gammaln(fnp.sum(alpha))
    return fnp.sum(special.xlogy(a - 1, x), axis=0) - log_b


def pdf(x: Any, alpha: Any) -> Any:
    return fnp.exp(logpdf(x, alpha))


document(globals(), "dirichlet", {
    "logpdf": ("``log pdf(x)``: the log density.",
               "numpy.array([0.2, 0.3, 0.5]), numpy.array([1.5, 2.0, 3.0])"),
    "pdf": ("The density.", "numpy.array([0.2, 0.3, 0.5]), numpy.array([1.5, 2.0, 3.0])"),
})
public(globals(), __all__)
