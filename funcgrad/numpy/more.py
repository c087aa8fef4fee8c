"""The rest of NumPy (issue 19): more elementwise functions, statistics, polynomials,
signal helpers, shape helpers, data-only functions and NumPy's dtype names (layer 4).

Elementwise functions are ``ufunc`` primitives with one rule per argument;
the others are compositions of primitives, so their derivatives come from
those rules, at every order, in both modes, on every device.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: fnp.sum(fnp.diff(x) ** 2))(numpy.array([0.0, 1.0, 3.0]))
array([-2., -2.,  4.])
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy

from ..errors import FuncgradValueError
from . import creation as _c
from . import elementwise as _e
from . import reductions as _r
from . import shape as _s
from ._core import defzero, document, index_data, lazy, primitive, raw, shape_of, ufunc, xp_of
from ._core import namespace as _ns
from ._linear import defderiv
from .comparison import data_only, document_data
from .fft import _re, _to_complex
from .products import matmul

# -- elementwise ----------------------------------------------------------------------

remainder = ufunc("remainder")
mod = remainder
fmod = ufunc("fmod")
floor_divide = ufunc("floor_divide")
hypot = ufunc("hypot")
cbrt = ufunc("cbrt")
logaddexp2 = ufunc("logaddexp2")
deg2rad = ufunc("deg2rad")
rad2deg = ufunc("rad2deg")
radians = deg2rad
degrees = rad2deg
fabs = ufunc("fabs")
fmax = ufunc("fmax")
fmin = ufunc("fmin")
trunc = ufunc("trunc")
rint = ufunc("rint")
fix = trunc

# NumPy 2's array-API names for the inverse trigonometric functions and power.
acos, asin, atan, atan2 = _e.arccos, _e.arcsin, _e.arctan, _e.arctan2
acosh, asinh, atanh, pow = _e.arccosh, _e.arcsinh, _e.arctanh, _e.power

_DEG = math.pi / 180.0


def _quotient(x, y, rounding):
    xv, yv = raw(x), raw(y)
    return getattr(xp_of(xv, yv), rounding)(xv / yv)


# x mod y = x - floor(x / y) * y: derivative 1 in x, -floor(x / y) in y (piecewise).
defderiv(remainder, lambda g, ans, x, y: g, lambda g, ans, x, y: -g * _quotient(x, y, "floor"))
defderiv(fmod, lambda g, ans, x, y: g, lambda g, ans, x, y: -g * _quotient(x, y, "trunc"))
defzero(floor_divide, nargs=2)
defzero(trunc)
defzero(rint)
defderiv(hypot, lambda g, ans, x, y: g * x / ans, lambda g, ans, x, y: g * y / ans)
defderiv(cbrt, lambda g, ans, x: g / (3 * ans * ans))
defderiv(logaddexp2, lambda g, ans, x, y: g * _e.exp2(x - ans),
         lambda g, ans, x, y: g * _e.exp2(y - ans))
defderiv(deg2rad, lambda g, ans, x: g * _DEG)
defderiv(rad2deg, lambda g, ans, x: g / _DEG)
defderiv(fabs, lambda g, ans, x: g * _e.sign_of(x))
defderiv(fmax, *_e.PICK_RULES)
defderiv(fmin, *_e.PICK_RULES)


def _isfinite_mask(x, ans):
    xv, av = raw(x), raw(ans)
    return xp_of(xv).isfinite(xv).astype(av.dtype)


@primitive
def _nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    xp = _ns(x)
    if x.dtype.kind not in "fc":
        return xp.asarray(x).copy()
    if x.dtype.kind == "c":
        return xp.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)
    big = numpy.finfo(x.dtype).max
    out = xp.where(xp.isnan(x), x.dtype.type(nan), x)
    out = xp.where(x == numpy.inf, x.dtype.type(big if posinf is None else posinf), out)
    return xp.where(x == -numpy.inf, x.dtype.type(-big if neginf is None else neginf), out)


_nan_to_num.name = "nan_to_num"
defderiv(_nan_to_num, lambda g, ans, x, **kw: g * _isfinite_mask(x, ans))


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """``numpy.nan_to_num``: NaN replaced by ``nan``, infinities by ``posinf``/``neginf``
    (the largest finite numbers by default); derivative 1 where ``x`` is finite, else 0.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.sum(fnp.nan_to_num(x)))(numpy.array([1.0, numpy.nan]))
    array([1., 0.])
    """
    return _nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


@primitive
def _sinc(x):
    return _ns(x).sinc(x)


_sinc.name = "sinc"


def _sinc_slope(x, ans):
    # (cos(pi x) - sinc(x)) / x, and 0 at x == 0 (where sinc is flat)
    v = raw(x)
    zero = xp_of(v).equal(v, 0)
    safe = _e.where(zero, 1.0, x)
    return _e.where(zero, 0.0, (_e.cos(math.pi * safe) - ans) / safe)


defderiv(_sinc, lambda g, ans, x: g * _sinc_slope(x, ans))


def sinc(x: Any) -> Any:
    """``numpy.sinc``: ``sin(pi x) / (pi x)``, 1 at 0; derivative
    ``(cos(pi x) - sinc(x)) / x``, 0 at 0.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.sinc)(0.5)
    array(-1.27323954)
    """
    (x,) = _s.as_arrays(x)
    if raw(x).dtype.kind in "biu":
        x = _s.astype(x, numpy.float64)
    return _sinc(x)


def real_if_close(a: Any, tol: float = 100) -> Any:
    """``numpy.real_if_close``: a complex ``a`` whose imaginary parts are all within ``tol``
    machine epsilons of 0 as its real part; anything else unchanged.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.real_if_close(numpy.array([1.0 + 1e-20j]))
    array([1.])
    """
    (a,) = _s.as_arrays(a)
    v = raw(a)
    if v.dtype.kind != "c":
        return a
    xp = xp_of(v)
    eps = numpy.finfo(v.dtype).eps
    bound = tol * eps if tol > 1 else tol
    if bool(xp.all(xp.abs(v.imag) < bound)):
        return _re(a)
    return a


# -- data only: logical, bitwise, tests, searching ------------------------------------

logical_and = data_only("logical_and", 2)
logical_or = data_only("logical_or", 2)
logical_xor = data_only("logical_xor", 2)
logical_not = data_only("logical_not", 1)
bitwise_and = data_only("bitwise_and", 2)
bitwise_or = data_only("bitwise_or", 2)
bitwise_xor = data_only("bitwise_xor", 2)
bitwise_not = data_only("bitwise_not", 1)
invert = data_only("invert", 1)
isclose = data_only("isclose", 2)
allclose = data_only("allclose", 2)
array_equal = data_only("array_equal", 2)
isreal = data_only("isreal", 1)
iscomplex = data_only("iscomplex", 1)
isrealobj = data_only("isrealobj", 1)
iscomplexobj = data_only("iscomplexobj", 1)
isneginf = data_only("isneginf", 1)
isposinf = data_only("isposinf", 1)
signbit = data_only("signbit", 1)
argsort = data_only("argsort", 2)
argpartition = data_only("argpartition", 3)
nonzero = data_only("nonzero", 1)
flatnonzero = data_only("flatnonzero", 1)
argwhere = data_only("argwhere", 1)
count_nonzero = data_only("count_nonzero", 1)
searchsorted = data_only("searchsorted", 3)
unique = data_only("unique", 1)
nanargmax = data_only("nanargmax", 2)
nanargmin = data_only("nanargmin", 2)

_DATA_DOCS = [
    (logical_and, "``x1 and x2``, elementwise",
     "fnp.logical_and(numpy.array([True, False]), True)", "array([ True, False])"),
    (logical_or, "``x1 or x2``, elementwise",
     "fnp.logical_or(numpy.array([True, False]), False)", "array([ True, False])"),
    (logical_xor, "``x1 != x2`` as truth values, elementwise",
     "fnp.logical_xor(numpy.array([True, False]), True)", "array([False,  True])"),
    (logical_not, "``not x``, elementwise", "fnp.logical_not(numpy.array([True, False]))",
     "array([False,  True])"),
    (bitwise_and, "``x1 & x2`` of integers or booleans",
     "fnp.bitwise_and(numpy.array([3, 5]), 1)", "array([1, 1])"),
    (bitwise_or, "``x1 | x2`` of integers or booleans",
     "fnp.bitwise_or(numpy.array([2, 4]), 1)", "array([3, 5])"),
    (bitwise_xor, "``x1 ^ x2`` of integers or booleans",
     "fnp.bitwise_xor(numpy.array([3, 5]), 1)", "array([2, 4])"),
    (bitwise_not, "``~x`` of integers or booleans",
     "fnp.bitwise_not(numpy.array([True, False]))", "array([False,  True])"),
    (invert, "``~x`` of integers or booleans", "fnp.invert(numpy.array([0, 1]))",
     "array([-1, -2])"),
    (isclose, "whether ``x1`` and ``x2`` agree within ``rtol``/``atol``, elementwise",
     "fnp.isclose(fg.require_grad(numpy.array([1.0, 2.0])), 1.0 + 1e-10)",
     "array([ True, False])"),
    (allclose, "whether ``x1`` and ``x2`` agree within ``rtol``/``atol`` everywhere",
     "bool(fnp.allclose(numpy.ones(2), 1.0 + 1e-10))", "True"),
    (array_equal, "whether two arrays have the same shape and elements",
     "fnp.array_equal(numpy.ones(2), [1.0, 1.0])", "True"),
    (isreal, "whether each element has no imaginary part",
     "fnp.isreal(numpy.array([1.0, 1j]))", "array([ True, False])"),
    (iscomplex, "whether each element has a nonzero imaginary part",
     "fnp.iscomplex(numpy.array([1.0, 1j]))", "array([False,  True])"),
    (isrealobj, "whether the array is of a real dtype", "fnp.isrealobj(numpy.ones(2))",
     "True"),
    (iscomplexobj, "whether the array is of a complex dtype",
     "fnp.iscomplexobj(numpy.ones(2))", "False"),
    (isneginf, "whether each element is -inf", "fnp.isneginf(numpy.array([-numpy.inf, 1.0]))",
     "array([ True, False])"),
    (isposinf, "whether each element is +inf", "fnp.isposinf(numpy.array([numpy.inf, 1.0]))",
     "array([ True, False])"),
    (signbit, "whether each element's sign bit is set",
     "fnp.signbit(numpy.array([-1.0, 0.0]))", "array([ True, False])"),
    (argsort, "the indices that sort the array (along ``axis``)",
     "fnp.argsort(fg.require_grad(numpy.array([3.0, 1.0, 2.0])))", "array([1, 2, 0])"),
    (argpartition, "indices that partition the array around its ``kth`` element",
     "int(fnp.argpartition(numpy.array([3.0, 1.0, 2.0]), 0)[0])", "1"),
    (nonzero, "the indices of the nonzero elements, one array per axis",
     "fnp.nonzero(numpy.array([0.0, 2.0, 3.0]))", "(array([1, 2]),)"),
    (flatnonzero, "the indices of the nonzero elements of the flattened array",
     "fnp.flatnonzero(numpy.array([0.0, 2.0]))", "array([1])"),
    (argwhere, "the indices of the nonzero elements, one row each",
     "fnp.argwhere(numpy.array([0.0, 2.0]))", "array([[1]])"),
    (count_nonzero, "the number of nonzero elements",
     "int(fnp.count_nonzero(numpy.array([0.0, 2.0, 3.0])))", "2"),
    (searchsorted, "where the values ``v`` would go in sorted ``a`` to keep it sorted",
     "fnp.searchsorted(numpy.array([1.0, 2.0, 3.0]), 2.5)", "np.int64(2)"),
    (unique, "the sorted distinct elements (and, on request, indices and counts)",
     "fnp.unique(numpy.array([2.0, 1.0, 2.0]))", "array([1., 2.])"),
    (nanargmax, "the index of the largest element, NaNs ignored",
     "int(fnp.nanargmax(numpy.array([1.0, numpy.nan, 3.0])))", "2"),
    (nanargmin, "the index of the smallest element, NaNs ignored",
     "int(fnp.nanargmin(numpy.array([numpy.nan, 1.0, 3.0])))", "1"),
]
document_data(_DATA_DOCS)
del _DATA_DOCS


def _shape(a: Any) -> tuple:
    return tuple(shape_of(a)) if hasattr(a, "shape") else numpy.shape(a)


def ndim(a: Any) -> int:
    """``numpy.ndim``: the number of dimensions.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.ndim(numpy.zeros((2, 3)))
    2
    """
    return len(_shape(a))


def size(a: Any, axis: Any = None) -> int:
    """``numpy.size``: the number of elements (along ``axis``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.size(numpy.zeros((2, 3)))
    6
    """
    s = _shape(a)
    return math.prod(s) if axis is None else s[axis]


# -- creation -------------------------------------------------------------------------


def empty(shape: Any, dtype: Any = float, like: Any = None) -> Any:
    """``numpy.empty``: an array of ``shape`` (here: zeros, never uninitialized memory).

    >>> import funcgrad.numpy as fnp
    >>> fnp.empty(2)
    array([0., 0.])
    """
    return _c.zeros(shape, dtype, like=like)


def empty_like(x: Any, dtype: Any = None) -> Any:
    """``numpy.empty_like``: an array like ``x`` (here: zeros); plain data.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.empty_like(numpy.ones(2))
    array([0., 0.])
    """
    return _c.zeros_like(raw(x), dtype=dtype)


def identity(n: int, dtype: Any = float, like: Any = None) -> Any:
    """``numpy.identity``: the ``n x n`` identity matrix.

    >>> import funcgrad.numpy as fnp
    >>> fnp.identity(2)
    array([[1., 0.],
           [0., 1.]])
    """
    return _c.eye(n, dtype=dtype, like=like)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """``numpy.logspace``: ``base ** linspace(start, stop, num)``; differentiable in
    ``start``, ``stop`` and ``base``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.logspace(0.0, 2.0, 3)
    array([  1.,  10., 100.])
    """
    start, stop = _s.as_arrays(start, stop)
    xp = xp_of(start, stop)  # one device (else DeviceMismatchError)
    num = int(num)
    if num < 0:
        raise FuncgradValueError(f"logspace: num must be non-negative, got {num}")
    dt = numpy.result_type(*(getattr(raw(v), "dtype", raw(v)) for v in (start, stop)), 1.0)
    div = (num - 1) if endpoint else num
    steps = xp.arange(num, dtype=dt) / (div if div > 0 else 1)
    nd = max(len(shape_of(start)), len(shape_of(stop)))
    steps = xp.reshape(steps, (num,) + (1,) * nd)
    exps = _e.add(start, _e.multiply(_e.subtract(stop, start), steps))
    if axis != 0:
        exps = _s.moveaxis(exps, 0, axis)
    out = _e.power(base, exps)
    return out if dtype is None else _s.astype(out, dtype)


# -- shapes ---------------------------------------------------------------------------


def atleast_2d(*arys: Any) -> Any:
    """``numpy.atleast_2d``: 0-d and 1-d arrays become ``(1, 1)`` and ``(1, n)``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.atleast_2d([1.0, 2.0]).shape
    (1, 2)
    """
    out = []
    for a in _s.as_arrays(*arys):
        s = tuple(shape_of(a))
        out.append(_s.reshape(a, (1,) * (2 - len(s)) + s) if len(s) < 2 else a)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_3d(*arys: Any) -> Any:
    """``numpy.atleast_3d``: ``()`` -> ``(1, 1, 1)``, ``(n,)`` -> ``(1, n, 1)``,
    ``(m, n)`` -> ``(m, n, 1)``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.atleast_3d([1.0, 2.0]).shape
    (1, 2, 1)
    """
    out = []
    for a in _s.as_arrays(*arys):
        s = tuple(shape_of(a))
        new = {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s))
        out.append(a if new is None else _s.reshape(a, new))
    return out[0] if len(out) == 1 else tuple(out)


def fliplr(m: Any) -> Any:
    """``numpy.fliplr``: columns (axis 1) reversed.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.fliplr(numpy.array([[1.0, 2.0]]))
    array([[2., 1.]])
    """
    return _s.flip(m, 1)


def flipud(m: Any) -> Any:
    """``numpy.flipud``: rows (axis 0) reversed.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.flipud(numpy.array([1.0, 2.0]))
    array([2., 1.])
    """
    return _s.flip(m, 0)


def rot90(m: Any, k: int = 1, axes: tuple = (0, 1)) -> Any:
    """``numpy.rot90``: ``m`` rotated by 90 degrees ``k`` times in the plane ``axes``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.rot90(numpy.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[2., 4.],
           [1., 3.]])
    """
    (m,) = _s.as_arrays(m)
    nd = len(shape_of(m))
    a0, a1 = (_s.check_axis(a, nd, "rot90") for a in axes)
    if a0 == a1:
        raise FuncgradValueError("rot90: the two axes must differ")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return _s.flip(_s.flip(m, a0), a1)
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return _s.transpose(_s.flip(m, a1), perm)
    return _s.flip(_s.transpose(m, perm), a1)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """``numpy.rollaxis``: axis ``axis`` moved to before position ``start``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.rollaxis(numpy.zeros((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    (a,) = _s.as_arrays(a)
    nd = len(shape_of(a))
    axis = _s.check_axis(axis, nd, "rollaxis")
    start = start + nd if start < 0 else start
    if not 0 <= start <= nd:
        raise FuncgradValueError(f"rollaxis: start {start} is out of range for {nd} axes")
    if axis < start:
        start -= 1
    return _s.moveaxis(a, axis, start)


def permute_dims(a: Any, axes: Any = None) -> Any:
    """``numpy.permute_dims`` (the array API's name for ``transpose``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.permute_dims(numpy.zeros((2, 3))).shape
    (3, 2)
    """
    return _s.transpose(a, axes)


def array_split(x: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """``numpy.array_split``: as ``split``, but ``n`` sections need not divide the axis
    (the first ``len % n`` parts are one longer).

    >>> import numpy, funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.array_split(numpy.zeros(5), 3)]
    [(2,), (2,), (1,)]
    """
    (x,) = _s.as_arrays(x)
    if numpy.ndim(indices_or_sections) == 0:
        n = shape_of(x)[_s.check_axis(axis, len(shape_of(x)), "array_split")]
        parts = int(indices_or_sections)
        if parts <= 0:
            raise FuncgradValueError("array_split: number sections must be larger than 0")
        each, extra = divmod(n, parts)
        sizes = [each + 1] * extra + [each] * (parts - extra)
        indices_or_sections = list(itertools.accumulate(sizes))[:-1]
    return _s.split(x, indices_or_sections, axis)


def hsplit(x: Any, indices_or_sections: Any) -> list:
    """``numpy.hsplit``: ``split`` along axis 1 (axis 0 of a 1-d array).

    >>> import numpy, funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.hsplit(numpy.zeros((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    (x,) = _s.as_arrays(x)
    return _s.split(x, indices_or_sections, 1 if len(shape_of(x)) > 1 else 0)


def vsplit(x: Any, indices_or_sections: Any) -> list:
    """``numpy.vsplit``: ``split`` along axis 0 (of an array of 2 or more dimensions).

    >>> import numpy, funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.vsplit(numpy.zeros((4, 2)), 2)]
    [(2, 2), (2, 2)]
    """
    (x,) = _s.as_arrays(x)
    if len(shape_of(x)) < 2:
        raise FuncgradValueError("vsplit only works on arrays of 2 or more dimensions")
    return _s.split(x, indices_or_sections, 0)


def dsplit(x: Any, indices_or_sections: Any) -> list:
    """``numpy.dsplit``: ``split`` along axis 2 (of an array of 3 or more dimensions).

    >>> import numpy, funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.dsplit(numpy.zeros((1, 1, 4)), 2)]
    [(1, 1, 2), (1, 1, 2)]
    """
    (x,) = _s.as_arrays(x)
    if len(shape_of(x)) < 3:
        raise FuncgradValueError("dsplit only works on arrays of 3 or more dimensions")
    return _s.split(x, indices_or_sections, 2)


def column_stack(tup: Any) -> Any:
    """``numpy.column_stack``: 1-d arrays as columns, joined along axis 1.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.column_stack([numpy.ones(2), numpy.zeros(2)])
    array([[1., 0.],
           [1., 0.]])
    """
    cols = [_s.reshape(a, (-1, 1)) if len(shape_of(a)) < 2 else a for a in _s.as_arrays(*tup)]
    return _s.concatenate(cols, axis=1)


def dstack(tup: Any) -> Any:
    """``numpy.dstack``: arrays (made at least 3-d) joined along axis 2.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.dstack([numpy.ones(2), numpy.zeros(2)]).shape
    (1, 2, 2)
    """
    arrays = atleast_3d(*tup)
    arrays = arrays if isinstance(arrays, tuple) else (arrays,)
    return _s.concatenate(list(arrays), axis=2)


def append(arr: Any, values: Any, axis: Any = None) -> Any:
    """``numpy.append``: ``values`` joined after ``arr`` (both flattened when ``axis`` is
    None); differentiable in both.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.append(numpy.array([1.0, 2.0]), [[3.0]])
    array([1., 2., 3.])
    """
    arr, values = _s.as_arrays(arr, values)
    if axis is None:
        return _s.concatenate([_s.ravel(arr), _s.ravel(values)], axis=0)
    return _s.concatenate([arr, values], axis=axis)


def row_stack(tup: Any) -> Any:
    """``numpy.row_stack`` (an old name of ``vstack``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.row_stack([numpy.ones(2), numpy.zeros(2)]).shape
    (2, 2)
    """
    return _s.vstack(tup)


def select(condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    """``numpy.select``: from each position, the entry of the first choice whose condition
    holds (conditions are data), else ``default``; differentiable in the choices.

    >>> import numpy, funcgrad.numpy as fnp
    >>> x = numpy.array([-1.0, 0.5, 2.0])
    >>> fnp.select([x < 0, x < 1], [-x, x * 10], default=7.0)
    array([1., 5., 7.])
    """
    if len(condlist) != len(choicelist):
        raise FuncgradValueError("select: list of cases must be same length as list of "
                                 "conditions")
    if not condlist:
        raise FuncgradValueError("select with an empty condition list is not possible")
    choices = _s.as_arrays(*choicelist)
    out = default
    for cond, choice in zip(reversed(list(condlist)), reversed(list(choices)), strict=True):
        out = _e.where(raw(cond), choice, out)
    return out


def _open_grid(shape: tuple, axis: int, index: Any, xp: Any) -> tuple:
    """``index`` along ``axis``, broadcasting aranges along the others."""
    nd = len(shape)
    return tuple(
        index if i == axis else xp.reshape(xp.arange(n), (1,) * i + (n,) + (1,) * (nd - i - 1))
        for i, n in enumerate(shape)
    )


def take_along_axis(arr: Any, indices: Any, axis: Any) -> Any:
    """``numpy.take_along_axis``: ``arr`` gathered at ``indices`` along ``axis`` (the
    flattened array when None); differentiable in ``arr``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> x = numpy.array([[3.0, 1.0], [2.0, 5.0]])
    >>> fnp.take_along_axis(x, numpy.array([[1], [0]]), axis=1)
    array([[1.],
           [2.]])
    """
    (arr,) = _s.as_arrays(arr)
    if axis is None:
        arr, axis = _s.ravel(arr), 0
    idx = index_data(indices, arr)
    shp = tuple(shape_of(arr))
    if len(getattr(idx, "shape", ())) != len(shp):
        raise FuncgradValueError(
            f"take_along_axis: indices of {len(getattr(idx, 'shape', ()))} dimensions for an "
            f"array of {len(shp)}"
        )
    axis = _s.check_axis(axis, len(shp), "take_along_axis")
    xp = xp_of(raw(arr))
    out_shape = tuple(numpy.broadcast_shapes(
        tuple(n for i, n in enumerate(shp) if i != axis),
        tuple(n for i, n in enumerate(idx.shape) if i != axis)))
    grid = list(out_shape)
    grid.insert(axis, 1)
    return _s.getitem(arr, _open_grid(tuple(grid), axis, idx, xp))


def partition(a: Any, kth: Any, axis: int = -1) -> Any:
    """``numpy.partition``: ``a`` rearranged so that its ``kth`` element is where a sort
    would put it, smaller ones before, larger ones after; differentiable.

    >>> import numpy, funcgrad.numpy as fnp
    >>> float(fnp.partition(numpy.array([3.0, 1.0, 2.0]), 1)[1])
    2.0
    """
    (a,) = _s.as_arrays(a)
    if axis is None:
        a, axis = _s.ravel(a), 0
    v = raw(a)
    xp = xp_of(v)
    if lazy(a) or not hasattr(xp, "argpartition"):  # a sort is a partition too
        return _s.sort(a, axis=axis)
    return take_along_axis(a, xp.argpartition(v, kth, axis=axis), axis)


# -- differences, sums, statistics ------------------------------------------------------


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """``numpy.diff``: the ``n``-th differences ``a[i + 1] - a[i]`` along ``axis``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.diff(numpy.array([1.0, 4.0, 9.0]))
    array([3., 5.])
    """
    (a,) = _s.as_arrays(a)
    nd = len(shape_of(a))
    if nd == 0:
        raise FuncgradValueError("diff requires input that is at least one dimensional")
    axis = _s.check_axis(axis, nd, "diff")
    n = int(n)
    if n < 0:
        raise FuncgradValueError(f"diff: order must be non-negative but got {n}")
    parts = []
    for extra in (prepend,):
        if extra is not None:
            parts.append(_edge(extra, a, axis))
    parts.append(a)
    if append is not None:
        parts.append(_edge(append, a, axis))
    if len(parts) > 1:
        a = _s.concatenate(parts, axis=axis)
    lead = (slice(None),) * axis
    for _ in range(n):
        a = _s.getitem(a, lead + (slice(1, None),)) - _s.getitem(a, lead + (slice(None, -1),))
    return a


def _edge(v: Any, a: Any, axis: int) -> Any:
    (v,) = _s.as_arrays(v)
    if len(shape_of(v)) == 0:
        s = list(shape_of(a))
        s[axis] = 1
        return _s.broadcast_to(v, tuple(s))
    return v


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """``numpy.gradient``: central differences inside, one-sided ones at the edges
    (``edge_order=1``), with scalar spacings ``varargs``; a list for several axes.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.gradient(numpy.array([1.0, 2.0, 4.0, 7.0]))
    array([1. , 1.5, 2.5, 3. ])
    """
    (f,) = _s.as_arrays(f)
    nd = len(shape_of(f))
    axes = list(range(nd)) if axis is None else (
        [axis] if isinstance(axis, int) else list(axis))
    axes = [_s.check_axis(ax, nd, "gradient") for ax in axes]
    if edge_order != 1:
        raise FuncgradValueError("gradient: only edge_order=1 is supported")
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacing = list(varargs) * len(axes)
    else:
        spacing = list(varargs)
    if len(spacing) != len(axes) or any(numpy.ndim(raw(h)) != 0 for h in spacing):
        raise FuncgradValueError("gradient: give one scalar spacing, or one per axis")
    out = []
    for ax, h in zip(axes, spacing, strict=True):
        n = shape_of(f)[ax]
        if n < 2:
            raise FuncgradValueError(
                "gradient: the shape of each axis must be at least edge_order + 1"
            )
        lead = (slice(None),) * ax

        def part(sl, lead=lead):
            return _s.getitem(f, lead + (sl,))

        first = (part(slice(1, 2)) - part(slice(0, 1))) / h
        last = (part(slice(n - 1, n)) - part(slice(n - 2, n - 1))) / h
        pieces = [first]
        if n > 2:
            pieces.append((part(slice(2, None)) - part(slice(None, -2))) / (2 * h))
        pieces.append(last)
        out.append(_s.concatenate(pieces, axis=ax))
    return out[0] if len(out) == 1 else out


def _conj_if_complex(x: Any) -> Any:
    return x if raw(x).dtype.kind != "c" else _e.conjugate(x)


def _abs2(x: Any) -> Any:
    """``|x| ** 2``: ``x * x`` of reals, ``re(x * conj(x))`` of complex numbers."""
    if raw(x).dtype.kind != "c":
        return x * x
    return _re(x * _conj_if_complex(x))


def _nan_free(a: Any, fill: float) -> Any:
    (a,) = _s.as_arrays(a)
    v = raw(a)
    if v.dtype.kind not in "fc":
        return a
    return _e.where(xp_of(v).isnan(v), fill, a)


def nansum(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.nansum``: the sum with NaNs counted as 0 (their gradient is 0).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.nansum)(numpy.array([1.0, numpy.nan]))
    array([1., 0.])
    """
    return _r.sum(_nan_free(a, 0.0), axis=axis, keepdims=keepdims)


def nanprod(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.nanprod``: the product with NaNs counted as 1.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.nanprod(numpy.array([2.0, numpy.nan, 3.0]))
    np.float64(6.0)
    """
    return _r.prod(_nan_free(a, 1.0), axis=axis, keepdims=keepdims)


def nancumsum(a: Any, axis: Any = None) -> Any:
    """``numpy.nancumsum``: the cumulative sum with NaNs counted as 0.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.nancumsum(numpy.array([1.0, numpy.nan, 2.0]))
    array([1., 1., 3.])
    """
    return _r.cumsum(_nan_free(a, 0.0), axis=axis)


def nancumprod(a: Any, axis: Any = None) -> Any:
    """``numpy.nancumprod``: the cumulative product with NaNs counted as 1.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.nancumprod(numpy.array([2.0, numpy.nan, 3.0]))
    array([2., 2., 6.])
    """
    return _r.cumprod(_nan_free(a, 1.0), axis=axis)


def _count_not_nan(a: Any, axis: Any, keepdims: bool) -> Any:
    v = raw(a)
    xp = xp_of(v)
    dtype = numpy.finfo(v.dtype).dtype if v.dtype.kind in "fc" else numpy.float64
    return xp.sum(xp.logical_not(xp.isnan(v)), axis=axis, keepdims=keepdims).astype(dtype)


def nanmean(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.nanmean``: the mean of the elements that are not NaN.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.nanmean)(numpy.array([1.0, numpy.nan, 3.0]))
    array([0.5, 0. , 0.5])
    """
    (a,) = _s.as_arrays(a)
    return nansum(a, axis, keepdims) / _count_not_nan(a, _axis(axis), keepdims)


def _axis(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


def nanvar(a: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    """``numpy.nanvar``: the variance of the elements that are not NaN.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.nanvar(numpy.array([1.0, numpy.nan, 3.0]))
    np.float64(1.0)
    """
    (a,) = _s.as_arrays(a)
    m = nanmean(a, axis, keepdims=True)
    d = _nan_free(a - m, 0.0)
    return _r.sum(_abs2(d), axis=axis, keepdims=keepdims) / (
        _count_not_nan(a, _axis(axis), keepdims) - ddof)


def nanstd(a: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    """``numpy.nanstd``: the standard deviation of the elements that are not NaN.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.nanstd(numpy.array([1.0, numpy.nan, 3.0]))
    np.float64(1.0)
    """
    return _e.sqrt(nanvar(a, axis, ddof, keepdims))


def nanmax(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.nanmax``: the largest element, NaNs ignored.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.nanmax(numpy.array([1.0, numpy.nan, 3.0]))
    np.float64(3.0)
    """
    return _r.amax(_nan_free(a, -math.inf), axis=axis, keepdims=keepdims)


def nanmin(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.nanmin``: the smallest element, NaNs ignored.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.nanmin(numpy.array([1.0, numpy.nan, 3.0]))
    np.float64(1.0)
    """
    return _r.amin(_nan_free(a, math.inf), axis=axis, keepdims=keepdims)


def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.ptp``: the range ``max - min`` (along ``axis``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.ptp(numpy.array([1.0, 4.0, 2.0]))
    np.float64(3.0)
    """
    return _r.amax(a, axis=axis, keepdims=keepdims) - _r.amin(a, axis=axis, keepdims=keepdims)


def quantile(a: Any, q: Any, axis: Any = None, keepdims: bool = False,
             method: str = "linear") -> Any:
    """``numpy.quantile`` (``method='linear'``): the ``q``-th quantiles (``q`` in [0, 1],
    data) along ``axis``, interpolated linearly between the sorted values; its
    gradient goes to the one or two elements each quantile reads.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.quantile(x, 0.25))(numpy.array([4.0, 1.0, 3.0]))
    array([0. , 0.5, 0.5])
    """
    if method != "linear":
        raise FuncgradValueError(f"quantile: only method='linear' is supported, got {method!r}")
    (a,) = _s.as_arrays(a)
    shp = tuple(shape_of(a))
    nd = len(shp)
    qv = numpy.asarray(raw(q), dtype=numpy.float64)
    if qv.size and (qv.min() < 0 or qv.max() > 1):
        raise FuncgradValueError("quantile: q must be in the range [0, 1]")
    axes = tuple(range(nd)) if axis is None else tuple(
        _s.check_axis(ax, nd, "quantile") for ax in ((axis,) if isinstance(axis, int) else axis))
    rest = [i for i in range(nd) if i not in axes]
    moved = _s.transpose(a, rest + list(axes))
    n = math.prod(shp[i] for i in axes)
    flat = _s.reshape(moved, tuple(shp[i] for i in rest) + (n,))
    if n == 0:
        raise FuncgradValueError("quantile: the reduced axes are empty")
    srt = _s.sort(flat, axis=-1)
    pos = qv.reshape(-1) * (n - 1)
    lo = numpy.floor(pos).astype(numpy.intp)
    hi = numpy.minimum(lo + 1, n - 1)
    w = pos - lo
    dt = raw(srt).dtype
    xp = xp_of(raw(srt))
    w = xp.asarray(w.astype(dt if dt.kind == "f" else numpy.float64))
    out = (_s.take(srt, lo, axis=-1) * (1 - w) + _s.take(srt, hi, axis=-1) * w)  # (..., k)
    if keepdims:
        kept = [1 if i in axes else shp[i] for i in range(nd)]
        out = _s.reshape(_s.moveaxis(out, -1, 0), (len(pos),) + tuple(kept))
    else:
        out = _s.moveaxis(out, -1, 0)
    return _s.reshape(out, qv.shape + tuple(shape_of(out))[1:])


def percentile(a: Any, q: Any, axis: Any = None, keepdims: bool = False,
               method: str = "linear") -> Any:
    """``numpy.percentile``: :func:`quantile` of ``q / 100``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> float(fnp.percentile(numpy.array([1.0, 2.0, 3.0, 4.0]), 50))
    2.5
    """
    return quantile(a, numpy.asarray(raw(q), dtype=numpy.float64) / 100, axis, keepdims,
                    method)


def median(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.median``: the middle value (the mean of the two middle ones for an even
    count) along ``axis``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(fnp.median)(numpy.array([3.0, 1.0, 2.0, 5.0]))
    array([0.5, 0. , 0.5, 0. ])
    """
    return quantile(a, 0.5, axis, keepdims)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """``numpy.average``: the mean weighted by ``weights`` (differentiable in both).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.average(numpy.array([1.0, 3.0]), weights=numpy.array([3.0, 1.0]))
    np.float64(1.5)
    """
    (a,) = _s.as_arrays(a)
    if weights is None:
        avg = _r.mean(a, axis=_axis(axis), keepdims=keepdims)
        scl = _r.sum(_e.add(_e.multiply(a, 0.0), 1.0), axis=_axis(axis), keepdims=keepdims)
    else:
        (w,) = _s.as_arrays(weights)
        if shape_of(w) != shape_of(a):
            if axis is None or len(shape_of(w)) != 1:
                raise FuncgradValueError(
                    "average: weights must have the shape of a, or be 1-d along one axis")
            ax = _s.check_axis(axis, len(shape_of(a)), "average")
            w = _s.reshape(w, (-1,) + (1,) * (len(shape_of(a)) - ax - 1))
            w = _s.broadcast_to(w, tuple(shape_of(a)))
        scl = _r.sum(w, axis=_axis(axis), keepdims=keepdims)
        avg = _e.divide(_r.sum(_e.multiply(a, w), axis=_axis(axis), keepdims=keepdims), scl)
    if returned:
        return avg, _s.broadcast_to(scl, tuple(shape_of(avg)))
    return avg


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None) -> Any:
    """``numpy.cov``: the covariance matrix of the variables in ``m`` (rows, or columns
    with ``rowvar=False``), and of ``y``'s; ``fweights``/``aweights`` are not supported.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.cov(numpy.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    if fweights is not None or aweights is not None:
        raise FuncgradValueError("cov: fweights and aweights are not supported")
    x = atleast_2d(m)
    if not rowvar and shape_of(x)[0] != 1:
        x = _s.transpose(x)
    if y is not None:
        yy = atleast_2d(y)
        if not rowvar and shape_of(yy)[0] != 1:
            yy = _s.transpose(yy)
        x = _s.concatenate([x, yy], axis=0)
    if len(shape_of(x)) > 2:
        raise FuncgradValueError("cov: m has more than 2 dimensions")
    n = shape_of(x)[1]
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    xc = x - _r.mean(x, axis=1, keepdims=True)
    out = matmul(xc, _s.transpose(_conj_if_complex(xc))) / (n - ddof)
    return _s.reshape(out, ()) if shape_of(out) == (1, 1) else out


def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Any:
    """``numpy.corrcoef``: the Pearson correlation coefficients of the variables.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.corrcoef(numpy.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    c = cov(x, y, rowvar)
    if len(shape_of(c)) == 0:
        return c / c
    diag = _s.diagonal(c)
    if raw(diag).dtype.kind == "c":  # a covariance's diagonal is real
        diag = _to_complex(_re(diag), raw(diag).dtype)
    d = _e.sqrt(diag)
    return c / _s.reshape(d, (-1, 1)) / _s.reshape(d, (1, -1))


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """``numpy.trapezoid``: the integral of ``y`` by the trapezoidal rule, at points ``x``
    or spacing ``dx``; differentiable in ``y``, ``x`` and ``dx``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.trapezoid(numpy.array([1.0, 2.0, 3.0]))
    np.float64(4.0)
    """
    (y,) = _s.as_arrays(y)
    nd = len(shape_of(y))
    axis = _s.check_axis(axis, nd, "trapezoid")
    if x is None:
        d = dx
    else:
        (x,) = _s.as_arrays(x)
        d = diff(x, axis=axis if len(shape_of(x)) > 1 else 0)
        if len(shape_of(x)) == 1 and nd > 1:
            d = _s.reshape(d, (-1,) + (1,) * (nd - axis - 1))
    lead = (slice(None),) * axis
    mid = _s.getitem(y, lead + (slice(1, None),)) + _s.getitem(y, lead + (slice(None, -1),))
    return _r.sum(_e.multiply(d, mid), axis=axis) / 2.0


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """``numpy.interp``: the piecewise-linear interpolant through ``(xp, fp)`` at ``x``
    (``xp`` increasing, data); differentiable in ``x`` and ``fp`` (``period`` is not
    supported).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.interp(x, numpy.array([0.0, 2.0]), numpy.array([0.0, 1.0])))(1.0)
    array(0.5)
    """
    if period is not None:
        raise FuncgradValueError("interp: period is not supported")
    x, fp = _s.as_arrays(x, fp)
    xpv = raw(xp)
    xpv = xp_of(xpv).asarray(xpv) if hasattr(xpv, "shape") else numpy.asarray(xpv)
    n = shape_of(xpv)[0]
    if len(shape_of(fp)) != 1 or shape_of(fp)[0] != n or n == 0:
        raise FuncgradValueError("interp: fp and xp are not of the same length, or empty")
    ns = xp_of(xpv, raw(x))
    xv = raw(x)
    i = ns.clip(ns.searchsorted(xpv, xv, side="right") - 1, 0, max(n - 2, 0))
    j = ns.minimum(i + 1, n - 1)
    x0, x1 = ns.take(xpv, i), ns.take(xpv, j)  # (i, j batched under fg.vmap)
    width = ns.where(x1 == x0, 1, x1 - x0)
    t = _e.divide(_e.subtract(x, x0), width)
    f0, f1 = _s.take(fp, i), _s.take(fp, j)
    out = _e.add(f0, _e.multiply(t, _e.subtract(f1, f0)))
    lo = _s.getitem(fp, 0) if left is None else left
    hi = _s.getitem(fp, n - 1) if right is None else right
    out = _e.where(xv < xpv[0], lo, out)
    return _e.where(xv > xpv[n - 1], hi, out)


def polyval(p: Any, x: Any) -> Any:
    """``numpy.polyval``: the polynomial with coefficients ``p`` (highest power first)
    at ``x``, by Horner's rule; differentiable in both.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.polyval(numpy.array([1.0, 0.0, 0.0]), x))(3.0)
    array(6.)
    """
    p, x = _s.as_arrays(p, x)
    xp_of(p, x)  # one device (else DeviceMismatchError)
    if len(shape_of(p)) != 1:
        raise FuncgradValueError("polyval: p must be 1-d")
    out = _e.multiply(x, 0.0)
    for k in range(shape_of(p)[0]):
        out = _e.add(_e.multiply(out, x), _s.getitem(p, k))
    return out


def vander(x: Any, N: Any = None, increasing: bool = False) -> Any:
    """``numpy.vander``: the matrix of powers of ``x`` (``x ** (N - 1)`` first, unless
    ``increasing``).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.vander(numpy.array([2.0, 3.0]), 3)
    array([[4., 2., 1.],
           [9., 3., 1.]])
    """
    (x,) = _s.as_arrays(x)
    if len(shape_of(x)) != 1:
        raise FuncgradValueError("vander: x must be a one-dimensional array or sequence")
    n = shape_of(x)[0] if N is None else int(N)
    powers = range(n) if increasing else range(n - 1, -1, -1)
    cols = [_e.add(_e.multiply(x, 0.0), 1.0) if k == 0 else _e.power(x, k) for k in powers]
    if not cols:
        return _s.reshape(_e.multiply(x, 0.0), (shape_of(x)[0], 0))
    return _s.stack(cols, axis=1)


def kron(a: Any, b: Any) -> Any:
    """``numpy.kron``: the Kronecker product, blocks ``a[i, j] * b``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.kron(numpy.array([1.0, 2.0]), numpy.array([1.0, 10.0]))
    array([ 1., 10.,  2., 20.])
    """
    a, b = _s.as_arrays(a, b)
    sa, sb = tuple(shape_of(a)), tuple(shape_of(b))
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    a2 = _s.reshape(a, tuple(v for n in sa for v in (n, 1)))
    b2 = _s.reshape(b, tuple(v for n in sb for v in (1, n)))
    return _s.reshape(_e.multiply(a2, b2), tuple(m * n for m, n in zip(sa, sb, strict=True)))


def _correlate(a: Any, v: Any, mode: str, name: str) -> Any:
    """``sum_j a[k + j] * v[j]`` over the overlaps of ``mode``: a gather of the windows of
    zero-padded ``a`` times ``v`` (the full correlation), cut to ``mode``'s part."""
    a, v = _s.as_arrays(a, v)
    if len(shape_of(a)) != 1 or len(shape_of(v)) != 1:
        raise FuncgradValueError(f"{name}: a and v must be 1-d")
    n, m = shape_of(a)[0], shape_of(v)[0]
    if n == 0 or m == 0:
        raise FuncgradValueError(f"{name}: a and v cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise FuncgradValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    if n < m:  # as NumPy: the longer sequence slides, the result reversed
        return _s.flip(_correlate(v, a, mode, name), 0)
    padded = _s.pad(a, (m - 1, m - 1))
    idx = numpy.arange(n + m - 1)[:, None] + numpy.arange(m)[None, :]
    full = matmul(_s.getitem(padded, xp_of(raw(a)).asarray(idx)), v)
    if mode == "full":
        return full
    length = max(n, m) if mode == "same" else max(n, m) - min(n, m) + 1
    start = (n + m - 1 - length) // 2 if mode == "same" else min(n, m) - 1
    return _s.getitem(full, slice(start, start + length))


def correlate(a: Any, v: Any, mode: str = "valid") -> Any:
    """``numpy.correlate`` of real 1-d sequences: ``c[k] = sum_n a[n + k] * v[n]``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.correlate(numpy.array([1.0, 2.0, 3.0]), numpy.array([0.0, 1.0]), "full")
    array([1., 2., 3., 0.])
    """
    a, v = _s.as_arrays(a, v)
    return _correlate(a, _conj_if_complex(v), mode, "correlate")  # NumPy conjugates v


def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """``numpy.convolve`` of 1-d sequences: ``(a * v)[k] = sum_m a[m] v[k - m]``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.convolve(numpy.array([1.0, 2.0]), numpy.array([1.0, 1.0]))
    array([1., 3., 2.])
    """
    a, v = _s.as_arrays(a, v)
    if len(shape_of(v)) == 1 and len(shape_of(a)) == 1 and shape_of(v)[0] > shape_of(a)[0]:
        a, v = v, a  # convolution commutes; NumPy slides the shorter one
    return _correlate(a, _s.flip(v, 0) if len(shape_of(v)) == 1 else v, mode, "convolve")


# -- r_ and c_ ------------------------------------------------------------------------


class _Concatenator:
    """``numpy.r_`` / ``numpy.c_``: slices become ranges (data), arrays and Nodes are joined."""

    def __init__(self, columns: bool, name: str):
        self._columns = columns
        self._name = name

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        if any(isinstance(item, str) for item in items):
            raise FuncgradValueError(f"{self._name}: string directives are not supported")
        items = [numpy.r_[item] if isinstance(item, slice) else item for item in items]
        scalar = (bool, int, float, complex)
        arrays = [a for a in items if type(a) not in scalar]
        like = next((raw(a) for a in arrays if hasattr(raw(a), "shape")), None)
        # Python numbers are weak, as in NumPy: they take the arrays' dtype
        dtype = numpy.result_type(*(raw(a).dtype for a in arrays if hasattr(raw(a), "dtype")),
                                  *(a for a in items if type(a) in scalar))
        parts = []
        for item in items:
            if type(item) in scalar:
                item = _c.asarray([item], dtype, like=like)
            (arr,) = _s.as_arrays(item)
            nd = len(shape_of(arr))
            if self._columns:
                arr = _s.reshape(arr, (-1, 1)) if nd < 2 else arr
            else:
                arr = _s.reshape(arr, (1,)) if nd == 0 else arr
            parts.append(arr)
        return _s.concatenate(parts, axis=-1 if self._columns else 0)

    def __repr__(self) -> str:
        return f"<funcgrad.numpy.{self._name}>"


r_ = _Concatenator(False, "r_")
r_.__doc__ = """``numpy.r_``: join slices (as ranges), numbers and arrays along the first axis.

>>> import numpy, funcgrad.numpy as fnp
>>> fnp.r_[numpy.array([1.0, 2.0]), 0.0, 5:7]
array([1., 2., 0., 5., 6.])
"""
c_ = _Concatenator(True, "c_")
c_.__doc__ = """``numpy.c_``: join 1-d arrays as columns (along the last axis).

>>> import numpy, funcgrad.numpy as fnp
>>> fnp.c_[numpy.array([1.0, 2.0]), numpy.array([3.0, 4.0])]
array([[1., 3.],
       [2., 4.]])
"""

# -- NumPy's dtype names ----------------------------------------------------------------

bool_ = numpy.bool_
int8, int16, int32, int64 = numpy.int8, numpy.int16, numpy.int32, numpy.int64
uint8, uint16, uint32, uint64 = numpy.uint8, numpy.uint16, numpy.uint32, numpy.uint64
float16, float32, float64 = numpy.float16, numpy.float32, numpy.float64
complex64, complex128 = numpy.complex64, numpy.complex128
int_, intp, uint = numpy.int_, numpy.intp, numpy.uint
double, single, longlong = numpy.double, numpy.single, numpy.longlong
integer, floating, complexfloating, number = (numpy.integer, numpy.floating,
                                              numpy.complexfloating, numpy.number)
dtype = numpy.dtype
finfo, iinfo = numpy.finfo, numpy.iinfo

DTYPE_NAMES = (
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "int_", "intp", "uint",
    "double", "single", "longlong", "integer", "floating", "complexfloating", "number",
    "dtype", "finfo", "iinfo",
)

# help(), Jupyter and the reference read these: ufunc primitives have no function body.
_DOCS = [
    (remainder, "``x1 mod x2`` with the sign of ``x2`` (``mod`` and ``%`` are the same)",
     "1 in ``x1``, ``-floor(x1 / x2)`` in ``x2``",
     "fg.grad(fnp.remainder, argnums=(0, 1))(7.0, 3.0)", "(array(1.), array(-2.))"),
    (fmod, "the C remainder of ``x1 / x2``, with the sign of ``x1``",
     "1 in ``x1``, ``-trunc(x1 / x2)`` in ``x2``",
     "fg.grad(fnp.fmod, argnums=(0, 1))(-7.0, 3.0)", "(array(1.), array(2.))"),
    (floor_divide, "``floor(x1 / x2)`` (``//``)", "0 (piecewise constant)",
     "fnp.floor_divide(7.0, 2.0)", "np.float64(3.0)"),
    (hypot, "``sqrt(x1 ** 2 + x2 ** 2)``, without overflow",
     "``x1 / out`` in ``x1``, ``x2 / out`` in ``x2``",
     "fg.grad(fnp.hypot, argnums=(0, 1))(3.0, 4.0)", "(array(0.6), array(0.8))"),
    (cbrt, "the real cube root", "``1 / (3 cbrt(x) ** 2)``", "fg.grad(fnp.cbrt)(8.0)",
     "array(0.08333333)"),
    (logaddexp2, "``log2(2 ** x1 + 2 ** x2)``, without overflow",
     "``2 ** (x1 - out)`` and ``2 ** (x2 - out)``",
     "fg.grad(fnp.logaddexp2, argnums=(0, 1))(1.0, 1.0)", "(array(0.5), array(0.5))"),
    (deg2rad, "degrees to radians (``radians`` is the same)", "``pi / 180``",
     "fg.grad(fnp.deg2rad)(90.0)", "array(0.01745329)"),
    (rad2deg, "radians to degrees (``degrees`` is the same)", "``180 / pi``",
     "fg.grad(fnp.rad2deg)(1.0)", "array(57.29577951)"),
    (fabs, "``|x|`` of real numbers", "``sign(x)``", "fg.grad(fnp.fabs)(-2.0)", "array(-1.)"),
    (fmax, "the larger of ``x1`` and ``x2``, NaNs ignored",
     "1 for the larger argument; a tie splits it evenly",
     "fg.grad(fnp.fmax, argnums=(0, 1))(1.0, numpy.nan)", "(array(1.), array(0.))"),
    (fmin, "the smaller of ``x1`` and ``x2``, NaNs ignored",
     "1 for the smaller argument; a tie splits it evenly",
     "fg.grad(fnp.fmin, argnums=(0, 1))(1.0, 2.0)", "(array(1.), array(0.))"),
    (trunc, "``x`` rounded towards zero (``fix`` is the same)", "0 (piecewise constant)",
     "fnp.trunc(numpy.array([-1.5, 1.5]))", "array([-1.,  1.])"),
    (rint, "``x`` rounded to the nearest integer", "0 (piecewise constant)",
     "fnp.rint(numpy.array([0.4, 1.6]))", "array([0., 2.])"),
]
document(_DOCS)
del _DOCS

__test__ = {"r_": r_.__doc__, "c_": c_.__doc__}
