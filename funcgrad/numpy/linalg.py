"""``funcgrad.numpy.linalg``: inverses, determinants, solves, Cholesky, the eigen,
singular value and QR decompositions, norms (layer 4).

Every function takes stacks of matrices ``(..., m, n)`` as NumPy does.  Rules
are written with ``fnp`` operations (``inv``, ``solve``, ``matmul``...), so
every order works in both modes.
Unlike NumPy, float16 is accepted: it is computed in float32 and returned as
float16.

Notes on the derivatives:

- ``det`` and ``slogdet``: the gradient is ``det(a) * inv(a).T`` (``inv(a).T``
  for ``logabsdet``); at a singular matrix it does not exist and ``inv`` fails.
- ``slogdet`` returns ``(sign, logabsdet)``: ``sign`` is plain data (its
  derivative is 0 almost everywhere), ``logabsdet`` is differentiable.
- ``cholesky`` and ``eigh`` assume a symmetric input (NumPy reads only one
  triangle) and follow the symmetric convention of JAX and PyTorch: the
  gradient is the symmetric matrix ``S`` with ``<S, da> = <dL, gL>`` for
  every *symmetric* ``da``, and the tangent uses the symmetric part of
  ``da``.  Functions of a general matrix should symmetrize it first,
  ``cholesky((a + a.T) / 2)``.
- ``norm`` with ``ord=None`` (or 2 for vectors, ``'fro'`` for matrices) has
  gradient ``x / norm(x)``; at ``x = 0`` it returns the subgradient 0, never NaN.
- ``eigh``, ``svd`` and ``qr``: the standard formulas (see each function);
  eigenvectors and singular vectors have derivatives only through functions
  that do not depend on their signs, and none at repeated eigenvalues or
  singular values.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda a: fnp.linalg.det(a))(numpy.diag([2.0, 3.0]))
array([[3., 0.],
       [0., 2.]])
"""

from __future__ import annotations

import numbers
from typing import Any, NamedTuple

import numpy

from ..errors import BatchedValueError, FuncgradTypeError, FuncgradValueError, describe
from ._core import defjvp, defvjp, primitive, raw, shape_of, xp_of
from ._core import namespace as _ns
from ._linear import bcast, expand_to, unbroadcast
from .elementwise import absolute, conjugate, imag, power, real, where
from .fft import _to_complex
from .products import matmul
from .reductions import amax, amin
from .reductions import sum as _sum
from .shape import (
    as_arrays,
    astype,
    check_axis,
    concatenate,
    diagonal,
    expand_dims,
    getitem,
    moveaxis,
    reshape,
    swapaxes,
    tril,
    triu,
)


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


def _complex(x) -> bool:
    return raw(x).dtype.kind == "c"


def _cj(x):
    """``conj(x)`` for complex ``x``; a real ``x`` unchanged (no node)."""
    return conjugate(x) if _complex(x) else x


def _re(x):
    """``real(x)`` for complex ``x``; a real ``x`` unchanged."""
    return real(x) if _complex(x) else x


def _H(a):
    """The conjugate transpose of the last two axes (the transpose, for real ``a``)."""
    return _cj(_T(a))


def _as_dtype(x, like):
    """Real ``x`` in ``like``'s complex dtype when ``like`` is complex (packed factors)."""
    if _complex(like) and not _complex(x):
        return astype(x, raw(like).dtype)
    return x


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
# Complex a: d logabsdet = real(tr(a^-1 da)), whose transpose is g a^-T (g real).
defvjp(_logabsdet, lambda g, ans, a: _mat(g) * _T(_inv(a)))
defjvp(_logabsdet, lambda t, ans, a: _re(_sum(_T(_inv(a)) * t, axis=(-2, -1))))


@primitive
def _sign_det(a):
    return _lapack("slogdet", a, pick=0)


_sign_det.name = "slogdet_sign"
# The sign of a complex matrix, det / |det|: d sign = sign * 1j * imag(tr(a^-1 da)); its
# transpose is 1j * imag(g * sign) * a^-T.  (A real sign is +-1: derivative 0.)
defvjp(_sign_det, lambda g, ans, a: _mat(1j * imag(g * ans)) * _T(_inv(a)))
defjvp(_sign_det, lambda t, ans, a: ans * (1j * imag(_sum(_T(_inv(a)) * t, axis=(-2, -1)))))


def slogdet(a: Any) -> tuple:
    """``numpy.linalg.slogdet``: ``(sign, logabsdet)`` of each matrix in ``a``.

    ``logabsdet`` is differentiable.  For real ``a``, ``sign`` (+-1) is a plain
    array (its derivative is 0); for complex ``a`` it is ``det / |det|``, a
    complex number of modulus 1, and differentiable too.

    >>> import numpy, funcgrad.numpy as fnp
    >>> sign, logdet = fnp.linalg.slogdet(numpy.diag([-1.0, 1.0]))
    >>> float(sign), float(logdet)
    (-1.0, 0.0)
    """
    a = _square(a, "slogdet")
    v = raw(a)
    if v.dtype.kind == "c":
        return _sign_det(a), _logabsdet(a)
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
    # a = L L^H  =>  L^-1 da L^-H = Phi^-1(L^-1 dL) + its conjugate transpose; transposed
    # (for real a, H is T and the conjugates vanish):
    linv = _inv(ans)
    s = matmul(matmul(_T(linv), _phi(matmul(_T(ans), g))), _cj(linv))
    return (s + _H(s)) / 2


def _cholesky_jvp(t, ans, a):
    linv = _inv(ans)
    return matmul(ans, _phi(matmul(matmul(linv, (t + _H(t)) / 2), _H(linv))))


defvjp(_cholesky, _cholesky_vjp)
defjvp(_cholesky, _cholesky_jvp)


