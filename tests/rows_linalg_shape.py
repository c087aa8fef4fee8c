"""Rows of the primitive table: products, ``fnp.linalg``, shape and indexing.

Inputs with structure come from ``make=``: well-conditioned matrices (diagonally
dominant) for ``inv``, ``det`` and ``solve``; symmetric positive definite
ones for ``cholesky``, whose row symmetrizes its input so that finite
differences stay on symmetric matrices; well-separated magnitudes for norms
built on ``abs``, ``max`` and ``min`` (no kinks or ties within a step).
"""

from __future__ import annotations

import math

import numpy as np
from table import UNARY, Row, away_from_zero

import funcgrad.numpy as fnp

la = fnp.linalg


# -- input generators -----------------------------------------------------------


def conditioned(rng, dtype, shapes):
    """Square (..., n, n) arguments strictly diagonally dominant (random, plus 1 + the
    row's absolute sum on the diagonal); other arguments standard normal."""
    out = []
    for s in shapes:
        x = rng.standard_normal(s)
        if len(s) >= 2 and s[-1] == s[-2]:
            x = x + (1 + np.abs(x).sum(-1, keepdims=True)) * np.eye(s[-1])
        out.append(x)
    return tuple(out)


def negative_det(rng, dtype, shapes):
    """Well-conditioned matrices with their first row negated (det < 0 when n is odd)."""
    (a,) = conditioned(rng, dtype, shapes)
    a[..., 0, :] *= -1
    return (a,)


def spd(rng, dtype, shapes):
    """Symmetric positive definite (..., n, n): m m^T + n I."""
    (s,) = shapes
    m = rng.standard_normal(s)
    return (m @ np.swapaxes(m, -1, -2) + s[-1] * np.eye(s[-1]),)


def separated(rng, dtype, shapes):
    """Magnitudes >= 0.5 and >= 0.4 apart, random signs (for abs, max, min)."""
    out = []
    for s in shapes:
        n = math.prod(s)
        mags = 0.5 + 0.4 * rng.permutation(n)
        out.append((mags * rng.choice([-1.0, 1.0], n)).reshape(s))
    return tuple(out)


def _sym(a):
    return (a + fnp.swapaxes(a, -1, -2)) / 2


# A fixed mask (independent of the values) and index arrays with repeats.
def _checker(x):
    return (np.arange(x.size).reshape(x.shape) % 2) == 0


REPEATS = np.array([0, 2, 0, 0, 1])

