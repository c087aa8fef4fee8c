"""Shape manipulation and indexing (layer 4).

The primitives are ``reshape``, ``transpose``, ``expand_dims``, ``squeeze``,
``broadcast_to``, indexing (``getitem`` and its transpose ``index_add``),
``astype``, ``stack`` and ``concatenate``; the rest (``moveaxis``, ``flip``,
``tile``, ``repeat``, ``split``, ``take``...) are compositions of them.

The gradient of indexing scatters back with ``index_add``: repeated indices
accumulate, and the sum is deterministic (bit-identical from run to run, on
every device) because it is a sorted, segmented scan rather than atomic adds.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> fg.grad(lambda x: (x[1:] * 2).sum())(numpy.ones(3))
array([0., 2., 2.])
>>> fg.grad(lambda x: x[numpy.array([0, 0, 2])].sum())(numpy.ones(3))
array([2., 0., 1.])
"""

from __future__ import annotations

import itertools
import math
import operator
from typing import Any

import numpy

from ..arrays import holds_node
from ..backend import WEAK_TYPES, as_array, is_lazy, to_device
from ..errors import FuncgradTypeError, FuncgradValueError, describe
from ..translation import translated
from ._core import (
    Node,
    defjvp,
    defvjp,
    index_data,
    primitive,
    raw,
    shape_of,
    xp_of,
    zeros_of,
)
from ._core import namespace as _ns
from ._linear import _astype, broadcast_to, real, reshape, unbroadcast
from ._linear import add as _add
from .elementwise import where


def as_arrays(*xs: Any) -> list:
    """Array-likes as arrays, so that shapes can be read: lists and tuples (holding
    Nodes or not) become arrays (Nodes when they hold Nodes) in the namespace of
    the other arguments; arrays, Nodes and Python numbers pass through."""
    if all(hasattr(x, "shape") or isinstance(x, (int, float)) for x in xs):
        return list(xs)
    xp = xp_of(*(x for x in xs if hasattr(x, "shape")))
    return [x if hasattr(x, "shape") or isinstance(x, (int, float))
            else differentiable_array(x, None) if holds_node(x) else xp.asarray(x)
            for x in xs]


def _inverse(axes, ndim):
    if axes is None:
        return None
    inv = [0] * ndim
    for i, a in enumerate(axes):
        inv[a % ndim] = i
    return tuple(inv)


@primitive
def transpose(x, axes=None):
    """``numpy.transpose``: ``x`` with its axes permuted (reversed when ``axes`` is None).

    The gradient is transposed back by the inverse permutation.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.transpose(numpy.zeros((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    >>> fg.grad(lambda x: fnp.sum(fnp.transpose(x)[0]))(numpy.ones((2, 2)))
    array([[1., 0.],
           [1., 0.]])
    """
    return _ns(x).transpose(x, axes)


@primitive
def expand_dims(x, axis):
    """``numpy.expand_dims``: ``x`` with a new axis of length 1 at position ``axis``.

    The gradient is squeezed back.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.expand_dims(numpy.ones(3), 0).shape
    (1, 3)
    >>> fg.grad(lambda x: fnp.sum(fnp.expand_dims(x, 1) * 2.0))(numpy.ones(2))
    array([2., 2.])
    """
    return _ns(x).expand_dims(x, axis)


@primitive
def squeeze(x, axis=None):
    """``numpy.squeeze``: ``x`` without its axes of length 1 (or only those in ``axis``).

    The gradient is reshaped back.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.squeeze(numpy.ones((1, 3, 1))).shape
    (3,)
    >>> fg.grad(lambda x: fnp.sum(fnp.squeeze(x, axis=0) ** 2))(numpy.ones((1, 2)))
    array([[2., 2.]])
    """
    return _ns(x).squeeze(x, axis)


# A NumPy fast path: the method, sparing NumPy's Python-level wrapper, which costs
# more than the work itself on small arrays.
transpose.numpy_impl = lambda x, axes=None: numpy.asarray(x).transpose(axes)


defvjp(transpose, lambda g, ans, x, axes=None: transpose(g, _inverse(axes, len(x.shape))))
defjvp(transpose, lambda t, ans, x, axes=None: transpose(t, axes))
defvjp(expand_dims, lambda g, ans, x, axis: reshape(g, x.shape))
defjvp(expand_dims, lambda t, ans, x, axis: expand_dims(t, axis))
defvjp(squeeze, lambda g, ans, x, axis=None: reshape(g, x.shape))
defjvp(squeeze, lambda t, ans, x, axis=None: squeeze(t, axis))


# -- indexing --------------------------------------------------------------------


@primitive
def _getitem(x, index):
    xp = _ns(x)
    if is_lazy(xp):  # NumPy's rules where the lazy namespace's own indexing lacks them
        return xp.getitem(x, index)
    return x[index]


_getitem.numpy_impl = operator.getitem


_getitem.name = "getitem"


def _may_repeat(index) -> bool:
    """Whether ``index`` can pick one element twice (an integer array of >= 1 dims)."""
    parts = index if isinstance(index, tuple) else (index,)
    for p in parts:
        kind = getattr(getattr(p, "dtype", None), "kind", None)
        if kind in ("i", "u") and getattr(p, "ndim", 0) >= 1:
            return True
    return False


