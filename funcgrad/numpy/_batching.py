"""Batching rules of the ``funcgrad.numpy`` primitives, for ``fg.vmap`` (layer 4).

A rule is ``rule(args, axes, **kwargs) -> (out, out_axis)`` (see
:func:`fg.defbatch <funcgrad.defbatch>`): ``axes[i]`` is the mapped axis of
argument ``i`` or None.  Written with the primitives themselves, so a batched
call is differentiable and runs on every device.  Most come from a few
families, as JAX's do: elementwise (every ``ufunc`` is marked for it by
:func:`funcgrad.numpy._core.ufunc`), reductions and scans (the axis shifts),
shape operations (axis arithmetic), products (``einsum`` with one more
letter), indexing (gathers and scatter-adds), linalg (NumPy's linalg maps
over leading axes already) and fft (the batch out of the transformed axes);
functions that take one matrix (SciPy's) get :func:`per_example`.  A rule that meets a case it does not cover
returns :data:`LOOP`: the call then runs once per example.

>>> import numpy
>>> from . import reductions
>>> reductions.sum.batch([numpy.ones((2, 3))], [1], axis=0)
(array([2., 2., 2.]), 0)
"""

from __future__ import annotations

import string
from typing import Any

import numpy

from ..errors import FuncgradValueError
from . import elementwise as _e
from . import fft as _f
from . import linalg as _l
from . import more as _m
from . import products as _p
from . import reductions as _r
from . import shape as _s
from ._core import index_data, shape_of, xp_of

LOOP = "loop"  # a rule's answer for a case it does not cover (batching.LOOP)


def _nd(x: Any, ax: int | None) -> int:
    """The rank of one example of ``x``."""
    n = len(shape_of(x))
    return n if ax is None else n - 1


def _size(args: list, axes: list) -> int:
    for a, ax in zip(args, axes, strict=True):
        if ax is not None:
            return shape_of(a)[ax]
    raise AssertionError("no mapped argument")


def front(x: Any, ax: int | None, size: int | None = None) -> Any:
    """``x`` with its mapped axis first; an unmapped ``x`` repeated ``size`` times."""
    if ax is None:
        if size is None:
            return x
        return _s.broadcast_to(x, (size,) + tuple(shape_of(x)))
    return x if ax == 0 else _s.moveaxis(x, ax, 0)


def _pad(x: Any, nd: int) -> Any:
    """A batch-first ``x`` with length-1 axes after the batch, to ``nd`` example axes."""
    s = tuple(shape_of(x))
    k = nd - (len(s) - 1)
    return _s.reshape(x, s[:1] + (1,) * k + s[1:]) if k > 0 else x


def elementwise(prim: Any):
    """The rule of an elementwise (broadcasting) primitive: batch axes in front, ranks
    aligned; an only mapped argument among scalars keeps its axis."""

    def rule(args, axes, **kwargs):
        mapped = [i for i, ax in enumerate(axes) if ax is not None]
        if len(mapped) == 1 and all(
            i == mapped[0] or not shape_of(a) for i, a in enumerate(args)
        ) and not any(shape_of(v) for v in kwargs.values()):
            return prim(*args, **kwargs), axes[mapped[0]]
        nd = max(_nd(a, ax) for a, ax in zip(args, axes, strict=True))
        new = [a if ax is None else _pad(front(a, ax), nd) for a, ax in zip(args, axes,
                                                                            strict=True)]
        return prim(*new, **kwargs), 0

    return rule


def _axis_arg(args: list, kwargs: dict, pos: int, name: str, default: Any = None):
    """The value of argument ``name`` (positional at ``pos``), and a setter of it."""
    if len(args) > pos:
        return args[pos], lambda v: (args[:pos] + [v] + args[pos + 1:], kwargs)
    return kwargs.get(name, default), lambda v: (args, {**kwargs, name: v})


def _shift_axis(axis: Any, nd: int) -> Any:
    if isinstance(axis, (tuple, list)):
        return tuple(a % nd + 1 for a in axis)
    return axis % nd + 1


