"""Rows of the primitive table: the NumPy names of issue 10 -- rounding, sorting,
diagonals and triangles, joining, padding, rolling, grids, ``cross``, and
``fnp.linalg.eigh``, ``svd``, ``qr`` and the spectral matrix norms.

Inputs keep every function smooth within a finite-difference step (float32
steps are ~1e-2): values away from rounding jumps and from ties (for
``sort``); matrices with well-separated eigenvalues and singular values, away
from zero, and well-conditioned ones for ``qr``.  Eigenvectors and singular
vectors are tested only through functions that do not depend on their signs
(``v @ diag(f(w)) @ v.T``, ``v * v``, ``U @ diag(f(S)) @ Vh``): the others
have no derivative.
"""

from __future__ import annotations

import math

import numpy as np
from table import UNARY, Row

import funcgrad.numpy as fnp

la = fnp.linalg


# -- input generators -----------------------------------------------------------------


def _orthogonal(rng, batch, n):
    q, r = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def near_half_integers(rng, dtype, shapes):
    """k + 0.5 + u with |u| <= 0.3: at least 0.2 from every integer (floor, ceil)."""
    return tuple(rng.integers(-3, 4, s) + 0.5 + 0.3 * np.tanh(rng.standard_normal(s))
                 for s in shapes)


def near_integers(rng, dtype, shapes):
    """k + u with |u| <= 0.3: at least 0.2 from every half (round)."""
    return tuple(rng.integers(-3, 4, s) + 0.3 * np.tanh(rng.standard_normal(s)) for s in shapes)


def near_tenths(rng, dtype, shapes):
    """Multiples of 0.1 plus at most 0.03: away from round(x, 1)'s jumps by >= 0.02."""
    return tuple(rng.integers(-30, 30, s) / 10 + 0.03 * np.tanh(rng.standard_normal(s))
                 for s in shapes)


def distinct(rng, dtype, shapes):
    """Values >= 0.4 apart, shuffled (no ties within a step, for sort)."""
    out = []
    for s in shapes:
        n = math.prod(s)
        out.append((0.4 * rng.permutation(n) - 0.2 * n + 0.1 * rng.random(n)).reshape(s))
    return tuple(out)


def spectrum(rng, dtype, shapes):
    """Symmetric matrices with eigenvalues 1.2 apart (plus noise).  eigh's gradient is
    symmetric (JAX's convention), so its rows symmetrize their input (:func:`_sym`):
    finite differences in every direction then see the same function."""
    (s,) = shapes
    n, batch = s[-1], s[:-2]
    w = 1.2 * np.arange(n) - 0.6 * n + 0.2 * rng.random(batch + (n,))
    v = _orthogonal(rng, batch, n)
    return ((v * w[..., None, :]) @ np.swapaxes(v, -1, -2),)


def spectrum_upper(rng, dtype, shapes):
    """As :func:`spectrum`, for UPLO='U' (the same matrices: they are symmetric)."""
    return spectrum(rng, dtype, shapes)


def singular(rng, dtype, shapes):
    """Matrices ``U diag(s) V^T`` with singular values about 1, 2, 3... (>= 0.9 apart)."""
    (s,) = shapes
    m, n, batch = s[-2], s[-1], s[:-2]
    k = min(m, n)
    sv = 1.0 + np.arange(k)[::-1] + 0.1 * rng.random(batch + (k,))
    u = _orthogonal(rng, batch, m)[..., :k]
    v = _orthogonal(rng, batch, n)[..., :k]
    return ((u * sv[..., None, :]) @ np.swapaxes(v, -1, -2),)


def singular_over_first_and_last(rng, dtype, shapes):
    """:func:`singular` matrices spread over axes 0 and 2 (for ``axis=(0, 2)``)."""
    (s,) = shapes
    (a,) = singular(rng, dtype, [(s[1], s[0], s[2])])
    return (np.moveaxis(a, 0, 1),)


def well_conditioned(rng, dtype, shapes):
    """Random matrices plus 3 on the main diagonal: R's diagonal stays far from 0."""
    (s,) = shapes
    return (rng.standard_normal(s) + 3 * np.eye(s[-2], s[-1]),)


# -- gauge-invariant functions of the factors ----------------------------------------


def _t(x):
    return fnp.swapaxes(x, -1, -2)


def _sym(a):
    return (a + _t(a)) / 2


def _eigh_function(a, uplo="L"):
    """``sin(A)`` = v diag(sin w) v^T: independent of the eigenvectors' signs."""
    w, v = la.eigh(_sym(a), UPLO=uplo)
    return fnp.matmul(v * fnp.expand_dims(fnp.sin(w), -2), _t(v))


