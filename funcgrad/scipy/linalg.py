"""``funcgrad.scipy.linalg``: SciPy's linear algebra, differentiable (layer 7).

Triangular solves, Cholesky and LU factorizations and their solves, the
matrix exponential and square root, and Sylvester equations, each with rules
written in funcgrad functions (the primitives themselves among them), so
every order works in both modes; and :mod:`funcgrad.numpy.linalg`'s
functions under SciPy's names.  Matrices are 2-D, as SciPy takes them.

Gradients with respect to a symmetric matrix (the argument of
:func:`cho_factor` and :func:`cholesky`) are symmetric: the derivative along
symmetric perturbations, as for ``fnp.linalg.cholesky`` and ``eigh``.

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy import linalg
>>> a = numpy.array([[4.0, 1.0], [1.0, 3.0]])
>>> x = linalg.cho_solve(linalg.cho_factor(a), numpy.ones(2))
>>> bool(numpy.allclose(a @ x, 1.0))
True
"""

from __future__ import annotations

from typing import Any

import numpy

from .. import numpy as fnp
from ..batching import NOT_MAPPED as _NOT_MAPPED
from ..batching import per_example as _per_example_call
from ..errors import FuncgradValueError
from ..numpy._core import raw, xp_of
from ..numpy._linear import bcast
from ..numpy.linalg import det, eigh, inv, norm, slogdet, solve, svd
from ..primitive import defjvp, defvjp
from ..primitive import primitive as _make_primitive
from ..translation import guarded
from . import _backend

__all__ = [
    "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "inv", "lu_factor",
    "lu_solve", "norm", "slogdet", "solve", "solve_banded", "solve_sylvester", "solve_triangular", "sqrtm", "svd",
]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


def _primitive(fun):
    prim = _make_primitive(fun)
    prim.library = True
    return prim


def _T(a):
    return fnp.transpose(a)


def _H(a):
    """The conjugate transpose (the transpose of a real matrix)."""
    return fnp.conj(_T(a)) if fnp.iscomplexobj(a) else _T(a)


def _matrix(a: Any, name: str, square: bool = True) -> Any:
    a = fnp.asarray(a) if isinstance(a, (list, tuple)) else a
    s = getattr(a, "shape", ())
    if len(s) != 2 or square and s[0] != s[1]:
        raise FuncgradValueError(
            f"funcgrad.scipy.linalg.{name}: needs a {'square ' if square else ''}matrix "
            f"(2-D), got shape {s}"
        )
    return a


def _scipy(name: str, *args: Any, **kwargs: Any) -> Any:
    return _backend.fit(_backend.call("linalg", name, args, kwargs), args)


# -- solve_triangular -------------------------------------------------------------------

_TRANS = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}


@_primitive
def _solve_tri(a, b, trans=0, lower=False, unit_diagonal=False):
    return _scipy("solve_triangular", a, b, trans=trans, lower=lower,
                  unit_diagonal=unit_diagonal)


_solve_tri.name = "solve_triangular"


def _triangle(m: Any, lower: bool, unit: bool) -> Any:
    """The part of ``m`` that a triangular matrix's entries are read from."""
    if lower:
        return fnp.tril(m, -1 if unit else 0)
    return fnp.triu(m, 1 if unit else 0)


def _cols(v: Any) -> Any:
    return fnp.reshape(v, (v.shape[0], -1))


