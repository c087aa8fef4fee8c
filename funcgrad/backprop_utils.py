"""What goes into the folds and what comes out of them, checked (layer 5).

The folds of :mod:`funcgrad.backprop` and :mod:`funcgrad.forward` trust what
they are given; this module checks it at their edges, as Chainer's
``_backprop_utils`` does: the seeds, cotangents and tangents a caller gives
(:func:`seed`, :func:`check_like`, :func:`scale`), the gradient a rule returns
(:func:`check_grad`, :func:`finite`), and the arrays handed back (:func:`owned`).
Each error says what was expected and what came.

>>> import numpy
>>> check_like(numpy.ones(2, numpy.float32), numpy.zeros(2), "the cotangent", "output 0").dtype
dtype('float64')
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy
import pyrsistent

from . import backend
from .arrays import array_likes
from .batching import innermost_raw
from .errors import DeviceMismatchError, FuncgradTypeError, FuncgradValueError, GradientTypeError
from .node import Node
from .numpy import real
from .tree import register_node


def as_nodes(seq: Any, what: str) -> list[Node]:
    """``seq`` (a Node, or a sequence of Nodes) as a list; ``what`` names it in errors."""
    if type(seq) is Node:
        return [seq]
    if not isinstance(seq, Sequence) or isinstance(seq, str):
        raise FuncgradTypeError(f"backprop {what} must be a sequence of Nodes, got {seq!r}")
    for i, n in enumerate(seq):
        if type(n) is not Node:
            raise FuncgradTypeError(
                f"backprop {what}[{i}] must be a Node, got {type(n).__name__}"
            )
    return list(seq)


def describe(g: Any) -> str:
    """``'a float32 ndarray of shape (3,)'``, ``'a dict'``: what a caller gave, for messages."""
    v = g.value if type(g) is Node else g
    dtype, shape = getattr(v, "dtype", None), getattr(v, "shape", None)
    text = (f"{type(g).__name__}" if dtype is None or shape is None
            else f"{dtype} {type(g).__name__} of shape {tuple(shape)}")
    return ("an " if text[0] in "aeiou" else "a ") + text


def _innermost(v: Any) -> Any:
    """The raw value under any number of Nodes."""
    while type(v) is Node:
        v = v.value
    return v


def seed(out: Node, g: Any, i: int, what: str = "grad_outputs[{i}]") -> Any:
    """The seed of output ``i``: ones for a size-1 output when ``g`` is None, else ``g``
    checked against the output (see :func:`check_like`); ``what`` names it in errors."""
    if g is None:
        if out.size != 1:
            raise FuncgradValueError(
                f"output {i} has shape {out.shape}: a non-scalar output needs a gradient "
                "in grad_outputs"
            )
        if out.shape != ():
            warnings.warn(
                f"output {i} has shape {out.shape}; seeding a size-1 output that is not "
                "0-d with ones is deprecated, pass grad_outputs",
                DeprecationWarning,
                stacklevel=3,
            )
        xp = backend.namespace(out.value)
        return xp.ones(out.shape, out.dtype)
    return check_like(g, out, what.format(i=i), f"output {i}")


def check_like(g: Any, primal: Any, what: str, whose: str) -> Any:
    """``g``, a cotangent or tangent a caller gave for ``primal``, checked and cast.

    It must be an array (or array-like, or Python number) of ``primal``'s
    shape and dtype kind -- real floating for a real primal, complex for a
    complex one -- else ``TypeError`` (wrong kind: complex for a real primal,
    real for a complex one, integer, boolean, string, not an array) or
    ``ValueError`` (wrong shape), naming ``what`` and the shape and dtype
    expected.  Another precision of the same kind is cast to ``primal``'s
    dtype, and so is a Python int or float given for a complex primal.
    """
    pv = _innermost(primal)
    t = type(g)
    if t is not Node:
        g = _as_array(g, pv, what, whose)
    v = _innermost(g)
    kind, dtype = v.dtype.kind, pv.dtype
    if kind != dtype.kind and not (dtype.kind == "c" and kind == "f" and t in (int, float)):
        raise FuncgradTypeError(
            f"{what} must be {_expected(pv, whose)}, got {describe(g)}: "
            + _why(kind, dtype, what, whose)
        )
    if not backend.same_shape(tuple(v.shape), tuple(pv.shape)):
        raise FuncgradValueError(
            f"{what} has shape {tuple(v.shape)} but {whose} has shape {tuple(pv.shape)}: "
            f"expected {_expected(pv, whose)}"
        )
    return g.astype(dtype) if v.dtype != dtype else g


def _expected(pv: Any, whose: str) -> str:
    return f"a {pv.dtype} array of shape {tuple(pv.shape)} (the shape and dtype of {whose})"


def _why(kind: str, dtype: numpy.dtype, what: str, whose: str) -> str:
    """Why a value of dtype kind ``kind`` cannot stand for one of ``dtype``."""
    if kind == "c":
        return f"{whose} is real ({dtype}): pass the real part, or make the function complex"
    if dtype.kind == "c" and kind == "f":
        return (f"{whose} is complex ({dtype}): a complex value needs a complex "
                f"{'tangent' if 'tangent' in what else 'cotangent'} (cast it to {dtype})")
    return "only floating dtypes (real or complex) carry gradients"


def _as_array(g: Any, pv: Any, what: str, whose: str) -> Any:
    """``g``, which is not a Node, as an array of ``pv``'s namespace (or a Node it holds)."""
    t = type(g)
    if t is bool or isinstance(g, (str, bytes, dict, set)) or (
        t not in (int, float, list, tuple) and getattr(g, "dtype", None) is None
    ):
        raise FuncgradTypeError(f"{what} must be {_expected(pv, whose)}, got {describe(g)}")
    if t is list or t is tuple:
        converted = array_likes((g,))  # a list holding Nodes: one Node
        g = converted[0] if converted is not None else g
    if type(g) is Node or type(g) is type(pv):
        return g
    try:  # one on another device than its primal is refused, as any mixing is
        xp = backend.namespace(pv, g)
    except DeviceMismatchError as exc:
        raise DeviceMismatchError(f"{what}: {exc}") from None
    try:  # in a lazy namespace, NumPy data split as the primal is: no large constant
        return xp.asarray(g, like=pv) if backend.is_lazy(xp) else xp.asarray(g)
    except (ValueError, TypeError, OverflowError) as exc:
        raise FuncgradTypeError(
            f"{what} must be {_expected(pv, whose)}, got {describe(g)} that is no array ({exc})"
        ) from None


