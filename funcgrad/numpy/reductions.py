"""Reductions over axes, with ``axis=`` (int, tuple or None) and ``keepdims=`` (layer 4).

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.mean(x))(numpy.ones(4))
array([0.25, 0.25, 0.25, 0.25])
"""

from __future__ import annotations

import math

from ._core import defjvp, defvjp, primitive, raw, shape_of, xp_of
from ._core import namespace as _ns


def normalize_axes(axis, ndim: int) -> tuple:
    """``axis`` as a sorted tuple of non-negative ints (all axes for None)."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < (ndim or 1):
            raise ValueError(f"axis {a} is out of bounds for an array of {ndim} dimensions")
        out.append(a % ndim if ndim else 0)
    return tuple(sorted(set(out)))


def keepdims_shape(shape: tuple, axis) -> tuple:
    """``shape`` with the reduced ``axis`` kept as 1s."""
    axes = normalize_axes(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def expand_to(g, shape: tuple, axis, keepdims: bool):
    """Broadcast a reduced gradient ``g`` back to ``shape``."""
    from .shape import broadcast_to, reshape  # noqa: PLC0415

    if not keepdims:
        g = reshape(g, keepdims_shape(shape, axis))
    return broadcast_to(g, shape)


def _count(shape: tuple, axis) -> int:
    return math.prod(shape[a] for a in normalize_axes(axis, len(shape)))


@primitive
def sum(x, axis=None, keepdims=False):  # noqa: A001
    return _ns(x).sum(x, axis=axis, keepdims=keepdims)


@primitive
def mean(x, axis=None, keepdims=False):
    return _ns(x).mean(x, axis=axis, keepdims=keepdims)


@primitive
def amax(x, axis=None, keepdims=False):
    return _ns(x).max(x, axis=axis, keepdims=keepdims)


@primitive
def amin(x, axis=None, keepdims=False):
    return _ns(x).min(x, axis=axis, keepdims=keepdims)


max = amax  # noqa: A001
min = amin  # noqa: A001

defvjp(sum, lambda g, ans, x, axis=None, keepdims=False: expand_to(g, x.shape, axis, keepdims))
defjvp(sum, lambda t, ans, x, axis=None, keepdims=False: sum(t, axis=axis, keepdims=keepdims))
defvjp(
    mean,
    lambda g, ans, x, axis=None, keepdims=False: expand_to(g, x.shape, axis, keepdims)
    / _count(x.shape, axis),
)
defjvp(mean, lambda t, ans, x, axis=None, keepdims=False: mean(t, axis=axis, keepdims=keepdims))


def _argext_mask(ans, x, axis, keepdims):
    """Where ``x`` attains its max/min along ``axis``, shared evenly among ties (no gradient)."""
    xv, av = raw(x), raw(ans)
    xp = xp_of(xv)
    if not keepdims:
        av = xp.reshape(av, keepdims_shape(xv.shape, axis))
    hit = xp.equal(xv, av).astype(xv.dtype)
    return hit / xp.sum(hit, axis=normalize_axes(axis, xv.ndim), keepdims=True)


def _ext_vjp(g, ans, x, axis=None, keepdims=False):
    return expand_to(g, x.shape, axis, keepdims) * _argext_mask(ans, x, axis, keepdims)


def _ext_jvp(t, ans, x, axis=None, keepdims=False):
    return sum(t * _argext_mask(ans, x, axis, keepdims), axis=axis, keepdims=keepdims)


defvjp(amax, _ext_vjp)
defjvp(amax, _ext_jvp)
defvjp(amin, _ext_vjp)
defjvp(amin, _ext_jvp)

__all__ = ["sum", "mean", "amax", "amin", "max", "min", "shape_of"]