def _tri_vjp_a(g, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    gb = _solve_tri(a, g, trans=1 - trans, lower=lower, unit_diagonal=unit_diagonal)
    outer = fnp.matmul(_cols(gb), _T(_cols(ans))) if trans == 0 else fnp.matmul(
        _cols(ans), _T(_cols(gb)))
    return -_triangle(outer, lower, unit_diagonal)


def _tri_jvp_a(t, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    dt = _triangle(t, lower, unit_diagonal)
    rhs = fnp.matmul(dt if trans == 0 else _T(dt), _cols(ans))
    out = _solve_tri(a, -rhs, trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    return fnp.reshape(out, ans.shape)


defvjp(
    _solve_tri,
    _tri_vjp_a,
    lambda g, ans, a, b, trans=0, lower=False, unit_diagonal=False: _solve_tri(
        a, g, trans=1 - trans, lower=lower, unit_diagonal=unit_diagonal),
)
defjvp(
    _solve_tri,
    _tri_jvp_a,
    lambda t, ans, a, b, trans=0, lower=False, unit_diagonal=False: _solve_tri(
        a, bcast(t, b), trans=trans, lower=lower, unit_diagonal=unit_diagonal),
)


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Any:
    """Solve ``a x = b`` (``trans=1`` or ``'T'``: ``a.T x = b``; ``2`` or ``'C'``:
    ``a.conj().T x = b``) for a triangular ``a``.

    Only the triangle ``lower`` names is read (without its diagonal when
    ``unit_diagonal``), and the gradient in ``a`` lies in that triangle.

    >>> import numpy, funcgrad as fg
    >>> from funcgrad.scipy import linalg
    >>> a = numpy.array([[2.0, 0.0], [1.0, 4.0]])
    >>> linalg.solve_triangular(a, numpy.array([2.0, 9.0]), lower=True)
    array([1., 2.])
    >>> fg.grad(lambda a: linalg.solve_triangular(a, numpy.ones(2), lower=True).sum())(a)
    array([[-0.1875 , -0.     ],
           [-0.125  , -0.03125]])
    """
    if trans not in _TRANS:
        raise FuncgradValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', "
                                 f"got {trans!r}")
    a = _matrix(a, "solve_triangular")
    b = fnp.asarray(b) if isinstance(b, (list, tuple)) else b
    if not getattr(b, "shape", ()) or b.shape[0] != a.shape[0]:
        raise FuncgradValueError(f"solve_triangular: b of shape {getattr(b, 'shape', ())} for "
                                 f"a matrix of shape {a.shape}")
    if trans in (2, "C") and fnp.iscomplexobj(a):  # a^H x = b is conj(a)^T x = b
        a = fnp.conj(a)
    return _solve_tri(a, b, trans=_TRANS[trans], lower=bool(lower),
                      unit_diagonal=bool(unit_diagonal))


# -- Cholesky ------------------------------------------------------------------------------


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """SciPy's Cholesky factor: upper ``U`` with ``a = U^H U`` (``lower=True``: ``L``
    with ``a = L L^H``; ``^H`` the conjugate transpose, the transpose when real).

    ``a`` is taken as Hermitian (its Hermitian part, the symmetric part when
    real, is factored), and the gradient in ``a`` is Hermitian.

    >>> import numpy
    >>> from funcgrad.scipy import linalg
    >>> linalg.cholesky(numpy.array([[4.0, 2.0], [2.0, 5.0]]))
    array([[2., 1.],
           [0., 2.]])
    """
    a = _matrix(a, "cholesky")
    factor = fnp.linalg.cholesky((a + _H(a)) * 0.5)
    return factor if lower else _H(factor)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple:
    """``(c, lower)``: the Cholesky factor of ``a`` for :func:`cho_solve`.

    Unlike SciPy's, ``c``'s other triangle holds zeros (SciPy leaves whatever
    was there); :func:`cho_solve` reads only the factor's triangle either way.
    The gradient in ``a`` is symmetric.

    >>> import numpy
    >>> from funcgrad.scipy import linalg
    >>> c, low = linalg.cho_factor(numpy.array([[4.0, 2.0], [2.0, 5.0]]), lower=True)
    >>> c, low
    (array([[2., 0.],
           [1., 2.]]), True)
    """
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(c_and_lower: tuple, b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """Solve ``a x = b`` from ``(c, lower) = cho_factor(a)``, differentiable in ``c`` and ``b``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> a = numpy.array([[4.0, 2.0], [2.0, 5.0]])
    >>> f = lambda a: linalg.cho_solve(linalg.cho_factor(a), numpy.ones(2)).sum()
    >>> bool(numpy.allclose(fg.grad(f)(a), fg.grad(lambda a: fnp.linalg.solve(a, numpy.ones(2)).sum())(a)))
    True
    """
    c, lower = c_and_lower
    c = _matrix(c, "cho_solve")
    if lower:  # a = L L^H
        return solve_triangular(c, solve_triangular(c, b, lower=True), trans="C", lower=True)
    return solve_triangular(c, solve_triangular(c, b, trans="C"), lower=False)  # a = U^H U


# -- LU -----------------------------------------------------------------------------------


def _permutation(piv: Any) -> numpy.ndarray:
    """The row order ``perm`` with ``a[perm] = P a`` from LAPACK's row swaps ``piv``."""
    swaps = numpy.asarray(_backend.to_device(raw(piv), "cpu") if not isinstance(
        raw(piv), numpy.ndarray) else raw(piv))
    perm = numpy.arange(len(swaps))
    for i, p in enumerate(swaps):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


def _rows(m: Any, perm: numpy.ndarray) -> Any:
    return fnp.take(m, _backend.index_like(perm, m), axis=0)


def _factors(lu: Any) -> tuple:
    n = lu.shape[0]
    eye = fnp.eye(n, dtype=raw(lu).dtype, like=lu)
    return fnp.tril(lu, -1) + eye, fnp.triu(lu)


@_primitive
def _lu(a, perm):
    return _backend.fit(_backend.call("linalg", "lu_factor", (a,))[0], (a,))


_lu.name = "lu_factor"


def _lu_vjp(g, ans, a, perm):
    low, up = _factors(ans)
    m = fnp.tril(fnp.matmul(_T(low), fnp.tril(g, -1)), -1) + fnp.triu(
        fnp.matmul(fnp.triu(g), _T(up)))
    y = _solve_tri(low, m, trans=1, lower=True, unit_diagonal=True)      # L^-T M
    z = _T(_solve_tri(up, _T(y), lower=False))                          # ... U^-T
    return _rows(z, numpy.argsort(perm))                               # P^T ...


def _lu_jvp(t, ans, a, perm):
    low, up = _factors(ans)
    w = _solve_tri(low, _rows(t, perm), lower=True, unit_diagonal=True)  # L^-1 P dA
    f = _T(_solve_tri(up, _T(w), trans=1, lower=False))                  # ... U^-1
    return fnp.matmul(low, fnp.tril(f, -1)) + fnp.matmul(fnp.triu(f), up)


defvjp(_lu, _lu_vjp, None)
defjvp(_lu, _lu_jvp, None)


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple:
    """``(lu, piv)``: the pivoted LU factorization ``P a = L U`` for :func:`lu_solve`.

    ``lu`` packs ``L`` (below the diagonal; its unit diagonal is implicit)
    and ``U``; ``piv`` is LAPACK's row swaps, data.  Differentiable in ``a``
    through ``lu``, where ``a`` is nonsingular and the pivots stay the same.

    >>> import numpy
    >>> from funcgrad.scipy import linalg
    >>> lu, piv = linalg.lu_factor(numpy.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> lu, piv
    (array([[3.        , 4.        ],
           [0.33333333, 0.66666667]]), array([1, 1], dtype=int32))
    """
    a = _matrix(a, "lu_factor")
    out = _per_example_call(lu_factor, a, "lu_factor")  # fg.vmap: the pivots are data
    if out is not _NOT_MAPPED:                           # of each example
        return out
    _, piv = _backend.call("linalg", "lu_factor", (raw(a),))
    return _lu(a, _permutation(piv)), piv


def lu_solve(lu_and_piv: tuple, b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """Solve ``a x = b`` (``trans=1``: ``a.T x = b``; ``trans=2``: ``a.conj().T x = b``)
    from ``lu_factor(a)``.

    >>> import numpy, funcgrad as fg
    >>> from funcgrad.scipy import linalg
    >>> a = numpy.array([[1.0, 2.0], [3.0, 4.0]])
    >>> linalg.lu_solve(linalg.lu_factor(a), numpy.array([5.0, 11.0]))
    array([1., 2.])
    """
    lu, piv = lu_and_piv
    lu = _matrix(lu, "lu_solve")
    perm = _permutation(piv)
    low, up = _factors(lu)
    if _TRANS.get(trans) == 0:
        y = solve_triangular(low, _rows(b, perm), lower=True, unit_diagonal=True)
        return solve_triangular(up, y, lower=False)
    if trans not in _TRANS:
        raise FuncgradValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    trans = "C" if trans in (2, "C") else "T"  # (P^T L U)^H = U^H L^H P
    y = solve_triangular(up, b, trans=trans, lower=False)
    z = solve_triangular(low, y, trans=trans, lower=True, unit_diagonal=True)
    return _rows(z, numpy.argsort(perm))


# -- matrix functions ---------------------------------------------------------------------


@_primitive
def _expm(a):
    return _scipy("expm", a)


_expm.name = "expm"


def _frechet(a, e):
    """The derivative of ``expm`` at ``a`` in the direction ``e``: the upper right block of
    ``expm([[a, e], [0, a]])``."""
    n = a.shape[0]
    zero = fnp.zeros_like(a)
    big = fnp.concatenate([fnp.concatenate([a, e], axis=1),
                           fnp.concatenate([zero, a], axis=1)], axis=0)
    return _expm(big)[:n, n:]


defvjp(_expm, lambda g, ans, a: _frechet(_T(a), g))
defjvp(_expm, lambda t, ans, a: _frechet(a, t))


def expm(a: Any) -> Any:
    """The matrix exponential; its derivative is the Fréchet derivative, itself an
    ``expm`` of a block matrix, so every order works.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.expm(numpy.zeros((2, 2)))
    array([[1., 0.],
           [0., 1.]])
    >>> fg.grad(lambda a: fnp.trace(linalg.expm(a)))(numpy.zeros((2, 2)))
    array([[1., 0.],
           [0., 1.]])
    """
    return _expm(_matrix(a, "expm"))


@_primitive
def _sylvester(a, b, q):
    return _scipy("solve_sylvester", a, b, q)


_sylvester.name = "solve_sylvester"


def _sylvester_adjoint(g, ans, a, b):
    return _sylvester(_T(a), _T(b), g)


defvjp(
    _sylvester,
    lambda g, ans, a, b, q: -fnp.matmul(_sylvester_adjoint(g, ans, a, b), _T(ans)),
    lambda g, ans, a, b, q: -fnp.matmul(_T(ans), _sylvester_adjoint(g, ans, a, b)),
    lambda g, ans, a, b, q: _sylvester_adjoint(g, ans, a, b),
)
defjvp(
    _sylvester,
    lambda t, ans, a, b, q: _sylvester(a, b, -fnp.matmul(t, ans)),
    lambda t, ans, a, b, q: _sylvester(a, b, -fnp.matmul(ans, t)),
    lambda t, ans, a, b, q: _sylvester(a, b, t),
)


def solve_sylvester(a: Any, b: Any, q: Any) -> Any:
    """Solve ``a x + x b = q``, differentiable in ``a``, ``b`` and ``q``.

    >>> import numpy
    >>> from funcgrad.scipy import linalg
    >>> linalg.solve_sylvester(numpy.eye(2), numpy.eye(2), numpy.ones((2, 2)))
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    a, b = _matrix(a, "solve_sylvester"), _matrix(b, "solve_sylvester")
    q = _matrix(q, "solve_sylvester", square=False)
    return _sylvester(a, b, q)


@_primitive
def _sqrtm(a):
    return _scipy("sqrtm", a)


_sqrtm.name = "sqrtm"
defvjp(_sqrtm, lambda g, ans, a: _sylvester(_T(ans), _T(ans), g))
defjvp(_sqrtm, lambda t, ans, a: _sylvester(ans, ans, t))


def sqrtm(a: Any) -> Any:
    """The principal matrix square root ``x`` (``x @ x = a``); its derivative solves a
    Sylvester equation.  Where SciPy's result is complex, so is this one.

    >>> import numpy
    >>> from funcgrad.scipy import linalg
    >>> linalg.sqrtm(numpy.array([[4.0, 0.0], [0.0, 9.0]]))
    array([[2., 0.],
           [0., 3.]])
    """
    return _sqrtm(_matrix(a, "sqrtm"))


def solve_banded(l_and_u: tuple, ab: Any, b: Any, overwrite_ab: bool = False,
                 overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """Solve ``a x = b`` for a banded ``a`` given in SciPy's band storage:
    ``ab[u + i - j, j] == a[i, j]`` for the ``l`` diagonals below and ``u`` above.

    Differentiable in ``ab`` and ``b`` to any order: ``a`` is assembled from its
    diagonals and solved densely (``O(n^3)``, not SciPy's banded ``O(n (l + u)^2)``);
    the entries of ``ab`` outside the band are not used, and their gradient is zero.

    >>> import numpy, scipy.linalg
    >>> from funcgrad.scipy import linalg
    >>> ab = numpy.array([[0.0, 1.0, 1.0], [4.0, 4.0, 4.0], [1.0, 1.0, 0.0]])
    >>> b = numpy.array([1.0, 2.0, 3.0])
    >>> bool(numpy.allclose(linalg.solve_banded((1, 1), ab, b),
    ...                     scipy.linalg.solve_banded((1, 1), ab, b)))
    True
    """
    lower, upper = (int(k) for k in l_and_u)
    ab = fnp.asarray(ab) if isinstance(ab, (list, tuple)) else ab
    shape = getattr(ab, "shape", ())
    if len(shape) != 2 or shape[0] != lower + upper + 1 or lower < 0 or upper < 0:
        raise FuncgradValueError(
            f"solve_banded: ab of shape {shape} does not hold l={lower} lower and u={upper} "
            f"upper diagonals (it needs l + u + 1 = {lower + upper + 1} rows)")
    n = shape[1]
    a = None
    for k in range(-min(lower, n - 1), min(upper, n - 1) + 1):
        row = ab[upper - k]
        band = fnp.diag(row[k:] if k >= 0 else row[:n + k], k)
        a = band if a is None else a + band
    return fnp.linalg.solve(a, b)


for _name in ("solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu_factor",
              "lu_solve", "expm", "solve_sylvester", "sqrtm", "solve_banded"):
    globals()[_name] = guarded(globals()[_name], _name)
del _name
del xp_of


# fg.vmap: SciPy's matrix functions take one matrix (or one system): one call per example.
from ..numpy._batching import per_example as _per_example

for _prim in (_solve_tri, _lu, _expm, _sylvester, _sqrtm):
    _prim.batch = _per_example(_prim)
del _prim