def scale(loss_scale: Any) -> float | None:
    """``loss_scale`` as a Python float (None stays None): a Python or 0-d real number."""
    if loss_scale is None:
        return None
    if type(loss_scale) is Node:  # a traced scale: the gradients depend on it
        if loss_scale.shape != () or loss_scale.dtype.kind != "f":
            raise FuncgradValueError(
                f"loss_scale must be a Python or 0-d number, got {describe(loss_scale)}"
            )
        return loss_scale
    v = loss_scale
    t = type(v)
    kind = getattr(getattr(v, "dtype", None), "kind", "")
    if t is not bool and (t is int or t is float or (getattr(v, "shape", None) == ()
                                                    and kind and kind in "iuf")):
        try:
            return float(v)
        except OverflowError:
            raise FuncgradValueError(f"loss_scale {loss_scale!r} overflows a float") from None
    shape = getattr(v, "shape", None)
    if shape is not None and kind and kind in "iuf":
        raise FuncgradValueError(
            f"loss_scale must be a Python or 0-d number, got an array of shape {tuple(shape)}"
        )
    raise FuncgradTypeError(f"loss_scale must be a Python or 0-d real number, got {describe(v)}")


def check_grad(prim: Any, i: int, parent: Node, g: Any) -> Any:
    """Check one gradient a rule returned against its argument; cast within a dtype kind."""
    pv = parent.value
    gv = g.value if type(g) is Node else g
    gshape = getattr(gv, "shape", None)
    if gshape is None or not backend.same_shape(gshape, pv.shape):
        raise GradientTypeError(
            f"VJP rule of primitive {prim.name!r} for argument {i}: expected a gradient of "
            f"shape {pv.shape}, got {'a ' + type(gv).__name__ if gshape is None else gshape}"
        )
    gdtype = gv.dtype
    if gdtype is not pv.dtype and gdtype != pv.dtype:
        if gdtype.kind == "c" and pv.dtype.kind == "f":
            # A real argument of a complex operation: its cotangent is the real part
            # (the transpose of the real-to-complex inclusion; see CONTRIBUTING.md).
            g = real(g)
            gdtype = (g.value if type(g) is Node else g).dtype
        if gdtype.kind != pv.dtype.kind:
            raise GradientTypeError(
                f"VJP rule of primitive {prim.name!r} for argument {i}: expected dtype "
                f"{pv.dtype}, got {gdtype}"
            )
        if gdtype != pv.dtype:
            g = g.astype(pv.dtype)
    if type(gv) is not type(pv) and backend.device_of(gv) != backend.device_of(pv):
        raise GradientTypeError(
            f"VJP rule of primitive {prim.name!r} for argument {i}: expected a gradient on "
            f"{backend.device_of(pv)}, got one on {backend.device_of(gv)}"
        )
    return g


