"""Rows of the primitive table: the rest of NumPy (issue 19) -- ``more.py``, the new
``fnp.linalg`` functions and the new ``fg.nn`` functions.

Inputs keep each function smooth within a finite-difference step: ``mod`` and
``fmod`` away from their jumps (``x / y`` at least 0.1 from an integer),
quantiles and ``partition`` on distinct values, ``pinv``/``lstsq`` on
full-rank matrices, ``interp`` away from the knots.
"""

from __future__ import annotations

import numpy as np
from rows_elementwise import apart
from rows_more import distinct, singular
from table import BINARY, UNARY, Row, away_from_zero, positive, real

import funcgrad as fg
import funcgrad.numpy as fnp

if hasattr(fnp, "real"):  # complex numbers merged (jax.numpy runs these rows too)
    _re = fnp.real
else:
    from funcgrad.numpy.fft import _re

la = fnp.linalg


def _mod_inputs(rng, dtype, shapes):
    # same shapes for x and y: the quotient is controlled elementwise
    (s,) = {shapes[0]}
    y = (0.8 + 0.8 * rng.random(s)) * rng.choice([-1.0, 1.0], s)
    q = rng.integers(-3, 4, s) + 0.2 + 0.6 * rng.random(s)
    return q * y, y


SAME2 = [((), ()), ((3,), (3,)), ((2, 3), (2, 3))]


def _knots(x):
    return fnp.asarray([-2.0, -0.7, 0.4, 1.9], x.dtype, like=x)


def _interp_x(rng, dtype, shapes):
    # away from the knots -0.7, 0.4 and 1.9; some outside [-2, 1.9]
    (sx, sf) = shapes
    pts = np.array([-2.6, -1.3, -0.2, 1.0, 1.5, 2.4])
    return rng.choice(pts, sx) + 0.05 * rng.standard_normal(sx), rng.standard_normal(sf)


def _full_rank(rng, dtype, shapes):
    (a,) = singular(rng, dtype, shapes[:1])
    return (a,) + tuple(rng.standard_normal(s) for s in shapes[1:])


def _pinv_function(a):
    return la.pinv(a)


ELEMENTWISE = [
    Row("remainder", fnp.remainder, shapes=SAME2, make=_mod_inputs),
    Row("mod", fnp.mod, shapes=SAME2, make=_mod_inputs),
    Row("fmod", fnp.fmod, shapes=SAME2, make=_mod_inputs),
    Row("hypot", fnp.hypot, shapes=BINARY, domains=(away_from_zero,)),
    Row("cbrt", fnp.cbrt, domains=(away_from_zero,)),
    Row("logaddexp2", fnp.logaddexp2, shapes=BINARY),
    Row("deg2rad", fnp.deg2rad), Row("rad2deg", fnp.rad2deg),
    Row("radians", fnp.radians, shapes=[((3,),)]), Row("degrees", fnp.degrees, shapes=[((3,),)]),
    Row("fabs", fnp.fabs, domains=(away_from_zero,)),
    Row("fmax", fnp.fmax, shapes=BINARY, make=apart),
    Row("fmin", fnp.fmin, shapes=BINARY, make=apart),
    Row("sinc", fnp.sinc, domains=(away_from_zero,)),
    Row("nan_to_num", lambda x: fnp.nan_to_num(x) * x),
    Row("acos", fnp.acos, shapes=[((3,),)], domains=(lambda x: 0.8 * np.tanh(x),)),
    Row("asin", fnp.asin, shapes=[((3,),)], domains=(lambda x: 0.8 * np.tanh(x),)),
    Row("atan", fnp.atan, shapes=[((3,),)]),
    Row("atan2", fnp.atan2, shapes=[((3,), (3,))], domains=(positive,)),
    Row("acosh", fnp.acosh, shapes=[((3,),)], domains=(lambda x: 1.5 + np.abs(x),)),
    Row("asinh", fnp.asinh, shapes=[((3,),)]),
    Row("atanh", fnp.atanh, shapes=[((3,),)], domains=(lambda x: 0.8 * np.tanh(x),)),
    Row("pow", fnp.pow, shapes=[((3,), (3,))], domains=(positive,)),
]

