"""The linear primitives every rule sends its gradients and tangents through (layer 4).

``broadcast_to`` and its transpose ``sum``, ``reshape``, the casts (``_astype``,
and ``real``, the transpose of the embedding of real numbers in the complex
ones) and ``add``: the derivative of each is another of them, so their rules
call each other, and they live here together, under the families, which all
import them.  On them stand ``unbroadcast`` (a gradient summed back to an
argument's shape), ``bcast`` (a tangent broadcast to the output) and
``defderiv``, which gives an elementwise primitive both its rules from one
rule per argument.  The families re-export the primitives under their NumPy
homes (``fnp.reshape`` is ``funcgrad.numpy.shape.reshape``...).

>>> import numpy, funcgrad as fg
>>> fg.grad(lambda x: sum(broadcast_to(x, (3, 2))))(numpy.array([1.0, 2.0]))
array([3., 3.])
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from ..backend import NUMPY_TYPES
from ..errors import FuncgradIndexError
from ._core import (
    Node,
    defjvp,
    defvjp,
    known_shape,
    lazy,
    primitive,
    raw,
    same_shape,
    shape_of,
    ufunc,
    zeros_of,
)
from ._core import namespace as _ns

__all__ = [
    "add",
    "bcast",
    "broadcast_to",
    "defderiv",
    "expand_to",
    "keepdims_shape",
    "normalize_axes",
    "real",
    "reshape",
    "sum",
    "unbroadcast",
]

add = ufunc("add")
real = ufunc("real")


@primitive
def reshape(x, shape):
    """``numpy.reshape``: ``x``'s elements in a new shape (one entry may be -1).

    The gradient is the output's gradient reshaped back.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.reshape(numpy.arange(6.0), (2, -1))
    array([[0., 1., 2.],
           [3., 4., 5.]])
    >>> fg.grad(lambda x: fnp.sum(fnp.reshape(x, (2, 2))[0]))(numpy.ones(4))
    array([1., 1., 0., 0.])
    """
    return _ns(x).reshape(x, shape)


@primitive
def broadcast_to(x, shape):
    """``numpy.broadcast_to``: ``x`` repeated along new or length-1 axes to ``shape``.

    The gradient sums over the broadcast axes, back to ``x``'s shape.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.broadcast_to(numpy.array([1.0, 2.0]), (3, 2)).shape
    (3, 2)
    >>> fg.grad(lambda x: fnp.sum(fnp.broadcast_to(x, (3, 2))))(numpy.array([1.0, 2.0]))
    array([3., 3.])
    """
    return _ns(x).broadcast_to(x, shape)


@primitive
def sum(x, axis=None, keepdims=False):
    """``numpy.sum``: the sum over ``axis`` (an int, a tuple of ints, or None: all axes).

    The gradient is the output's gradient broadcast back to ``x``'s shape.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.sum(numpy.array([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    array([4., 6.])
    >>> fg.grad(lambda x: fnp.sum(x * x))(numpy.array([1.0, 2.0]))
    array([2., 4.])
    """
    return _ns(x).sum(x, axis=axis, keepdims=keepdims)


@primitive
def _astype(x, dtype):
    return x.astype(dtype)


# NumPy fast paths: methods, C calls and ufunc reductions, sparing NumPy's
# Python-level wrappers, which cost more than the work itself on small arrays.
def _numpy_broadcast_to(x, shape):
    x = numpy.asarray(x)
    shape = tuple(shape)
    if x.shape == shape:
        return x
    if math.prod(shape) <= 4096:  # small: a fresh array beats building a strided view
        out = numpy.empty(shape, x.dtype)
        numpy.copyto(out, x)
        return out
    return numpy.broadcast_to(x, shape)


def ufunc_axis(axis):
    """``axis`` as a NumPy ufunc reduction takes it (a tuple, not a list)."""
    return tuple(axis) if isinstance(axis, list) else axis


reshape.numpy_impl = lambda x, shape: numpy.asarray(x).reshape(shape)
broadcast_to.numpy_impl = _numpy_broadcast_to
sum.numpy_impl = lambda x, axis=None, keepdims=False: numpy.add.reduce(
    x, axis=ufunc_axis(axis), keepdims=keepdims
)


# -- axes ---------------------------------------------------------------------------


def normalize_axes(axis, ndim: int) -> tuple:
    """``axis`` as a sorted tuple of non-negative ints (all axes for None)."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < (ndim or 1):
            raise FuncgradIndexError(f"axis {a} is out of bounds for an array of {ndim} dimensions")
        out.append(a % ndim if ndim else 0)
    return tuple(sorted(set(out)))


def keepdims_shape(shape: tuple, axis) -> tuple:
    """``shape`` with the reduced ``axis`` kept as 1s."""
    axes = normalize_axes(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def expand_to(g, like, axis, keepdims: bool):
    """Broadcast a reduced gradient ``g`` back to the shape of ``like`` (an array, a
    Node, or a shape)."""
    t = type(like)
    if t is tuple or t is list:
        shape, eager = tuple(like), True
    else:
        v = raw(like)
        shape = shape_of(v)
        eager = type(v) in NUMPY_TYPES or not lazy(v) and known_shape(shape)
    if not keepdims:
        g = reshape(g, keepdims_shape(shape, axis))
    if eager:
        return broadcast_to(g, shape)
    # A lazy namespace (Dask): broadcast against zeros chunked as ``like`` is, so that the
    # gradient is split as the input is (broadcast_to would make it one chunk), whatever
    # lengths it does not know yet.
    return add(g, zeros_of(like))


# -- broadcasting a gradient back, a tangent forward ----------------------------------


def unbroadcast(g: Any, shape: tuple) -> Any:
    """Sum ``g`` over the axes NumPy broadcasting added to reach ``g``'s shape from ``shape``."""
    gshape = shape_of(g)
    if gshape == shape or same_shape(gshape, shape):  # an unknown length (NaN) agrees
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1
    )
    if axes:
        g = sum(g, axis=axes)
    gshape = shape_of(g)
    return g if gshape == shape or same_shape(gshape, shape) else reshape(g, shape)


def bcast(t: Any, ans: Any) -> Any:
    """Tangent ``t`` broadcast to the shape of ``ans``, in ``ans``'s dtype.

    The dtype matters where float32 data meets float64 data (``add``,
    ``where``): the output is float64, and so must its tangent be.
    """
    s = shape_of(ans)
    ts = shape_of(t)
    if ts != s and not same_shape(ts, s):
        if not lazy(ans) and known_shape(s):
            t = broadcast_to(t, s)
        else:  # a lazy namespace: against the output, chunked as it is (lengths unknown too)
            t = add(t, zeros_of(ans))
    dtype = getattr(ans, "dtype", None)
    if dtype is not None and getattr(t, "dtype", dtype) != dtype:  # (to data: no tangent)
        t = cast(t, dtype) if dtype.kind in "fc" else raw(t).astype(dtype)
    return t


# -- one rule per argument of an elementwise primitive ---------------------------------


def defderiv(prim: Any, *rules: Any) -> None:
    """Give elementwise ``prim`` its VJP and JVP rules from one rule per argument.

    ``rule(g, ans, *args, **kwargs)`` is ``g`` times the derivative of the
    output in that argument, elementwise (None: no derivative there).  That
    product is a diagonal linear map, its own transpose, so the one rule serves
    both modes: given the output's gradient ``g`` it is the VJP, summed back to
    the argument's shape (``unbroadcast``); given the argument's tangent it is
    the JVP, broadcast to the output (``bcast``).  A one-argument primitive's
    output has its argument's shape: there the rule is both, as it is.  The
    derivative multiplies, unconjugated, as JAX's convention has it for
    holomorphic functions (CONTRIBUTING.md); functions that are not holomorphic
    (``abs``, ``real``, ``conj``, ``angle``) give two rules with ``defvjp`` and
    ``defjvp``.

    >>> import numpy, funcgrad as fg
    >>> twice = primitive(lambda x, y: 2.0 * x * y)
    >>> defderiv(twice, lambda g, ans, x, y: g * 2.0 * y, lambda g, ans, x, y: g * 2.0 * x)
    >>> fg.grad(lambda x, y: twice(x, y).sum(), argnums=(0, 1))(numpy.ones(3), 5.0)
    (array([10., 10., 10.]), array(6.))
    """
    if len(rules) == 1:
        defvjp(prim, *rules)
        defjvp(prim, *rules)
        return
    defvjp(prim, *(r and _summed_back(r, i) for i, r in enumerate(rules)))
    defjvp(prim, *(r and _broadcast(r) for r in rules))


def _summed_back(rule: Any, i: int) -> Any:
    # The arguments spelled out (every defderiv primitive has two or more), and shapes
    # that agree (most do: no sum to undo) told apart without a call: a rule runs on the
    # hot path of every fold, where passing ``*args, **kwargs`` on costs more.
    def vjp(g, ans, x, y, *rest, **kwargs):
        if rest or kwargs:
            d = rule(g, ans, x, y, *rest, **kwargs)
        else:
            d = rule(g, ans, x, y)
        like = x if i == 0 else y if i == 1 else rest[i - 2]
        shape = getattr(like.value if type(like) is Node else like, "shape", ())
        if getattr(d.value if type(d) is Node else d, "shape", ()) == shape:
            return d
        return unbroadcast(d, shape)

    return vjp


def _broadcast(rule: Any) -> Any:
    def jvp(t, ans, *args, **kwargs):
        if kwargs:
            return bcast(rule(t, ans, *args, **kwargs), ans)
        return bcast(rule(t, ans, *args), ans)

    return jvp


# -- casts --------------------------------------------------------------------------


def is_complex(x: Any) -> bool:
    """Whether ``x`` (an array, a Node or a number) holds complex data."""
    return getattr(getattr(raw(x), "dtype", None), "kind", "") == "c"


def complex_dtype(x: Any):
    """The complex dtype of ``x``'s precision (complex64 for float32 and below)."""
    d = numpy.dtype(raw(x).dtype)
    return d if d.kind == "c" else numpy.result_type(d, numpy.complex64)


def as_complex(g: Any, x: Any) -> Any:
    """``g`` (real) in ``x``'s complex dtype, differentiably."""
    return cast(g, complex_dtype(x))


def cast(t, dtype):
    """``t`` cast to ``dtype``; complex to real through ``real`` (the real part, no
    ComplexWarning): the transpose of real-to-complex, and complex-to-real's tangent."""
    dtype = numpy.dtype(dtype)
    if raw(t).dtype.kind == "c" and dtype.kind != "c":
        t = real(t)
    return t if raw(t).dtype == dtype else _astype(t, dtype)


# -- the rules ----------------------------------------------------------------------

defderiv(add, lambda g, ans, x, y: g, lambda g, ans, x, y: g)
defvjp(real, lambda g, ans, x: as_complex(g, x) if is_complex(x) else g)
defjvp(real, lambda t, ans, x: real(t))
defvjp(reshape, lambda g, ans, x, shape: reshape(g, x.shape))
defjvp(reshape, lambda t, ans, x, shape: reshape(t, shape))
defvjp(broadcast_to, lambda g, ans, x, shape: unbroadcast(g, x.shape))
defjvp(broadcast_to, lambda t, ans, x, shape: broadcast_to(t, shape))
defvjp(sum, lambda g, ans, x, axis=None, keepdims=False: expand_to(g, x, axis, keepdims))
defjvp(sum, lambda t, ans, x, axis=None, keepdims=False: sum(t, axis=axis, keepdims=keepdims))
defvjp(_astype, lambda g, ans, x, dtype: cast(g, raw(x).dtype))
defjvp(_astype, lambda t, ans, x, dtype: cast(t, dtype))

# Each is found at its NumPy family, which re-exports it: pickles by reference name it
# there, and the reference lists it with its family, as before it moved here.
for _prim, _family in ((add, "elementwise"), (real, "elementwise"), (reshape, "shape"),
                       (broadcast_to, "shape"), (_astype, "shape"), (sum, "reductions")):
    _prim.__module__ = f"funcgrad.numpy.{_family}"
del _prim, _family