def reducer(prim: Any, pos: int = 1, flatten: bool = False):
    """The rule of a reduction or scan with ``axis`` at position ``pos``: the batch first,
    the axes one further; ``axis=None`` means every example axis (``flatten``: the
    example flattened, as ``cumsum`` does)."""

    def rule(args, axes, **kwargs):
        args = list(args)
        size = _size(args, axes)
        x = front(args[0], axes[0], size)
        nd = _nd(args[0], axes[0])
        args[0] = x
        for i in range(1, len(args)):  # scans: h and x of one shape
            if axes[i] is not None or hasattr(args[i], "shape") and i < pos:
                args[i] = front(args[i], axes[i], size)
        axis, put = _axis_arg(args, kwargs, pos, "axis")
        if axis is None:
            if flatten:
                args[0] = _s.reshape(x, (size, -1))
                axis = 1
            else:
                axis = tuple(range(1, nd + 1))
        elif nd == 0 and not isinstance(axis, (tuple, list)):
            return LOOP, None
        else:
            axis = _shift_axis(axis, nd)
        new_args, new_kw = put(axis)
        return prim(*new_args, **new_kw), 0

    return rule


def leading(prim: Any):
    """The rule of a function of stacks of matrices: the batch goes in front, one more
    leading axis (every argument padded to the same count)."""

    def rule(args, axes, **kwargs):
        nd = max(_nd(a, ax) for a, ax in zip(args, axes, strict=True) if hasattr(a, "shape"))
        new = [a if ax is None else _pad(front(a, ax), nd) for a, ax in zip(args, axes,
                                                                            strict=True)]
        return prim(*new, **kwargs), 0

    return rule


def keep_axis(prim: Any):
    """The rule of a one-argument primitive that acts on each element: the axis stays."""

    def rule(args, axes, **kwargs):
        if any(ax is not None for ax in axes[1:]):
            return LOOP, None
        return prim(*args, **kwargs), axes[0]

    return rule


def per_example(prim: Any):
    """The rule of a primitive whose function does not map over a batch (SciPy's
    matrix functions take one matrix): one call per example, stacked -- the loop,
    chosen on purpose (no warning), written with the primitives so that it is
    differentiable and runs on every device."""

    def rule(args, axes, **kwargs):
        outs = []
        for b in range(_size(args, axes)):
            ex = [a if ax is None else _s.getitem(a, (slice(None),) * ax + (b,))
                  for a, ax in zip(args, axes, strict=True)]
            outs.append(prim(*ex, **kwargs))
        if type(outs[0]) is tuple:
            parts = tuple(_s.stack([o[k] for o in outs]) for k in range(len(outs[0])))
            return parts, (0,) * len(parts)
        return _s.stack(outs), 0

    return rule


# -- shape operations ----------------------------------------------------------------


def _reshape(args, axes, **kwargs):
    x, shape = args[0], (args[1] if len(args) > 1 else kwargs["shape"])
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    x = front(x, axes[0])
    return _s.reshape(x, shape_of(x)[:1] + shape), 0


def _transpose(args, axes, **kwargs):
    x = front(args[0], axes[0])
    perm = args[1] if len(args) > 1 else kwargs.get("axes")
    nd = len(shape_of(x)) - 1
    perm = tuple(range(nd - 1, -1, -1)) if perm is None else tuple(perm)
    return _s.transpose(x, (0,) + tuple(a % nd + 1 for a in perm)), 0


def _expand_dims(args, axes, **kwargs):
    x = front(args[0], axes[0])
    axis = args[1] if len(args) > 1 else kwargs["axis"]
    many = isinstance(axis, (tuple, list))
    out_nd = len(shape_of(x)) - 1 + (len(axis) if many else 1)
    new = tuple(a % out_nd + 1 for a in axis) if many else axis % out_nd + 1
    return _s.expand_dims(x, new), 0


