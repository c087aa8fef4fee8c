"""Array creation, on the device of ``like`` (layer 4).

``zeros_like(x)`` and friends accept Nodes and return raw arrays of the same
shape, dtype and device.  ``array`` and ``asarray`` keep differentiating: given
a Node, or a (nested) list of Nodes and numbers, they return a Node, as
``jnp.asarray`` does with a tracer -- a gradient is never cut silently.

>>> import funcgrad.numpy as fnp
>>> fnp.full((2,), 3.0, 'float32')
array([3., 3.], dtype=float32)
"""

from __future__ import annotations

import numpy

from ._core import Node, raw, xp_of


def _xp(like):
    return numpy if like is None else xp_of(like)


def _has_node(obj) -> bool:
    if type(obj) is Node:
        return True
    return isinstance(obj, (list, tuple)) and any(_has_node(o) for o in obj)


def _differentiable(obj, dtype):
    """``obj`` (a Node or nested sequences holding Nodes) as one Node."""
    from .shape import astype, stack

    if isinstance(obj, (list, tuple)):
        parts = [_differentiable(o, None) for o in obj]
        like = next(p for p in parts if type(p) is Node)
        parts = [p if type(p) is Node else xp_of(like).asarray(p, dtype=like.dtype) for p in parts]
        obj = stack(parts)
    if dtype is not None and numpy.dtype(dtype) != obj.dtype:
        obj = astype(obj, dtype)
    return obj


def array(obj, dtype=None, like=None):
    """A new array from ``obj``; differentiable when ``obj`` holds Nodes.

    >>> import funcgrad as fg
    >>> fg.grad(lambda x: array([x, 2 * x]).sum())(1.0)
    array(3.)
    """
    if _has_node(obj):
        return _differentiable(obj, dtype)
    return _xp(like).array(obj, dtype=dtype)


def asarray(obj, dtype=None, like=None):
    """``obj`` as an array (itself when it already is one); differentiable for Nodes."""
    if _has_node(obj):
        return _differentiable(obj, dtype)
    if like is None:
        return xp_of(obj).asarray(obj, dtype=dtype)
    return _xp(like).asarray(obj, dtype=dtype)


def zeros(shape, dtype=float, like=None):
    return _xp(like).zeros(shape, dtype)


def ones(shape, dtype=float, like=None):
    return _xp(like).ones(shape, dtype)


def full(shape, fill_value, dtype=None, like=None):
    return _xp(like).full(shape, fill_value, dtype)


def zeros_like(x, dtype=None):
    x = raw(x)
    return xp_of(x).zeros_like(x, dtype=dtype)


def ones_like(x, dtype=None):
    x = raw(x)
    return xp_of(x).ones_like(x, dtype=dtype)


def full_like(x, fill_value, dtype=None):
    x = raw(x)
    return xp_of(x).full_like(x, fill_value, dtype=dtype)


def arange(*args, dtype=None, like=None):
    return _xp(like).arange(*args, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, dtype=None, like=None):
    return _xp(like).linspace(start, stop, num, endpoint=endpoint, dtype=dtype)


def eye(n, m=None, k=0, dtype=float, like=None):
    return _xp(like).eye(n, m, k, dtype=dtype)