def cholesky(a: Any) -> Any:
    """``numpy.linalg.cholesky``: lower-triangular ``L`` with ``a = L @ L.T``
    (``L @ L.conj().T`` for complex ``a``).

    ``a`` is assumed symmetric (Hermitian) positive definite; the gradient is
    symmetric (Hermitian), and the tangent uses the symmetric (Hermitian)
    part of ``da`` (see the module notes).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.linalg.cholesky(numpy.diag([4.0, 9.0]))
    array([[2., 0.],
           [0., 3.]])
    """
    a = _square(a, "cholesky")
    return _cholesky(a)


# -- eigh, svd, qr: decompositions ---------------------------------------------------
# A primitive has one output, so each decomposition is one primitive whose
# output packs its factors along the second-to-last axis (``eigh``: the
# eigenvalues as a first row above the eigenvectors); the public functions
# unpack it with (differentiable) indexing.  One LAPACK call serves every
# factor, and a rule sees the cotangents of all factors at once.  The rules are
# the standard formulas, written with ``fnp`` operations (the packed primitive
# itself among them), so every order works in both modes.


def _lapack_factors(name: str, a, **kwargs) -> tuple:
    """``xp.linalg.<name>(a, **kwargs)`` as a tuple; float16 through float32."""
    xp = _ns(a)
    half = a.dtype == numpy.float16
    out = getattr(xp.linalg, name)(a.astype(numpy.float32) if half else a, **kwargs)
    out = tuple(out) if isinstance(out, tuple) or hasattr(out, "_fields") else (out,)
    return tuple(o.astype(numpy.float16) for o in out) if half else out


def _rows(p, start: int, stop: int | None = None):
    """Rows ``start:stop`` of each packed matrix (differentiable)."""
    return getitem(p, (Ellipsis, slice(start, stop), slice(None)))


def _cols(p, start: int, stop: int | None = None):
    return getitem(p, (Ellipsis, slice(start, stop)))


def _row(p, i: int):
    return getitem(p, (Ellipsis, i, slice(None)))


def _eye_like(x, n: int):
    v = raw(x)
    return xp_of(v).eye(n, dtype=v.dtype)


def _diag_embed(d):
    """Vectors ``(..., k)`` -> diagonal matrices ``(..., k, k)``."""
    return expand_dims(d, -1) * _eye_like(d, shape_of(d)[-1])


def _diag_part(m):
    return diagonal(m, axis1=-2, axis2=-1)


def _inverse_gaps(lam):
    """``F[..., i, j] = 1 / (lam_j - lam_i)``, and 0 where ``lam_j == lam_i`` exactly
    (the diagonal, and ties: see the notes on repeated eigenvalues)."""
    gaps = expand_dims(lam, -2) - expand_dims(lam, -1)
    v = raw(gaps)
    tie = v == 0  # data; the double ``where`` keeps the derivatives of F finite too
    one, zero = xp_of(v).ones((), v.dtype), xp_of(v).zeros((), v.dtype)
    return where(tie, zero, 1 / where(tie, one, gaps))


def _pad_cols(m, width: int):
    """``m`` with zero columns appended up to ``width`` (raw zeros: no gradient)."""
    s = tuple(shape_of(m))
    if s[-1] == width:
        return m
    v = raw(m)
    return concatenate([m, xp_of(v).zeros(s[:-1] + (width - s[-1],), v.dtype)], axis=-1)


# eigh --------------------------------------------------------------------------------


@primitive
def _eigh(a, UPLO="L"):
    w, v = _lapack_factors("eigh", a, UPLO=UPLO)
    return _ns(w, v).concatenate([w[..., None, :], v], axis=-2)


_eigh.name = "eigh"


def _eigh_vjp(g, ans, a, UPLO="L"):
    # <gw, dw> + <gv, dv> = <conj(v) (diag(gw) + F o (v^T gv)) v^T, da_sym>
    # (complex: the packed eigenvalues are complex with zero imaginary part; their
    # cotangent's imaginary part meets none of w's tangent, and is dropped)
    w, v = _re(_row(ans, 0)), _rows(ans, 1)
    gw, gv = _re(_row(g, 0)), _rows(g, 1)
    inner = _diag_embed(gw) + _inverse_gaps(w) * matmul(_T(v), gv)
    s = matmul(matmul(_cj(v), inner), _T(v))
    return (s + _H(s)) / 2  # the symmetric (Hermitian) convention of JAX and PyTorch


def _eigh_jvp(t, ans, a, UPLO="L"):
    # P = v^H da v: dw = real(diag(P)), dv = v (F o P), F_ij = 1 / (w_j - w_i)
    w, v = _re(_row(ans, 0)), _rows(ans, 1)
    p = matmul(matmul(_H(v), (t + _H(t)) / 2), v)  # the Hermitian part of the tangent
    dv = matmul(v, _inverse_gaps(w) * p)
    dw = _diag_part(p)
    if _complex(p):  # real (P is Hermitian), kept in the packed complex dtype
        dw = dw - 1j * imag(dw)
    return concatenate([expand_dims(dw, -2), dv], axis=-2)


defvjp(_eigh, _eigh_vjp)
defjvp(_eigh, _eigh_jvp)


class EighResult(NamedTuple):
    """``(eigenvalues, eigenvectors)``, as NumPy 2 names them."""

    eigenvalues: Any
    eigenvectors: Any