STATS = [
    Row("diff", fnp.diff, shapes=[((4,),), ((2, 3),)]),
    Row("diff", lambda x: fnp.diff(x, n=2, axis=0), id="n2-axis0", shapes=[((4, 2),)]),
    Row("diff", lambda x, p: fnp.diff(x, prepend=p, append=p * 2), id="pend",
        shapes=[((3,), ())]),
    Row("gradient", fnp.gradient, shapes=[((4,),), ((2,),)]),
    Row("gradient", lambda x: fnp.concatenate([fnp.ravel(g) for g in fnp.gradient(x, 0.5)]),
        id="2d", shapes=[((3, 4),)]),
    Row("nansum", lambda x: fnp.nansum(fnp.where(x > 1.0, np.nan, x), axis=0),
        shapes=[((3,),), ((3, 2),)]),
    Row("nanmean", lambda x: fnp.nanmean(fnp.where(x > 1.0, np.nan, x)),
        shapes=[((5,),), ((3, 2),)], domains=(lambda x: x - 0.5,)),
    Row("nancumsum", lambda x: fnp.nancumsum(fnp.where(x > 1.0, np.nan, x)), shapes=[((4,),)]),
    Row("nanprod", lambda x: fnp.nanprod(fnp.where(x > 1.5, np.nan, x), axis=-1),
        shapes=[((2, 3),)]),
    Row("nancumprod", lambda x: fnp.nancumprod(x), shapes=[((3,),)]),
    Row("nanvar", lambda x: fnp.nanvar(x, axis=0), shapes=[((4, 2),)]),
    Row("nanstd", lambda x: fnp.nanstd(x), shapes=[((4,),)]),
    Row("nanmax", fnp.nanmax, make=distinct, shapes=[((4,),)]),
    Row("nanmin", lambda x: fnp.nanmin(x, axis=0), make=distinct, shapes=[((3, 2),)]),
    Row("ptp", fnp.ptp, make=distinct, shapes=[((4,),)]),
    Row("median", fnp.median, make=distinct, shapes=[((5,),), ((4,),), ((2, 3),)]),
    Row("median", lambda x: fnp.median(x, axis=1, keepdims=True), id="axis", make=distinct,
        shapes=[((2, 4),)]),
    Row("quantile", lambda x: fnp.quantile(x, [0.1, 0.5, 0.9], axis=0), make=distinct,
        shapes=[((5, 2),)]),
    Row("percentile", lambda x: fnp.percentile(x, 30.0), make=distinct, shapes=[((6,),)]),
    Row("average", lambda x, w: fnp.average(x, weights=w), shapes=[((3,), (3,))],
        domains=(real, positive)),
    Row("average", lambda x, w: fnp.average(x, axis=1, weights=w), id="axis",
        shapes=[((2, 3), (3,))], domains=(real, positive)),
    Row("average", lambda x: fnp.average(x, axis=0), id="plain", shapes=[((3, 2),)]),
    Row("cov", fnp.cov, shapes=[((2, 4),), ((3, 5),)]),
    Row("cov", lambda x, y: fnp.cov(x, y, rowvar=False, bias=True), id="y",
        shapes=[((4,), (4,))]),
    Row("corrcoef", fnp.corrcoef, shapes=[((2, 5),)]),
    Row("trapezoid", fnp.trapezoid, shapes=[((4,),), ((2, 3),)]),
    Row("trapezoid", lambda y, x: fnp.trapezoid(y, x), id="x", shapes=[((4,), (4,))]),
    Row("interp", lambda x, fp: fnp.interp(x, _knots(x), fp), make=_interp_x,
        shapes=[((5,), (4,)), ((), (4,))]),
    Row("polyval", fnp.polyval, shapes=[((3,), (4,)), ((1,), ()), ((4,), (2, 2))]),
    Row("vander", lambda x: fnp.vander(x, 3), shapes=[((3,),)]),
    Row("vander", lambda x: fnp.vander(x, increasing=True), id="increasing",
        shapes=[((4,),)]),
    Row("kron", fnp.kron, shapes=[((2,), (3,)), ((2, 2), (2, 3)), ((), (2,)), ((2, 1), (3,))]),
    Row("convolve", fnp.convolve, shapes=[((4,), (2,)), ((2,), (5,)), ((1,), (1,))]),
    Row("convolve", lambda a, v: fnp.convolve(a, v, "same"), id="same",
        shapes=[((5,), (3,)), ((2,), (4,))]),
    Row("correlate", fnp.correlate, shapes=[((5,), (3,)), ((2,), (4,))]),
    Row("correlate", lambda a, v: fnp.correlate(a, v, "full"), id="full",
        shapes=[((3,), (2,))]),
    Row("logspace", lambda a, b: fnp.astype(fnp.logspace(a, b, 4, base=2.0), a.dtype),
        shapes=[((), ())]),
]

