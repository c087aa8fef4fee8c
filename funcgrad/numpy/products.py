"""Matrix and tensor products (layer 4).

``matmul`` and ``einsum`` are primitives; ``dot``, ``tensordot``, ``outer``,
``inner`` and ``trace`` are compositions of primitives and need no rules.
The gradient of an ``einsum`` operand is another ``einsum``.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> a = numpy.eye(2)
>>> fg.grad(lambda x: fnp.matmul(a, x).sum())(numpy.ones(2))
array([1., 1.])
"""

from __future__ import annotations

import math
import numbers
import string
from typing import Any

from ..errors import FuncgradValueError
from ._core import defjvp, defvjp, primitive, raw, shape_of, xp_of
from ._core import namespace as _ns
from ._linear import bcast, unbroadcast
from .elementwise import multiply, subtract
from .reductions import sum as _sum
from .shape import (
    as_arrays,
    broadcast_to,
    check_axis,
    getitem,
    moveaxis,
    reshape,
    stack,
    transpose,
)


@primitive
def matmul(x, y):
    """``numpy.matmul`` (the ``@`` operator): matrix products, batched over leading axes.

    1-d arguments are vectors, as in NumPy.  The gradients are ``g @ y.T`` for
    ``x`` and ``x.T @ g`` for ``y``, summed over broadcast batch axes.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> a, b = numpy.array([[1.0, 2.0], [3.0, 4.0]]), numpy.array([1.0, -1.0])
    >>> fnp.matmul(a, b)
    array([-1., -1.])
    >>> fg.grad(lambda b: fnp.sum(a @ b))(b)
    array([4., 6.])
    """
    return _ns(x, y).matmul(x, y)


def _t(a):
    n = len(a.shape)
    return transpose(a, tuple(range(n - 2)) + (n - 1, n - 2))


def _matmul_dx(g, ans, x, y):
    if len(y.shape) == 1:  # (..., k) @ (k,) -> (...): outer product with y
        gx = reshape(g, g.shape + (1,)) * y
    elif len(x.shape) == 1:  # (k,) @ (..., k, m) -> (..., m)
        gx = matmul(reshape(g, g.shape[:-1] + (1, g.shape[-1])), _t(y))
        gx = reshape(gx, gx.shape[:-2] + (gx.shape[-1],))
    else:
        gx = matmul(g, _t(y))
    return unbroadcast(gx, x.shape)


def _matmul_dy(g, ans, x, y):
    if len(x.shape) == 1 and len(y.shape) == 1:
        gy = g * x
    elif len(x.shape) == 1:  # (k,) @ (..., k, m)
        gy = reshape(x, (x.shape[0], 1)) * reshape(g, g.shape[:-1] + (1, g.shape[-1]))
    elif len(y.shape) == 1:  # (..., n, k) @ (k,) -> (..., n)
        gy = matmul(reshape(g, g.shape[:-1] + (1, g.shape[-1])), x)
        gy = reshape(gy, gy.shape[:-2] + (gy.shape[-1],))
    else:
        gy = matmul(_t(x), g)
    return unbroadcast(gy, y.shape)


defvjp(matmul, _matmul_dx, _matmul_dy)
defjvp(matmul, lambda t, ans, x, y: bcast(matmul(t, y), ans), lambda t, ans, x, y: bcast(matmul(x, t), ans))


# -- tensordot and its relatives (compositions) -----------------------------------


def _tensordot_axes(axes, nda: int, ndb: int) -> tuple[list, list]:
    if isinstance(axes, int):
        if axes < 0 or axes > min(nda, ndb):
            raise FuncgradValueError(f"tensordot: axes={axes} is out of range for {nda}-d and {ndb}-d")
        return list(range(nda - axes, nda)), list(range(axes))
    axes_a, axes_b = axes
    axes_a = [axes_a] if isinstance(axes_a, int) else list(axes_a)
    axes_b = [axes_b] if isinstance(axes_b, int) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise FuncgradValueError(f"tensordot: axes {axes_a} and {axes_b} differ in length")
    return [int(i) % max(nda, 1) for i in axes_a], [int(i) % max(ndb, 1) for i in axes_b]


