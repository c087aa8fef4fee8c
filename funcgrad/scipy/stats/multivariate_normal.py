"""The multivariate normal distribution (``funcgrad.scipy.stats.multivariate_normal``).

``x`` holds points along its last axis (shape ``(..., d)``); ``cov`` is a
``(d, d)`` covariance, a vector of variances or one variance, as SciPy takes
it.  The gradient with respect to ``cov`` is symmetric: the derivative along
symmetric perturbations, the convention of ``fnp.linalg.eigh`` and
``cholesky``.

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy.stats import multivariate_normal as mvn
>>> g = fg.grad(mvn.logpdf, 2)(numpy.zeros(2), numpy.zeros(2), numpy.eye(2))
>>> bool(numpy.allclose(g, -0.5 * numpy.eye(2)))
True
"""

from __future__ import annotations

from typing import Any

from ... import numpy as fnp
from ...errors import FuncgradValueError
from ._util import LOG_2PI, document, promote, public

__all__ = ["entropy", "logpdf", "pdf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def logpdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
    if allow_singular:
        raise FuncgradValueError(
            "multivariate_normal: allow_singular=True is not supported; the covariance must "
            "be positive definite"
        )
    x, mean, cov = promote(x, 0 if mean is None else mean, cov)
    # the dimension, as SciPy finds it: from the mean, else the covariance, else 1
    d = mean.shape[-1] if mean.shape else (cov.shape[0] if cov.shape else 1)
    if d == 1 and (not x.shape or x.shape[-1] != 1):
        x = fnp.reshape(x, x.shape + (1,))  # one-dimensional points: each entry is one
    if x.shape[-1] != d:
        raise FuncgradValueError(
            f"multivariate_normal: x of shape {x.shape} does not hold points of dimension {d}"
        )
    if len(cov.shape) == 0:
        cov = cov * fnp.eye(d, dtype=cov.dtype, like=cov)
    elif len(cov.shape) == 1:
        cov = fnp.diag(fnp.broadcast_to(cov, (d,)))
    if cov.shape != (d, d):
        raise FuncgradValueError(
            f"multivariate_normal: cov of shape {cov.shape} for points of dimension {d}"
        )
    dev = x - mean
    flat = fnp.reshape(dev, (-1, d))
    sol = fnp.linalg.solve(cov, fnp.transpose(flat))              # (d, n)
    maha = fnp.sum(flat * fnp.transpose(sol), axis=-1)
    _, logdet = fnp.linalg.slogdet(cov)
    out = -0.5 * (d * LOG_2PI + logdet + maha)
    return fnp.reshape(out, dev.shape[:-1])


def pdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
    return fnp.exp(logpdf(x, mean, cov, allow_singular))


def entropy(mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
    if allow_singular:
        raise FuncgradValueError(
            "multivariate_normal: allow_singular=True is not supported; the covariance must "
            "be positive definite"
        )
    mean, cov = promote(0 if mean is None else mean, cov)
    d = mean.shape[-1] if mean.shape else (cov.shape[0] if cov.shape else 1)
    if len(cov.shape) == 0:
        cov = cov * fnp.eye(d, dtype=cov.dtype, like=cov)
    elif len(cov.shape) == 1:
        cov = fnp.diag(fnp.broadcast_to(cov, (d,)))
    if cov.shape != (d, d):
        raise FuncgradValueError(
            f"multivariate_normal: cov of shape {cov.shape} for a mean of dimension {d}"
        )
    _, logdet = fnp.linalg.slogdet(cov)
    return 0.5 * (d * (1.0 + LOG_2PI) + logdet)


_ARGS = "numpy.array([0.5, -1.0]), numpy.zeros(2), numpy.array([[2.0, 0.3], [0.3, 1.0]])"
document(globals(), "multivariate_normal", {
    "logpdf": ("``log pdf(x)``: the log density, one per point.", _ARGS),
    "pdf": ("The density, one per point.", _ARGS),
    "entropy": ("The differential entropy ``(d (1 + log 2 pi) + log det cov) / 2``.",
                "numpy.zeros(2), numpy.array([[2.0, 0.3], [0.3, 1.0]])"),
})
public(globals(), __all__)