def _scatter_rows(out, pos, vals):
    """``out[pos] += vals`` along axis 0, repeats accumulating, in a fixed order.

    ``out`` is ``(M, R)``, ``pos`` ``(N,)``, ``vals`` ``(N, R)``.  Sort the
    positions, sum each run of equal positions by a segmented scan (log2 of the
    longest run steps), write each run's total once.  No atomic adds, so the
    result does not depend on thread scheduling.
    """
    xp = _ns(out)
    n = pos.shape[0]
    if n == 0:
        return
    order = xp.argsort(pos, kind="stable")
    s, v = pos[order], vals[order]
    run = xp.arange(n) - xp.searchsorted(s, s, side="left")  # place within its run
    longest = int(run.max()) + 1
    if longest == 1:
        out[s] = v
        return
    run = xp.reshape(run, (n, 1))
    d = 1
    while d < longest:
        shifted = xp.concatenate([xp.zeros((d,) + v.shape[1:], v.dtype), v[:-d]])
        v = xp.where(run >= d, v + shifted, v)
        d *= 2
    last = xp.concatenate([s[1:] != s[:-1], xp.ones(1, dtype=bool)])
    out[s[last]] = v[last]


def _one_array_axis(index):
    """``k`` when ``index`` is ``k`` full slices, then one integer array (then full
    slices): the form of ``take`` and ``x[idx]``, scattered by whole rows."""
    parts = index if isinstance(index, tuple) else (index,)
    full = slice(None)
    arrays = [k for k, p in enumerate(parts) if not (isinstance(p, slice) and p == full)]
    if len(arrays) != 1:
        return None
    p = parts[arrays[0]]
    if getattr(getattr(p, "dtype", None), "kind", None) not in ("i", "u"):
        return None
    return arrays[0]


@primitive
def index_add(g, index, shape):
    """Zeros of ``shape`` with ``g`` added at ``index`` (repeated indices accumulate).

    The scatter that undoes indexing in gradients (``x[index]``'s VJP); it is
    differentiable in ``g`` (its gradient is the output's gradient at ``index``).
    Its third argument is a *shape*, not an array: to add values into an
    existing array ``x``, write ``fnp.index_update(x, index, v, add=True)``,
    ``x.at[index].add(v)`` on a Node, or ``fnp.at(x)[index].add(v)`` on any
    array.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.index_add(numpy.array([1.0, 2.0, 3.0]), numpy.array([0, 2, 0]), (3,))
    array([4., 0., 2.])
    >>> fg.grad(lambda g: fnp.sum(fnp.index_add(g, 1, (3,)) * numpy.arange(3.0)))(2.0)
    array(1.)
    """
    if type(shape) is not tuple:
        shape = _index_add_shape(shape)
    xp = _ns(g)
    if is_lazy(xp):  # no assignment into a lazy array: the namespace's own scatter-add
        return xp.index_add(g, index, shape)
    if not _may_repeat(index):
        out = xp.zeros(shape, g.dtype)
        out[index] = g
        return out
    k = _one_array_axis(index)
    if k is not None:  # whole rows of axis k: only the indices are sorted
        idx = (index if isinstance(index, tuple) else (index,))[k]
        n, m, rest = shape[k], idx.ndim, shape[:k] + shape[k + 1:]
        idx = xp.reshape(xp.where(idx < 0, idx + n, idx), (-1,))
        vals = xp.moveaxis(g, tuple(range(k, k + m)), tuple(range(m)))  # index axes first
        rows = xp.zeros((n, math.prod(rest)), g.dtype)
        _scatter_rows(rows, idx, xp.reshape(vals, (idx.shape[0], math.prod(rest))))
        return xp.moveaxis(xp.reshape(rows, (n,) + rest), 0, k)
    size = math.prod(shape)
    pos = xp.reshape(xp.arange(size), shape)[index]  # flat position of each picked element
    flat = xp.zeros((size, 1), g.dtype)
    _scatter_rows(flat, xp.reshape(pos, (-1,)), xp.reshape(g, (-1, 1)))
    return xp.reshape(flat, shape)


def _index_add_shape(shape):
    """``shape`` as a tuple of ints, or a TypeError saying what index_add takes."""
    if isinstance(shape, list) and all(isinstance(n, int) for n in shape) or \
            isinstance(shape, int) and not isinstance(shape, bool):
        return tuple(shape) if isinstance(shape, list) else (shape,)
    raise FuncgradTypeError(
        f"index_add(g, index, shape): shape must be a tuple of ints (the shape of the zeros "
        f"that g is added into), got {describe(shape)}; to add v into an array x at index, "
        f"write fnp.index_update(x, index, v, add=True), or fnp.at(x)[index].add(v)")


defvjp(_getitem, lambda g, ans, x, index: index_add(g, index, x.shape))
defjvp(_getitem, lambda t, ans, x, index: _getitem(t, index))
defvjp(index_add, lambda g, ans, gin, index, shape: _getitem(g, index))
defjvp(index_add, lambda t, ans, gin, index, shape: index_add(t, index, shape))


