"""``funcgrad.numpy.linalg``: inverses, determinants, solves, Cholesky, norms (layer 4).

Every function takes stacks of matrices ``(..., n, n)`` as NumPy does.  Rules
are written with ``inv``, ``solve`` and ``matmul``, so every order works.
Unlike NumPy, float16 is accepted: it is computed in float32 and returned as
float16.

Notes on the derivatives:

- ``det`` and ``slogdet``: the gradient is ``det(a) * inv(a).T`` (``inv(a).T``
  for ``logabsdet``); at a singular matrix it does not exist and ``inv`` fails.
- ``slogdet`` returns ``(sign, logabsdet)``: ``sign`` is plain data (its
  derivative is 0 almost everywhere), ``logabsdet`` is differentiable.
- ``cholesky`` assumes a symmetric input (NumPy reads only its lower
  triangle): its gradient is the symmetric matrix ``S`` with
  ``<S, da> = <dL, gL>`` for every *symmetric* ``da``, and its tangent uses
  the symmetric part of ``da``.  Functions of a general matrix should
  symmetrize it first, ``cholesky((a + a.T) / 2)``.
- ``norm`` with ``ord=None`` (or 2 for vectors, ``'fro'`` for matrices) has
  gradient ``x / norm(x)``; at ``x = 0`` it returns the subgradient 0, never NaN.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda a: fnp.linalg.det(a))(numpy.diag([2.0, 3.0]))
array([[3., 0.],
       [0., 2.]])
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy

from ..errors import FuncgradTypeError, FuncgradValueError
from ._core import bcast, defjvp, defvjp, primitive, raw, shape_of, unbroadcast, xp_of
from ._core import namespace as _ns
from .elementwise import absolute, power, where
from .products import matmul
from .reductions import amax, amin, expand_to
from .reductions import sum as _sum
from .shape import as_arrays, check_axis, reshape, swapaxes


def _lapack(name: str, *arrays, pick=None):
    """``xp.linalg.<name>(*arrays)``; float16 (which LAPACK lacks) goes through float32
    and comes back as float16, so every float dtype keeps its dtype."""
    xp = _ns(*arrays)
    half = all(a.dtype == numpy.float16 for a in arrays)
    arrays = tuple(a.astype(numpy.float32) if a.dtype == numpy.float16 else a for a in arrays)
    out = getattr(xp.linalg, name)(*arrays)
    if pick is not None:
        out = out[pick]
    return out.astype(numpy.float16) if half else out


def _T(a):
    """Transpose the last two axes (of each matrix in a stack)."""
    return swapaxes(a, -1, -2)


def _mat(g):
    """``(...)`` -> ``(..., 1, 1)``: one scalar per matrix, broadcastable against it."""
    return reshape(g, tuple(shape_of(g)) + (1, 1))


def _square(a, name: str) -> Any:
    (a,) = as_arrays(a)
    s = shape_of(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise FuncgradValueError(f"linalg.{name}: needs square matrices (..., n, n), got shape {s}")
    return a


# -- inv, det, slogdet -----------------------------------------------------------


@primitive
def _inv(a):
    return _lapack("inv", a)


_inv.name = "inv"
defvjp(_inv, lambda g, ans, a: -matmul(matmul(_T(ans), g), _T(ans)))
defjvp(_inv, lambda t, ans, a: -matmul(matmul(ans, t), ans))


def inv(a: Any) -> Any:
    """``numpy.linalg.inv``: the inverse of each matrix in ``a`` (``(..., n, n)``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.linalg.inv(numpy.diag([2.0, 4.0]))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    a = _square(a, "inv")
    return _inv(a)


@primitive
def _det(a):
    return _lapack("det", a)


_det.name = "det"
defvjp(_det, lambda g, ans, a: _mat(g * ans) * _T(_inv(a)))
defjvp(_det, lambda t, ans, a: ans * _sum(_T(_inv(a)) * t, axis=(-2, -1)))


def det(a: Any) -> Any:
    """``numpy.linalg.det``: the determinant of each matrix in ``a``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> float(fnp.linalg.det(numpy.diag([2.0, 3.0])))
    6.0
    """
    a = _square(a, "det")
    return _det(a)


@primitive
def _logabsdet(a):
    return _lapack("slogdet", a, pick=1)


_logabsdet.name = "slogdet"
defvjp(_logabsdet, lambda g, ans, a: _mat(g) * _T(_inv(a)))
defjvp(_logabsdet, lambda t, ans, a: _sum(_T(_inv(a)) * t, axis=(-2, -1)))


def slogdet(a: Any) -> tuple:
    """``numpy.linalg.slogdet``: ``(sign, logabsdet)`` of each matrix in ``a``.

    ``sign`` is a plain array (no gradient); ``logabsdet`` is differentiable.

    >>> import numpy, funcgrad.numpy as fnp
    >>> sign, logdet = fnp.linalg.slogdet(numpy.diag([-1.0, 1.0]))
    >>> float(sign), float(logdet)
    (-1.0, 0.0)
    """
    a = _square(a, "slogdet")
    v = raw(a)
    return _lapack("slogdet", v, pick=0), _logabsdet(a)


# -- solve -------------------------------------------------------------------------


@primitive
def _solve(a, b):
    # b is a stack of matrices (..., n, k).  Batch axes are broadcast here, not
    # left to the library: NumPy 1.x guesses "stack of vectors" from the ranks,
    # and not every namespace broadcasts batches.
    xp = _ns(a, b)
    batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    return _lapack("solve", a, b)


_solve.name = "solve"


def _solve_da(g, ans, a, b):
    return unbroadcast(-matmul(_solve(_T(a), g), _T(ans)), a.shape)


defvjp(_solve, _solve_da, lambda g, ans, a, b: unbroadcast(_solve(_T(a), g), b.shape))
defjvp(
    _solve,
    lambda t, ans, a, b: bcast(-_solve(a, matmul(t, ans)), ans),
    lambda t, ans, a, b: bcast(_solve(a, t), ans),
)


def solve(a: Any, b: Any) -> Any:
    """``numpy.linalg.solve``: ``x`` with ``a @ x == b``.

    As in NumPy 2, ``b`` is a vector when it is 1-d (shape ``(n,)``, result
    ``(..., n)``) and otherwise a stack of matrices ``(..., n, k)``; batch axes
    broadcast.  (A stack of vectors is ``b[..., None]``.)

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.linalg.solve(numpy.diag([2.0, 4.0]), numpy.array([1.0, 1.0]))
    array([0.5 , 0.25])
    """
    a = _square(a, "solve")
    a, b = as_arrays(a, b)
    if len(shape_of(b)) == 1:
        x = _solve(a, reshape(b, (-1, 1)))
        return reshape(x, tuple(shape_of(x))[:-1])
    return _solve(a, b)


# -- cholesky ------------------------------------------------------------------------


@primitive
def _cholesky(a):
    return _lapack("cholesky", a)


_cholesky.name = "cholesky"


def _phi(x):
    """The lower triangle of each matrix, with its diagonal halved."""
    n = shape_of(x)[-1]
    xp, dtype = xp_of(x), raw(x).dtype
    return x * (xp.tril(xp.ones((n, n), dtype)) - xp.eye(n, dtype=dtype) / 2)


def _cholesky_vjp(g, ans, a):
    # a = L L^T  =>  L^-1 da L^-T = Phi^-1(L^-1 dL) + its transpose; transposed:
    linv = _inv(ans)
    s = matmul(matmul(_T(linv), _phi(matmul(_T(ans), g))), linv)
    return (s + _T(s)) / 2


def _cholesky_jvp(t, ans, a):
    linv = _inv(ans)
    return matmul(ans, _phi(matmul(matmul(linv, (t + _T(t)) / 2), _T(linv))))


defvjp(_cholesky, _cholesky_vjp)
defjvp(_cholesky, _cholesky_jvp)


def cholesky(a: Any) -> Any:
    """``numpy.linalg.cholesky``: lower-triangular ``L`` with ``a = L @ L.T``.

    ``a`` is assumed symmetric positive definite; the gradient is symmetric
    (see the module notes).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.linalg.cholesky(numpy.diag([4.0, 9.0]))
    array([[2., 0.],
           [0., 3.]])
    """
    a = _square(a, "cholesky")
    return _cholesky(a)


# -- norm ----------------------------------------------------------------------------


@primitive
def _norm2(x, axis=None, keepdims=False):
    xp = _ns(x)
    return xp.sqrt(xp.sum(x * x, axis=axis, keepdims=keepdims))


_norm2.name = "norm"


def _nonzero(ans):
    """``ans`` with its zeros replaced by ones (zeros carry no gradient)."""
    v = raw(ans)
    return where(v == 0, xp_of(v).ones((), v.dtype), ans)


defvjp(_norm2, lambda g, ans, x, axis=None, keepdims=False:
       x * expand_to(g / _nonzero(ans), x.shape, axis, keepdims))
defjvp(_norm2, lambda t, ans, x, axis=None, keepdims=False:
       _sum(x * t, axis=axis, keepdims=keepdims) / _nonzero(ans))


def _vector_norm(x, ord, axis, keepdims):
    if ord is None or ord == 2:
        return _norm2(x, axis=axis, keepdims=keepdims)
    if ord == numpy.inf:
        return amax(absolute(x), axis=axis, keepdims=keepdims)
    if ord == -numpy.inf:
        return amin(absolute(x), axis=axis, keepdims=keepdims)
    if ord == 1:
        return _sum(absolute(x), axis=axis, keepdims=keepdims)
    if ord == 0:  # a count: plain data
        v = raw(x)
        return xp_of(v).sum(v != 0, axis=axis, keepdims=keepdims).astype(v.dtype)
    if not isinstance(ord, numbers.Real):
        raise FuncgradTypeError(f"linalg.norm: invalid norm order {ord!r} for vectors")
    return power(_sum(power(absolute(x), ord), axis=axis, keepdims=keepdims), 1 / ord)


def _matrix_norm(x, ord, axes, keepdims):
    row, col = axes
    if ord is None or ord == "fro":
        return _norm2(x, axis=axes, keepdims=keepdims)
    if ord in (1, -1, numpy.inf, -numpy.inf):
        # 1: the largest column sum of |x|; inf: the largest row sum.
        inner, outer = (row, col) if ord in (1, -1) else (col, row)
        ext = amax if ord > 0 else amin
        out = ext(_sum(absolute(x), axis=inner, keepdims=True), axis=outer, keepdims=True)
        if keepdims:
            return out
        return reshape(out, tuple(n for i, n in enumerate(shape_of(x)) if i not in axes))
    if ord in (2, -2, "nuc"):
        raise FuncgradValueError(
            f"linalg.norm: ord={ord!r} for matrices needs singular values, not supported yet"
        )
    raise FuncgradValueError(f"linalg.norm: invalid norm order {ord!r} for matrices")


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.linalg.norm``: vector norms (``ord`` None/2, 1, inf, -inf, 0, p) over
    one axis, matrix norms (``ord`` None/'fro', 1, -1, inf, -inf) over two.

    With ``axis=None`` and ``ord=None`` it is the 2-norm of ``x.ravel()``.  The
    gradient of the 2-norm at ``x = 0`` is the subgradient 0 (never NaN).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.linalg.norm)(numpy.array([3.0, 4.0]))
    array([0.6, 0.8])
    >>> fg.grad(fnp.linalg.norm)(numpy.zeros(2))
    array([0., 0.])
    """
    (x,) = as_arrays(x)
    ndim = len(shape_of(x))
    if axis is None:
        if ord is None:
            return _norm2(x, axis=None, keepdims=keepdims)
        if ndim not in (1, 2):
            raise FuncgradValueError("linalg.norm: improper number of dimensions to norm")
        axes = tuple(range(ndim))
    else:
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        axes = tuple(check_axis(a, ndim, "linalg.norm") for a in axes)
        if len(set(axes)) != len(axes):
            raise FuncgradValueError(f"linalg.norm: duplicate axes in {axis}")
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise FuncgradValueError("linalg.norm: improper number of dimensions to norm")


__all__ = ["cholesky", "det", "inv", "norm", "slogdet", "solve"]
