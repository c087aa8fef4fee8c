"""Array creation: plain (non-differentiable) arrays, on the device of ``like`` (layer 4).

``zeros_like(x)`` and friends accept Nodes and return raw arrays of the
same shape, dtype and device.

>>> import funcgrad.numpy as fnp
>>> fnp.full((2,), 3.0, 'float32')
array([3., 3.], dtype=float32)
"""

from __future__ import annotations

import numpy

from ._core import raw, xp_of


def _xp(like):
    return numpy if like is None else xp_of(like)


def array(obj, dtype=None, like=None):
    """A new raw array from ``obj`` (a Node's value is copied, without gradient)."""
    return _xp(like).array(raw(obj), dtype=dtype)


def asarray(obj, dtype=None, like=None):
    """``obj`` as a raw array (a Node's value, without gradient)."""
    obj = raw(obj)
    return xp_of(obj).asarray(obj, dtype=dtype) if like is None else _xp(like).asarray(obj, dtype=dtype)


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