def _eigvec_squares(a):
    v = la.eigh(_sym(a))[1]
    return v * v


def _svd_function(a, full=False):
    """``U diag(s + s^2) Vh``: independent of the singular vectors' signs."""
    u, s, vh = la.svd(a, full_matrices=full)
    k = min(a.shape[-2:])
    f = s + s * s
    return fnp.matmul(u[..., :k] * fnp.expand_dims(f, -2), vh[..., :k, :])


def _svd_squares(a, full=False):
    u, s, vh = la.svd(a, full_matrices=full)
    return fnp.concatenate([fnp.ravel(u * u), fnp.ravel(vh * vh), fnp.ravel(s)])


def _complement_projector(a):
    """``U2 U2^T`` of the full U: defined whatever basis of the complement LAPACK picks."""
    u, s, _ = la.svd(a, full_matrices=True)
    u2 = u[..., a.shape[-1]:]
    return fnp.matmul(u2, _t(u2)) * s[..., :1, None]


def _qr_complete(a):
    q, r = la.qr(a, mode="complete")
    q1, q2 = q[..., : a.shape[-1]], q[..., a.shape[-1]:]
    return fnp.concatenate([fnp.ravel(q1), fnp.ravel(fnp.matmul(q2, _t(q2))), fnp.ravel(r)])


def _both(pair):
    return fnp.concatenate([fnp.ravel(pair[0]), fnp.ravel(pair[1])])


SQUARE = [((3, 3),), ((2, 3, 3),), ((1, 1),)]
MATRICES = [((3, 3),), ((4, 2),), ((2, 4),), ((2, 3, 2),)]

ROUNDING = [
    Row("floor", fnp.floor, make=near_half_integers),
    Row("floor", lambda x: fnp.floor(x) * x, id="times-x", make=near_half_integers),
    Row("ceil", fnp.ceil, make=near_half_integers),
    Row("ceil", lambda x: fnp.sin(fnp.ceil(x) * x), id="in-sin", make=near_half_integers),
    Row("round", fnp.round, make=near_integers),
    Row("round", lambda x: fnp.round(x) * x, id="times-x", make=near_integers),
    Row("round", lambda x: fnp.round(x, 1) + x, id="decimals", make=near_tenths),
]

SHAPE = [
    Row("sort", fnp.sort, make=distinct, shapes=[((5,),), ((3, 4),), ((2, 3, 2),), ((0,),)]),
    Row("sort", lambda x: fnp.sort(x, axis=0), id="axis0", make=distinct,
        shapes=[((3, 4),), ((4,),)]),
    Row("sort", lambda x: fnp.sort(x, axis=None), id="flat", make=distinct,
        shapes=[((3, 4),), ((),)]),
    Row("sort", lambda x: fnp.sort(x) * x, id="times-x", make=distinct, shapes=[((2, 4),)]),
    Row("diag", fnp.diag, shapes=[((3,),), ((3, 3),), ((2, 4),), ((0,),)]),
    Row("diag", lambda x: fnp.diag(x, 1), id="above", shapes=[((3,),), ((3, 4),)]),
    Row("diag", lambda x: fnp.diag(x, -2), id="below", shapes=[((2,),), ((4, 3),), ((1, 3),)]),
    Row("diagonal", fnp.diagonal, shapes=[((3, 3),), ((2, 3, 4),), ((0, 2),)]),
    Row("diagonal", lambda x: fnp.diagonal(x, -1, axis1=2, axis2=0), id="axes",
        shapes=[((3, 2, 4),)]),
    Row("vstack", lambda a, b: fnp.vstack([a, b, a]),
        shapes=[((3,), (2, 3)), ((), ()), ((2, 2), (1, 2))]),
    Row("hstack", lambda a, b: fnp.hstack((a, b)),
        shapes=[((3,), (2,)), ((2, 3), (2, 1)), ((), ())]),
    Row("triu", fnp.triu, shapes=[((3, 3),), ((2, 3, 4),), ((3,),)]),
    Row("triu", lambda x: fnp.triu(x, -1), id="k", shapes=[((4, 3),), ((2, 2),)]),
    Row("tril", fnp.tril, shapes=[((3, 3),), ((2, 3, 4),), ((3,),)]),
    Row("tril", lambda x: fnp.tril(x, 2), id="k", shapes=[((3, 5),), ((2, 2),)]),
    Row("pad", lambda x: fnp.pad(x, 2), shapes=[((3,),), ((2, 3),), ((),)]),
    Row("pad", lambda x: fnp.pad(x, ((1, 0), (0, 2)), constant_values=((1.0, 2.0), (3.0, 4.0))),
        id="pairs", shapes=[((2, 3),)]),
    Row("pad", lambda x: fnp.pad(x, (1, 3), mode="edge"), id="edge",
        shapes=[((3,),), ((2, 2),)]),
    Row("pad", lambda x: fnp.pad(x, ((2, 5),), mode="wrap"), id="wrap", shapes=[((3,),)]),
    Row("pad", lambda x: fnp.pad(x, (4, 1), mode="reflect"), id="reflect",
        shapes=[((3,),), ((3, 2),)]),
    Row("pad", lambda x: fnp.pad(x, ((0, 1), (3, 2)), mode="symmetric"), id="symmetric",
        shapes=[((2, 2),)]),
    Row("roll", lambda x: fnp.roll(x, 2), shapes=UNARY),
    Row("roll", lambda x: fnp.roll(x, (1, -1), axis=(0, 1)), id="axes",
        shapes=[((3, 4),), ((2, 1, 2),)]),
    Row("meshgrid", lambda a, b: fnp.concatenate([fnp.ravel(g) for g in fnp.meshgrid(a, b)]),
        shapes=[((3,), (2,)), ((2,), ())]),
    Row("meshgrid", lambda a, b, c: fnp.meshgrid(a, b, c, indexing="ij")[1] * 2,
        id="ij", shapes=[((2,), (3,), (2,))]),
    Row("meshgrid", lambda a, b: fnp.meshgrid(a, b, sparse=True)[0], id="sparse",
        shapes=[((3,), (2,))]),
    Row("cross", fnp.cross, shapes=[((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 3))]),
    Row("cross", lambda a, b: fnp.cross(a, b, axisa=0, axisb=1, axisc=0), id="axes",
        shapes=[((3, 2), (2, 3))]),
    Row("cross", lambda a, b: fnp.cross(a, b, axis=1), id="axis",
        shapes=[((2, 3, 2), (2, 3, 2))]),
]

