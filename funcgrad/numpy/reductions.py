"""Reductions over axes, with ``axis=`` (int, tuple or None) and ``keepdims=`` (layer 4).

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.mean(x))(numpy.ones(4))
array([0.25, 0.25, 0.25, 0.25])
"""

from __future__ import annotations

import math

import numpy

from ..errors import FuncgradValueError
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
            raise FuncgradValueError(f"axis {a} is out of bounds for an array of {ndim} dimensions")
        out.append(a % ndim if ndim else 0)
    return tuple(sorted(set(out)))


def keepdims_shape(shape: tuple, axis) -> tuple:
    """``shape`` with the reduced ``axis`` kept as 1s."""
    axes = normalize_axes(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def expand_to(g, shape: tuple, axis, keepdims: bool):
    """Broadcast a reduced gradient ``g`` back to ``shape``."""
    from .shape import broadcast_to, reshape

    if not keepdims:
        g = reshape(g, keepdims_shape(shape, axis))
    return broadcast_to(g, shape)


def _count(shape: tuple, axis) -> int:
    return math.prod(shape[a] for a in normalize_axes(axis, len(shape)))


@primitive
def sum(x, axis=None, keepdims=False):
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


max = amax
min = amin


def _numpy_mean(x, axis=None, keepdims=False):
    x = numpy.asarray(x)
    if x.dtype.kind != "f" or x.dtype.itemsize < 4:  # NumPy's own accumulator rules
        return x.mean(axis=axis, keepdims=keepdims)
    n = _count(x.shape, axis)
    return numpy.add.reduce(x, axis=axis, keepdims=keepdims) / n if n else x.mean(axis=axis)


# NumPy fast paths: ufunc reductions, sparing NumPy's Python-level wrappers.
sum.numpy_impl = lambda x, axis=None, keepdims=False: numpy.add.reduce(
    x, axis=_axes(axis), keepdims=keepdims
)
mean.numpy_impl = _numpy_mean
amax.numpy_impl = lambda x, axis=None, keepdims=False: numpy.maximum.reduce(
    x, axis=_axes(axis), keepdims=keepdims
)
amin.numpy_impl = lambda x, axis=None, keepdims=False: numpy.minimum.reduce(
    x, axis=_axes(axis), keepdims=keepdims
)


def _axes(axis):
    return tuple(axis) if isinstance(axis, list) else axis

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



# -- products -----------------------------------------------------------------
# The gradient of a product is the product of the *other* factors.  Where a
# factor is nonzero that is ``ans / x``, exactly, as a function (so it stays
# right when differentiated again).  Where a factor is zero, dividing fails;
# there the product of the others is recomputed with that one factor set to 1.
# A slice with k zeros costs k more products (the r-th zero of every slice is
# handled by the same product), still exact to every order.  Limitation: near
# zero (tiny but nonzero factors) derivatives of order 3 and up, which divide by
# x again and again, lose relative precision; cumprod below shares both traits.


def _moved_last(v, axes: tuple):
    """``v`` (raw) with ``axes`` moved to the end and merged into one; and the way back."""
    xp = xp_of(v)
    rest = [i for i in range(v.ndim) if i not in axes]
    perm = rest + list(axes)
    inv = [0] * v.ndim
    for i, p in enumerate(perm):
        inv[p] = i
    moved = xp.transpose(v, perm)
    flat = xp.reshape(moved, moved.shape[: len(rest)] + (-1,))
    return flat, lambda w: xp.transpose(xp.reshape(w, moved.shape), inv)


def _zero_rank(zero, axes: tuple):
    """Raw data: each zero's rank among the zeros of its slice over ``axes`` (1, 2...), else 0."""
    xp = xp_of(zero)
    if zero.ndim == 0:
        return zero.astype(int)
    flat, back = _moved_last(zero, axes)
    return back(xp.cumsum(flat, axis=-1) * flat)


def _others(ans, x, axis, keepdims):
    """The product of the other factors of each element's slice: d prod / d x."""
    from .elementwise import where

    xv = raw(x)
    xp = xp_of(xv)
    whole = expand_to(ans, x.shape, axis, keepdims)
    zero = xv == 0
    if not zero.any():
        return whole / x
    one, nil = xp.ones((), xv.dtype), xp.zeros((), xv.dtype)
    out = where(zero, nil, whole / where(zero, one, x))
    rank = _zero_rank(zero, normalize_axes(axis, xv.ndim))
    for r in range(1, int(rank.max()) + 1):
        at = rank == r
        rest = prod(where(at, one, x), axis=axis, keepdims=True)
        out = where(at, expand_to(rest, x.shape, axis, True), out)
    return out


@primitive
def prod(x, axis=None, keepdims=False):
    """``numpy.prod``: the product over ``axis``; the gradient is exact with zeros too.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.prod)(numpy.array([2.0, 0.0, 3.0]))
    array([0., 6., 0.])
    """
    return _ns(x).prod(x, axis=axis, keepdims=keepdims)


defvjp(
    prod,
    lambda g, ans, x, axis=None, keepdims=False: expand_to(g, x.shape, axis, keepdims)
    * _others(ans, x, axis, keepdims),
)
defjvp(
    prod,
    lambda t, ans, x, axis=None, keepdims=False: sum(
        t * _others(ans, x, axis, keepdims), axis=axis, keepdims=keepdims
    ),
)


# -- cumulative sums and products ----------------------------------------------
# ``axis=None`` works on the flattened array, as in NumPy; the rules then work
# on the flattened argument and reshape back.


@primitive
def cumsum(x, axis=None):
    """``numpy.cumsum``: running sums along ``axis`` (an int, or None: flattened).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.cumsum(x).sum())(numpy.ones(3))
    array([3., 2., 1.])
    """
    return _ns(x).cumsum(x, axis=axis)


@primitive
def _rcumsum(x, axis):
    """Running sums from the end of ``axis`` (the transpose of ``cumsum``)."""
    xp = _ns(x)
    return xp.flip(xp.cumsum(xp.flip(x, axis), axis=axis), axis)


def _flat(x, axis):
    """``(x, axis)`` with ``x`` flattened when ``axis`` is None."""
    from .shape import reshape

    return (reshape(x, (-1,)), 0) if axis is None else (x, axis)


def _shaped(v, x, axis):
    from .shape import reshape

    return reshape(v, x.shape) if axis is None else v


defvjp(cumsum, lambda g, ans, x, axis=None: _shaped(_rcumsum(*_flat(g, axis)), x, axis))
defjvp(cumsum, lambda t, ans, x, axis=None: cumsum(t, axis=axis))
defvjp(_rcumsum, lambda g, ans, x, axis: cumsum(g, axis=axis))
defjvp(_rcumsum, lambda t, ans, x, axis: _rcumsum(t, axis))


@primitive
def cumprod(x, axis=None):
    """``numpy.cumprod``: running products along ``axis`` (an int, or None: flattened).

    Derivatives are exact to every order, zeros included; a slice holding k
    zeros costs k more running products in the rules.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.cumprod(x).sum())(numpy.array([1.0, 2.0, 3.0]))
    array([9., 4., 2.])
    """
    return _ns(x).cumprod(x, axis=axis)


def _zeros_in_order(x, axis):
    """Raw data: ``x == 0`` and, for zeros, their rank along ``axis`` (1, 2...); None if no zero."""
    xv = raw(x)
    zero = xv == 0
    if not zero.any():
        return zero, None
    return zero, xp_of(xv).cumsum(zero, axis=axis) * zero


def _cumprod_vjp(g, ans, x, axis=None):
    # d ans[k] / d x[i] (i <= k) is the running product to k without factor i.
    from .elementwise import where

    xf, ax = _flat(x, axis)
    zero, rank = _zeros_in_order(xf, ax)
    if rank is None:
        return _shaped(_rcumsum(g * ans, ax) / xf, x, axis)
    dtype = raw(xf).dtype
    xp = xp_of(raw(xf))
    one, nil = xp.ones((), dtype), xp.zeros((), dtype)
    out = where(zero, nil, _rcumsum(g * ans, ax) / where(zero, one, xf))
    for r in range(1, int(rank.max()) + 1):
        at = rank == r
        out = where(at, _rcumsum(g * cumprod(where(at, one, xf), axis=ax), ax), out)
    return _shaped(out, x, axis)


def _cumprod_jvp(t, ans, x, axis=None):
    from .elementwise import where

    xf, ax = _flat(x, axis)
    tf, _ = _flat(t, axis)
    zero, rank = _zeros_in_order(xf, ax)
    if rank is None:
        return ans * cumsum(tf / xf, axis=ax)
    dtype = raw(xf).dtype
    xp = xp_of(raw(xf))
    one, nil = xp.ones((), dtype), xp.zeros((), dtype)
    out = ans * cumsum(where(zero, nil, tf / where(zero, one, xf)), axis=ax)
    for r in range(1, int(rank.max()) + 1):
        at = rank == r
        out = out + cumsum(where(at, tf, nil), axis=ax) * cumprod(where(at, one, xf), axis=ax)
    return out


defvjp(cumprod, _cumprod_vjp)
defjvp(cumprod, _cumprod_jvp)


# -- moments: compositions, so every order and forward mode come free --------


def var(x, axis=None, ddof=0, keepdims=False):
    """``numpy.var``: the mean squared deviation over ``axis``, divided by ``N - ddof``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.var)(numpy.array([1.0, 3.0]))
    array([-1.,  1.])
    """
    from .shape import as_arrays

    (x,) = as_arrays(x)
    n = _count(shape_of(x), axis) - ddof
    d = x - mean(x, axis=axis, keepdims=True)
    # NumPy divides by max(N - ddof, 0); ``max`` is amax in this module
    return sum(d * d, axis=axis, keepdims=keepdims) / (n if n > 0 else 0)  # noqa: FURB136


def std(x, axis=None, ddof=0, keepdims=False):
    """``numpy.std``: the square root of :func:`var`.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.std)(numpy.array([1.0, 3.0]))
    array([-0.5,  0.5])
    """
    from .elementwise import sqrt

    return sqrt(var(x, axis=axis, ddof=ddof, keepdims=keepdims))


__all__ = [
    "amax", "amin", "cumprod", "cumsum", "max", "mean", "min", "prod", "shape_of", "std", "sum",
    "var",
]