def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """``numpy.tensordot``: sum products over ``axes`` of ``a`` and ``b``.

    ``axes`` is an int ``N`` (the last ``N`` axes of ``a`` with the first ``N``
    of ``b``) or a pair of axis sequences.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.tensordot(numpy.ones((2, 3)), numpy.ones((3, 4)), axes=1).shape
    (2, 4)
    """
    a, b = as_arrays(a, b)
    sa, sb = shape_of(a), shape_of(b)
    axes_a, axes_b = _tensordot_axes(axes, len(sa), len(sb))
    for i, j in zip(axes_a, axes_b, strict=True):
        if sa[i] != sb[j]:
            raise FuncgradValueError(f"tensordot: shape mismatch, {sa} axis {i} vs {sb} axis {j}")
    free_a = [i for i in range(len(sa)) if i not in axes_a]
    free_b = [j for j in range(len(sb)) if j not in axes_b]
    k = math.prod(sa[i] for i in axes_a)
    out_shape = tuple(sa[i] for i in free_a) + tuple(sb[j] for j in free_b)
    # As NumPy does it: move the summed axes together and make it one matmul.
    a2 = reshape(transpose(a, tuple(free_a + axes_a)), (math.prod(sa[i] for i in free_a), k))
    b2 = reshape(transpose(b, tuple(axes_b + free_b)), (k, math.prod(sb[j] for j in free_b)))
    return reshape(matmul(a2, b2), out_shape)


def dot(x: Any, y: Any) -> Any:
    """``numpy.dot``: a product with a scalar, else a sum over the last axis of ``x``
    and the second-to-last of ``y`` (the last when ``y`` is 1-d).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.dot(numpy.ones((2, 3, 4)), numpy.ones((5, 4, 6))).shape
    (2, 3, 5, 6)
    """
    x, y = as_arrays(x, y)
    nx, ny = len(shape_of(x)), len(shape_of(y))
    if nx == 0 or ny == 0:
        return multiply(x, y)
    if ny <= 2:
        return matmul(x, y)
    return tensordot(x, y, axes=([nx - 1], [ny - 2]))


def outer(a: Any, b: Any) -> Any:
    """``numpy.outer``: ``out[i, j] = a.ravel()[i] * b.ravel()[j]``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.outer(numpy.ones(2), numpy.arange(3.0))
    array([[0., 1., 2.],
           [0., 1., 2.]])
    """
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def inner(a: Any, b: Any) -> Any:
    """``numpy.inner``: sum products over the last axes (a product with a scalar).

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.inner(numpy.ones((2, 3)), numpy.ones((4, 3))).shape
    (2, 4)
    """
    a, b = as_arrays(a, b)
    if len(shape_of(a)) == 0 or len(shape_of(b)) == 0:
        return multiply(a, b)
    return tensordot(a, b, axes=([-1], [-1]))