def eigh(a: Any, UPLO: str = "L") -> EighResult:
    """``numpy.linalg.eigh``: eigenvalues ``w`` (ascending) and eigenvectors ``v``
    (columns) of symmetric matrices, ``a = v @ diag(w) @ v.T``.

    As in NumPy only the ``UPLO`` triangle of ``a`` (``'L'``, lower, by default,
    or ``'U'``) is read for the values.  The derivatives follow the symmetric
    convention of JAX and PyTorch (and of :func:`cholesky`): ``a`` is taken
    as a point of the space of symmetric matrices, so the gradient is the
    symmetric matrix ``S`` with ``<S, da> = d(result)`` for every symmetric
    ``da`` (each off-diagonal pair shares its derivative equally, whatever
    ``UPLO``), and a tangent ``da`` acts through its symmetric part
    ``(da + da.T) / 2``.  For a symmetric ``a`` this is what JAX's
    ``jnp.linalg.eigh`` gives.  Finite differences agree along symmetric
    directions; a function of a general matrix should symmetrize it first,
    ``eigh((a + a.T) / 2)``, to make its gradient the derivative in every
    direction.  Formulas: ``dw = diag(P)``, ``dv = v (F o P)`` with
    ``P = v^T sym(da) v`` and ``F_ij = 1/(w_j - w_i)`` off the diagonal.
    For complex (Hermitian) ``a``, read ``v^H`` for ``v^T`` and the Hermitian
    part ``(da + da^H) / 2`` for the symmetric one; the eigenvalues are real.

    Where derivatives are undefined:

    - Eigenvectors are determined up to sign (up to a rotation within a
      repeated eigenvalue's space); only functions that do not depend on that
      choice, such as ``v @ diag(f(w)) @ v.T`` or ``w`` itself, have
      derivatives.  Derivatives of a gauge-dependent function are those of the
      sign LAPACK happened to pick, and may disagree with finite differences.
    - At repeated eigenvalues (exactly equal ``w``) the eigenvectors are not
      differentiable: ``F`` is taken as 0 for the tied pair, which keeps
      gradients through the eigenvalues alone (``sum(f(w))``, a spectral
      function) finite and right, but gradients through the eigenvectors
      there are not derivatives.  Nearly equal eigenvalues give very large
      eigenvector derivatives (``1 / gap``).
    - At *numerically* degenerate eigenvalues (equal to rounding, not
      exactly: ``eye(3)`` perturbed by ``1e-16``), the eigenvector gradients
      are finite but unreliable: they rest on a gap made of rounding errors
      and can be off by several percent or more.  JAX returns NaN there; do
      not trust eigenvector gradients where eigenvalues are that close.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> w, v = fnp.linalg.eigh(numpy.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w
    array([1., 3.])
    >>> fg.grad(lambda a: fnp.linalg.eigh(a)[0].sum())(numpy.eye(2))
    array([[1., 0.],
           [0., 1.]])
    """
    if UPLO not in ("L", "U"):
        raise FuncgradValueError(f"linalg.eigh: UPLO must be 'L' or 'U', got {describe(UPLO)}")
    a = _square(a, "eigh")
    p = _eigh(a, UPLO=UPLO)
    return EighResult(_re(_row(p, 0)), _rows(p, 1))  # complex a: real eigenvalues


# svd ---------------------------------------------------------------------------------


@primitive
def _svd(a, full_matrices=False):
    # Packed as rows: u (m), then s (1), then v = vh^T (n), each padded with zero
    # columns to the widest (only the full matrices of a non-square a differ).
    u, s, vh = _lapack_factors("svd", a, full_matrices=full_matrices)
    xp = _ns(u, s, vh)
    v = xp.swapaxes(vh, -1, -2)
    width = max(u.shape[-1], v.shape[-1])

    def padded(x):
        extra = xp.zeros(x.shape[:-1] + (width - x.shape[-1],), x.dtype)
        return xp.concatenate([x, extra], axis=-1)

    return xp.concatenate([padded(u), padded(s[..., None, :]), padded(v)], axis=-2)


_svd.name = "svd"


def _svd_parts(p, m: int, n: int, full: bool) -> tuple:
    """``(u, s, v)`` from a packed SVD (or a cotangent or tangent of one)."""
    k = min(m, n)
    u = _cols(_rows(p, 0, m), 0, m if full else k)
    s = _cols(_row(p, m), 0, k)
    v = _cols(_rows(p, m + 1), 0, n if full else k)
    return u, s, v


def _complement_cotangent(g1, g2, q1, q2):
    """Fold the cotangent ``g2`` of an orthonormal complement ``q2`` of ``q1`` into that
    of ``q1``: with the gauge ``q2^H dq2 = 0``, ``dq2 = -q1 dq1^H q2``."""
    return g1 - _cj(matmul(matmul(q2, _T(g2)), q1))


def _imag_diag(m):
    """``1j * imag(diag(m))`` as a diagonal matrix (complex ``m``)."""
    return _diag_embed(1j * imag(_diag_part(m)))


# Complex a = U S V^H: the packed v is conj(V), so the rules work with V = conj(v) (and
# its cotangent conj(gv)), H in place of T, real singular values, and the phase gauge
# of each pair (u_i, v_i) fixed by imag(v_i^H dv_i) = 0, as in JAX: the imaginary
# part of diag(U^H da V) goes to dU.  For real a, every conj is the identity.
def _svd_vjp(g, ans, a, full_matrices=False):
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    u, s, v = _svd_parts(ans, m, n, full_matrices)
    gu, gs, gv = _svd_parts(g, m, n, full_matrices)
    s, gs, v, gv = _re(s), _re(gs), _cj(v), _cj(gv)
    u1, v1, gu1, gv1 = _cols(u, 0, k), _cols(v, 0, k), _cols(gu, 0, k), _cols(gv, 0, k)
    if full_matrices and m > k:
        gu1 = _complement_cotangent(gu1, _cols(gu, k), u1, _cols(u, k))
    if full_matrices and n > k:
        gv1 = _complement_cotangent(gv1, _cols(gv, k), v1, _cols(v, k))
    f = _inverse_gaps(s * s)  # 1 / (s_j^2 - s_i^2)
    ju, jv = matmul(_T(u1), gu1), matmul(_T(v1), gv1)
    core = ((f * (ju - _H(ju))) * expand_dims(s, -2) + _diag_embed(gs)
            + expand_dims(s, -1) * (f * (jv - _H(jv))))
    if _complex(ju):
        core = core + _imag_diag(ju) / expand_dims(s, -2)
    cu1 = _cj(u1)
    ga = matmul(matmul(cu1, core), _T(v1))
    if m > k:  # (I - u u^H)^T gu s^-1 v^T
        ga = ga + matmul((gu1 - matmul(cu1, ju)) / expand_dims(s, -2), _T(v1))
    if n > k:  # conj(u) s^-1 gv^H (I - v v^H)^*
        ga = ga + matmul(cu1, _T((_cj(gv1) - matmul(v1, _cj(jv))) / expand_dims(s, -2)))
    return ga


