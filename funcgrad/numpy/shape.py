"""Shape manipulation and indexing (layer 4).

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: (x[1:] * 2).sum())(numpy.ones(3))
array([0., 2., 2.])
"""

from __future__ import annotations

from ._core import defjvp, defvjp, primitive, raw, shape_of, unbroadcast
from ._core import namespace as _ns


@primitive
def reshape(x, shape):
    return _ns(x).reshape(x, shape)


def _inverse(axes, ndim):
    if axes is None:
        return None
    inv = [0] * ndim
    for i, a in enumerate(axes):
        inv[a % ndim] = i
    return tuple(inv)


@primitive
def transpose(x, axes=None):
    return _ns(x).transpose(x, axes)


@primitive
def expand_dims(x, axis):
    return _ns(x).expand_dims(x, axis)


@primitive
def squeeze(x, axis=None):
    return _ns(x).squeeze(x, axis)


@primitive
def broadcast_to(x, shape):
    return _ns(x).broadcast_to(x, shape)


@primitive
def getitem(x, index):
    return x[index]


@primitive
def index_add(g, index, shape):
    """Zeros of ``shape`` with ``g`` added at ``index`` (repeated indices accumulate)."""
    xp = _ns(g)
    out = xp.zeros(shape, g.dtype)
    xp.add.at(out, index, g)
    return out


def _unwrap_index(index):
    if isinstance(index, tuple):
        return tuple(raw(i) for i in index)
    return raw(index)


def _getitem(x, index):
    return getitem(x, _unwrap_index(index))


defvjp(reshape, lambda g, ans, x, shape: reshape(g, x.shape))
defjvp(reshape, lambda t, ans, x, shape: reshape(t, shape))
defvjp(transpose, lambda g, ans, x, axes=None: transpose(g, _inverse(axes, len(x.shape))))
defjvp(transpose, lambda t, ans, x, axes=None: transpose(t, axes))
defvjp(expand_dims, lambda g, ans, x, axis: reshape(g, x.shape))
defjvp(expand_dims, lambda t, ans, x, axis: expand_dims(t, axis))
defvjp(squeeze, lambda g, ans, x, axis=None: reshape(g, x.shape))
defjvp(squeeze, lambda t, ans, x, axis=None: squeeze(t, axis))
defvjp(broadcast_to, lambda g, ans, x, shape: unbroadcast(g, x.shape))
defjvp(broadcast_to, lambda t, ans, x, shape: broadcast_to(t, shape))
defvjp(getitem, lambda g, ans, x, index: index_add(g, index, x.shape))
defjvp(getitem, lambda t, ans, x, index: getitem(t, index))
defvjp(index_add, lambda g, ans, gin, index, shape: getitem(g, index))
defjvp(index_add, lambda t, ans, gin, index, shape: index_add(t, index, shape))


@primitive
def _astype(x, dtype):
    return x.astype(dtype)


defvjp(_astype, lambda g, ans, x, dtype: _astype(g, raw(x).dtype))
defjvp(_astype, lambda t, ans, x, dtype: _astype(t, dtype))


def astype(x, dtype):
    """``x`` as ``dtype``: differentiable to float dtypes, plain data to others."""
    import numpy  # noqa: PLC0415

    if numpy.dtype(dtype).kind != "f":
        v = raw(x)
        return v.astype(dtype)
    return _astype(x, dtype)


__all__ = [
    "reshape", "transpose", "expand_dims", "squeeze", "broadcast_to", "getitem",
    "index_add", "astype", "shape_of",
]


@primitive
def _stack(*arrays, axis=0):
    return _ns(*arrays).stack(arrays, axis=axis)


def _take_slice(g, i, axis):
    index = (slice(None),) * (axis % len(g.shape)) + (i,)
    return getitem(g, index)


def _stack_joint(g, ans, args, kwargs, positions):
    axis = kwargs.get("axis", 0)
    return [_take_slice(g, i, axis) for i in positions]


_stack.vjp_joint = _stack_joint


def _stack_jvp(pairs, ans, args, kwargs):
    from ._creation_helpers import zeros_of  # noqa: PLC0415

    ts = [zeros_of(a) for a in args]
    for i, t in pairs:
        ts[i] = t
    return _stack(*ts, axis=kwargs.get("axis", 0))


_stack.jvp_joint = _stack_jvp


def stack(arrays, axis=0):
    """``numpy.stack``: join a sequence of same-shape arrays along a new axis."""
    return _stack(*arrays, axis=axis)
