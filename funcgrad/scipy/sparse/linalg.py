"""Krylov solvers of ``scipy.sparse.linalg``, differentiated implicitly (layer 7).

``cg``, ``gmres`` and ``bicgstab`` take SciPy's arguments and return SciPy's
``(x, info)``, computed by SciPy itself (``cg`` and ``bicgstab`` run on
other devices too, CuPy's for one, by the same method in the arrays' own
namespace); ``x`` is differentiable in ``b`` and in
``A`` -- its entries when ``A`` is a matrix, the traced values it closes over
when ``A`` is a function computing ``A @ v`` -- through
:func:`funcgrad.custom_linear_solve`: a derivative costs one more solve (with
``Aᵀ`` in reverse mode), never the solver's steps.  The solves in
derivatives use the same method and tolerances, without ``x0``; one that does
not converge warns.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> from funcgrad.scipy.sparse.linalg import cg
>>> A = numpy.array([[4.0, 1.0], [1.0, 3.0]])
>>> x, info = cg(A, numpy.array([1.0, 2.0]), rtol=1e-12)
>>> x, info
(array([0.09090909, 0.63636364]), 0)
>>> fg.grad(lambda b: cg(A, b, rtol=1e-12)[0][0])(numpy.array([1.0, 2.0]))  # row 0 of A⁻¹
array([ 0.27272727, -0.09090909])
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy
import scipy.sparse
import scipy.sparse.linalg as _sla

from ... import backend
from ... import numpy as fnp
from ...batching import loop_needed
from ...context import unrecorded
from ...errors import FuncgradTypeError, FuncgradValueError
from ...implicit import custom_linear_solve
from ...node import Node, value_of
from ...primitive import defvjp, primitive


@primitive
def _operator_matvec(v: Any, op: Any) -> Any:
    """A constant operator (a SciPy sparse matrix or LinearOperator) applied to a vector."""
    return op @ v


_operator_matvec.name = "sparse_matvec"
defvjp(_operator_matvec, lambda g, ans, v, op: _operator_matvec(g, op.T), None)


def _matvec_batch(args, axes, **kwargs):
    """fg.vmap: the operator applied to the batch of vectors as columns of one matrix."""
    v, ax = args[0], axes[0]
    if ax is None or axes[1] is not None or len(v.shape) != 2:
        return "loop", None
    return _operator_matvec(fnp.transpose(v) if ax == 0 else v, args[1]), 1


_operator_matvec.batch = _matvec_batch


def _constant_operator(A: Any) -> bool:
    return scipy.sparse.issparse(A) or isinstance(A, _sla.LinearOperator)


def _matvec(A: Any, n: int, name: str) -> Callable:
    """``v -> A @ v`` for a matrix, a sparse matrix or operator, or a function."""
    if _constant_operator(A):
        if A.shape != (n, n):
            raise FuncgradValueError(f"{name}: A has shape {A.shape}, b has length {n}")
        return lambda v: _operator_matvec(v, A)
    if callable(A) and not hasattr(A, "shape"):
        return A
    shape = tuple(numpy.shape(value_of(A)))
    if shape != (n, n):
        raise FuncgradValueError(
            f"{name}: A must be a square matrix matching b (shape ({n}, {n})), got shape {shape}"
        )
    return lambda v: fnp.matmul(A, v)


def _operator_dtype(A: Any, matvec: Callable, bv: Any, name: str) -> numpy.dtype:
    """The dtype of ``A``: its own, or, for a function, that of one ``A @ b``."""
    if hasattr(A, "dtype") or type(A) is Node:
        return numpy.dtype(value_of(A).dtype)
    if not callable(A):
        return numpy.asarray(value_of(A)).dtype
    with unrecorded():
        out = matvec(bv)
    loop_needed(name, out)  # the operator A closes over values fg.vmap maps
    return numpy.dtype(value_of(out).dtype)


def _preconditioner(M: Any, transpose: bool) -> Any:
    """SciPy's ``M`` (raw), or its transpose for the transposed system."""
    if M is None:
        return None
    if type(M) is Node:
        M = value_of(M)
    if callable(M) and not hasattr(M, "shape"):
        return M  # a function: taken to be symmetric, as a preconditioner usually is
    return M.T if transpose else M