def _svd_jvp(t, ans, a, full_matrices=False):
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    u, s, v = _svd_parts(ans, m, n, full_matrices)
    s, v = _re(s), _cj(v)
    u1, v1 = _cols(u, 0, k), _cols(v, 0, k)
    dp = matmul(matmul(_H(u1), t), v1)  # u^H da v
    f = _inverse_gaps(s * s)
    sr, sc = expand_dims(s, -2), expand_dims(s, -1)  # scale columns, rows
    du = matmul(u1, f * (dp * sr + sc * _H(dp)))
    dv = matmul(v1, f * (sc * dp + _H(dp) * sr))
    if _complex(dp):  # the phase of each singular pair: imag(diag(U^H da V)) / s into dU
        du = du + matmul(u1, _imag_diag(dp) / sr)
    if m > k:  # + (I - u u^H) da v s^-1
        du = du + (matmul(t, v1) - matmul(u1, dp)) / sr
    if n > k:  # + (I - v v^H) da^H u s^-1
        dv = dv + (matmul(_H(t), u1) - matmul(v1, _H(dp))) / sr
    if full_matrices and m > k:
        u2 = _cols(u, k)
        du = concatenate([du, -matmul(matmul(u1, _H(du)), u2)], axis=-1)
    if full_matrices and n > k:
        v2 = _cols(v, k)
        dv = concatenate([dv, -matmul(matmul(v1, _H(dv)), v2)], axis=-1)
    width = shape_of(ans)[-1]
    ds = _as_dtype(_re(_diag_part(dp)), dp)  # real, in the packed dtype
    return concatenate([_pad_cols(du, width), _pad_cols(expand_dims(ds, -2), width),
                        _pad_cols(_cj(dv), width)], axis=-2)


defvjp(_svd, _svd_vjp)
defjvp(_svd, _svd_jvp)


@primitive
def _svdvals(a):
    (s,) = _lapack_factors("svd", a, compute_uv=False)
    return s


_svdvals.name = "svdvals"


# The packed ``v`` is vh^T: the right singular vectors V for real a, conj(V) for complex.
def _svdvals_vjp(g, ans, a):  # u diag(g) v^T: no 1/gap, finite at ties
    m, n = shape_of(a)[-2:]
    u, _, v = _svd_parts(_svd(a), m, n, False)
    return _cj(matmul(u * expand_dims(_as_dtype(g, u), -2), _T(v)))  # complex: conj(U) g V^T


def _svdvals_jvp(t, ans, a):  # ds_i = u_i^T da v_i (complex: real(u_i^H da V_i))
    m, n = shape_of(a)[-2:]
    u, _, v = _svd_parts(_svd(a), m, n, False)
    return _re(_sum(_cj(u) * matmul(t, _cj(v)), axis=-2))


defvjp(_svdvals, _svdvals_vjp)
defjvp(_svdvals, _svdvals_jvp)


class SVDResult(NamedTuple):
    """``(U, S, Vh)``, as NumPy 2 names them."""

    U: Any
    S: Any
    Vh: Any


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    """``numpy.linalg.svd``: ``a = U @ diag(S) @ Vh`` for matrices ``(..., m, n)``,
    singular values ``S`` descending; ``compute_uv=False`` gives ``S`` alone.

    Derivatives (Townsend's formulas, with ``F_ij = 1/(s_j^2 - s_i^2)``):
    ``dS = diag(U^T da V)``; ``dU`` and ``dV`` couple the singular vectors
    through ``F``, and, for non-square ``a``, reach outside their span through
    ``1/S``.  ``S`` alone (``compute_uv=False``, and the norms built on it) has
    gradient ``U diag(g) Vh``, defined wherever the singular values are
    distinct (at ties, one subgradient).

    ``full_matrices=True`` (NumPy's default) adds to ``U`` (``Vh``) an
    orthonormal basis of the complement of its first ``min(m, n)`` columns
    (rows).  That basis is arbitrary up to a rotation; its derivative is taken
    in the gauge ``U2^T dU2 = 0`` (``dU2 = -U1 dU1^T U2``), so that functions
    that do not depend on the rotation, such as ``U2 @ U2.T``, get their true
    derivatives.  ``hermitian=True`` is not supported (``eigh`` is the tool).

    Where derivatives are undefined: ``U`` and ``Vh`` are determined up to a
    sign per singular pair (``u_i, v_i -> -u_i, -v_i``), so only functions
    invariant under it (``U @ diag(f(S)) @ Vh``, ``U @ U.T``, ``S``) have
    derivatives; at repeated singular values ``F`` is taken as 0 for the tied
    pair (as in :func:`eigh`), and for non-square ``a`` a zero singular value
    makes the singular vectors' derivatives inf or NaN.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.linalg.svd(numpy.diag([1.0, -2.0]), compute_uv=False)
    array([2., 1.])
    >>> fg.grad(lambda a: fnp.linalg.svd(a, compute_uv=False).sum())(numpy.diag([1.0, -2.0]))
    array([[ 1.,  0.],
           [ 0., -1.]])
    """
    if hermitian:
        raise FuncgradValueError("linalg.svd: hermitian=True is not supported; use linalg.eigh")
    (a,) = as_arrays(a)
    shape = shape_of(a)
    if len(shape) < 2:
        raise FuncgradValueError(f"linalg.svd: needs matrices (..., m, n), got shape {shape}")
    if not compute_uv:
        return _svdvals(a)
    m, n = shape[-2:]
    full = bool(full_matrices) and m != n  # square: full and reduced are the same
    u, s, v = _svd_parts(_svd(a, full_matrices=full), m, n, full)
    return SVDResult(u, _re(s), _T(v))  # complex a: real singular values