def _squeeze(args, axes, **kwargs):
    x = front(args[0], axes[0])
    axis = args[1] if len(args) > 1 else kwargs.get("axis")
    shape = shape_of(x)[1:]
    nd = len(shape)
    if nd == 0:  # NumPy squeezes a 0-d array along 0 or -1 into itself
        _s.squeeze(_s.getitem(x, 0), axis)  # (NumPy's own check of the axis)
        return x, 0
    if axis is None:
        axis = tuple(i for i, n in enumerate(shape) if n == 1)
    return _s.squeeze(x, _shift_axis(axis, nd)), 0


def _broadcast_to(args, axes, **kwargs):
    x = front(args[0], axes[0])
    shape = args[1] if len(args) > 1 else kwargs["shape"]
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    x = _pad(x, len(shape))
    return _s.broadcast_to(x, shape_of(x)[:1] + shape), 0


def _joined(prim: Any):
    """``stack`` and ``concatenate``: every argument batch-first, the axis one further."""

    def rule(args, axes, **kwargs):
        size = _size(args, axes)
        axis = kwargs.get("axis", 0)
        new = [front(a, ax, size) for a, ax in zip(args, axes, strict=True)]
        if axis is None:  # concatenate: the examples flattened
            new = [_s.reshape(a, (size, -1)) for a in new]
            return prim(*new, axis=1), 0
        nd = len(shape_of(new[0])) - 1 + (1 if prim is _s._stack else 0)
        return prim(*new, axis=axis % nd + 1), 0

    return rule


# -- indexing ------------------------------------------------------------------------


def _parts(index: Any, nd: int) -> tuple | None:
    """``index`` as a tuple with its Ellipsis expanded, or None if it cannot be read."""
    parts = index if isinstance(index, tuple) else (index,)
    used = 0
    for p in parts:
        if p is None or p is Ellipsis:
            continue
        kind = getattr(getattr(p, "dtype", None), "kind", None)
        used += getattr(p, "ndim", 1) if kind == "b" else 1
    out = []
    seen = False
    for p in parts:
        if p is Ellipsis:
            if seen:
                return None
            seen = True
            out.extend([slice(None)] * (nd - used))
        else:
            out.append(p)
    return tuple(out)


def _split_index(index: Any, iax: Any, nd: int):
    """``(parts, axes of the parts)`` of an index argument, or None if it cannot be read."""
    if isinstance(iax, tuple):  # a tuple index with mapped parts (see batching.run)
        parts, iaxes = tuple(index), list(iax)
    else:
        parts = index if isinstance(index, tuple) else (index,)
        iaxes = [iax] if not isinstance(index, tuple) else [None] * len(parts)
    if any(p is Ellipsis for p in parts):
        if any(a is not None for a in iaxes):
            return None
        parts = _parts(parts, nd)
        if parts is None:
            return None
        iaxes = [None] * len(parts)
    return parts, iaxes


def _advanced(p: Any) -> bool:
    return hasattr(p, "shape") and not isinstance(p, numpy.generic) or isinstance(p, list)


def _is_int(p: Any) -> bool:
    return isinstance(p, (int, numpy.integer)) and not isinstance(p, bool)


def _contiguous(parts: tuple) -> bool:
    """Whether the advanced parts of ``parts`` (arrays, and ints beside arrays) are
    adjacent: then NumPy keeps their axes in place, else puts them first."""
    if not any(_advanced(p) for p in parts):
        return True
    where = [i for i, p in enumerate(parts) if _advanced(p) or _is_int(p)]
    return where == list(range(where[0], where[-1] + 1))