class _Solver:
    """SciPy's ``method`` as ``solve(matvec, b) -> (x, info)``.

    Its first call is the solve of the problem itself (with ``x0`` and the
    callback); later ones are the solves in derivatives, which warn when they
    do not converge.
    """

    def __init__(self, name: str, method: Callable, x0: Any, options: dict,
                 M: Any, callback: Any, transpose: bool):
        self.name, self.method, self.options = name, method, options
        self.x0, self.callback = x0, callback
        self.M = _preconditioner(M, transpose)
        self.first = not transpose

    def __call__(self, matvec: Callable, b: Any) -> tuple:
        n = b.shape[0]
        first, self.first = self.first, False
        extra = {"x0": self.x0, "callback": self.callback} if first else {}
        if type(b) is not numpy.ndarray:  # another device: the same method, in its namespace
            x, info = _ON_DEVICE[self.name](matvec, b, M=self.M, **self.options, **extra)
        else:
            op = _sla.LinearOperator(
                (n, n), matvec=lambda v: numpy.asarray(matvec(numpy.asarray(v).reshape(n))),
                dtype=b.dtype,
            )
            x, info = self.method(op, b, M=self.M, **self.options, **extra)
        if not first and info != 0:
            warnings.warn(
                f"{self.name}: the linear solve of a derivative did not converge "
                f"(info={info}); the derivative is inexact: raise maxiter or loosen rtol",
                RuntimeWarning, stacklevel=2,
            )
        return x, int(info)


def _solve(name: str, method: Callable, A: Any, b: Any, x0: Any, M: Any, callback: Any,
           symmetric: bool, **options: Any) -> tuple:
    for v in (b, x0, None if callable(A) and not hasattr(A, "shape") else A):
        loop_needed(name, v)  # SciPy's solver sees one example at a time: fg.vmap loops
    bv = value_of(b)
    if getattr(bv, "ndim", None) != 1:
        raise FuncgradTypeError(
            f"{name}: b must be a 1-d array (or a Node holding one), got "
            f"{type(bv).__name__}" + (f" of shape {bv.shape}" if hasattr(bv, "shape") else "")
        )
    if type(bv) is not numpy.ndarray:
        xp = backend.namespace(bv)
        if backend.is_lazy(xp) or name not in _ON_DEVICE:
            raise FuncgradTypeError(
                f"{name}: runs on NumPy arrays" + ("" if backend.is_lazy(xp) else
                                                   " (cg and bicgstab also on other devices)")
                + f", got b of type {type(bv).__name__} on {backend.device_of(bv)}"
            )
    matvec = _matvec(A, bv.shape[0], name)
    dtype = numpy.result_type(bv.dtype if bv.dtype.kind in "fc" else float,
                              _operator_dtype(A, matvec, bv, name))
    if bv.dtype != dtype:  # integers, or a real b for a complex A: the solve's dtype
        b = b.astype(dtype) if type(b) is Node else bv.astype(dtype)
        bv = value_of(b)
    if dtype.kind == "c":
        # A complex A is Hermitian for cg, not symmetric: the transposed system,
        # Aᵀ = conj(A), is Hermitian positive definite too, and cg solves it.
        symmetric = False
    if x0 is not None:
        x0 = value_of(x0)
        x0 = numpy.asarray(x0, dtype=bv.dtype) if type(bv) is numpy.ndarray else x0
    solve = _Solver(name, method, x0, options, M, callback, transpose=False)
    back = None if symmetric else _Solver(name, method, None, options, M, None, transpose=True)
    return custom_linear_solve(matvec, b, solve, back, symmetric=symmetric, has_aux=True)


# -- the same methods on other devices (CuPy...), in the arrays' own namespace ----------
# SciPy's stopping rule: the residual's norm at most max(rtol * |b|, atol); info is 0 on
# convergence, maxiter when it is reached, -10 on a breakdown.


def _host(x: Any) -> float:
    """A 0-d device number read on the host (the one read per iteration)."""
    return float(backend.to_device(x, "cpu"))


def _norm(xp: Any, r: Any) -> float:
    return _host(xp.sqrt(xp.sum(xp.abs(r) ** 2)))


def _dot(xp: Any, a: Any, b: Any) -> Any:
    """``a^H b``: the inner product of complex vectors (``a b`` when real)."""
    return xp.sum(xp.conj(a) * b)


def _start(matvec: Callable, b: Any, x0: Any, rtol: float, atol: float, maxiter: Any, M: Any):
    xp = backend.namespace(b)
    precondition = (lambda v: v) if M is None else M if callable(M) and not hasattr(
        M, "shape") else (lambda v: M @ v)
    x = xp.zeros_like(b) if x0 is None else x0 * 1.0
    r = b if x0 is None else b - matvec(x)
    tol = max(rtol * _norm(xp, b), atol)
    return xp, precondition, x, r, tol, 10 * b.shape[0] if maxiter is None else maxiter


def _cg_on_device(matvec, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None,
                  callback=None):
    xp, precondition, x, r, tol, maxiter = _start(matvec, b, x0, rtol, atol, maxiter, M)
    z = precondition(r)
    p, rz = z, _dot(xp, r, z)
    for _ in range(maxiter):
        if _norm(xp, r) <= tol:
            return x, 0
        q = matvec(p)
        alpha = rz / _dot(xp, p, q)
        x, r = x + alpha * p, r - alpha * q
        if callback is not None:
            callback(x)
        z = precondition(r)
        rz, rz_old = _dot(xp, r, z), rz
        p = z + (rz / rz_old) * p
    return x, 0 if _norm(xp, r) <= tol else maxiter