def _index_part(p, xp, x):
    a = index_data(p, x, xp)  # lists as arrays, NumPy index data on x's device
    if type(p) is list and a.size == 0 and a.dtype.kind == "f":  # x[[]] picks nothing
        return a.astype(numpy.intp)
    return a


def _index(x: Any, index: Any) -> Any:
    """``index`` with lists as arrays and NumPy index data on ``x``'s device."""
    v = raw(x)
    xp = xp_of(v)
    if isinstance(index, tuple):
        return tuple(_index_part(p, xp, v) for p in index)
    return _index_part(index, xp, v)


def getitem(x: Any, index: Any) -> Any:
    """``x[index]`` with NumPy's rules: slices (negative steps too), ints, ``None``,
    ``...``, integer arrays (repeats accumulate in the gradient) and boolean masks.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.getitem(numpy.arange(6.0).reshape(2, 3), (Ellipsis, slice(None, None, -2)))
    array([[2., 0.],
           [5., 3.]])
    """
    (x,) = as_arrays(x)
    return _getitem(x, _index(x, index))


# -- functional updates: x.at[index].set(v) / .add(v) ------------------------------


@primitive
def _index_set(x, v, index):
    out = as_array(x).copy()  # a NumPy scalar (a 0-d result, a 0-d gradient) as a 0-d array
    out[index] = v
    return out


_index_set.name = "index_update"


def _winners(x, index):
    """Raw data: where ``v``'s elements are the ones left in ``x[index] = v`` -- all of
    them, except that of repeated indices only the last write stays (NumPy's rule)."""
    xv = raw(x)
    xp = xp_of(xv)
    picked = xv[index].shape
    ids = xp.reshape(xp.arange(math.prod(picked)), picked)
    last = xp.full(xv.shape, -1, dtype=ids.dtype)
    last[index] = ids
    return last[index] == ids


def _index_set_dv(g, ans, x, v, index):
    picked = _getitem(g, index)
    if _may_repeat(index):
        gv = raw(picked)
        picked = where(_winners(x, index), picked, xp_of(gv).zeros((), gv.dtype))
    return unbroadcast(picked, shape_of(v))


def _index_set_zero(t, index):
    tv = raw(t)
    return _index_set(t, xp_of(tv).zeros((), tv.dtype), index)


defvjp(_index_set, lambda g, ans, x, v, index: _index_set_zero(g, index), _index_set_dv)
defjvp(
    _index_set,
    lambda t, ans, x, v, index: _index_set_zero(t, index),
    lambda t, ans, x, v, index: _index_set(zeros_of(ans), t, index),
)


def index_update(x: Any, index: Any, v: Any, add: bool = False) -> Any:
    """A copy of ``x`` with ``x[index] = v`` (or ``+= v`` with ``add``): what
    ``x.at[index].set(v)`` and ``x.at[index].add(v)`` compute.

    Differentiable in both ``x`` and ``v``.  ``v`` broadcasts to the shape of
    ``x[index]`` and takes ``x``'s dtype.  With repeated integer indices, ``set``
    keeps the last value written (NumPy's rule; only it receives a gradient) and
    ``add`` accumulates them all (as ``numpy.add.at``).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.index_update(numpy.zeros(3), 1, 5.0)
    array([0., 5., 0.])
    >>> fg.grad(lambda v: (fnp.index_update(numpy.zeros(3), 1, v) ** 2).sum())(3.0)
    array(6.)
    """
    (x,) = as_arrays(x)
    index = _index(x, index)
    xv = raw(x)
    if type(v) is Node or holds_node(v):
        v = differentiable_array(v, None)
        v = v if v.dtype == xv.dtype else astype(v, xv.dtype)
    else:  # values from another device than x's raise DeviceMismatchError (not moved)
        v = xp_of(xv, v).asarray(v, dtype=xv.dtype)
    if not add:
        return _index_set(x, v, index)
    try:
        picked = xv[index].shape
    except IndexError as exc:  # as .set raises it (its primitive translates the error)
        raise translated("index_update", exc, (x, index, v), {"add": True}) from exc
    return _add(x, index_add(broadcast_to(v, picked), index, xv.shape))