def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``numpy.trace``: sum of the ``offset`` diagonal over ``axis1`` and ``axis2``.

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.trace(numpy.arange(9.0).reshape(3, 3), offset=1)
    np.float64(6.0)
    """
    (x,) = as_arrays(x)
    x = moveaxis(x, (axis1, axis2), (-2, -1))
    n, m = x.shape[-2], x.shape[-1]
    xp = xp_of(x)
    start = max(-offset, 0)
    count = max(min(n - start, m - start - offset), 0)
    rows = xp.arange(start, start + count)
    return _sum(getitem(x, (Ellipsis, rows, rows + offset)), axis=-1)


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """``numpy.cross``: the cross product of 3-vectors along ``axisa`` of ``a`` and
    ``axisb`` of ``b`` (the other axes broadcast), placed along ``axisc``;
    ``axis`` sets all three.  (NumPy's deprecated 2-vectors are not taken.)

    >>> import numpy, funcgrad.numpy as fnp
    >>> fnp.cross(numpy.array([1.0, 0.0, 0.0]), numpy.array([0.0, 1.0, 0.0]))
    array([0., 0., 1.])
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = as_arrays(a, b)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        raise FuncgradValueError(f"cross: needs vectors, got shapes {sa} and {sb}")
    a = moveaxis(a, check_axis(axisa, len(sa), "cross"), -1)
    b = moveaxis(b, check_axis(axisb, len(sb), "cross"), -1)
    if shape_of(a)[-1] != 3 or shape_of(b)[-1] != 3:
        raise FuncgradValueError(
            f"cross: vectors must have 3 components along the axes, got shapes {sa} "
            f"(axisa={axisa}) and {sb} (axisb={axisb})"
        )
    a0, a1, a2 = (getitem(a, (Ellipsis, i)) for i in range(3))
    b0, b1, b2 = (getitem(b, (Ellipsis, i)) for i in range(3))
    c = stack([subtract(multiply(a1, b2), multiply(a2, b1)),
               subtract(multiply(a2, b0), multiply(a0, b2)),
               subtract(multiply(a0, b1), multiply(a1, b0))], axis=-1)
    return moveaxis(c, -1, check_axis(axisc, len(shape_of(c)), "cross"))


# -- einsum ----------------------------------------------------------------------

_LETTERS = string.ascii_letters


def _parse_einsum(subscripts: str, shapes: list) -> tuple[list[str], str]:
    """Explicit, ellipsis-free input and output subscripts (NumPy's rules)."""
    subscripts = subscripts.replace(" ", "")
    lhs, _, out = subscripts.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise FuncgradValueError(f"einsum: {subscripts!r} names {len(ins)} operands, got {len(shapes)}")
    ell = _ellipsis_labels(ins, shapes, used=lhs + out)
    expanded = [_expand_ellipsis(sub, s, ell) for sub, s in zip(ins, shapes, strict=True)]
    if "->" not in subscripts:  # implicit: broadcast axes, then labels seen once, sorted
        counts = {c: "".join(expanded).count(c) for c in "".join(expanded)}
        return expanded, ell + "".join(sorted(c for c, n in counts.items()
                                              if n == 1 and c not in ell))
    return expanded, out.replace("...", ell)


def _ellipsis_labels(ins: list, shapes: list, used: str) -> str:
    """Fresh labels for the axes that ``...`` stands for (as many as the most it covers)."""
    free = [c for c in _LETTERS if c not in set(used)]
    n_ell = max((len(s) - (len(sub) - 3) for sub, s in zip(ins, shapes) if "..." in sub),
                default=0)
    return "".join(free[:n_ell])


def _expand_ellipsis(sub: str, shape: tuple, ell: str) -> str:
    """``sub`` with its ``...`` replaced by the last of ``ell`` it covers, checked against
    the operand's ``shape``."""
    if "..." in sub:
        k = len(shape) - (len(sub) - 3)
        sub = sub.replace("...", ell[len(ell) - k:] if k else "")
    if len(sub) != len(shape) or any(c not in _LETTERS for c in sub):
        raise FuncgradValueError(f"einsum: subscripts {sub!r} do not fit an operand of shape {shape}")
    return sub


@primitive
def _einsum(*operands, subscripts, optimize=False):
    extra = {"optimize": optimize} if optimize else {}  # NumPy's contraction-order search
    return _ns(*operands).einsum(subscripts, *operands, **extra)


_einsum.name = "einsum"


def _einsum_grad(g, ans, args, kwargs, positions):
    ins, out = kwargs["subscripts"].split("->")
    ins = ins.split(",")
    opt = kwargs.get("optimize", False)
    return [_einsum_operand_grad(g, out, args, ins, i, opt) for i in positions]


def _einsum_operand_grad(g, out, args, ins, i, optimize):
    """The gradient of operand ``i``: an einsum of ``g`` with the other operands,
    broadcast over labels only operand ``i`` has, put on the diagonal of repeats."""
    sub, shape = ins[i], args[i].shape
    size = dict(zip(sub, shape))
    others = [j for j in range(len(args)) if j != i]
    elsewhere = set(out).union(*(ins[j] for j in others))
    labels = "".join(dict.fromkeys(sub))  # unique, in order of first appearance
    kept = "".join(c for c in labels if c in elsewhere)
    spec = ",".join([out] + [ins[j] for j in others]) + "->" + kept
    gi = _einsum(g, *(args[j] for j in others), subscripts=spec, optimize=optimize)
    # Labels summed within operand i alone: its gradient is constant along them.
    gi = reshape(gi, tuple(size[c] if c in kept else 1 for c in labels))
    gi = broadcast_to(gi, tuple(size[c] for c in labels))
    if len(labels) == len(sub):
        return gi
    # Repeated labels ('ii'): the gradient lives on the diagonal.
    first = [sub.index(c) == p for p, c in enumerate(sub)]
    gi = reshape(gi, tuple(n if f else 1 for n, f in zip(shape, first, strict=True)))
    return gi * _diagonal_mask(sub, shape, raw(g).dtype, xp_of(g))


def _diagonal_mask(sub: str, shape: tuple, dtype, xp):
    """1 where every repeated label of ``sub`` has equal indices, else 0."""
    mask = xp.ones(shape, dtype)
    for p, c in enumerate(sub):
        q = sub.index(c)
        if q != p:
            eye = xp.eye(shape[q], dtype=dtype)
            mask = mask * xp.reshape(eye, tuple(
                shape[k] if k in (p, q) else 1 for k in range(len(shape))))
    return mask


def _einsum_jvp(pairs, ans, args, kwargs):
    total = None
    for i, t in pairs:  # linear in each operand
        ops = list(args)
        ops[i] = t
        r = _einsum(*ops, **kwargs)
        total = r if total is None else total + r
    return total


_einsum.vjp_joint = _einsum_grad
_einsum.jvp_joint = _einsum_jvp


# NumPy's letters for the integer labels of the interleaved form: 0-25 are
# 'A'-'Z', 26-51 'a'-'z', so that sorting letters sorts the labels.
_SUBLIST_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def _sublist(labels: Any, what: str) -> str:
    """The subscripts of one sublist of the interleaved form (``[0, 1]`` -> ``'AB'``)."""
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
        raise FuncgradValueError(
            f"einsum: {what} must be a list of integer labels (and Ellipsis), got {labels!r}"
        )
    out = []
    for c in labels:
        if c is Ellipsis:
            out.append("...")
        elif isinstance(c, numbers.Integral) and not isinstance(c, bool) and 0 <= c < 52:
            out.append(_SUBLIST_LETTERS[int(c)])
        else:
            raise FuncgradValueError(
                f"einsum: {what} holds {c!r}; labels are integers in [0, 52) or Ellipsis"
            )
    return "".join(out)


def _interleaved(args: tuple) -> tuple[str, list]:
    """``(subscripts, operands)`` of ``einsum(op0, sub0, op1, sub1, ..., [sub_out])``."""
    operands, subs = list(args[0::2]), []
    pairs = len(args) // 2
    for k in range(pairs):
        subs.append(_sublist(args[2 * k + 1], f"the sublist of operand {k}"))
    spec = ",".join(subs)
    if len(args) % 2:  # a last sublist names the output
        spec += "->" + _sublist(args[-1], "the output sublist")
        operands = operands[:-1]
    return spec, operands


def einsum(subscripts: Any, *operands: Any, optimize: Any = False) -> Any:
    """``numpy.einsum``: explicit (``'ij,jk->ik'``) or implicit (``'ij,jk'``) form,
    repeated labels (``'ii->'``, ``'ii->i'``), ellipsis and broadcasting, and
    the interleaved form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` (integer
    labels in ``[0, 52)`` and ``Ellipsis``, an optional output sublist last).
    ``optimize`` is passed on to the namespace's ``einsum`` (and to the
    gradients' einsums).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.grad(lambda a: fnp.einsum('ii->', a))(numpy.ones((2, 2)))
    array([[1., 0.],
           [0., 1.]])
    >>> fnp.einsum(numpy.ones((2, 3)), [0, 1], numpy.ones(3), [1], [0])
    array([3., 3.])
    """
    if not isinstance(subscripts, str):
        if not operands:
            raise FuncgradValueError("einsum: needs subscripts and operands, got one argument")
        subscripts, operands = _interleaved((subscripts, *operands))
    operands = as_arrays(*operands)
    shapes = [shape_of(o) for o in operands]
    ins, out = _parse_einsum(subscripts, shapes)
    size: dict = {}
    for sub, s in zip(ins, shapes, strict=True):
        for c, n in zip(sub, s, strict=True):
            if size.get(c, 1) == 1:
                size[c] = n
            elif n not in (1, size[c]):
                raise FuncgradValueError(f"einsum: label {c!r} has sizes {size[c]} and {n}")
    for c in out:
        if c not in size:
            raise FuncgradValueError(f"einsum: output label {c!r} is not in any operand")
    # Broadcast size-1 axes up front: then no rule has to undo broadcasting.
    ops = []
    for sub, o in zip(ins, operands, strict=True):
        full = tuple(size[c] for c in sub)
        ops.append(broadcast_to(o, full) if shape_of(o) != full else o)
    spec = ",".join(ins) + "->" + out
    return _einsum(*ops, subscripts=spec, optimize=optimize) if optimize else _einsum(
        *ops, subscripts=spec)


__all__ = ["cross", "dot", "einsum", "inner", "matmul", "outer", "tensordot", "trace"]