PRODUCTS = [
    Row("matmul", fnp.matmul, shapes=[
        ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4)),
        ((2, 1, 2, 3), (3, 3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 3)),
    ]),
    Row("dot", fnp.dot, shapes=[
        ((), (3,)), ((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 3, 4), (5, 4, 2)),
        ((2, 3, 4), (4,)), ((0, 3), (3,)),
    ]),
    Row("tensordot", lambda a, b: fnp.tensordot(a, b, axes=1), id="axes1",
        shapes=[((2, 3), (3, 4)), ((3,), (3, 2, 2)), ((2, 0), (0, 3))]),
    Row("tensordot", fnp.tensordot, id="axes2",
        shapes=[((2, 3, 4), (3, 4, 2)), ((2, 3), (2, 3))]),
    Row("tensordot", lambda a, b: fnp.tensordot(a, b, axes=0), id="axes0",
        shapes=[((2,), (3,)), ((), (2,))]),
    Row("tensordot", lambda a, b: fnp.tensordot(a, b, axes=([1, 0], [0, 2])), id="pairs",
        shapes=[((3, 2, 4), (2, 5, 3))]),
    Row("einsum", lambda a, b: fnp.einsum("ij,jk->ik", a, b), id="matmul",
        shapes=[((2, 3), (3, 4)), ((2, 0), (0, 3))]),
    Row("einsum", lambda a, b: fnp.einsum("ij,jk", a, b), id="implicit",
        shapes=[((2, 3), (3, 4))]),
    Row("einsum", lambda a: fnp.einsum("ii->", a), id="trace", shapes=[((3, 3),), ((0, 0),)]),
    Row("einsum", lambda a: fnp.einsum("ii->i", a), id="diag", shapes=[((3, 3),)]),
    Row("einsum", lambda a: fnp.einsum("iij->j", a), id="diag-sum", shapes=[((2, 2, 3),)]),
    Row("einsum", lambda a: fnp.einsum("ij->", a), id="sum", shapes=[((2, 3),), ((0, 3),)]),
    Row("einsum", lambda a, b: fnp.einsum("ijk,jil->kl", a, b), id="contract",
        shapes=[((2, 3, 4), (3, 2, 5))]),
    Row("einsum", lambda a, b: fnp.einsum("...ij,...jk->...ik", a, b), id="ellipsis",
        shapes=[((2, 1, 3, 4), (3, 4, 2)), ((3, 4), (4, 2))]),
    Row("einsum", lambda a, b: fnp.einsum("ij,ij->ij", a, b), id="broadcast",
        shapes=[((1, 3), (2, 3)), ((2, 3), (2, 1))]),
    Row("einsum", lambda a, b: fnp.einsum(",i->i", a, b), id="scalar", shapes=[((), (3,))]),
    Row("einsum", lambda a, b, c: fnp.einsum("ij,jk,kl->il", a, b, c), id="three",
        shapes=[((2, 3), (3, 2), (2, 4))]),
    Row("einsum", lambda a, b: fnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), id="interleaved",
        shapes=[((2, 3), (3, 4)), ((2, 0), (0, 3))]),
    Row("einsum", lambda a, b: fnp.einsum(a, [30, 1], b, [1, 3]), id="interleaved-implicit",
        shapes=[((2, 3), (3, 4))]),
    Row("einsum", lambda a, b: fnp.einsum(a, [..., 0, 1], b, [1, 2], [..., 2]),
        id="interleaved-ellipsis", shapes=[((2, 1, 3, 4), (4, 2)), ((3, 4), (4, 2))]),
    Row("einsum", lambda a: fnp.einsum(a, [0, 0, 1], [1]), id="interleaved-diag",
        shapes=[((2, 2, 3),)]),
    Row("outer", fnp.outer, shapes=[((3,), (4,)), ((2, 2), (3,)), ((), (2,)), ((0,), (3,))]),
    Row("inner", fnp.inner, shapes=[((3,), (3,)), ((2, 3), (4, 3)), ((), (2, 3)), ((2, 0), (3, 0))]),
    Row("trace", fnp.trace, shapes=[((3, 3),), ((2, 3),), ((3, 2, 4),), ((0, 0),)]),
    Row("trace", lambda x: fnp.trace(x, offset=1, axis1=1, axis2=-1), id="offset-axes",
        shapes=[((2, 3, 4),), ((2, 3, 1),)]),
    Row("trace", lambda x: fnp.trace(x, offset=-1), id="below", shapes=[((3, 3),), ((4, 2),)]),
]