LINALG = [
    Row("linalg.eigh", lambda a: la.eigh(_sym(a))[0], id="values", make=spectrum,
        shapes=SQUARE),
    Row("linalg.eigh", _eigh_function, id="function", make=spectrum, shapes=SQUARE),
    Row("linalg.eigh", _eigvec_squares, id="vector-squares", make=spectrum,
        shapes=[((3, 3),), ((2, 2, 2),)]),
    Row("linalg.eigh", lambda a: _eigh_function(a, "U"), id="upper", make=spectrum_upper,
        shapes=[((3, 3),)]),
    Row("linalg.svd", lambda a: la.svd(a, compute_uv=False), id="values", make=singular,
        shapes=MATRICES),
    Row("linalg.svd", _svd_function, id="function", make=singular, shapes=MATRICES),
    Row("linalg.svd", _svd_squares, id="vector-squares", make=singular, shapes=MATRICES),
    Row("linalg.svd", lambda a: _svd_squares(a, True), id="full-one-more", make=singular,
        shapes=[((3, 2),), ((2, 3),)]),
    Row("linalg.svd", lambda a: _svd_function(a, True), id="full", make=singular,
        shapes=[((4, 2),), ((2, 4),)]),
    Row("linalg.svd", _complement_projector, id="full-complement", make=singular,
        shapes=[((4, 2),), ((2, 5, 3),)]),
    Row("linalg.qr", lambda a: _both(la.qr(a)), make=well_conditioned, shapes=MATRICES),
    Row("linalg.qr", lambda a: la.qr(a, mode="r"), id="r", make=well_conditioned,
        shapes=[((3, 2),), ((2, 3),)]),
    Row("linalg.qr", _qr_complete, id="complete", make=well_conditioned,
        shapes=[((4, 2),), ((2, 3),)]),
    Row("linalg.norm", lambda a: la.norm(a, 2), id="spectral", make=singular, shapes=[
        ((3, 3),), ((4, 2),), ((2, 4),),
    ]),
    Row("linalg.norm", lambda a: la.norm(a, -2, axis=(0, 2), keepdims=True), id="-2",
        make=singular_over_first_and_last, shapes=[((3, 2, 2),)]),
    Row("linalg.norm", lambda a: la.norm(a, "nuc", axis=(-1, -2)), id="nuc", make=singular,
        shapes=[((3, 3),), ((2, 4, 3),)]),
]

ROWS = ROUNDING + SHAPE + LINALG
