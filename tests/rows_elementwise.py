"""Rows of the primitive table: elementwise functions, reductions and ``fg.nn``.

Domains keep every sample where the function is smooth: away from kinks
(``abs``, ``relu``, ``clip``), ties (``maximum``, ``max``) and the edges of a
domain (``log``, ``arcsin``), by more than the finite-difference step.
"""

from __future__ import annotations

import math
import pathlib
import sys

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp

# test_primitives loads this file by path (importlib mode): make its sibling importable.
sys.path.insert(0, str(pathlib.Path(__file__).parent))
from table import BINARY, UNARY, Row, above_one, away_from_zero, positive, real, unit

nn = fg.nn


# -- input generators -----------------------------------------------------------


def _spread(rng, shape, offset=0.0):
    """Values at least ~0.8 apart from each other (no ties, even after a step of 1e-2)."""
    n = math.prod(shape)
    grid = (rng.permutation(n) - n // 2).astype(float) * 2 + offset  # even points (+ offset)
    return (grid + 0.1 * rng.uniform(-1, 1, n)).reshape(shape)


def distinct(rng, dtype, shapes):
    """One input per shape, all values distinct and well apart (for max, min)."""
    return tuple(_spread(rng, s) for s in shapes)


def apart(rng, dtype, shapes):
    """Two inputs whose values never come near each other: x on even, y on odd points."""
    sx, sy = shapes
    return _spread(rng, sx), _spread(rng, sy, offset=1.0)


def with_zeros(count):
    """Inputs near 1 in size with ``count`` exact zeros in each slice along the last axis."""

    def make(rng, dtype, shapes):
        out = []
        for s in shapes:
            x = 0.5 + rng.uniform(0.0, 1.0, s)
            if x.ndim:
                x = x.reshape(-1, s[-1])
                for row in x:
                    row[rng.choice(s[-1], size=min(count, s[-1]), replace=False)] = 0.0
                x = x.reshape(s)
            out.append(x)
        return tuple(out)

    return make


def near_zero(rng, dtype, shapes):
    """Factors near 1 with one tiny (not zero) factor per slice of the last axis."""
    out = []
    for s in shapes:
        x = (0.5 + rng.uniform(0.0, 1.0, s)).reshape(-1, s[-1])
        for row in x:
            row[rng.integers(s[-1])] = rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-9, -7)
        out.append(x.reshape(s))
    return tuple(out)


def at_zero(rng, dtype, shapes):
    """Exactly 0 everywhere."""
    return tuple(np.zeros(s) for s in shapes)


def near_one(x):
    """(0.6, 1.4): products of many factors stay moderate."""
    return 1.0 + 0.4 * np.tanh(x)


def _probs(rng, shape):
    e = np.exp(rng.standard_normal(shape))
    return e / e.sum(axis=-1, keepdims=True)


def logits_and_probs(rng, dtype, shapes):
    (s,) = shapes
    return rng.standard_normal(s), _probs(rng, s)


# -- shapes -------------------------------------------------------------------------

ALL = [((),), ((3,),), ((2, 3),), ((0,),), ((2, 0),)]  # reduce over all axes
AXIS0 = [((3,),), ((2, 3),), ((2, 0),)]
LAST = [((3,),), ((2, 3),), ((2, 0),)]
TWO = [((2, 3),), ((2, 3, 2),)]  # axis=(0, 1)
NONEMPTY = [((),), ((3,),), ((2, 3),)]  # max/min of a size-0 array raise
NONEMPTY_AXIS = [((3,),), ((2, 3),), ((3, 0),)]  # reducing a nonzero axis of a size-0 array is fine
ROWS_OF_CLASSES = [((3,),), ((2, 3),), ((2, 2, 3),)]


def _labels(shape):
    """Deterministic integer class indices for logits of ``shape`` (classes last)."""
    n = shape[-1]
    return (np.arange(math.prod(shape[:-1])) % n).reshape(shape[:-1])


# -- rows ---------------------------------------------------------------------------