# qr ----------------------------------------------------------------------------------


@primitive
def _qr(a, mode="reduced"):
    # Packed as rows: q (m), then r^T (n); both have q's column count.
    q, r = _lapack_factors("qr", a, mode=mode)
    return _ns(q, r).concatenate([q, _ns(r).swapaxes(r, -1, -2)], axis=-2)


_qr.name = "qr"


def _copyltu(x):
    """The symmetric matrix with the lower triangle of ``x``."""
    return tril(x) + _T(tril(x, -1))


# Complex a: LAPACK's R has a real diagonal, which fixes Q's phases; the rules below
# are the transposes (under the pairing real(sum(x * y))) of that gauge's JVP.
def _qr_tall_vjp(q, r, gq, gr):
    # a = q r with r square: ga = (gq + q copyltu(M)) r^-T, M = r gr^T - gq^T q
    if _complex(q):  # ga = (gq + conj(q) Psi^T(N)) r^-T, N = gr r^T - q^T gq
        nn = matmul(gr, _T(r)) - matmul(_T(q), gq)
        psi = triu(nn, 1) + tril(_H(nn), -1) + _diag_embed(real(_diag_part(nn)))
        b = gq + matmul(_cj(q), psi)
        return _T(_solve(r, _T(b)))
    m = matmul(r, _T(gr)) - matmul(_T(gq), q)
    b = gq + matmul(q, _copyltu(m))
    return _T(_solve(r, _T(b)))


def _qr_tall_jvp(q, r, t):
    # C = q^T t r^-1;  dr = (triu(C) + tril(C, -1)^T) r;  dq = t r^-1 - q (that same matrix)
    # (complex: C = q^H t r^-1, the mirror conjugated, and the diagonal made real)
    b = _T(_solve(_T(r), _T(t)))  # t r^-1
    c = matmul(_H(q), b)
    upper = triu(c) + _H(tril(c, -1))
    if _complex(c):
        upper = upper - _imag_diag(c)
    return b - matmul(q, upper), matmul(upper, r)


def _qr_unpack(p, m: int):
    return _rows(p, 0, m), _T(_rows(p, m))


def _qr_vjp(g, ans, a, mode="reduced"):
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    q, r = _qr_unpack(ans, m)
    gq, gr = _qr_unpack(g, m)
    if n > m:  # wide: a = [x y], q r_x = x, r_y = q^H y
        y, gry = _cols(a, m), _cols(gr, m)
        gq = gq + _cj(matmul(y, _T(gry)))
        gx = _qr_tall_vjp(q, _cols(r, 0, m), gq, _cols(gr, 0, m))
        return concatenate([gx, matmul(_cj(q), gry)], axis=-1)
    if mode == "complete" and m > k:  # q = [q1 q2], r = [r1; 0]
        q1, q2 = _cols(q, 0, k), _cols(q, k)
        gq1 = _complement_cotangent(_cols(gq, 0, k), _cols(gq, k), q1, q2)
        return _qr_tall_vjp(q1, _rows(r, 0, k), gq1, _rows(gr, 0, k))
    return _qr_tall_vjp(q, r, gq, gr)


def _qr_jvp(t, ans, a, mode="reduced"):
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    q, r = _qr_unpack(ans, m)
    if n > m:
        y = _cols(a, m)
        dq, drx = _qr_tall_jvp(q, _cols(r, 0, m), _cols(t, 0, m))
        dry = matmul(_H(dq), y) + matmul(_H(q), _cols(t, m))
        return concatenate([dq, _T(concatenate([drx, dry], axis=-1))], axis=-2)
    if mode == "complete" and m > k:
        q1, q2 = _cols(q, 0, k), _cols(q, k)
        dq1, dr1 = _qr_tall_jvp(q1, _rows(r, 0, k), t)
        dq = concatenate([dq1, -matmul(matmul(q1, _H(dq1)), q2)], axis=-1)
        return concatenate([dq, _pad_cols(_T(dr1), m)], axis=-2)  # r's zero rows stay zero
    dq, dr = _qr_tall_jvp(q, r, t)
    return concatenate([dq, _T(dr)], axis=-2)


defvjp(_qr, _qr_vjp)
defjvp(_qr, _qr_jvp)


class QRResult(NamedTuple):
    """``(Q, R)``, as NumPy 2 names them."""

    Q: Any
    R: Any