LINALG = [
    Row("linalg.inv", la.inv, make=conditioned,
        shapes=[((3, 3),), ((2, 3, 3),), ((1, 1),), ((0, 0),)]),
    Row("linalg.det", la.det, make=conditioned,
        shapes=[((3, 3),), ((2, 2, 2),), ((1, 1),), ((0, 0),)]),
    Row("linalg.det", la.det, make=negative_det, id="negative", shapes=[((3, 3),)]),
    Row("linalg.slogdet", lambda a: la.slogdet(a)[1], make=conditioned,
        shapes=[((3, 3),), ((2, 2, 2),), ((0, 0),)]),
    Row("linalg.slogdet", lambda a: la.slogdet(a)[1], make=negative_det, id="negative",
        shapes=[((3, 3),), ((2, 3, 3),)]),
    Row("linalg.solve", la.solve, make=conditioned, shapes=[
        ((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)), ((2, 3, 3), (2, 3, 2)),
        ((3, 3), (2, 3, 1)), ((2, 1, 2, 2), (3, 2, 2)), ((0, 0), (0,)),
    ]),
    Row("linalg.cholesky", lambda a: la.cholesky(_sym(a)), make=spd,
        shapes=[((3, 3),), ((2, 3, 3),), ((1, 1),)]),
    Row("linalg.norm", la.norm, shapes=UNARY + [((2, 3, 2),)]),
    Row("linalg.norm", lambda x: la.norm(x, axis=-1, keepdims=True), id="axis-keepdims",
        shapes=[((3,),), ((2, 3),)]),
    Row("linalg.norm", lambda x: la.norm(x, 2, axis=0), id="ord2", shapes=[((3,),), ((3, 2),)]),
    Row("linalg.norm", lambda x: la.norm(x, 1), id="ord1", make=separated,
        shapes=[((4,),), ((3, 4),)]),
    Row("linalg.norm", lambda x: la.norm(x, np.inf), id="inf", make=separated,
        shapes=[((4,),), ((3, 4),)]),
    Row("linalg.norm", lambda x: la.norm(x, -np.inf, axis=1), id="-inf", make=separated,
        shapes=[((2, 4),)]),
    Row("linalg.norm", lambda x: la.norm(x, 3, axis=-1), id="p3", make=separated,
        shapes=[((4,),), ((2, 3),)]),
    Row("linalg.norm", lambda x: la.norm(x, "fro", axis=(0, 2)), id="fro",
        shapes=[((2, 3, 2),)]),
]