def finite(prim: Any, g: Any) -> Any:
    """``g``, checked for NaN and Inf: now, or, in a lazy namespace, when it is computed."""
    v = g.value if type(g) is Node else g
    if isinstance(v, tuple):  # the cotangents of a multi-output node: each in turn
        each = type(v)(None if e is None else finite(prim, e) for e in v)
        return g if type(g) is Node else each
    v = innermost_raw(v)  # under fg.vmap: every example's values at once
    xp = backend.namespace(v)
    error = FloatingPointError(
        f"NaN or Inf in a gradient computed by the VJP rule of primitive {prim.name!r}"
    )
    if backend.is_lazy(xp):
        # Reading the data now would compute the graph: the check runs with it instead.
        # (A gradient recorded for double backprop keeps its value unchecked.)
        return g if type(g) is Node else xp.checked(v, _all_finite, error)
    if not xp.isfinite(v).all():
        raise error
    return g


def _all_finite(chunk: Any) -> bool:
    """Whether a computed chunk holds no NaN or Inf (run by a lazy namespace's tasks)."""
    return bool(backend.namespace(chunk).isfinite(chunk).all())


def owned(values: list, caller: Sequence) -> list:
    """``values`` (gradients or tangents) as arrays their caller owns.

    The fold hands on what rules return, which may be a view (``reshape``,
    ``broadcast_to``), read-only, one of the caller's own arrays (a seed passed
    through ``x + 1``), or one array handed out twice (both gradients of
    ``x + y``): each of those is copied; a fresh array is returned as it is.
    Nodes (results inside a traced function) are immutable and stay.
    """
    taken = {id(a) for a in caller}
    out = []
    for v in values:
        if v is not None and type(v) is not Node:
            if isinstance(v, numpy.generic):  # what ufuncs make of 0-d arrays
                v = numpy.asarray(v)
            elif id(v) in taken or backend.borrowed(v):
                v = v.copy()
            taken.add(id(v))
        out.append(v)
    return out


class _Same:
    """A key that equals exactly one object, by identity, whatever its ``==`` returns."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return hash(self.obj)

    def __eq__(self, other: object) -> bool:
        return (other.obj if type(other) is _Same else other) is self.obj

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)


def _same(key: Any) -> _Same:
    return key if type(key) is _Same else _Same(key)


class GradientMap(pyrsistent.PMap):
    """The ``PMap`` a fold returns: Nodes keyed by identity, as API.md section 1 says.

    A Node's ``==`` is elementwise, and a ``PMap`` compares the keys that share
    a bucket with ``==``; here every stored key is wrapped so that a look-up
    (``grads[x]``, ``x in grads``, ``.get``, ``.set``, ``.remove``) matches
    exactly the Node it was given, and iteration yields the Nodes themselves.

    >>> a, b = object(), object()
    >>> m = gradient_map({a: 1, b: 2}).set(a, 3)
    >>> m[a], m[b], len(m), list(m) == [a, b] or list(m) == [b, a]
    (3, 2, 2, True)
    """

    def iteritems(self):
        for key, value in super().iteritems():
            yield key.obj, value

    def evolver(self) -> GradientMap._Evolver:
        return GradientMap._Evolver(self)

    def __reduce__(self):
        return gradient_map, (dict(self.iteritems()),)

    def __repr__(self) -> str:
        return f"GradientMap({dict(self.iteritems())})"

    class _Evolver(pyrsistent.PMap._Evolver):
        __slots__ = ()

        def set(self, key, val):
            return super().set(_same(key), val)

        def remove(self, key):
            return super().remove(_same(key))

        def persistent(self) -> GradientMap:
            if self.is_dirty():
                self._original_pmap = GradientMap(self._size, self._buckets_evolver.persistent())
            return self._original_pmap


_EMPTY = GradientMap(0, pyrsistent.pvector([None] * 8))


def gradient_map(pairs: Any) -> GradientMap:
    """A :class:`GradientMap` of the ``(key, value)`` pairs (or the dict) ``pairs``."""
    evolver = _EMPTY.evolver()
    for key, value in (pairs.items() if isinstance(pairs, dict) else pairs):
        evolver.set(key, value)
    return evolver.persistent()


register_node(GradientMap,
              lambda m: (tuple(v for _, v in m.iteritems()), tuple(_Same(k) for k in m)),
              lambda keys, values: gradient_map(zip((k.obj for k in keys), values)))