def qr(a: Any, mode: str = "reduced") -> Any:
    """``numpy.linalg.qr``: ``a = Q @ R`` with orthonormal columns ``Q`` and upper
    triangular ``R``, for matrices ``(..., m, n)``.

    ``mode``: ``'reduced'`` (``Q`` is ``m x k``, ``R`` is ``k x n``, ``k =
    min(m, n)``), ``'complete'`` (``Q`` is ``m x m``), ``'r'`` (``R`` alone),
    all differentiable; ``'raw'`` returns LAPACK's Householder data as plain
    arrays, without gradient.

    Derivatives, for ``m >= n`` (the copy-ltu formula):
    ``ga = (gQ + Q copyltu(R gR^T - gQ^T Q)) R^-T``, where ``copyltu(M)`` is
    the symmetric matrix with ``M``'s lower triangle; forward,
    ``C = Q^T da R^-1``, ``dR = (triu(C) + tril(C, -1)^T) R``,
    ``dQ = da R^-1 - Q (triu(C) + tril(C, -1)^T)``.  For ``m < n``, ``a = [X Y]``
    with ``X`` square: ``(Q, R_X)`` is the QR of ``X`` and ``R_Y = Q^T Y``.  The
    extra columns of ``'complete'``'s ``Q`` (``m > n``) are a basis of a
    complement, differentiated in the gauge ``Q2^T dQ2 = 0`` as in :func:`svd`.

    Where derivatives are undefined: at rank-deficient ``a`` (a zero on the
    diagonal of ``R``, where ``R^-1`` fails: inf or NaN); for ``m < n``, at a
    singular leading square block ``X``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> q, r = fnp.linalg.qr(numpy.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> numpy.allclose(q @ r, [[3.0, 1.0], [4.0, 2.0]])
    True
    >>> fg.grad(lambda a: fnp.linalg.qr(a, mode="r")[0, 0])(numpy.array([[3.0], [4.0]]))
    array([[-0.6],
           [-0.8]])
    """
    if mode not in ("reduced", "complete", "r", "raw"):
        raise FuncgradValueError(
            f"linalg.qr: mode must be 'reduced', 'complete', 'r' or 'raw', got {describe(mode)}"
        )
    (a,) = as_arrays(a)
    shape = shape_of(a)
    if len(shape) < 2:
        raise FuncgradValueError(f"linalg.qr: needs matrices (..., m, n), got shape {shape}")
    if mode == "raw":
        v = raw(a)
        return _lapack_factors("qr", v, mode="raw")
    m, n = shape[-2:]
    full = mode == "complete" and m > n  # otherwise complete and reduced are the same
    q, r = _qr_unpack(_qr(a, mode="complete" if full else "reduced"), m)
    return r if mode == "r" else QRResult(q, r)


# -- norm ----------------------------------------------------------------------------


@primitive
def _norm2(x, axis=None, keepdims=False):
    xp = _ns(x)
    if x.dtype.kind == "c":  # sqrt(sum |x|^2), real
        return xp.sqrt(xp.sum(x.real * x.real + x.imag * x.imag, axis=axis, keepdims=keepdims))
    return xp.sqrt(xp.sum(x * x, axis=axis, keepdims=keepdims))


_norm2.name = "norm"


def _nonzero(ans):
    """``ans`` with its zeros replaced by ones (zeros carry no gradient)."""
    v = raw(ans)
    return where(v == 0, xp_of(v).ones((), v.dtype), ans)


# Complex x: d norm = real(sum(conj(x) dx)) / norm, transposed: g conj(x) / norm.
defvjp(_norm2, lambda g, ans, x, axis=None, keepdims=False:
       _cj(x) * expand_to(g / _nonzero(ans), x.shape, axis, keepdims))
defjvp(_norm2, lambda t, ans, x, axis=None, keepdims=False:
       _re(_sum(_cj(x) * t, axis=axis, keepdims=keepdims)) / _nonzero(ans))


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
        raise FuncgradTypeError(f"linalg.norm: invalid norm order {describe(ord)} for vectors")
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
        # Through the singular values, of the matrices moved to the last two axes.
        s = _svdvals(moveaxis(x, (row, col), (-2, -1)))
        out = {2: amax, -2: amin, "nuc": _sum}[ord](s, axis=-1)
        if keepdims:
            return reshape(out, tuple(1 if i in axes else n for i, n in enumerate(shape_of(x))))
        return out
    raise FuncgradValueError(f"linalg.norm: invalid norm order {describe(ord)} for matrices")


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.linalg.norm``: vector norms (``ord`` None/2, 1, inf, -inf, 0, p) over
    one axis, matrix norms (``ord`` None/'fro', 1, -1, inf, -inf, 2, -2, 'nuc') over two.

    The matrix norms 2 (largest singular value), -2 (smallest) and ``'nuc'``
    (their sum) go through the singular values: the gradient of ``'nuc'`` is
    ``U @ Vh`` (of the reduced SVD), that of 2 is ``u1 v1^T`` of the largest
    singular value; where singular values tie (for 2 and -2) or vanish (for
    ``'nuc'``) the norm has no gradient, and what comes back is one subgradient.

    With ``axis=None`` and ``ord=None`` it is the 2-norm of ``x.ravel()``.  The
    gradient of the 2-norm at ``x = 0`` is the subgradient 0 (never NaN).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.linalg.norm)(numpy.array([3.0, 4.0]))
    array([0.6, 0.8])
    >>> fg.grad(fnp.linalg.norm)(numpy.zeros(2))
    array([0., 0.])
    >>> float(fnp.linalg.norm(numpy.diag([3.0, -4.0]), "nuc"))
    7.0
    >>> fg.grad(lambda a: fnp.linalg.norm(a, 2))(numpy.diag([3.0, -4.0]))
    array([[ 0.,  0.],
           [ 0., -1.]])
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


__all__ = ["cholesky", "det", "eigh", "inv", "norm", "qr", "slogdet", "solve", "svd"]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]


# -- issue 19: eigvalsh, svdvals, pinv, lstsq, matrix_power, multi_dot, matrix_rank ---