SHAPES = [
    Row("take_along_axis", lambda x: fnp.take_along_axis(
        x, np.array([[0, 2, 2], [1, 0, 1]]), axis=1), shapes=[((2, 3),)]),
    Row("take_along_axis", lambda x: fnp.take_along_axis(x, np.array([3, 0]), None),
        id="flat", shapes=[((2, 2),)]),
    Row("partition", lambda x: fnp.partition(x, 2), make=distinct, shapes=[((5,),), ((2, 4),)]),
    Row("atleast_2d", fnp.atleast_2d, shapes=[((),), ((3,),), ((2, 2),)]),
    Row("atleast_3d", fnp.atleast_3d, shapes=[((),), ((3,),), ((2, 2),), ((1, 2, 2),)]),
    Row("fliplr", fnp.fliplr, shapes=[((2, 3),)]),
    Row("flipud", fnp.flipud, shapes=[((3,),), ((2, 3),)]),
    Row("rot90", fnp.rot90, shapes=[((2, 3),)]),
    Row("rot90", lambda x: fnp.rot90(x, -1, axes=(1, 2)), id="k-axes", shapes=[((2, 2, 3),)]),
    Row("rot90", lambda x: fnp.rot90(x, 2), id="k2", shapes=[((2, 3),)]),
    Row("rollaxis", lambda x: fnp.rollaxis(x, 2), shapes=[((2, 3, 4),)]),
    Row("permute_dims", lambda x: fnp.permute_dims(x, (1, 0, 2)), shapes=[((2, 3, 1),)]),
    Row("array_split", lambda x: fnp.array_split(x, 3)[0] * 2, shapes=[((5,),), ((4, 2),)]),
    Row("hsplit", lambda x: fnp.hsplit(x, 2)[1], shapes=[((2, 4),), ((4,),)]),
    Row("vsplit", lambda x: fnp.vsplit(x, [1])[1], shapes=[((3, 2),)]),
    Row("dsplit", lambda x: fnp.dsplit(x, 2)[0], shapes=[((1, 2, 4),)]),
    Row("column_stack", lambda a, b: fnp.column_stack([a, b]), shapes=[((3,), (3,))]),
    Row("dstack", lambda a, b: fnp.dstack([a, b]), shapes=[((3,), (3,)), ((2, 2), (2, 2))]),
    Row("r_", lambda a, b: fnp.r_[a, b, 2.0], shapes=[((3,), ()), ((2,), (2,))]),
    Row("c_", lambda a, b: fnp.c_[a, b], shapes=[((3,), (3,))]),
    Row("real_if_close", lambda x: fnp.real_if_close(x), shapes=[((3,),)]),
    Row("append", fnp.append, shapes=[((3,), (2,)), ((2, 2), ())]),
    Row("append", lambda a, b: fnp.append(a, b, axis=0), id="axis", shapes=[((2, 3), (1, 3))]),
    Row("row_stack", lambda a, b: fnp.row_stack([a, b]), shapes=[((3,), (3,))]),  # not in JAX
    Row("select", lambda a, b: fnp.select([fnp.less(a, 0), fnp.less(a, 1)], [fnp.multiply(a, b), b],
                                          default=fnp.sin(a)), shapes=[((5,), (5,)), ((), ())]),
]

ROUNDED = [  # piecewise constant: derivative 0 (the inputs stay away from the jumps)
    Row("trunc", lambda x: fnp.trunc(x) * x, make=lambda rng, dtype, shapes: tuple(
        rng.integers(-3, 4, s) + 0.5 + 0.3 * np.tanh(rng.standard_normal(s)) for s in shapes)),
    Row("fix", lambda x: fnp.fix(x) + x, shapes=[((3,),)], make=lambda rng, dtype, shapes: tuple(
        rng.integers(-3, 4, s) + 0.5 + 0.3 * np.tanh(rng.standard_normal(s)) for s in shapes)),
    Row("rint", lambda x: fnp.rint(x) * x, make=lambda rng, dtype, shapes: tuple(
        rng.integers(-3, 4, s) + 0.3 * np.tanh(rng.standard_normal(s)) for s in shapes)),
    Row("floor_divide", lambda x, y: fnp.floor_divide(x, y) * x + y, shapes=SAME2,
        make=_mod_inputs),
]