def _groups(parts: tuple, iaxes: list):
    """``(k, bnd, adjacent)`` of an index's advanced parts (integer arrays, and ints
    beside them): the first is ``parts[k]``, they broadcast to ``bnd`` axes per example,
    and whether they are adjacent; None for masks among them or parts of other kinds."""
    for p in parts:
        if not (_advanced(p) or _is_int(p) or p is None or isinstance(p, slice)):
            return None
    if not any(_advanced(p) for p in parts):
        return 0, 0, True
    where = [i for i, p in enumerate(parts) if _advanced(p) or _is_int(p)]
    shapes = []
    for i in where:
        p, ax = parts[i], iaxes[i]
        if _advanced(p) and getattr(getattr(p, "dtype", None), "kind", None) not in ("i", "u"):
            return None
        s = tuple(shape_of(p))
        shapes.append(s if ax is None else s[:ax] + s[ax + 1:])
    adjacent = where == list(range(where[0], where[-1] + 1))
    return where[0], len(numpy.broadcast_shapes(*shapes)), adjacent


def _batched_parts(parts: tuple, iaxes: list, size: int, bnd: int, like: Any) -> tuple:
    """The index picking ``parts`` of each example of a batch-first array."""
    rows = index_data(numpy.arange(size).reshape((size,) + (1,) * bnd), like)
    new = [p if ax is None else _pad(front(p, ax), bnd) for p, ax in zip(parts, iaxes,
                                                                        strict=True)]
    return (rows,) + tuple(new)


def _gather(x, xax, parts, iaxes):
    """``x[parts]`` for each example, some part mapped: one gather over the batch."""
    info = _groups(parts, iaxes)
    if info is None or not info[2]:
        return LOOP, None
    k, bnd, _ = info
    size = next(shape_of(p)[ax] for p, ax in zip(parts, iaxes, strict=True) if ax is not None)
    xb = front(x, xax, size)
    out = _s._getitem(xb, _batched_parts(parts, iaxes, size, bnd, xb))
    if k:  # the advanced axes came first (after the batch): put them back after k axes
        n = len(shape_of(out)) - 1
        order = list(range(1 + bnd, 1 + bnd + k)) + list(range(1, 1 + bnd))
        out = _s.transpose(out, (0,) + tuple(order) + tuple(range(1 + bnd + k, n + 1)))
    return out, 0


def _getitem(args, axes, **kwargs):
    x, index = args[0], args[1]
    split = _split_index(index, axes[1], _nd(x, axes[0]))
    if split is None:
        return LOOP, None
    parts, iaxes = split
    if any(a is not None for a in iaxes):
        return _gather(x, axes[0], parts, iaxes)
    out = _s._getitem(front(x, axes[0]), (slice(None),) + parts)
    if _contiguous(parts):
        return out, 0
    info = _groups(parts, iaxes)  # advanced parts apart: NumPy puts their axes first
    return (LOOP, None) if info is None else (out, info[1])


_getitem.sequences = True


def _index_add(args, axes, **kwargs):
    g, index = args[0], args[1]
    shape = tuple(args[2] if len(args) > 2 else kwargs["shape"])
    split = _split_index(index, axes[1], len(shape))
    if split is None:
        return LOOP, None
    parts, iaxes = split
    if all(a is None for a in iaxes):
        if _contiguous(parts):
            g = front(g, axes[0])
        else:  # the advanced axes first, then the batch (the layout of the gather)
            info = _groups(parts, iaxes)
            if info is None:
                return LOOP, None
            g = _s.moveaxis(g, axes[0], info[1]) if axes[0] != info[1] else g
        size = shape_of(g)[0] if _contiguous(parts) else shape_of(g)[info[1]]
        return _s.index_add(g, (slice(None),) + parts, (size,) + shape), 0
    info = _groups(parts, iaxes)
    if info is None or not info[2]:
        return LOOP, None
    k, bnd, _ = info
    size = next(shape_of(p)[ax] for p, ax in zip(parts, iaxes, strict=True) if ax is not None)
    gb = front(g, axes[0], size)
    if k:  # to the layout of the batched gather: the advanced axes right after the batch
        n = len(shape_of(gb)) - 1
        order = list(range(1 + k, 1 + k + bnd)) + list(range(1, 1 + k))
        gb = _s.transpose(gb, (0,) + tuple(order) + tuple(range(1 + k + bnd, n + 1)))
    return _s.index_add(gb, _batched_parts(parts, iaxes, size, bnd, gb), (size,) + shape), 0


