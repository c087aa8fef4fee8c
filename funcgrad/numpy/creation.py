"""Array creation, on the device of ``like`` (layer 4).

``zeros_like(x)`` and friends accept Nodes and return raw arrays of the same
shape, dtype and device.  ``array`` and ``asarray`` keep differentiating: given
a Node, or a (nested) list of Nodes and numbers, they return a Node, as
``jnp.asarray`` does with a tracer -- a gradient is never cut silently.  So do
``full``, ``full_like`` and ``linspace`` given Nodes as their values.

>>> import funcgrad.numpy as fnp
>>> fnp.full((2,), 3.0, 'float32')
array([3., 3.], dtype=float32)
"""

from __future__ import annotations

import numpy

from ..arrays import holds_node
from ..errors import FuncgradValueError
from ._core import Node, raw, xp_of
from .elementwise import add, multiply, subtract, where
from .shape import astype, broadcast_to, differentiable_array, leaves_of, reshape


def _xp(like):
    return numpy if like is None else xp_of(like)


def array(obj, dtype=None, like=None):
    """A new array from ``obj``; differentiable when ``obj`` holds Nodes.

    >>> import funcgrad as fg
    >>> fg.grad(lambda x: array([[x, 0.5], [2 * x, x]]).sum())(1.0)
    array(4.)
    """
    if holds_node(obj):
        return differentiable_array(obj, dtype)
    return (_data_xp(obj) if like is None else _xp(like)).array(obj, dtype=dtype)


def asarray(obj, dtype=None, like=None):
    """``obj`` as an array (itself when it already is one); differentiable for Nodes.

    >>> asarray([1.0, 2.0]).dtype
    dtype('float64')
    """
    if holds_node(obj):
        return differentiable_array(obj, dtype)
    return (_data_xp(obj) if like is None else _xp(like)).asarray(obj, dtype=dtype)


def _data_xp(obj):
    """The namespace of the arrays in ``obj``, nested lists and tuples searched too: a
    list of device arrays is built on their device, as NumPy builds one of its own."""
    return xp_of(*leaves_of(obj, [])) if type(obj) in (list, tuple) else xp_of(obj)


def zeros(shape, dtype=float, like=None):
    """``numpy.zeros``, in the namespace of ``like`` (NumPy when None).

    >>> zeros((2,))
    array([0., 0.])
    """
    return _xp(like).zeros(shape, dtype)


def ones(shape, dtype=float, like=None):
    """``numpy.ones``, in the namespace of ``like`` (NumPy when None).

    >>> ones((2,), 'float32')
    array([1., 1.], dtype=float32)
    """
    return _xp(like).ones(shape, dtype)


def full(shape, fill_value, dtype=None, like=None):
    """``numpy.full``: ``shape`` filled with ``fill_value``, differentiable in it.

    ``fill_value`` may be a Node (or an array-like holding Nodes) that
    broadcasts to ``shape``; its gradient is then the sum over the copies.

    >>> import funcgrad as fg
    >>> fg.grad(lambda g: full((3,), g).sum())(2.0)
    array(3.)
    """
    if holds_node(fill_value):
        value = differentiable_array(fill_value, dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return broadcast_to(value, shape)
    return _xp(like if like is not None else _array_or_none(fill_value)).full(
        shape, fill_value, dtype)


def _array_or_none(v):
    return v if hasattr(v, "shape") else None


def zeros_like(x, dtype=None):
    """Raw zeros of the shape, dtype and device of ``x`` (no gradient flows).

    >>> zeros_like(numpy.ones(2, 'float32'))
    array([0., 0.], dtype=float32)
    """
    x = raw(x)
    return xp_of(x).zeros_like(x, dtype=dtype)


def ones_like(x, dtype=None):
    """Raw ones of the shape, dtype and device of ``x`` (no gradient flows).

    >>> ones_like(numpy.zeros(2))
    array([1., 1.])
    """
    x = raw(x)
    return xp_of(x).ones_like(x, dtype=dtype)


def full_like(x, fill_value, dtype=None):
    """``numpy.full_like``: ``x``'s shape (and dtype, device) filled with ``fill_value``.

    Differentiable in ``fill_value`` (not in ``x``, whose values are not read).

    >>> import funcgrad as fg
    >>> fg.grad(lambda g: full_like(numpy.ones(2), g).sum())(1.5)
    array(2.)
    """
    v = raw(x)
    if holds_node(fill_value):
        value = differentiable_array(fill_value, v.dtype if dtype is None else dtype)
        return broadcast_to(value, v.shape)
    return xp_of(v).full_like(v, fill_value, dtype=dtype)


def arange(*args, dtype=None, like=None):
    """``numpy.arange`` (data: no gradient), in the namespace of ``like``.

    >>> arange(3)
    array([0, 1, 2])
    """
    return _xp(like).arange(*args, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, dtype=None, like=None):
    """``numpy.linspace``: ``num`` evenly spaced values from ``start`` to ``stop``.

    Differentiable in ``start`` and ``stop`` (scalars, or arrays that broadcast:
    the samples run along a new first axis, as NumPy's ``axis=0``).

    >>> import funcgrad as fg
    >>> fg.grad(lambda b: linspace(0.0, b, 5).sum())(1.0)
    array(2.5)
    """
    if not (holds_node(start) or holds_node(stop)):
        return _xp(like).linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    num = int(num)
    if num < 0:
        raise FuncgradValueError(f"linspace: num must be non-negative, got {num}")
    a = differentiable_array(start, None) if holds_node(start) else start
    b = differentiable_array(stop, None) if holds_node(stop) else stop
    like_node = a if type(a) is Node else b
    xp = xp_of(like_node)
    out_dtype = numpy.dtype(dtype) if dtype is not None else xp.result_type(
        *(v if isinstance(v, (int, float)) else raw(v).dtype for v in (a, b)), float)
    div = (num - 1) if endpoint else num
    steps = xp.arange(num, dtype=out_dtype) / (div if div > 0 else 1)
    shape = (num,) + (1,) * max(len(getattr(raw(a), "shape", ())),
                                len(getattr(raw(b), "shape", ())))
    t = reshape(steps, shape)
    out = add(a, multiply(subtract(b, a), t))
    if endpoint and num > 1:  # the last sample is exactly ``stop``, as in NumPy
        last = reshape(xp.arange(num) == num - 1, shape)
        out = where(last, b, out)
    if type(out) is Node and out.dtype != out_dtype:
        out = astype(out, out_dtype)
    return out


def eye(n, m=None, k=0, dtype=float, like=None):
    """``numpy.eye``: ones on the ``k``-th diagonal (data: no gradient).

    >>> eye(2)
    array([[1., 0.],
           [0., 1.]])
    """
    return _xp(like).eye(n, m, k, dtype=dtype)