def eigvalsh(a: Any, UPLO: str = "L") -> Any:
    """``numpy.linalg.eigvalsh``: the eigenvalues of symmetric matrices, ascending
    (``eigh``'s first result); the gradient is ``v diag(g) v^T``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.linalg.eigvalsh(numpy.array([[2.0, 1.0], [1.0, 2.0]]))
    array([1., 3.])
    """
    return eigh(a, UPLO)[0]


def svdvals(x: Any) -> Any:
    """``numpy.linalg.svdvals``: the singular values, descending (``svd``'s ``S``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.linalg.svdvals(numpy.diag([1.0, 3.0]))
    array([3., 1.])
    """
    return svd(x, compute_uv=False)


@primitive
def _pinv(a, rcond=None):
    xp = _ns(a)
    half = a.dtype == numpy.float16
    b = a.astype(numpy.float32) if half else a
    out = xp.linalg.pinv(b) if rcond is None else xp.linalg.pinv(b, rcond)
    return out.astype(numpy.float16) if half else out


_pinv.name = "pinv"


def _pinv_parts(ans, a):
    m, n = shape_of(a)[-2:]
    return _eye_like(a, m) - matmul(a, ans), _eye_like(a, n) - matmul(ans, a)


def _pinv_jvp(t, ans, a, rcond=None):
    # d(A+) = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+  (constant rank)
    left, right = _pinv_parts(ans, a)
    th = _H(t)
    return (-matmul(ans, matmul(t, ans)) + matmul(matmul(ans, _H(ans)), matmul(th, left))
            + matmul(right, matmul(th, matmul(_H(ans), ans))))


def _pinv_vjp(g, ans, a, rcond=None):
    # the transpose of the JVP under <a, b> = real(sum(a * b))
    left, right = _pinv_parts(ans, a)
    gt = _T(g)
    return (-matmul(_T(ans), matmul(g, _T(ans)))
            + _cj(matmul(left, matmul(gt, matmul(ans, _H(ans)))))
            + _cj(matmul(matmul(_H(ans), ans), matmul(gt, right))))


defvjp(_pinv, _pinv_vjp)
defjvp(_pinv, _pinv_jvp)


def pinv(a: Any, rcond: Any = None, hermitian: bool = False) -> Any:
    """``numpy.linalg.pinv``: the Moore-Penrose pseudo-inverse of matrices ``(..., m, n)``.

    Differentiable where the rank is constant (singular values below ``rcond`` stay
    there): Golub and Pereyra's formula ``-A+ dA A+ + A+ A+^T dA^T (I - A A+) + (I - A+ A)
    dA^T A+^T A+``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.linalg.pinv(numpy.array([[2.0], [0.0]]))
    array([[0.5, 0. ]])
    """
    (a,) = as_arrays(a)
    if len(shape_of(a)) < 2:
        raise FuncgradValueError(f"linalg.pinv: needs matrices (..., m, n), got shape "
                                 f"{shape_of(a)}")
    return _pinv(a, rcond=None if rcond is None else float(raw(rcond)))


class LstsqResult(NamedTuple):
    """``(x, residuals, rank, s)``, as ``numpy.linalg.lstsq`` returns them."""

    x: Any
    residuals: Any
    rank: Any
    s: Any


@primitive
def _all_or_none(flags):
    """Whether ``flags`` (data) hold; under fg.vmap, for every example at once: the
    residuals of ``lstsq`` have one shape for all of them or the call is refused (see
    the batching rule in ``_batching``)."""
    return _ns(flags).asarray(flags)


def lstsq(a: Any, b: Any, rcond: Any = None) -> LstsqResult:
    """``numpy.linalg.lstsq``: the least-squares solution ``x`` of ``a @ x = b``, the sums
    of squared residuals (when ``a`` has full column rank and more rows than columns),
    the rank (data) and the singular values; ``x`` is ``pinv(a) @ b``, differentiable
    in ``a`` and ``b`` where the rank is constant.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.linalg.lstsq(numpy.array([[1.0], [1.0]]), numpy.array([1.0, 3.0])).x
    array([2.])
    """
    a, b = as_arrays(a, b)
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) != 2 or len(sb) not in (1, 2) or sb[0] != sa[0]:
        raise FuncgradValueError(f"linalg.lstsq: incompatible shapes {sa} and {sb}")
    av = raw(a)
    xp = xp_of(av)
    s = svdvals(a)
    sv = raw(s)
    m, n = sa
    cut = (numpy.finfo(av.dtype).eps * max(m, n) if rcond is None else float(raw(rcond)))
    count = xp.sum(sv > cut * (sv[0] if sv.shape[0] else 0))
    try:
        rank = int(count)
    except BatchedValueError:  # under fg.vmap: one rank per example (data)
        rank = count
    full = rank == n if type(rank) is int else bool(_all_or_none(count == n))
    vec = len(sb) == 1
    bb = reshape(b, (m, 1)) if vec else b
    x = matmul(_pinv(a, rcond=cut), bb)
    if full and m > n:
        r = bb - matmul(a, x)
        if raw(r).dtype.kind == "c":
            residuals = _sum(_re(r * conjugate(r)), axis=0)
        else:
            residuals = _sum(r * r, axis=0)
    else:
        residuals = xp.zeros((0,), dtype=numpy.finfo(av.dtype).dtype)
    if vec:
        x = reshape(x, (n,))
    return LstsqResult(x, residuals, rank, s)