ROWS = [
    # arithmetic
    Row("add", fnp.add, BINARY),
    Row("subtract", fnp.subtract, BINARY),
    Row("multiply", fnp.multiply, BINARY),
    Row("divide", fnp.divide, BINARY, domains=(real, away_from_zero)),
    Row("true_divide", fnp.true_divide, BINARY, domains=(real, away_from_zero)),
    Row("negative", fnp.negative),
    Row("power", fnp.power, BINARY, domains=(positive, real)),
    Row("power", lambda x: fnp.power(x, 3), id="int-exponent"),
    # x ** k is smooth at 0: every order is finite there (no 0 * 0 ** -1)
    Row("power", lambda x: fnp.power(x, 2) + fnp.power(x, 1) + fnp.power(x, 0), UNARY[:3],
        make=at_zero, order=3, dtypes=("float64",), id="int-exponents-at-0"),
    Row("square", fnp.square),
    Row("reciprocal", fnp.reciprocal, domains=(away_from_zero,)),
    Row("sqrt", fnp.sqrt, domains=(positive,)),
    # exponentials and logarithms
    Row("exp", fnp.exp),
    Row("exp2", fnp.exp2),
    Row("expm1", fnp.expm1),
    Row("log", fnp.log, domains=(positive,)),
    Row("log2", fnp.log2, domains=(positive,)),
    Row("log10", fnp.log10, domains=(positive,)),
    Row("log1p", fnp.log1p, domains=(positive,)),
    Row("logaddexp", fnp.logaddexp, BINARY),
    # trigonometric and hyperbolic
    Row("sin", fnp.sin),
    Row("cos", fnp.cos),
    Row("tan", fnp.tan, domains=(unit,)),
    Row("arcsin", fnp.arcsin, domains=(unit,)),
    Row("arccos", fnp.arccos, domains=(unit,)),
    Row("arctan", fnp.arctan),
    Row("arctan2", fnp.arctan2, BINARY, domains=(real, positive)),  # off the branch cut
    Row("sinh", fnp.sinh),
    Row("cosh", fnp.cosh),
    Row("tanh", fnp.tanh),
    Row("arcsinh", fnp.arcsinh),
    Row("arccosh", fnp.arccosh, domains=(above_one,)),
    Row("arctanh", fnp.arctanh, domains=(unit,)),
    # piecewise: samples stay away from the kinks
    Row("abs", fnp.abs, domains=(away_from_zero,)),
    Row("absolute", fnp.absolute, domains=(away_from_zero,)),
    Row("maximum", fnp.maximum, BINARY, make=apart),
    Row("minimum", fnp.minimum, BINARY, make=apart),
    Row("where", lambda x, y: fnp.where(x > 0, x, y), BINARY, domains=(away_from_zero, real)),
    # distinct() puts values near even integers: odd-ish bounds stay clear of them
    Row("clip", lambda x: fnp.clip(x, -1.5, 1.5), make=distinct),
    Row("clip", lambda x: fnp.clip(x, None, 1.5), make=distinct, id="no-min"),
    Row("clip", lambda x: fnp.clip(x, -1.5, None), make=distinct, id="no-max"),
    Row("clip", lambda x: fnp.clip(x, None, None), id="no-bounds"),
    # Constant arrays are made on x's device (like=x), so that the row runs on any device.
    Row("clip", lambda x: fnp.clip(x, fnp.asarray([-5.0, -1.0, 3.0], x.dtype, like=x), 2.5),
        [((2, 3),)], make=distinct, id="array-bound"),
    # sums and means
    Row("sum", fnp.sum, ALL),
    Row("sum", lambda x: fnp.sum(x, axis=0), AXIS0, id="axis0"),
    Row("sum", lambda x: fnp.sum(x, axis=-1, keepdims=True), LAST, id="last-keepdims"),
    Row("sum", lambda x: fnp.sum(x, axis=(0, 1)), TWO, id="axes01"),
    Row("mean", fnp.mean, NONEMPTY),
    Row("mean", lambda x: fnp.mean(x, axis=0), AXIS0, id="axis0"),
    Row("mean", lambda x: fnp.mean(x, axis=-1, keepdims=True), [((3,),), ((2, 3),)],
        id="last-keepdims"),
    Row("mean", lambda x: fnp.mean(x, axis=(0, 1), keepdims=True), TWO, id="axes01"),
    # extrema
    Row("max", fnp.max, NONEMPTY, make=distinct),
    Row("max", lambda x: fnp.max(x, axis=0), NONEMPTY_AXIS, make=distinct, id="axis0"),
    Row("amax", lambda x: fnp.amax(x, axis=-1, keepdims=True), [((3,),), ((2, 3),)],
        make=distinct, id="last-keepdims"),
    Row("amax", lambda x: fnp.amax(x, axis=(0, 1)), TWO, make=distinct, id="axes01"),
    Row("min", fnp.min, NONEMPTY, make=distinct),
    Row("min", lambda x: fnp.min(x, axis=0), NONEMPTY_AXIS, make=distinct, id="axis0"),
    Row("amin", lambda x: fnp.amin(x, axis=-1, keepdims=True), [((3,),), ((2, 3),)],
        make=distinct, id="last-keepdims"),
    Row("amin", lambda x: fnp.amin(x, axis=(0, 1)), TWO, make=distinct, id="axes01"),
    # products
    Row("prod", fnp.prod, ALL, domains=(near_one,)),
    Row("prod", lambda x: fnp.prod(x, axis=0), AXIS0, domains=(near_one,), id="axis0"),
    Row("prod", lambda x: fnp.prod(x, axis=-1, keepdims=True), LAST, domains=(near_one,),
        id="last-keepdims"),
    Row("prod", lambda x: fnp.prod(x, axis=(0, 1)), TWO, domains=(near_one,), id="axes01"),
    Row("prod", lambda x: fnp.prod(x, axis=-1), [((3,),), ((2, 3),)], make=with_zeros(1),
        id="one-zero"),
    Row("prod", lambda x: fnp.prod(x, axis=-1), [((3,),), ((2, 4),)], make=with_zeros(2),
        id="two-zeros"),
    Row("prod", lambda x: fnp.prod(x, axis=(0, 1)), [((2, 3),)], make=with_zeros(1),
        id="axes01-zeros"),
    # near (not at) zero, where dividing by x again and again loses all precision
    Row("prod", lambda x: fnp.prod(x, axis=-1), [((4,),), ((2, 4),)], make=near_zero,
        order=3, dtypes=("float64",), id="near-zero"),
    # moments
    Row("var", fnp.var, [((3,),), ((2, 3),)]),
    Row("var", lambda x: fnp.var(x, axis=0), AXIS0, id="axis0"),
    Row("var", lambda x: fnp.var(x, axis=-1, ddof=1, keepdims=True), [((3,),), ((2, 3),)],
        id="last-ddof1-keepdims"),
    Row("var", lambda x: fnp.var(x, axis=(0, 1)), TWO, id="axes01"),
    Row("std", fnp.std, [((3,),), ((2, 3),)]),
    Row("std", lambda x: fnp.std(x, axis=0, ddof=1), [((3,),), ((3, 2),), ((2, 0),)],
        id="axis0-ddof1"),
    Row("std", lambda x: fnp.std(x, axis=(0, 1), keepdims=True), TWO, id="axes01-keepdims"),
    # over one element std is 0 whatever x is: derivatives 0, not sqrt's inf * 0
    Row("std", fnp.std, [((),)], id="one-element"),
    Row("std", lambda x: fnp.std(x, axis=1), [((3, 1),)], id="axis-of-one"),
    Row("var", fnp.var, [((),)], id="one-element"),
    # running sums and products
    Row("cumsum", fnp.cumsum, ALL),
    Row("cumsum", lambda x: fnp.cumsum(x, axis=0), AXIS0, id="axis0"),
    Row("cumsum", lambda x: fnp.cumsum(x, axis=-1), LAST, id="last"),
    Row("cumprod", fnp.cumprod, ALL, domains=(near_one,)),
    Row("cumprod", lambda x: fnp.cumprod(x, axis=0), AXIS0, domains=(near_one,), id="axis0"),
    Row("cumprod", lambda x: fnp.cumprod(x, axis=-1), LAST, domains=(near_one,), id="last"),
    Row("cumprod", lambda x: fnp.cumprod(x, axis=-1), [((3,),), ((2, 4),)],
        make=with_zeros(2), id="zeros"),
    Row("cumprod", lambda x: fnp.cumprod(x, axis=-1), [((4,),), ((2, 4),)], make=near_zero,
        order=3, dtypes=("float64",), id="near-zero"),
    # nn
    Row("nn.sigmoid", nn.sigmoid),
    Row("nn.relu", nn.relu, domains=(away_from_zero,)),
    Row("nn.softplus", nn.softplus),
    Row("nn.logsumexp", nn.logsumexp, NONEMPTY),  # of nothing it is -inf
    Row("nn.logsumexp", lambda x: nn.logsumexp(x, axis=0), NONEMPTY_AXIS, id="axis0"),
    Row("nn.logsumexp", lambda x: nn.logsumexp(x, axis=-1, keepdims=True), [((3,),), ((2, 3),)],
        id="last-keepdims"),
    Row("nn.logsumexp", lambda x: nn.logsumexp(x, axis=(0, 1)), TWO, id="axes01"),
    Row("nn.softmax", nn.softmax, ROWS_OF_CLASSES),
    Row("nn.softmax", lambda x: nn.softmax(x, axis=0), [((3, 2),)], id="axis0"),
    Row("nn.log_softmax", nn.log_softmax, ROWS_OF_CLASSES),
    Row("nn.log_softmax", lambda x: nn.log_softmax(x, axis=0), [((3, 2),)], id="axis0"),
    Row("nn.softmax_cross_entropy", lambda x: nn.softmax_cross_entropy(x, _labels(x.shape)),
        ROWS_OF_CLASSES, id="int-labels"),
    Row("nn.softmax_cross_entropy", nn.softmax_cross_entropy, ROWS_OF_CLASSES,
        make=logits_and_probs, id="probabilities"),
]