LINALG = [
    Row("linalg.eigvalsh", lambda a: la.eigvalsh((a + fnp.swapaxes(a, -1, -2)) / 2),
        make=lambda rng, dtype, shapes: _sym(rng, shapes),
        shapes=[((3, 3),), ((2, 2, 2),)]),
    Row("linalg.svdvals", la.svdvals, make=singular, shapes=[((3, 2),), ((2, 3, 3),)]),
    Row("linalg.pinv", _pinv_function, make=singular, shapes=[((3, 2),), ((2, 4),), ((2, 2),),
                                                              ((2, 3, 2),)]),
    Row("linalg.lstsq", lambda a, b: la.lstsq(a, b)[0], make=_full_rank,
        shapes=[((4, 2), (4,)), ((3, 3), (3, 2))]),
    Row("linalg.lstsq", lambda a, b: la.lstsq(a, b)[1], id="residuals", make=_full_rank,
        shapes=[((4, 2), (4, 2))]),
    Row("linalg.matrix_power", lambda a: la.matrix_power(a, 3), shapes=[((2, 2),), ((2, 3, 3),)]),
    Row("linalg.matrix_power", lambda a: la.matrix_power(a, -2), id="negative",
        make=singular, shapes=[((2, 2),)]),
    Row("linalg.multi_dot", lambda a, b, c: la.multi_dot([a, b, c]),
        shapes=[((2, 3), (3, 3), (3,))]),
]


def _eig_function(a):
    """``V diag(exp(w)) V^-1 = expm(a)``: independent of each eigenvector's phase."""
    w, v = la.eig(a)
    return fnp.astype(_re(fnp.matmul(v * fnp.expand_dims(fnp.exp(w), -2), la.inv(v))), a.dtype)


def _eigvals_mix(a):
    w = la.eigvals(a)
    return fnp.astype(_re(w * w + w * (1 + 2j)), a.dtype)


def _spread_spectrum(rng, dtype, shapes):
    """Matrices ``Q diag(d) Q^-1`` with real eigenvalues 1.5 apart, or with a pair
    ``1 +- 1.3i``: distinct eigenvalues, well-conditioned eigenvectors."""
    (s,) = shapes
    n = s[-1]
    d = 1.5 * np.arange(n) - n + 0.2 * rng.random(s[:-1] + (n,))
    q = rng.standard_normal(s) + 2 * np.eye(n)
    m = (q * d[..., None, :]) @ np.linalg.inv(q)
    if n >= 2:  # a rotation block: a complex conjugate pair
        m = m + 1.3 * (np.eye(n, k=1) - np.eye(n, k=-1)) * (np.arange(n) < 2)[:, None] * (
            np.arange(n) < 2)[None, :]
    return (m,)


EIG = [
    Row("linalg.eig", _eig_function, id="function", make=_spread_spectrum,
        shapes=[((3, 3),), ((2, 2, 2),)], dtypes=("float64",)),
    Row("linalg.eigvals", _eigvals_mix, make=_spread_spectrum,
        shapes=[((3, 3),), ((4, 4),)], dtypes=("float64",)),
]


def _sym(rng, shapes):
    (s,) = shapes
    n = s[-1]
    q, _ = np.linalg.qr(rng.standard_normal(s))
    w = 1.2 * np.arange(n) + 0.1 * rng.random(s[:-1])
    return ((q * w[..., None, :]) @ np.swapaxes(q, -1, -2),)


NN = [
    Row("nn.gelu", fg.nn.gelu, shapes=UNARY),
    Row("nn.silu", fg.nn.silu, shapes=UNARY),
    Row("nn.elu", fg.nn.elu, domains=(away_from_zero,)),
    Row("nn.elu", lambda x: fg.nn.elu(x, 0.5), id="alpha", domains=(away_from_zero,),
        shapes=[((3,),)]),
    Row("nn.leaky_relu", fg.nn.leaky_relu, domains=(away_from_zero,)),
    Row("nn.log_sigmoid", fg.nn.log_sigmoid, shapes=UNARY),
]

ROWS = ELEMENTWISE + STATS + SHAPES + ROUNDED + LINALG + EIG + NN