def _bicgstab_on_device(matvec, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None,
                        callback=None):
    xp, precondition, x, r, tol, maxiter = _start(matvec, b, x0, rtol, atol, maxiter, M)
    shadow = r
    rho = alpha = omega = None
    p = v = None
    for _ in range(maxiter):
        if _norm(xp, r) <= tol:
            return x, 0
        rho_new = _dot(xp, shadow, r)
        if _host(xp.abs(rho_new)) == 0.0:
            return x, -10
        p = r if rho is None else r + (rho_new / rho) * (alpha / omega) * (p - omega * v)
        phat = precondition(p)
        v = matvec(phat)
        alpha = rho_new / _dot(xp, shadow, v)
        s = r - alpha * v
        if _norm(xp, s) <= tol:
            x = x + alpha * phat
            if callback is not None:
                callback(x)
            return x, 0
        shat = precondition(s)
        t = matvec(shat)
        omega = _dot(xp, t, s) / _dot(xp, t, t)
        if _host(xp.abs(omega)) == 0.0:
            return x, -10
        x, r, rho = x + alpha * phat + omega * shat, s - omega * t, rho_new
        if callback is not None:
            callback(x)
    return x, 0 if _norm(xp, r) <= tol else maxiter


_ON_DEVICE = {"cg": _cg_on_device, "bicgstab": _bicgstab_on_device}


def cg(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None, callback: Any = None) -> tuple:
    """``scipy.sparse.linalg.cg``: conjugate gradients for symmetric positive definite ``A``.

    ``A`` is a matrix (an array, a Node, a SciPy sparse matrix or
    ``LinearOperator``) or a function computing ``A @ v``; returns ``(x,
    info)``, ``info`` 0 on convergence.  ``x`` is differentiable in ``b`` and
    ``A``, one more conjugate-gradient solve per derivative (``A`` is
    symmetric, so reverse mode solves with ``A`` too).

    >>> import numpy, funcgrad as fg
    >>> from funcgrad.scipy.sparse.linalg import cg
    >>> A = numpy.array([[2.0, 0.0], [0.0, 4.0]])
    >>> fg.grad(lambda d: cg(A * d, numpy.ones(2), rtol=1e-12)[0].sum())(1.0)  # -sum(A⁻¹ 1)/d²
    array(-0.75)
    """
    return _solve("cg", _sla.cg, A, b, x0, M, callback, True, rtol=rtol, atol=atol,
                  maxiter=maxiter)


def gmres(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0,
          restart: int | None = None, maxiter: int | None = None, M: Any = None,
          callback: Any = None, callback_type: str | None = None) -> tuple:
    """``scipy.sparse.linalg.gmres``: restarted GMRES for a general square ``A``.

    Arguments and result as SciPy's (see :func:`cg` for ``A``); ``x`` is
    differentiable in ``b`` and ``A``, reverse mode solving with ``Aᵀ`` by
    GMRES (a matrix ``M`` is transposed for it; a function ``M`` is used as it
    is).

    >>> import numpy, funcgrad as fg
    >>> from funcgrad.scipy.sparse.linalg import gmres
    >>> A = numpy.array([[2.0, 1.0], [0.0, 4.0]])
    >>> fg.grad(lambda b: gmres(A, b, rtol=1e-12)[0][1])(numpy.ones(2))  # row 1 of A⁻¹
    array([0.  , 0.25])
    """
    return _solve("gmres", _sla.gmres, A, b, x0, M, callback, False, rtol=rtol, atol=atol,
                  restart=restart, maxiter=maxiter,
                  **({"callback_type": callback_type} if callback_type is not None else {}))


def bicgstab(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None, callback: Any = None) -> tuple:
    """``scipy.sparse.linalg.bicgstab``: BiCGSTAB for a general square ``A``.

    Arguments and result as SciPy's (see :func:`cg` for ``A``); ``x`` is
    differentiable in ``b`` and ``A``, reverse mode solving with ``Aᵀ`` by
    BiCGSTAB.

    >>> import numpy, funcgrad as fg
    >>> from funcgrad.scipy.sparse.linalg import bicgstab
    >>> A = numpy.array([[2.0, 1.0], [0.0, 4.0]])
    >>> fg.jacobian(lambda b: bicgstab(A, b, rtol=1e-12)[0])(numpy.ones(2))  # A⁻¹
    array([[ 0.5  , -0.125],
           [ 0.   ,  0.25 ]])
    """
    return _solve("bicgstab", _sla.bicgstab, A, b, x0, M, callback, False, rtol=rtol,
                  atol=atol, maxiter=maxiter)


__all__ = ["bicgstab", "cg", "gmres"]


def __dir__() -> list:  # the public names only, not the helpers and imports
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]
