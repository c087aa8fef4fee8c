"""The multivariate normal distribution (``funcgrad.scipy.stats.multivariate_normal``).

``x`` holds points along its last axis (shape ``(..., d)``); ``cov`` is a
``(d, d)`` covariance, a vector of variances or one variance, as SciPy takes
it.  The gradient with respect to ``cov`` is symmetric: the derivative along
symmetric perturbations, the convention of ``fnp.linalg.eigh`` and
``cholesky``.  With ``allow_singular=True`` a singular covariance is taken
as SciPy takes it (a density on ``mean + range(cov)`` with the
pseudo-determinant and pseudo-inverse, ``-inf`` off it): differentiable in
``x`` and ``mean`` within that subspace, while a derivative in ``cov``
raises ``TypeError`` (the subspace moves with it); a regular covariance
keeps every derivative.

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy.stats import multivariate_normal as mvn
>>> g = fg.grad(mvn.logpdf, 2)(numpy.zeros(2), numpy.zeros(2), numpy.eye(2))
>>> bool(numpy.allclose(g, -0.5 * numpy.eye(2)))
True
"""

from __future__ import annotations

from typing import Any

import numpy

from ... import numpy as fnp
from ...errors import FuncgradTypeError, FuncgradValueError
from ...node import Node
from ...numpy._core import raw, xp_of
from ._util import LOG_2PI, NEG_INF, document, promote, public

__all__ = ["entropy", "logpdf", "pdf"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def _covariance(cov: Any, d: int, what: str) -> Any:
    if len(cov.shape) == 0:
        cov = cov * fnp.eye(d, dtype=cov.dtype, like=cov)
    elif len(cov.shape) == 1:
        cov = fnp.diag(fnp.broadcast_to(cov, (d,)))
    if cov.shape != (d, d):
        raise FuncgradValueError(
            f"multivariate_normal: cov of shape {cov.shape} for {what} of dimension {d}"
        )
    return cov


class _Pseudo:
    """SciPy's treatment of a possibly singular covariance (``allow_singular=True``), on raw
    values: eigenvalues below ``cutoff`` (``1e6`` machine epsilons of the largest, SciPy's;
    ``1e3`` in float32) count as zero."""

    def __init__(self, cov: Any) -> None:
        c = raw(cov)
        xp = xp_of(c)
        s, u = xp.linalg.eigh(c)
        factor = 1e6 if c.dtype.itemsize >= 8 else 1e3
        eps = factor * numpy.finfo(c.dtype).eps * float(xp.max(xp.abs(s)))
        if float(xp.min(s)) < -eps:
            raise FuncgradValueError("multivariate_normal: cov must be symmetric positive "
                                     "semidefinite")
        keep = s > eps
        self.rank = int(xp.sum(keep))
        self.singular = self.rank < s.shape[0]
        self.log_pdet = xp.sum(xp.log(xp.where(keep, s, 1.0)))
        self.whiten = u * xp.sqrt(xp.where(keep, 1.0 / xp.where(keep, s, 1.0), 0.0))
        self.null = u[:, ~keep] if self.singular else None
        self.tol = 1e3 * eps

    def in_support(self, dev: Any) -> Any:
        v = raw(dev)
        xp = xp_of(v)
        return xp.linalg.norm(v @ self.null, axis=-1) < self.tol


def _refuse_cov(name: str) -> None:
    raise FuncgradTypeError(
        f"funcgrad.scipy.stats.multivariate_normal.{name} is not differentiable in its "
        f"argument 'cov' at a singular covariance (allow_singular=True): the density lives "
        f"on a subspace that moves with it")


def _singular(cov: Any, name: str) -> _Pseudo | None:
    """The pseudo-inverse parts of a singular ``cov``, None for a regular one (which takes
    the differentiable path)."""
    parts = _Pseudo(cov)
    if not parts.singular:
        return None
    if type(cov) is Node:
        _refuse_cov(name)
    return parts


def logpdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
    x, mean, cov = promote(x, 0 if mean is None else mean, cov)
    # the dimension, as SciPy finds it: from the mean, else the covariance, else 1
    d = mean.shape[-1] if mean.shape else (cov.shape[0] if cov.shape else 1)
    if d == 1 and (not x.shape or x.shape[-1] != 1):
        x = fnp.reshape(x, x.shape + (1,))  # one-dimensional points: each entry is one
    if x.shape[-1] != d:
        raise FuncgradValueError(
            f"multivariate_normal: x of shape {x.shape} does not hold points of dimension {d}"
        )
    cov = _covariance(cov, d, "points")
    dev = x - mean
    parts = _singular(cov, "logpdf") if allow_singular else None
    if parts is not None:  # SciPy's pseudo-density on mean + range(cov), -inf off it
        z = fnp.matmul(dev, parts.whiten)
        out = -0.5 * (parts.rank * LOG_2PI + parts.log_pdet + fnp.sum(z * z, axis=-1))
        return fnp.where(parts.in_support(dev), out, NEG_INF)
    flat = fnp.reshape(dev, (-1, d))
    sol = fnp.linalg.solve(cov, fnp.transpose(flat))              # (d, n)
    maha = fnp.sum(flat * fnp.transpose(sol), axis=-1)
    _, logdet = fnp.linalg.slogdet(cov)
    out = -0.5 * (d * LOG_2PI + logdet + maha)
    return fnp.reshape(out, dev.shape[:-1])


def pdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
    return fnp.exp(logpdf(x, mean, cov, allow_singular))


def entropy(mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
    mean, cov = promote(0 if mean is None else mean, cov)
    d = mean.shape[-1] if mean.shape else (cov.shape[0] if cov.shape else 1)
    cov = _covariance(cov, d, "a mean")
    parts = _singular(cov, "entropy") if allow_singular else None
    if parts is not None:  # on the subspace: rank dimensions, the pseudo-determinant
        return 0.5 * (parts.rank * (1.0 + LOG_2PI) + parts.log_pdet)
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
