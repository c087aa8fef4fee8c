"""Reductions over axes, with ``axis=`` (int, tuple or None) and ``keepdims=`` (layer 4).

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.mean(x))(numpy.ones(4))
array([0.25, 0.25, 0.25, 0.25])
"""

from __future__ import annotations

import math

import numpy

from ..errors import FuncgradIndexError
from ._core import defjvp, defvjp, known_shape, lazy, primitive, raw, shape_of, xp_of
from ._core import namespace as _ns
from ._linear import expand_to, keepdims_shape, normalize_axes, sum, ufunc_axis
from .elementwise import imag, real, sqrt, where
from .shape import as_arrays, reshape, transpose


def _count_of(x, axis):
    """The number of elements reduced over ``axis``: an int, or, where a lazy namespace
    does not know a length yet, a raw array counting them when computed."""
    shape = shape_of(x)
    if not lazy(x) or known_shape(shape):
        return _count(shape, axis)
    v = raw(x)
    return xp_of(v).sum(xp_of(v).ones_like(v), axis=normalize_axes(axis, len(shape)),
                        keepdims=True)


def _count(shape: tuple, axis) -> int:
    axes = normalize_axes(axis, len(shape))
    if axes and not shape:  # NumPy's mean, var and std refuse an axis of a 0-d array
        raise FuncgradIndexError(f"axis {axis!r} is out of bounds for an array of 0 dimensions")
    return math.prod(shape[a] for a in axes)


@primitive
def mean(x, axis=None, keepdims=False):
    """``numpy.mean``: the mean over ``axis`` (an int, a tuple of ints, or None: all axes).

    The gradient is the output's gradient divided by the count, broadcast back.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.mean(numpy.array([[1.0, 2.0], [3.0, 4.0]]), axis=1, keepdims=True)
    array([[1.5],
           [3.5]])
    >>> fg.grad(fnp.mean)(numpy.ones(4))
    array([0.25, 0.25, 0.25, 0.25])
    """
    return _ns(x).mean(x, axis=axis, keepdims=keepdims)


@primitive
def amax(x, axis=None, keepdims=False):
    """``numpy.max`` (also ``fnp.amax``): the largest element over ``axis``.

    The gradient goes to the elements equal to the maximum; ties share it evenly.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.max(numpy.array([[1.0, 5.0], [4.0, 2.0]]), axis=1)
    array([5., 4.])
    >>> fg.grad(fnp.max)(numpy.array([1.0, 3.0, 3.0]))
    array([0. , 0.5, 0.5])
    """
    return _ns(x).max(x, axis=axis, keepdims=keepdims)


@primitive
def amin(x, axis=None, keepdims=False):
    """``numpy.min`` (also ``fnp.amin``): the smallest element over ``axis``.

    The gradient goes to the elements equal to the minimum; ties share it evenly.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.min(numpy.array([[1.0, 5.0], [4.0, 2.0]]), axis=0)
    array([1., 2.])
    >>> fg.grad(fnp.min)(numpy.array([2.0, -1.0, 3.0]))
    array([0., 1., 0.])
    """
    return _ns(x).min(x, axis=axis, keepdims=keepdims)


max = amax
min = amin


def _numpy_mean(x, axis=None, keepdims=False):
    x = numpy.asarray(x)
    if x.dtype.kind != "f" or x.dtype.itemsize < 4:  # NumPy's own accumulator rules
        return x.mean(axis=axis, keepdims=keepdims)
    n = _count(x.shape, axis)
    return numpy.add.reduce(x, axis=axis, keepdims=keepdims) / n if n else x.mean(
        axis=axis, keepdims=keepdims)


# NumPy fast paths: ufunc reductions, sparing NumPy's Python-level wrappers.
mean.numpy_impl = _numpy_mean
amax.numpy_impl = lambda x, axis=None, keepdims=False: numpy.maximum.reduce(
    x, axis=ufunc_axis(axis), keepdims=keepdims
)
amin.numpy_impl = lambda x, axis=None, keepdims=False: numpy.minimum.reduce(
    x, axis=ufunc_axis(axis), keepdims=keepdims
)