def check_axis(axis: int, ndim: int, name: str) -> int:
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise FuncgradValueError(f"{name}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    return axis % ndim


def take(x: Any, indices: Any, axis: int | None = None, mode: str = "raise") -> Any:
    """``numpy.take``: elements of ``x`` at ``indices`` along ``axis`` (of ``x.ravel()``
    when None); ``mode`` is ``'raise'``, ``'wrap'`` or ``'clip'``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.take(x, [1, 1, 0]).sum())(numpy.ones(3))
    array([1., 2., 0.])
    """
    (x,) = as_arrays(x)
    if axis is None:
        x, axis = ravel(x), 0
    axis = check_axis(axis, len(shape_of(x)), "take")
    xp = xp_of(x)
    idx = xp.asarray(index_data(indices, x, xp))
    if idx.dtype.kind not in "iu":
        if idx.size:
            raise FuncgradTypeError(f"take: indices must be integers, got dtype {idx.dtype}")
        idx = idx.astype(numpy.intp)
    n = shape_of(x)[axis]
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = xp.clip(idx, 0, n - 1)
    elif mode != "raise":
        raise FuncgradValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    return _getitem(x, (slice(None),) * axis + (idx,))


# -- dtype -----------------------------------------------------------------------


def astype(x, dtype):
    """``x`` as ``dtype``: differentiable to float and complex dtypes, plain data to others.

    The gradient of a float cast is cast back to ``x``'s dtype; a cast from
    complex to real keeps the real part (as NumPy does, without its
    ``ComplexWarning``), and its derivative is that of ``fnp.real``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda x: fnp.sum(fnp.astype(x, "float32") * 2.0))(numpy.ones(2)).dtype
    dtype('float64')
    >>> fnp.astype(fg.require_grad(numpy.array([1.7, -0.2])), "int64")
    array([1, 0])
    """
    (x,) = as_arrays(x)
    if numpy.dtype(dtype).kind not in "fc":
        v = raw(x)
        return v.astype(dtype)
    if raw(x).dtype.kind == "c" and numpy.dtype(dtype).kind == "f":
        x = real(x)
        if raw(x).dtype == numpy.dtype(dtype):
            return x
    return _astype(x, dtype)


# -- nested sequences holding Nodes: one Node (fnp.array's way) --------------------


def leaves_of(obj, out: list) -> list:
    """The non-sequence items of nested lists and tuples, left to right."""
    if type(obj) in (list, tuple):
        for o in obj:
            leaves_of(o, out)
    else:
        out.append(obj)
    return out


def _build(obj, xp, dtype):
    """Nested lists and tuples of Nodes, arrays and numbers as one Node of ``dtype``."""
    if type(obj) in (list, tuple):
        if not holds_node(obj):
            return xp.asarray(obj, dtype=dtype)
        return stack([_build(o, xp, dtype) for o in obj])
    if type(obj) is Node:
        return obj if obj.dtype == dtype else astype(obj, dtype)
    return xp.asarray(obj, dtype=dtype)


def differentiable_array(obj, dtype):
    """``obj`` (a Node, or nested sequences holding Nodes) as one Node.

    The dtype is NumPy's for the same data: the result type of the arrays and
    Nodes, with Python numbers weak (a float32 Node and ``0.5`` stay float32).
    """
    if type(obj) is Node:
        if dtype is None or numpy.dtype(dtype) == obj.dtype:
            return obj
        return astype(obj, dtype)
    leaves = leaves_of(obj, [])
    xp = xp_of(*(raw(v) for v in leaves if not isinstance(v, (int, float, complex))))
    if dtype is None:
        dtype = xp.result_type(*(v if isinstance(v, (int, float, complex)) else
                                 0.0 if type(v) in WEAK_TYPES else v.dtype for v in leaves))
    return _build(obj, xp, numpy.dtype(dtype))


# -- joining: stack, concatenate (variadic primitives) ---------------------------


@primitive
def _stack(*arrays, axis=0):
    return _ns(*arrays).stack(arrays, axis=axis)


_stack.name = "stack"


def _take_slice(g, i, axis):
    index = (slice(None),) * (axis % len(g.shape)) + (i,)
    return _getitem(g, index)


def _stack_joint(g, ans, args, kwargs, positions):
    axis = kwargs.get("axis", 0)
    return [_take_slice(g, i, axis) for i in positions]


_stack.vjp_joint = _stack_joint


def _tangents_or_zeros(pairs, args):
    ts = [zeros_of(a) for a in args]
    for i, t in pairs:
        ts[i] = t
    return ts


def _stack_jvp(pairs, ans, args, kwargs):
    return _stack(*_tangents_or_zeros(pairs, args), axis=kwargs.get("axis", 0))


_stack.jvp_joint = _stack_jvp


def stack(arrays, axis=0):
    """``numpy.stack``: join a sequence of same-shape arrays along a new axis.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.stack([numpy.ones(2), numpy.zeros(2)], axis=1).shape
    (2, 2)
    """
    return _stack(*as_arrays(*arrays), axis=axis)


@primitive
def _concatenate(*arrays, axis=0):
    return _ns(*arrays).concatenate(arrays, axis=axis)


_concatenate.name = "concatenate"


def _concatenate_joint(g, ans, args, kwargs, positions):
    axis = kwargs.get("axis", 0) % len(shape_of(ans))
    ends = list(itertools.accumulate(shape_of(a)[axis] for a in args))
    lead = (slice(None),) * axis
    return [_getitem(g, lead + (slice(ends[i] - shape_of(args[i])[axis], ends[i]),))
            for i in positions]


def _concatenate_jvp(pairs, ans, args, kwargs):
    return _concatenate(*_tangents_or_zeros(pairs, args), axis=kwargs.get("axis", 0))


_concatenate.vjp_joint = _concatenate_joint
_concatenate.jvp_joint = _concatenate_jvp


def concatenate(arrays, axis: int | None = 0) -> Any:
    """``numpy.concatenate``: join arrays along an existing axis (flattened when None).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.concatenate([numpy.ones((1, 2)), numpy.zeros((3, 2))]).shape
    (4, 2)
    """
    arrays = as_arrays(*arrays)
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    return _concatenate(*arrays, axis=axis)


# -- compositions ------------------------------------------------------------------


def _axes_list(axes, ndim: int, name: str) -> list:
    axes = [axes] if isinstance(axes, (int, numpy.integer)) else list(axes)
    out = [check_axis(a, ndim, name) for a in axes]
    if len(set(out)) != len(out):
        raise FuncgradValueError(f"{name}: repeated axis in {axes}")
    return out


def moveaxis(x: Any, source: Any, destination: Any) -> Any:
    """``numpy.moveaxis``: move axes ``source`` to positions ``destination``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.moveaxis(numpy.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    (x,) = as_arrays(x)
    ndim = len(shape_of(x))
    src = _axes_list(source, ndim, "moveaxis")
    dst = _axes_list(destination, ndim, "moveaxis")
    if len(src) != len(dst):
        raise FuncgradValueError("moveaxis: source and destination need the same number of axes")
    order = [i for i in range(ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(x, tuple(order))


def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    """``numpy.swapaxes``: exchange two axes.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.swapaxes(numpy.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    (x,) = as_arrays(x)
    ndim = len(shape_of(x))
    a, b = check_axis(axis1, ndim, "swapaxes"), check_axis(axis2, ndim, "swapaxes")
    order = list(range(ndim))
    order[a], order[b] = b, a
    return transpose(x, tuple(order))


def ravel(x: Any) -> Any:
    """``numpy.ravel``: ``x`` as a 1-d array.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.ravel(numpy.zeros((2, 3))).shape
    (6,)
    """
    return reshape(x, (-1,))


def atleast_1d(*arys: Any) -> Any:
    """``numpy.atleast_1d``: 0-d arrays become shape ``(1,)``; a tuple for several.

    >>> import funcgrad.numpy as fnp
    >>> fnp.atleast_1d(2.0)
    array([2.])
    """
    out = tuple(reshape(a, (1,)) if len(shape_of(a)) == 0 else a for a in as_arrays(*arys))
    return out[0] if len(out) == 1 else out


def flip(x: Any, axis: Any = None) -> Any:
    """``numpy.flip``: reverse the order of elements along ``axis`` (all axes when None).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.flip(numpy.arange(3.0))
    array([2., 1., 0.])
    """
    (x,) = as_arrays(x)
    ndim = len(shape_of(x))
    axes = range(ndim) if axis is None else _axes_list(axis, ndim, "flip")
    rev = slice(None, None, -1)
    return _getitem(x, tuple(rev if i in axes else slice(None) for i in range(ndim)))


def tile(x: Any, reps: Any) -> Any:
    """``numpy.tile``: ``x`` repeated ``reps`` times along each axis.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.tile(numpy.array([0.0, 1.0]), (2, 2))
    array([[0., 1., 0., 1.],
           [0., 1., 0., 1.]])
    """
    (x,) = as_arrays(x)
    reps = tuple(int(r) for r in (reps if numpy.ndim(reps) else (reps,)))
    shape = shape_of(x)
    d = max(len(reps), len(shape))
    reps = (1,) * (d - len(reps)) + reps
    shape = (1,) * (d - len(shape)) + tuple(shape)
    # Put a size-1 axis before each axis, broadcast it to the repeat count.
    spread = reshape(x, tuple(n for s in shape for n in (1, s)))
    spread = broadcast_to(spread, tuple(n for r, s in zip(reps, shape) for n in (r, s)))
    return reshape(spread, tuple(r * s for r, s in zip(reps, shape, strict=True)))


def repeat(x: Any, repeats: Any, axis: int | None = None) -> Any:
    """``numpy.repeat``: each element repeated ``repeats`` times (an int, or one
    count per element) along ``axis`` (of ``x.ravel()`` when None).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.repeat(numpy.array([1.0, 2.0]), [1, 2])
    array([1., 2., 2.])
    """
    (x,) = as_arrays(x)
    if axis is None:
        x, axis = ravel(x), 0
    shape = tuple(shape_of(x))
    axis = check_axis(axis, len(shape), "repeat")
    # The counts decide the output's shape: they are read on the host.
    counts = numpy.asarray(to_device(raw(repeats), "cpu"))
    if counts.size == 1:  # one count for all, as NumPy broadcasts it
        r = int(counts.reshape(()))
        if r < 0:
            raise FuncgradValueError(f"repeat: negative repeat count {r}")
        spread = expand_dims(x, axis + 1)
        spread = broadcast_to(spread, shape[: axis + 1] + (r,) + shape[axis + 1:])
        return reshape(spread, shape[:axis] + (shape[axis] * r,) + shape[axis + 1:])
    idx = xp_of(x).asarray(numpy.repeat(numpy.arange(shape[axis]), counts))
    return _getitem(x, (slice(None),) * axis + (idx,))


_MAX_EMPTY_PARTS = 2**20


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """``numpy.split``: a list of sub-arrays, ``indices_or_sections`` equal parts
    (an int) or cut before each of the given indices.

    >>> import numpy, funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.split(numpy.zeros((5, 2)), [2, 3])]
    [(2, 2), (1, 2), (2, 2)]
    """
    (x,) = as_arrays(x)
    shape = shape_of(x)
    axis = check_axis(axis, len(shape), "split")
    n = shape[axis]
    if numpy.ndim(indices_or_sections) == 0:
        parts = int(indices_or_sections)
        if parts <= 0 or n % parts:
            raise FuncgradValueError("array split does not result in an equal division")
        if parts > max(n, _MAX_EMPTY_PARTS):  # empty parts of an empty axis, by the billion
            raise FuncgradValueError(f"split: {parts} parts of an axis of length {n}")
        cuts = [i * (n // parts) for i in range(1, parts)]
    else:
        cuts = [int(i) for i in indices_or_sections]
    lead = (slice(None),) * axis
    edges = [None] + cuts + [None]
    return [_getitem(x, lead + (slice(lo, hi),)) for lo, hi in itertools.pairwise(edges)]


# -- diagonals, triangles, joining, padding, rolling, grids ---------------------------
# Compositions of the primitives above (and ``where``): their derivatives come
# from those rules, at every order and in both modes.


def _diagonal_index(n: int, m: int, offset: int, xp) -> tuple:
    """Row and column indices of the ``offset`` diagonal of an ``n x m`` matrix."""
    start = max(-offset, 0)
    count = max(min(n - start, m - start - offset), 0)
    rows = xp.arange(start, start + count)
    return rows, rows + offset


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``numpy.diagonal``: the ``offset`` diagonal of the matrices over ``axis1`` and
    ``axis2``, as the last axis of the result (a copy, not a view).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.diagonal(numpy.arange(9.0).reshape(3, 3), 1)
    array([1., 5.])
    """
    (a,) = as_arrays(a)
    ndim = len(shape_of(a))
    if ndim < 2:
        raise FuncgradValueError(f"diagonal: needs at least 2 dimensions, got shape {shape_of(a)}")
    ax1, ax2 = check_axis(axis1, ndim, "diagonal"), check_axis(axis2, ndim, "diagonal")
    if ax1 == ax2:
        raise FuncgradValueError("diagonal: axis1 and axis2 cannot be the same")
    a = moveaxis(a, (ax1, ax2), (-2, -1))
    n, m = shape_of(a)[-2:]
    return getitem(a, (Ellipsis, *_diagonal_index(n, m, int(offset), xp_of(a))))


def diag(v: Any, k: int = 0) -> Any:
    """``numpy.diag``: the ``k`` diagonal of a matrix, or a square matrix with the
    vector ``v`` on its ``k`` diagonal.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.diag(numpy.array([1.0, 2.0]), 1)
    array([[0., 1., 0.],
           [0., 0., 2.],
           [0., 0., 0.]])
    >>> fnp.diag(numpy.arange(4.0).reshape(2, 2))
    array([0., 3.])
    """
    (v,) = as_arrays(v)
    shape = shape_of(v)
    k = int(k)
    if len(shape) == 2:
        return diagonal(v, k)
    if len(shape) != 1:
        raise FuncgradValueError(f"diag: input must be 1-d or 2-d, got shape {shape}")
    n = shape[0] + abs(k)
    _check_feasible((n, n), v.dtype, xp_of(v), "diag")
    rows, cols = _diagonal_index(n, n, k, xp_of(v))
    return index_add(v, (rows, cols), (n, n))  # its rules: getitem back, index_add forward


def _atleast_2d(a):
    shape = shape_of(a)
    return reshape(a, (1,) * (2 - len(shape)) + tuple(shape)) if len(shape) < 2 else a


def vstack(tup: Any) -> Any:
    """``numpy.vstack``: join arrays along the first axis, 1-d ``(n,)`` as ``(1, n)``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.vstack([numpy.zeros(2), numpy.ones((2, 2))]).shape
    (3, 2)
    """
    return concatenate([_atleast_2d(a) for a in as_arrays(*tup)], axis=0)


def hstack(tup: Any) -> Any:
    """``numpy.hstack``: join arrays along the second axis (the first for 1-d arrays).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.hstack([numpy.zeros(2), numpy.ones(1)])
    array([0., 0., 1.])
    """
    arrays = [atleast_1d(a) for a in as_arrays(*tup)]
    axis = 0 if arrays and len(shape_of(arrays[0])) == 1 else 1
    return concatenate(arrays, axis=axis)


def _triangle(m, k: int, lower: bool, name: str):
    (m,) = as_arrays(m)
    shape = shape_of(m)
    if len(shape) == 0:
        raise FuncgradValueError(f"{name}: needs at least 1 dimension, got a 0-d array")
    rows, cols = (shape[-2], shape[-1]) if len(shape) >= 2 else (shape[-1], shape[-1])
    v = raw(m)
    xp = xp_of(v)
    if len(shape) == 1:  # a 1-d m makes a matrix
        _check_feasible((rows, cols), v.dtype, xp, name)
    above = xp.reshape(xp.arange(cols), (1, cols)) - xp.reshape(xp.arange(rows), (rows, 1))
    keep = above <= k if lower else above >= k  # the mask is data: no gradient flows through it
    # where, not a product with the mask: inf or nan outside the triangle still gives 0.
    return where(keep, m, xp.zeros((), v.dtype))


def tril(m: Any, k: int = 0) -> Any:
    """``numpy.tril``: the matrices of ``m`` with the elements above the ``k`` diagonal
    zeroed (a 1-d ``m`` is taken as every row of a square matrix).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.tril(numpy.ones((2, 3)))
    array([[1., 0., 0.],
           [1., 1., 0.]])
    """
    return _triangle(m, int(k), True, "tril")


def triu(m: Any, k: int = 0) -> Any:
    """``numpy.triu``: the matrices of ``m`` with the elements below the ``k`` diagonal
    zeroed (a 1-d ``m`` is taken as every row of a square matrix).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.triu(numpy.ones((2, 3)), 1)
    array([[0., 1., 1.],
           [0., 0., 1.]])
    """
    return _triangle(m, int(k), False, "triu")


def _pairs(value: Any, ndim: int, name: str, what: str, integer: bool) -> list:
    """NumPy's ``pad_width`` / ``constant_values`` forms as ``ndim`` ``(before, after)``
    pairs: a number, ``(n,)``, ``(before, after)``, or one pair per axis."""
    host = numpy.asarray(to_device(raw(value), "cpu"))
    if integer and host.size and host.dtype.kind not in "iu":
        if not numpy.all(host == numpy.round(host)):
            raise FuncgradTypeError(f"{name}: {what} must be integers, got {value!r}")
        host = host.astype(numpy.int64)
    try:
        pairs = numpy.broadcast_to(host, (ndim, 2))
    except ValueError:
        raise FuncgradValueError(
            f"{name}: {what} {value!r} does not fit an array of {ndim} dimensions "
            "(give a number, (before, after), or one pair per axis)"
        ) from None
    if integer and (pairs < 0).any():
        raise FuncgradValueError(f"{name}: {what} cannot be negative, got {value!r}")
    return [(p[0].item(), p[1].item()) for p in pairs]


def _pad_index(n: int, before: int, after: int, mode: str, xp):
    """The source position along one axis of each position of the padded axis."""
    i = xp.arange(-before, n + after)
    if mode == "edge":
        return xp.clip(i, 0, n - 1)
    if mode == "wrap":
        return i % n
    if mode == "reflect":  # mirrored about the edge elements, which are not repeated
        if n == 1:
            return xp.zeros_like(i)
        j = i % (2 * n - 2)
        return xp.where(j >= n, 2 * n - 2 - j, j)
    j = i % (2 * n)  # symmetric: mirrored with the edge elements repeated
    return xp.where(j >= n, 2 * n - 1 - j, j)


_PAD_MODES = ("constant", "edge", "wrap", "reflect", "symmetric")


def _check_feasible(shape: tuple, dtype: Any, xp: Any, name: str) -> None:
    """Raise ``ValueError`` at once when an array of ``shape`` cannot be allocated (a
    result built step by step would otherwise fill ever larger ones first).  An
    empty array maps its pages lazily: the probe is free for possible sizes."""
    try:
        xp.empty(shape, dtype)
    except MemoryError:
        raise FuncgradValueError(
            f"{name}: a result of shape {shape} and dtype {dtype} cannot be allocated"
        ) from None


def pad(array: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Any:
    """``numpy.pad`` in the modes ``'constant'``, ``'edge'``, ``'wrap'``, ``'reflect'``
    and ``'symmetric'``.

    ``pad_width`` takes NumPy's forms: ``n``, ``(n,)``, ``(before, after)``, or one
    ``(before, after)`` pair per axis; ``constant_values`` likewise.  The
    constant values are data (no gradient flows to them); the gradient of the
    other modes sums the copies back, as for any gather.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.pad(numpy.array([1.0, 2.0]), (1, 2), constant_values=9.0)
    array([9., 1., 2., 9., 9.])
    >>> fg.grad(lambda x: fnp.pad(x, 2, mode="edge").sum())(numpy.array([1.0, 2.0]))
    array([3., 3.])
    """
    (array,) = as_arrays(array)
    shape = tuple(shape_of(array))
    ndim = len(shape)
    if mode not in _PAD_MODES:
        raise FuncgradValueError(f"pad: mode {mode!r} is not supported; use one of {_PAD_MODES}")
    widths = _pairs(pad_width, ndim, "pad", "pad_width", integer=True)
    _check_feasible(tuple(n + b + a for n, (b, a) in zip(shape, widths, strict=True)),
                    raw(array).dtype, xp_of(array), "pad")
    if mode == "constant":
        values = _pairs(constant_values, ndim, "pad", "constant_values", integer=False)
        xp, dtype = xp_of(array), raw(array).dtype
        out = array
        for axis, ((before, after), (cb, ca)) in enumerate(zip(widths, values, strict=True)):
            if not (before or after):
                continue
            now = tuple(shape_of(out))
            blocks = [xp.full(now[:axis] + (w,) + now[axis + 1:], c, dtype)
                      for w, c in ((before, cb), (after, ca))]
            out = concatenate([blocks[0], out, blocks[1]], axis=axis)
        return out
    out = array
    for axis, (before, after) in enumerate(widths):
        if not (before or after):
            continue
        if shape[axis] == 0:
            raise FuncgradValueError(f"pad: can't extend empty axis {axis} in mode {mode!r}")
        idx = _pad_index(shape[axis], before, after, mode, xp_of(array))
        out = _getitem(out, (slice(None),) * axis + (idx,))
    return out


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """``numpy.roll``: elements shifted ``shift`` places along ``axis`` (of the flattened
    array when None), wrapping around; ``shift`` and ``axis`` may be tuples.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.roll(numpy.arange(4.0), 1)
    array([3., 0., 1., 2.])
    """
    (a,) = as_arrays(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), shape_of(a))
    shape = tuple(shape_of(a))
    shifts, axes = numpy.broadcast_arrays(numpy.asarray(shift), numpy.asarray(axis))
    if shifts.ndim > 1:
        raise FuncgradValueError("roll: shift and axis must be ints or 1-d sequences")
    total = {}
    for s, ax in zip(shifts.reshape(-1).tolist(), axes.reshape(-1).tolist(), strict=True):
        ax = check_axis(ax, len(shape), "roll")
        total[ax] = total.get(ax, 0) + int(s)  # NumPy adds shifts given for one axis
    out = a
    for ax, s in sorted(total.items()):
        n = shape[ax]
        s = s % n if n else 0
        if s:  # the last s elements first, then the rest
            lead = (slice(None),) * ax
            out = concatenate([_getitem(out, lead + (slice(n - s, None),)),
                               _getitem(out, lead + (slice(0, n - s),))], axis=ax)
    return out


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple:
    """``numpy.meshgrid``: coordinate arrays from coordinate vectors, ``indexing``
    ``'xy'`` (Cartesian, the default) or ``'ij'`` (matrix); a tuple, as in NumPy 2.

    >>> import numpy, funcgrad.numpy as fnp
    >>> gx, gy = fnp.meshgrid(numpy.arange(3.0), numpy.arange(2.0))
    >>> gx
    array([[0., 1., 2.],
           [0., 1., 2.]])
    >>> fnp.meshgrid(numpy.arange(3.0), numpy.arange(2.0), indexing="ij")[0].shape
    (3, 2)
    """
    if indexing not in ("xy", "ij"):
        raise FuncgradValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xi = as_arrays(*xi)
    xp_of(*xi)  # one grid, one device: vectors on two raise DeviceMismatchError
    ndim = len(xi)
    shapes = [[1] * ndim for _ in xi]
    for i, s in enumerate(shapes):
        s[i] = -1
    if indexing == "xy" and ndim > 1:  # the first two axes swap
        shapes[0][0], shapes[0][1] = 1, -1
        shapes[1][0], shapes[1][1] = -1, 1
    out = [reshape(x, tuple(s)) for x, s in zip(xi, shapes, strict=True)]
    if not sparse:
        full = numpy.broadcast_shapes(*(tuple(shape_of(o)) for o in out))
        out = [broadcast_to(o, full) for o in out]
    return tuple(out)


def sort(a: Any, axis: int | None = -1, kind: str | None = None) -> Any:
    """``numpy.sort``: ``a`` sorted along ``axis`` (of the flattened array when None).

    A permutation gather: the order comes from ``argsort`` of the values
    (plain data), then ``a`` is indexed with it, so the gradient puts each
    element's gradient back where it came from.  The sort is stable whatever
    ``kind`` says (``kind`` is taken for NumPy's signature; the sorted values
    are the same for every kind): among tied values the first keeps the first
    place, and so its gradient.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.sort(numpy.array([3.0, 1.0, 2.0]))
    array([1., 2., 3.])
    >>> fg.grad(lambda x: fnp.sort(x)[0])(numpy.array([3.0, 1.0, 2.0]))
    array([0., 1., 0.])
    """
    (a,) = as_arrays(a)
    if axis is None:
        a, axis = ravel(a), 0
    shape = tuple(shape_of(a))
    axis = check_axis(axis, len(shape), "sort")
    v = raw(a)
    xp = xp_of(v)
    # Stable whatever ``kind`` says (NumPy's default quicksort is not, from 17 elements on):
    # tied values keep their order, so which one gets which gradient is defined.
    order = xp.argsort(v, axis=axis, kind="stable")
    # Open grid over the other axes, the order along ``axis``: a take_along_axis.
    ndim = len(shape)
    index = tuple(
        order if i == axis else xp.reshape(xp.arange(n), (1,) * i + (n,) + (1,) * (ndim - i - 1))
        for i, n in enumerate(shape)
    )
    return _getitem(a, index)


__all__ = [
    "as_arrays", "astype", "atleast_1d", "broadcast_to", "check_axis", "concatenate", "diag",
    "diagonal", "expand_dims", "flip", "getitem", "hstack", "index_add", "index_update",
    "meshgrid", "moveaxis", "pad", "ravel", "repeat", "reshape", "roll", "shape_of", "sort",
    "split", "squeeze", "stack", "swapaxes", "take", "tile", "transpose", "tril", "triu",
    "vstack",
]