SHAPE = [
    Row("reshape", lambda x: fnp.reshape(x, (-1,))),
    Row("reshape", lambda x: fnp.reshape(x, (3, -1)), id="3x", shapes=[((2, 3),), ((6,),)]),
    Row("reshape", lambda x: fnp.reshape(x, (1, 1)), id="0d", shapes=[((),)]),
    Row("transpose", fnp.transpose, shapes=UNARY + [((2, 3, 4),)]),
    Row("transpose", lambda x: fnp.transpose(x, (1, 2, 0)), id="axes", shapes=[((2, 3, 4),)]),
    Row("moveaxis", lambda x: fnp.moveaxis(x, 0, -1), shapes=[((2, 3, 4),), ((3,),), ((2, 0),)]),
    Row("moveaxis", lambda x: fnp.moveaxis(x, [0, 1], [-1, 0]), id="many",
        shapes=[((2, 3, 4),)]),
    Row("swapaxes", lambda x: fnp.swapaxes(x, 0, -1), shapes=[((2, 3, 4),), ((3,),), ((2, 0),)]),
    Row("squeeze", fnp.squeeze, shapes=[((1, 3, 1),), ((1,),), ((),), ((0, 1),)]),
    Row("squeeze", lambda x: fnp.squeeze(x, axis=0), id="axis", shapes=[((1, 3),), ((1,),)]),
    Row("expand_dims", lambda x: fnp.expand_dims(x, 0)),
    Row("expand_dims", lambda x: fnp.expand_dims(x, -1), id="last"),
    Row("broadcast_to", lambda x: fnp.broadcast_to(x, (2,) + x.shape)),
    Row("broadcast_to", lambda x: fnp.broadcast_to(x, (4, 2, 3)), id="ones",
        shapes=[((1, 3),), ((2, 1),), ((),)]),
    Row("concatenate", lambda a, b: fnp.concatenate([a, b]),
        shapes=[((2, 3), (1, 3)), ((3,), (2,)), ((0, 2), (2, 2))]),
    Row("concatenate", lambda a, b: fnp.concatenate((a, b), axis=-1), id="last",
        shapes=[((2, 1), (2, 3)), ((2, 2, 1), (2, 2, 2))]),
    Row("concatenate", lambda a, b: fnp.concatenate([a, b], axis=None), id="flat",
        shapes=[((2, 2), (3,)), ((), (2,))]),
    Row("concatenate", lambda a, b, c: fnp.concatenate([a, b, a, c], axis=1), id="repeated",
        shapes=[((2, 1), (2, 3), (2, 0))]),
    Row("stack", lambda a, b: fnp.stack([a, b]),
        shapes=[((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((0,), (0,))]),
    Row("stack", lambda a, b: fnp.stack([a, b, a], axis=-1), id="last",
        shapes=[((3,), (3,)), ((2, 3), (2, 3))]),
    Row("split", lambda x: fnp.split(x, 2), shapes=[((4,),), ((4, 3),), ((0,),)]),
    Row("split", lambda x: fnp.split(x, [1, 3], axis=-1), id="indices",
        shapes=[((2, 5),), ((2,),)]),
    Row("flip", fnp.flip, shapes=UNARY + [((2, 3, 2),)]),
    Row("flip", lambda x: fnp.flip(x, 1), id="axis", shapes=[((2, 3),), ((2, 0),)]),
    Row("tile", lambda x: fnp.tile(x, 2)),
    Row("tile", lambda x: fnp.tile(x, (2, 1, 3)), id="reps", shapes=[((2, 3),), ((),)]),
    Row("repeat", lambda x: fnp.repeat(x, 2)),
    Row("repeat", lambda x: fnp.repeat(x, [1, 0, 2], axis=1), id="counts",
        shapes=[((2, 3),), ((0, 3),)]),
    Row("repeat", lambda x: fnp.repeat(x, 3, axis=0), id="axis", shapes=[((3, 2),), ((1,),)]),
    Row("ravel", fnp.ravel),
    Row("atleast_1d", fnp.atleast_1d),
    Row("take", lambda x: fnp.take(x, [0, 0, 2, 1, -1]), shapes=[((3,),), ((2, 3),)]),
    Row("take", lambda x: fnp.take(x, [[1, 1], [0, 2]], axis=1), id="axis",
        shapes=[((2, 3),), ((4, 3, 2),)]),
    Row("take", lambda x: fnp.take(x, np.array([], dtype=int), axis=0), id="empty",
        shapes=[((3,),)]),
    Row("getitem", lambda x: x[1:, ::2], id="slices", shapes=[((3, 4),), ((1, 3),), ((3, 0),)]),
    Row("getitem", lambda x: x[::-1, -2::-2], id="negative-steps", shapes=[((3, 4),)]),
    Row("getitem", lambda x: x[REPEATS], id="int-repeats", shapes=[((3,),), ((3, 2),)]),
    Row("getitem", lambda x: x[REPEATS[:3], :, [1, 1, 0]], id="int-mixed",
        shapes=[((3, 2, 2),)]),
    Row("getitem", lambda x: x[[[0, 0], [1, 0]]], id="int-2d", shapes=[((2, 3),)]),
    Row("getitem", lambda x: x[_checker(x)], id="mask", shapes=[((5,),), ((2, 3),), ((0,),)]),
    Row("getitem", lambda x: x[x > 0], id="value-mask", domains=(away_from_zero,),
        shapes=[((6,),), ((2, 3),)]),
    Row("getitem", lambda x: x[None, ..., 0], id="newaxis-ellipsis",
        shapes=[((3,),), ((2, 3),)]),
    Row("getitem", lambda x: x[()], id="empty-tuple", shapes=[((),), ((2,),)]),
    Row("getitem", lambda x: x[None], id="0d-newaxis", shapes=[((),)]),
    Row("getitem", lambda x: x[1], id="int", shapes=[((3,),), ((2, 3),)]),
    Row("getitem", lambda x: x[[]], id="empty-list", shapes=[((3,),)]),
    Row("astype", lambda x: fnp.astype(fnp.astype(x, "float64"), x.dtype), id="round-trip"),
    Row("astype", lambda x: fnp.astype(x, x.dtype), id="same"),
]

ROWS = PRODUCTS + LINALG + SHAPE