_index_add.sequences = True


def _index_set(args, axes, **kwargs):
    x, v, index = args[0], args[1], args[2]
    nd = _nd(x, axes[0])
    split = _split_index(index, axes[2], nd)
    if split is None or any(a is not None for a in split[1]):
        return LOOP, None
    parts = split[0]
    if not _contiguous(parts):
        return LOOP, None
    size = _size(args, axes)
    xb = front(x, axes[0], size)
    if axes[1] is None:
        vb = v
    else:  # the value's axes aligned to those of x[index] (its rank, from shapes alone)
        example = numpy.broadcast_to(numpy.empty((), bool), tuple(shape_of(xb)[1:]))
        fake = tuple(numpy.zeros(shape_of(p), bool if getattr(p, "dtype", None) is not None
                                 and p.dtype.kind == "b" else numpy.intp)
                     if _advanced(p) else p for p in parts)
        try:
            rank = numpy.ndim(example[fake])
        except IndexError:
            return LOOP, None
        vb = _pad(front(v, axes[1]), rank)
    return _s._index_set(xb, vb, (slice(None),) + parts, **kwargs), 0


_index_set.sequences = True


# -- products --------------------------------------------------------------------------


def _matmul(args, axes, **kwargs):
    a, b = args
    aa, ba = axes
    a1 = _nd(a, aa) == 1
    b1 = _nd(b, ba) == 1
    # Vectors against one matrix: a single matrix product (NumPy would loop over the
    # batch for a stack of one-row matrices).
    if a1 and ba is None and _nd(b, None) == 2:
        return _p.matmul(front(a, aa), b), 0
    if b1 and aa is None and _nd(a, None) == 2:
        return _p.matmul(front(b, ba), _s.swapaxes(a, 0, 1)), 0
    if a1:  # a vector: a row, dropped again below
        a = _s.expand_dims(front(a, aa), -2) if aa is not None else _s.expand_dims(a, 0)
        aa = 0 if aa is not None else None
    if b1:
        b = _s.expand_dims(front(b, ba), -1) if ba is not None else _s.expand_dims(b, -1)
        ba = 0 if ba is not None else None
    nd = max(_nd(a, aa), _nd(b, ba))
    a = a if aa is None else _pad(front(a, aa), nd)
    b = b if ba is None else _pad(front(b, ba), nd)
    out = _p.matmul(a, b)
    if a1 and b1:
        out = _s.squeeze(out, (-2, -1))
    elif a1:
        out = _s.squeeze(out, -2)
    elif b1:
        out = _s.squeeze(out, -1)
    return out, 0


def _explicit(subscripts: str) -> str:
    """``subscripts`` with its output written out (NumPy's implicit mode)."""
    if "->" in subscripts:
        return subscripts
    letters = subscripts.replace(",", "").replace(".", "")
    single = sorted(c for c in set(letters) if letters.count(c) == 1)
    return subscripts + "->" + ("..." if "..." in subscripts else "") + "".join(single)


def _einsum(args, axes, **kwargs):
    spec = _explicit(kwargs["subscripts"].replace(" ", ""))
    ins, out = spec.split("->")
    terms = ins.split(",")
    free = [c for c in string.ascii_letters if c not in spec]
    if not free or len(terms) != len(args):
        return LOOP, None
    z = free[0]
    new_terms, new_args = [], []
    for t, a, ax in zip(terms, args, axes, strict=True):
        if ax is None:
            new_terms.append(t)
            new_args.append(a)
        else:
            new_terms.append(z + t)
            new_args.append(front(a, ax))
    kw = dict(kwargs)
    kw["subscripts"] = ",".join(new_terms) + "->" + z + out
    return _p._einsum(*new_args, **kw), 0


# -- fft -------------------------------------------------------------------------------