def matrix_power(a: Any, n: int) -> Any:
    """``numpy.linalg.matrix_power``: ``a`` multiplied by itself ``n`` times (``inv(a)``
    for negative ``n``, the identity for 0), by repeated squaring.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda a: fnp.linalg.matrix_power(a, 3)[0, 0])(numpy.array([[2.0]]))
    array([[12.]])
    """
    a = _square(a, "matrix_power")
    try:
        n = int(numbers.Integral.__index__(n)) if not isinstance(n, int) else n
    except TypeError:
        raise FuncgradTypeError(f"linalg.matrix_power: exponent must be an integer, got {n!r}")
    if n == 0:
        k = shape_of(a)[-1]
        return bcast(_eye_like(a, k), raw(a))
    if n < 0:
        a, n = inv(a), -n
    out = None
    sq = a
    while n:
        if n & 1:
            out = sq if out is None else matmul(out, sq)
        n >>= 1
        if n:
            sq = matmul(sq, sq)
    return out


def multi_dot(arrays: Any) -> Any:
    """``numpy.linalg.multi_dot``: the product of a chain of matrices (the first and last
    may be vectors), left to right.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.linalg.multi_dot([numpy.eye(2), numpy.ones((2, 2)), numpy.ones(2)])
    array([2., 2.])
    """
    arrays = as_arrays(*arrays)
    if len(arrays) < 2:
        raise FuncgradValueError("linalg.multi_dot: expecting at least two arrays")
    out = arrays[0]
    for b in arrays[1:]:
        out = matmul(out, b)
    return out


def matrix_rank(a: Any, tol: Any = None) -> Any:
    """``numpy.linalg.matrix_rank``: the number of singular values above ``tol`` (data).

    >>> import numpy, funcgrad.numpy as fnp
    >>> int(fnp.linalg.matrix_rank(numpy.ones((2, 2))))
    1
    """
    v = raw(a)
    return xp_of(v).linalg.matrix_rank(v, tol)


__all__ += ["eigvalsh", "lstsq", "matrix_power", "matrix_rank", "multi_dot", "pinv", "svdvals"]


# -- eig: the general eigenproblem (complex eigenvalues and eigenvectors) -------------


def _real_part_as_complex(z):
    return _to_complex(_re(z), raw(z).dtype)


def _complex_dtype(dt):
    return numpy.result_type(dt if dt.kind in "fc" and dt.itemsize >= 4 else numpy.float32,
                             numpy.complex64)


@primitive
def _eig(a):
    xp = _ns(a)
    dt = _complex_dtype(a.dtype)
    w, v = xp.linalg.eig(a.astype(numpy.float32) if a.dtype == numpy.float16 else a)
    return xp.concatenate([w.astype(dt)[..., None, :], v.astype(dt)], axis=-2)


_eig.name = "eig"


def _eig_parts(ans):
    w, v = _row(ans, 0), _rows(ans, 1)
    return w, v, inv(v)


def _normalized(dv0, v):
    # numpy's eigenvectors have unit norm: d(v / |v|) = dv - v re(v^H dv) at |v| = 1
    c = _sum(conjugate(v) * dv0, axis=-2)
    return dv0 - v * expand_dims(_real_part_as_complex(c), -2)


def _eig_jvp(t, ans, a):
    # P = V^-1 dA V: dw = diag(P), dV = V (F o P), then kept of unit norm
    w, v, vi = _eig_parts(ans)
    if raw(t).dtype.kind != "c":  # a real tangent, embedded (its transpose: the real part)
        t = _to_complex(t, raw(ans).dtype)
    p = matmul(matmul(vi, t), v)
    dv = _normalized(matmul(v, _inverse_gaps(w) * p), v)
    return concatenate([expand_dims(_diag_part(p), -2), dv], axis=-2)


def _eig_vjp(g, ans, a):
    # the transpose of the JVP under <a, b> = real(sum(a * b))
    w, v, vi = _eig_parts(ans)
    gw, gv = _row(g, 0), _rows(g, 1)
    s = _sum(gv * v, axis=-2)
    g0 = gv - conjugate(v) * expand_dims(_real_part_as_complex(s), -2)
    inner = _diag_embed(gw) + _inverse_gaps(w) * matmul(_T(v), g0)
    ga = matmul(matmul(_T(vi), inner), _T(v))
    if raw(a).dtype.kind != "c":
        ga = _re(ga)
    return ga


defvjp(_eig, _eig_vjp)
defjvp(_eig, _eig_jvp)


class EigResult(NamedTuple):
    """``(eigenvalues, eigenvectors)``, as NumPy 2 names them."""

    eigenvalues: Any
    eigenvectors: Any


def eig(a: Any) -> EigResult:
    """``numpy.linalg.eig``: eigenvalues ``w`` and unit-norm eigenvectors ``v`` (columns) of
    general square matrices, ``a @ v = v * w``; always complex (as in JAX; NumPy returns
    real arrays when every eigenvalue happens to be real).

    Derivatives: ``dw = diag(P)`` and ``dv = v (F o P)`` with ``P = v^-1 da v`` and
    ``F_ij = 1/(w_j - w_i)``, kept of unit norm (``dv - v re(v^H dv)``); the VJP is
    their plain transpose (JAX's convention).  Each eigenvector's phase is LAPACK's
    choice: only functions that do not depend on it (``w``, ``v diag(f(w)) v^-1``,
    ``abs(v)``) have derivatives.  None at repeated eigenvalues.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.linalg.eig(numpy.array([[2.0, 0.0], [0.0, 3.0]])).eigenvalues
    array([2.+0.j, 3.+0.j])
    """
    a = _square(a, "eig")
    p = _eig(a)
    return EigResult(_row(p, 0), _rows(p, 1))


def eigvals(a: Any) -> Any:
    """``numpy.linalg.eigvals``: the eigenvalues of general square matrices (``eig``'s
    first result), complex.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.linalg.eigvals(numpy.array([[0.0, 1.0], [-1.0, 0.0]]))
    array([0.+1.j, 0.-1.j])
    """
    return eig(a)[0]


__all__ += ["eig", "eigvals"]