defvjp(
    mean,
    lambda g, ans, x, axis=None, keepdims=False: expand_to(g, x, axis, keepdims)
    / _count_of(x, axis),
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
    return expand_to(g, x, axis, keepdims) * _argext_mask(ans, x, axis, keepdims)


def _ext_jvp(t, ans, x, axis=None, keepdims=False):
    return sum(t * _argext_mask(ans, x, axis, keepdims), axis=axis, keepdims=keepdims)


defvjp(amax, _ext_vjp)
defjvp(amax, _ext_jvp)
defvjp(amin, _ext_vjp)
defjvp(amin, _ext_jvp)



# -- products -----------------------------------------------------------------
# The gradient of a product is the product of the *other* factors.  It is
# never ``ans / x``: that fails at zeros and, differentiated again and again,
# loses all precision near them (the terms of its derivatives nearly cancel).
# Instead, everything is written with running products and two division-free
# linear scans along an axis, with P[i, k] = x[i+1] * ... * x[k] (1 if i = k):
#     _scan(h, x)[k]  = sum over i <= k of h[i] P[i, k]   (F[k] = h[k] + x[k] F[k-1])
#     _rscan(h, x)[i] = sum over k >= i of h[k] P[i, k]   (R[i] = h[i] + x[i+1] R[i+1])
# Each is linear in h and the transpose of the other; their derivatives in x
# are scans again.  So the rules of prod and cumprod stay exact to every
# order, zeros and near-zeros included, at linear cost.


def _along(axis: int, ndim: int, part: slice) -> tuple:
    return (slice(None),) * axis + (part,) + (slice(None),) * (ndim - axis - 1)


@primitive
def _shift(x, axis, fill, step):
    """``x`` moved one place along ``axis`` (towards the end for ``step=1``), ``fill`` coming in."""
    xp = _ns(x)
    n = x.shape[axis]
    if n == 0:
        return xp.array(x, copy=True)
    head = xp.full(x.shape[:axis] + (1,) + x.shape[axis + 1:], fill, dtype=x.dtype)
    if step == 1:
        return xp.concatenate([head, x[_along(axis, x.ndim, slice(0, n - 1))]], axis=axis)
    return xp.concatenate([x[_along(axis, x.ndim, slice(1, n))], head], axis=axis)


defvjp(_shift, lambda g, ans, x, axis, fill, step: _shift(g, axis, 0.0, -step))
defjvp(_shift, lambda t, ans, x, axis, fill, step: _shift(t, axis, 0.0, step))


def _scan_raw(h, x, axis):
    # F = composition of the maps F -> x[k] F + h[k]; by doubling: log2(n)
    # vectorized steps, each composing every map with the one d places before.
    xp = _ns(h, x)
    n, nd = h.shape[axis], h.ndim
    a, b = x, h
    d = 1
    while d < n:
        hi, lo = _along(axis, nd, slice(d, n)), _along(axis, nd, slice(0, n - d))
        first = _along(axis, nd, slice(0, d))
        b = xp.concatenate([b[first], b[hi] + a[hi] * b[lo]], axis=axis)
        a = xp.concatenate([a[first], a[hi] * a[lo]], axis=axis)
        d *= 2
    return xp.array(b, copy=True) if b is h else b


@primitive
def _scan(h, x, axis):
    """``F[k] = h[k] + x[k] * F[k-1]`` along ``axis`` (``F[-1] = 0``); ``h``, ``x`` of one shape."""
    return _scan_raw(h, x, axis)


@primitive
def _rscan(h, x, axis):
    """``R[i] = h[i] + x[i+1] * R[i+1]`` along ``axis`` (``R[n] = 0``): the transpose of _scan."""
    xp = _ns(h, x)
    # Reversed, it is a forward scan whose coefficients are x reversed, one place later.
    coef = _shift.impl(xp.flip(x, axis), axis, 0.0, 1)
    return xp.flip(_scan_raw(xp.flip(h, axis), coef, axis), axis)


defvjp(
    _scan,
    lambda g, ans, h, x, axis: _rscan(g, x, axis),
    # dF[k]/dx[m] = F[m-1] P[m, k] for m <= k
    lambda g, ans, h, x, axis: _shift(ans, axis, 0.0, 1) * _rscan(g, x, axis),
)
defjvp(
    _scan,
    lambda t, ans, h, x, axis: _scan(t, x, axis),
    lambda t, ans, h, x, axis: _scan(t * _shift(ans, axis, 0.0, 1), x, axis),
)
defvjp(
    _rscan,
    lambda g, ans, h, x, axis: _scan(g, x, axis),
    # dR[i]/dx[m] = P[i, m-1] R[m] for i < m
    lambda g, ans, h, x, axis: ans * _shift(_scan(g, x, axis), axis, 0.0, 1),
)
defjvp(
    _rscan,
    lambda t, ans, h, x, axis: _rscan(t, x, axis),
    lambda t, ans, h, x, axis: _rscan(_shift(t * ans, axis, 0.0, -1), x, axis),
)


def _others(x, axis):
    """The product of the other factors of each element's slice over ``axis``: d prod / d x.

    The reduced axes are moved last and merged; there the product of the
    others is the running product before each element (cumprod, shifted)
    times the product of those after it (a reverse scan of a last-place 1).
    """
    shape = shape_of(x)
    v = raw(x)
    xp = xp_of(v)
    axes = normalize_axes(axis, len(shape))
    if not axes:  # a product over nothing is x itself
        return xp.ones(shape, v.dtype)
    rest = [i for i in range(len(shape)) if i not in axes]
    perm = tuple(rest + list(axes))
    moved = tuple(shape[i] for i in perm)
    merged = tuple(shape[i] for i in rest) + (_count(shape, axis),)
    flat = transpose(x, perm) if perm != tuple(range(len(shape))) else x
    flat = reshape(flat, merged) if merged != moved else flat
    last = len(rest)
    n = merged[last]
    one_at_end = xp.broadcast_to((xp.arange(n) == n - 1).astype(v.dtype), merged)
    out = _shift(cumprod(flat, axis=last), last, 1.0, 1) * _rscan(one_at_end, flat, last)
    out = reshape(out, moved) if merged != moved else out
    if perm == tuple(range(len(shape))):
        return out
    return transpose(out, tuple(perm.index(i) for i in range(len(shape))))


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
    lambda g, ans, x, axis=None, keepdims=False: expand_to(g, x, axis, keepdims)
    * _others(x, axis),
)
defjvp(
    prod,
    lambda t, ans, x, axis=None, keepdims=False: sum(
        t * _others(x, axis), axis=axis, keepdims=keepdims
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
    return (reshape(x, (-1,)), 0) if axis is None else (x, axis)


def _shaped(v, x, axis):
    return reshape(v, x.shape) if axis is None else v


defvjp(cumsum, lambda g, ans, x, axis=None: _shaped(_rcumsum(*_flat(g, axis)), x, axis))
defjvp(cumsum, lambda t, ans, x, axis=None: cumsum(t, axis=axis))
defvjp(_rcumsum, lambda g, ans, x, axis: cumsum(g, axis=axis))
defjvp(_rcumsum, lambda t, ans, x, axis: _rcumsum(t, axis))


@primitive
def cumprod(x, axis=None):
    """``numpy.cumprod``: running products along ``axis`` (an int, or None: flattened).

    Derivatives are exact to every order, at and near zeros too: the rules
    divide by nothing (see ``_scan``).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.cumprod(x).sum())(numpy.array([1.0, 2.0, 3.0]))
    array([9., 4., 2.])
    """
    return _ns(x).cumprod(x, axis=axis)


def _cumprod_vjp(g, ans, x, axis=None):
    # d ans[k] / d x[i] (i <= k) is x[0] ... x[i-1] * x[i+1] ... x[k]: the
    # running product before i (ans shifted) times a reverse scan of g.
    xf, ax = _flat(x, axis)
    ax %= len(shape_of(xf))
    gf, _ = _flat(g, axis)
    af, _ = _flat(ans, axis)
    return _shaped(_shift(af, ax, 1.0, 1) * _rscan(gf, xf, ax), x, axis)


def _cumprod_jvp(t, ans, x, axis=None):
    xf, ax = _flat(x, axis)
    ax %= len(shape_of(xf))
    tf, _ = _flat(t, axis)
    af, _ = _flat(ans, axis)
    return _scan(tf * _shift(af, ax, 1.0, 1), xf, ax)  # cumprod's output is flat for None


defvjp(cumprod, _cumprod_vjp)
defjvp(cumprod, _cumprod_jvp)


# -- moments: compositions, so every order and forward mode come free --------


def var(x, axis=None, ddof=0, keepdims=False):
    """``numpy.var``: the mean squared deviation over ``axis``, divided by ``N - ddof``
    (of complex ``x``: of ``|x - mean|``, a real number).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.var)(numpy.array([1.0, 3.0]))
    array([-1.,  1.])
    """
    (x,) = as_arrays(x)
    n = _count(shape_of(x), axis) - ddof
    d = x - mean(x, axis=axis, keepdims=True)
    if raw(d).dtype.kind == "c":  # |d|^2, real, as NumPy
        d2 = real(d) * real(d) + imag(d) * imag(d)
    else:
        d2 = d * d
    # NumPy divides by max(N - ddof, 0); ``max`` is amax in this module
    return sum(d2, axis=axis, keepdims=keepdims) / (n if n > 0 else 0)  # noqa: FURB136


def std(x, axis=None, ddof=0, keepdims=False):
    """``numpy.std``: the square root of :func:`var`.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.std)(numpy.array([1.0, 3.0]))
    array([-0.5,  0.5])
    """
    v = var(x, axis=axis, ddof=ddof, keepdims=keepdims)
    # Where the variance is 0 -- always, over one element (a 0-d array, an axis
    # of length 1), or when all the elements are equal -- the derivative of
    # sqrt would be infinite times 0.  There std is 0 and its derivative is
    # taken as 0: exact over one element (std is constant there), the zero
    # subgradient otherwise (as ``abs`` at 0).  NaN (ddof >= N) stays NaN.
    vv = raw(v)
    xp = xp_of(vv)
    zero = xp.equal(vv, 0)
    return where(zero, xp.zeros((), vv.dtype), sqrt(where(zero, 1, v)))


__all__ = [
    "amax", "amin", "cumprod", "cumsum", "max", "mean", "min", "prod", "shape_of", "std", "sum",
    "var",
]