def transform(prim: Any):
    """The rule of an fft primitive ``prim(x, s, axes, ...)`` (``axes`` at position 2, of
    one example): the batch first, out of the transformed axes, which shift by one."""

    def rule(args, axes, **kwargs):
        if any(ax is not None for ax in axes[1:]):
            return LOOP, None
        args = list(args)
        nd = _nd(args[0], axes[0])
        args[0] = front(args[0], axes[0])
        fax, put = _axis_arg(args, kwargs, 2, "axes")
        new_args, new_kw = put(tuple(a % nd + 1 for a in fax))
        return prim(*new_args, **new_kw), 0

    return rule


def _all_or_none(args, axes, **kwargs):
    """``linalg.lstsq``'s full-rank test, one answer for the whole batch (its residuals
    have one shape per example: all or none); a batch that mixes both is refused."""
    v = front(args[0], axes[0])
    xp = xp_of(v)
    every, some = bool(xp.all(v)), bool(xp.any(v))
    if every != some:
        raise FuncgradValueError(
            "vmap: linalg.lstsq's residuals have different shapes for different examples "
            "(some matrices have full column rank, some not): a mapped function must give "
            "every example results of one shape; for the solutions alone use "
            "fnp.linalg.pinv(a) @ b"
        )
    return _l._all_or_none(xp.asarray(every)), None


# -- the table -------------------------------------------------------------------------


def install() -> None:
    """Give every primitive of the numpy families its batching rule."""
    for prim in (_r.sum, _r.mean, _r.amax, _r.amin, _r.prod, _l._norm2):
        prim.batch = reducer(prim)
    for prim in (_r.cumsum, _r.cumprod):
        prim.batch = reducer(prim, flatten=True)
    _r._rcumsum.batch = reducer(_r._rcumsum)
    _r._shift.batch = reducer(_r._shift)
    _r._scan.batch = reducer(_r._scan, pos=2)
    _r._rscan.batch = reducer(_r._rscan, pos=2)
    for prim in (_e._clip, _e._round, _e._angle, _e._safe_mul):
        prim.batch = elementwise(prim)
    _s._astype.batch = keep_axis(_s._astype)
    _s.reshape.batch = _reshape
    _s.transpose.batch = _transpose
    _s.expand_dims.batch = _expand_dims
    _s.squeeze.batch = _squeeze
    _s.broadcast_to.batch = _broadcast_to
    _s._stack.batch = _joined(_s._stack)
    _s._concatenate.batch = _joined(_s._concatenate)
    _s._getitem.batch = _getitem
    _s.index_add.batch = _index_add
    _s._index_set.batch = _index_set
    _p.matmul.batch = _matmul
    _p._einsum.batch = _einsum
    for prim in (_l._inv, _l._det, _l._logabsdet, _l._cholesky, _l._eigh, _l._svd,
                 _l._svdvals, _l._qr):
        prim.batch = leading(prim)
    _l._solve.batch = leading(_l._solve)  # b a stack of matrices: padded as a is
    # issue 19's: NumPy's pinv and eig map over leading axes (eig's result: one stack)
    for prim in (_l._pinv, _l._eig):
        prim.batch = leading(prim)
    _l._all_or_none.batch = _all_or_none
    # Elementwise primitives made with @primitive (own impl), not ufunc(): no rule came
    # from their constructor, so they get the broadcasting one here.
    for prim in (_m._sinc, _m._nan_to_num):
        prim.batch = elementwise(prim)
    for prim in (_f._fit, _f._c2c, _f._r2c, _f._c2r):
        prim.batch = transform(prim)
    # The real part and its embedding into complex numbers act on each element.
    for name in ("_re", "_to_complex"):
        prim = getattr(_f, name, None)  # (helpers the complex branch may replace)
        if prim is not None and "batch" not in getattr(prim, "__dict__", {}):
            prim.batch = keep_axis(prim)
    _l._sign_det.batch = leading(_l._sign_det)
