"""Batched values: what :func:`fg.vmap <funcgrad.vmap>` calls a function with (layer 5).

A :class:`Batched` holds one array standing for a whole batch of examples:
``value`` (an array, a Node, or a batched value of an outer ``vmap``), the
mapped ``axis`` of ``value`` and the ``level``, one per running ``vmap``.
Its ``shape`` is an example's shape.  A primitive given a batched argument
runs its batching rule (``prim.batch``, set by :func:`~funcgrad.defbatch`,
the numpy families' own, or a loop over the examples with a
:class:`~funcgrad.VmapFallbackWarning`), through the one entry of
:mod:`funcgrad.primitive`: so batching composes with differentiation in any
order, the rules being written in ``funcgrad.numpy``.

Levels and graphs share one order, their creation's: the newest is
unwrapped first, and everything older is a constant to it.

>>> import numpy, funcgrad.numpy as fnp
>>> level = Level(3)
>>> x = batched(numpy.arange(6.0).reshape(3, 2), 0, level)
>>> x.shape, unbatched(fnp.sin(x) * 2.0, level)[1]
((2,), 0)
"""

from __future__ import annotations

import contextlib
import types
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import numpy

from . import backend, tree
from . import numpy as fnp
from .errors import (
    BatchedValueError,
    FuncgradTypeError,
    FuncgradValueError,
    VmapFallbackWarning,
)
from .node import ACTIVE, DEFAULT_BACKPROP_ID, LIFT, Node, next_ordinal
from .numpy import shape as _s
from .numpy._batching import elementwise
from .numpy._methods import METHODS, OPERATOR_UFUNCS

# The levels of the vmaps running here, innermost last (context-local).
_LEVELS: ContextVar[tuple] = ContextVar("funcgrad_vmap_levels", default=())


class Level:
    """One running ``vmap``: its place in the order of levels and graphs, and its size."""

    __slots__ = ("ordinal", "size")

    def __init__(self, size: int):
        self.ordinal = next_ordinal()
        self.size = size

    def __repr__(self) -> str:
        return f"Level({self.ordinal}, size={self.size})"


@contextlib.contextmanager
def running(level: Level) -> Iterator[Level]:
    """Within the block, ``level`` is the innermost running vmap."""
    token = _LEVELS.set(_LEVELS.get() + (level,))
    try:
        yield level
    finally:
        _LEVELS.reset(token)


def innermost() -> Level | None:
    """The innermost running vmap's level, or None outside every vmap."""
    levels = _LEVELS.get()
    return levels[-1] if levels else None


def _conversion(what: str, x: Any = None) -> BatchedValueError:
    origin = getattr(x, "origin", None)
    made = f" (the result of {origin!r})" if origin else ""
    return BatchedValueError(
        f"{what} of a value batched by fg.vmap{made}: it has one value per example, and Python "
        "can take only one branch for all of them; compute both sides and choose with "
        "fnp.where(condition, a, b) (and fnp.all/fnp.any for whole-array tests), or map "
        "the Python code outside vmap"
    )


class Batched:
    """A batch of examples standing for one example (see the module's docstring).

    Made by :func:`batched`; immutable.  ``shape``, ``dtype``, ``ndim`` and
    ``size`` are one example's; arithmetic, indexing and methods work as on a
    Node, through ``funcgrad.numpy``; reading it into Python (``bool``,
    ``float``, ``int``, ``.item()``, as an index) raises
    :class:`~funcgrad.BatchedValueError`.
    """

    __slots__ = ("axis", "level", "origin", "value")
    __funcgrad_wraps__ = True  # other array types' operators defer to this one's

    @property
    def shape(self) -> tuple:
        s = tuple(self.value.shape)
        a = self.axis
        return s if a is None else s[:a] + s[a + 1:]

    @property
    def dtype(self) -> Any:
        return self.value.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for k in self.shape:
            n *= k
        return n

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d batched value")
        return self.shape[0]

    def __repr__(self) -> str:
        return (f"Batched(shape={self.shape}, dtype={self.dtype}, axis={self.axis}, "
                f"level={self.level.ordinal}, value={type(self.value).__name__})")

    def copy(self) -> Batched:  # immutable: a copy is itself
        return self

    def astype(self, dtype: Any) -> Any:
        if numpy.dtype(dtype).kind == "f":  # differentiable

            return _s.astype(self, dtype)
        return batched(self.value.astype(dtype), self.axis, self.level)  # data

    def __bool__(self):
        raise _conversion("bool() (an if, while, and, or)", self)

    def __float__(self):
        raise _conversion("float()", self)

    def __int__(self):
        raise _conversion("int()", self)

    def __complex__(self):
        raise _conversion("complex()", self)

    def __index__(self):
        raise _conversion("use as a Python index (__index__)", self)

    def item(self, *args: Any):
        raise _conversion(".item()", self)

    def tolist(self):
        raise _conversion(".tolist()", self)

    def __array__(self, dtype=None, copy=None):
        origin = f" (the result of {self.origin!r})" if self.origin else ""
        raise BatchedValueError(
            f"a value batched by fg.vmap{origin} was converted to a NumPy array "
            "(numpy.asarray, or a NumPy or other library function given it): that code "
            "sees one array, not one per example; use funcgrad.numpy's functions, which map "
            "over the batch, or map the code outside vmap"
        )

    def __array_function__(self, func, types, args, kwargs):
        # Raw code (rules, namespaces' own helpers) calling NumPy on a batched value: the
        # function mapped over the batch, as the batched namespace maps it.
        if func in (numpy.shape, numpy.ndim, numpy.size):
            return func(numpy.empty(self.shape, bool))
        name = func.__name__
        module = getattr(func, "__module__", "") or ""
        if module.startswith("numpy.linalg"):
            name = "linalg." + name
        level = _newest_level(args, kwargs)
        return _namespace_call(name, args, kwargs, level)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or "out" in kwargs:
            return NotImplemented
        op = _OPERATORS.get(ufunc.__name__)
        if op is not None and not kwargs:  # Python's operators: the differentiable twins
            return op(*inputs)
        return _namespace_call(ufunc.__name__, inputs, kwargs, _newest_level(inputs, kwargs))

    def __setattr__(self, name: str, value: Any) -> None:
        raise FuncgradTypeError(f"a batched value is immutable: cannot set {name!r}")

    def __setitem__(self, index, value):
        raise FuncgradTypeError(
            "a value batched by fg.vmap is immutable: write x = x.at[i].set(v) instead of "
            "x[i] = v"
        )


_OPERATORS: dict = {}


def _call(name: str, *args: Any, **kwargs: Any) -> Any:
    """The array function ``name`` on batched arguments (what the batched namespace does)."""
    return _namespace_call(name, args, kwargs, _newest_level(args, kwargs))


def _install_methods() -> None:
    """Batched values get Node's operators and methods (they are fnp's, which batch)."""

    _OPERATORS.update(OPERATOR_UFUNCS)
    own = set(vars(Batched))
    for name, value in METHODS.items():
        if name not in own and name not in ("__array__", "item", "tolist", "__setitem__"):
            setattr(Batched, name, value)
    for name, ufunc in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor")):
        setattr(Batched, f"__{name}__", lambda self, other, u=ufunc: _call(u, self, other))
        setattr(Batched, f"__r{name}__", lambda self, other, u=ufunc: _call(u, other, self))
    Batched.__invert__ = lambda self: _call("invert", self)
    Batched.all = lambda self, axis=None, keepdims=False: _call("all", self, axis=axis,
                                                                keepdims=keepdims)
    Batched.any = lambda self, axis=None, keepdims=False: _call("any", self, axis=axis,
                                                                keepdims=keepdims)
    # Raw code compares arrays elementwise (``v == 0``, ``v == None``): so do batched
    # values, which stand for raw arrays there, exactly as NumPy's operators do.
    Batched.__eq__ = lambda self, other: _call("equal", self, other)
    Batched.__ne__ = lambda self, other: _call("not_equal", self, other)
    Batched.__hash__ = None


_install_methods()


def innermost_raw(x: Any) -> Any:
    """The raw array under any number of Nodes and batched values."""
    while True:
        t = type(x)
        if t is Node or t in _CLASSES_SET:
            x = x.value
        else:
            return x


def under_nodes(x: Any) -> Any:
    """The value under any number of Nodes (a batched value, or a raw array)."""
    while type(x) is Node:
        x = x.value
    return x


def at_axis(v: Any, axis: int, index: Any) -> Any:
    """``v[..., index]`` with ``index`` on axis ``axis`` (differentiable)."""

    return _s.getitem(v, (slice(None),) * axis + (index,))


def lift(leaf: Any) -> Any:
    """A leaf a combinator is about to trace, inside a vmap newer than the leaf's graphs:
    marked as a constant of that vmap, so that the levels stay nested."""
    level = innermost()
    if level is None or type(leaf) is not Node:
        return leaf
    if max(g.ordinal for g in leaf.graphs) > level.ordinal:
        return leaf
    return batched(leaf, None, level)


LIFT[:] = [lift]


NOT_MAPPED = object()  # per_example's answer when nothing in its argument is mapped


class LoopNeeded(BatchedValueError):
    """What cannot be vectorized met the values of ``level``: that vmap then runs its
    function one example at a time instead (:func:`funcgrad.vectorize.vmap` catches it;
    the message stands if it ever reaches the user)."""

    def __init__(self, message: str, level: Level):
        super().__init__(message)
        self.level = level


def loop_needed(name: str, v: Any) -> None:
    """Raise :class:`LoopNeeded` when ``v`` (under any Nodes) is mapped by a running vmap:
    ``name``'s raw callbacks would see every example at once."""
    inner = under_nodes(v)
    if type(inner) in _CLASSES_SET:
        raise LoopNeeded(
            f"{name} met values mapped by fg.vmap that it cannot see one example at a time "
            f"(a gradient's value, or one its function closes over): that vmap maps it as a "
            f"loop over the examples", inner.level)


def per_example(fun: Callable, arg: Any, name: str = "this function") -> Any:
    """``fun(arg)`` one example at a time, stacked, when a leaf of the pytree ``arg`` is
    mapped by a running vmap; else :data:`NOT_MAPPED`.  For functions whose callbacks
    are raw code (SciPy's solvers): each call gets plain arrays (or Nodes)."""

    leaves, treedef = tree.flatten(arg)
    level = _newest_level(tuple(leaves), {})
    if level is None:
        for v in leaves:  # a gradient's Node over mapped values: no example can be cut out
            loop_needed(name, v)  # here, so that vmap maps the whole function as a loop
        return NOT_MAPPED
    outs = [fun(tree.unflatten(treedef, [example(v, level, b) for v in leaves]))
            for b in range(level.size)]
    out_leaves = [tree.flatten(o)[0] for o in outs]
    _, out_def = tree.flatten(outs[0])
    stacked = [stack_results([o[k] for o in out_leaves], level)
               for k in range(len(out_leaves[0]))]
    return tree.unflatten(out_def, stacked)


def refuse_under_outer_graph(name: str) -> None:
    """Raise if a vmap runs inside a gradient here: for ``name``, a function that finds
    what it differentiates by looking for Nodes, which batched values of that gradient's
    values would hide from it (its gradient would be lost)."""
    level = innermost()
    if level is None:
        return

    if any(g is not DEFAULT_BACKPROP_ID and g.ordinal < level.ordinal for g in ACTIVE.get()):
        raise BatchedValueError(
            f"{name} inside fg.vmap inside a gradient (grad(vmap(...)) and the like) is not "
            f"supported: its derivative would be lost; map outside the gradient instead "
            f"(vmap(grad(...)) gives per-example gradients), or call {name} outside vmap"
        )


# -- one class per underlying array type: each its own namespace -----------------

_CLASSES: dict[type, type] = {}
_CLASSES_SET: set = set()


def _class_for(raw: Any) -> type:
    t = type(raw)
    cls = _CLASSES.get(t)
    if cls is not None:
        return cls
    xp = backend.namespace(raw)
    cls = type(f"Batched_{t.__name__}", (Batched,), {"__slots__": ()})
    cls.__module__ = __name__
    backend.register_namespace(
        cls, BatchNamespace(xp), lambda a: backend.device_of(innermost_raw(a)),
        absorbs_numpy=backend.absorbs_numpy(xp), as_array=lambda a: a, over=xp,
        run=run, batched=True,
    )
    _CLASSES[t] = cls
    _CLASSES_SET.add(cls)
    return cls


def batched(value: Any, axis: int | None, level: Level, origin: str | None = None) -> Any:
    """``value`` mapped along ``axis`` at ``level`` (``axis`` None: the same for every example);
    ``origin`` names the primitive that made it, for messages."""
    raw = innermost_raw(value)
    if isinstance(raw, numpy.generic):
        raw = numpy.asarray(raw)
    obj = object.__new__(_class_for(raw))
    object.__setattr__(obj, "value", value)
    object.__setattr__(obj, "axis", axis)
    object.__setattr__(obj, "level", level)
    object.__setattr__(obj, "origin", origin)
    return obj


def is_batched(x: Any) -> bool:
    return type(x) in _CLASSES_SET


def unbatched(x: Any, level: Level) -> tuple[Any, int | None]:
    """``(value, axis)`` of ``x`` at ``level``; ``(x, None)`` when ``x`` is not mapped there."""
    if type(x) in _CLASSES_SET and x.level is level:
        return x.value, x.axis
    return x, None


def _newest_level(args: tuple, kwargs: dict) -> Level | None:
    best = None
    for a in _flat(args, kwargs):
        if type(a) in _CLASSES_SET and (best is None or a.level.ordinal > best.ordinal):
            best = a.level
    return best


def _flat(args: tuple, kwargs: dict | None = None) -> Iterator[Any]:
    for a in args:
        yield a
        if type(a) in (list, tuple):
            yield from a
    if kwargs:
        yield from kwargs.values()


def _unwrap_all(args: tuple, level: Level) -> tuple[list, list, bool]:
    """The arguments unwrapped at ``level``, their axes (a tuple of axes for a list or
    tuple argument holding mapped items), and whether there is such an argument."""
    vals, axes, seq = [], [], False
    for a in args:
        t = type(a)
        if (t is list or t is tuple) and any(type(b) in _CLASSES_SET and b.level is level
                                             for b in a):
            items = [unbatched(b, level) for b in a]
            vals.append(t(v for v, _ in items))
            item_axes = tuple(ax for _, ax in items)
            mapped = any(ax is not None for ax in item_axes)
            axes.append(item_axes if mapped else None)
            seq = seq or mapped
            continue
        v, ax = unbatched(a, level)
        vals.append(v)
        axes.append(ax)
    return vals, axes, seq


def _kwargs_batched(kwargs: dict, level: Level) -> bool:
    return any(type(v) in _CLASSES_SET and v.level is level for v in kwargs.values())


# -- the runner: one primitive called with batched arguments ---------------------

def rule_of(prim: Any) -> Callable | None:
    """The batching rule of ``prim``, or None (then the loop runs).  A primitive marked
    ``elementwise`` (a family's own ufunc-like one) gets the broadcasting rule."""
    own = getattr(prim, "__dict__", {})
    rule = own.get("batch")
    if rule is None and own.get("elementwise"):

        rule = prim.batch = elementwise(prim)
    return rule


LOOP = "loop"  # what a rule answers for a case it does not cover: the loop runs


def run(prim: Any, args: tuple, kwargs: dict) -> Any:
    """``prim(*args, **kwargs)`` where some argument is batched: by its rule, else a loop."""
    if getattr(prim, "__dict__", {}).get("computed"):  # custom_vjp, checkpoint: the value
        return prim.impl(*args, **kwargs)             # was computed (batched) already
    level = _newest_level(args, kwargs)
    vals, axes, seq = _unwrap_all(args, level)
    rule = rule_of(prim)
    if _kwargs_batched(kwargs, level) or seq and not getattr(rule, "sequences", False):
        return _loop(prim, args, kwargs, level)
    if all(ax is None for ax in axes):  # constants of this level (see lift):
        return _constant(prim(*vals, **kwargs), level)  # so is the result
    if rule is None:
        return _loop(prim, args, kwargs, level)
    out, out_axis = rule(vals, axes, **kwargs)
    if type(out) is str and out == LOOP:
        return _loop(prim, args, kwargs, level, case=True)
    return _wrap(out, out_axis, level, prim.name)


def _constant(out: Any, level: Level) -> Any:
    if type(out) is tuple:
        return tuple(_constant(o, level) for o in out)
    return batched(out, None, level) if hasattr(out, "shape") else out


def _wrap(out: Any, out_axis: Any, level: Level, origin: str | None = None) -> Any:
    if out_axis is None:
        return out
    if type(out) is tuple and type(out_axis) is tuple:
        return tuple(_wrap(o, a, level, origin) for o, a in zip(out, out_axis, strict=True))
    nd = len(getattr(out, "shape", ()))
    if not isinstance(out_axis, int) or not -nd <= out_axis < nd:
        raise FuncgradValueError(
            f"the batching rule of {origin!r} returned out_axis {out_axis!r} for a result of "
            f"shape {tuple(getattr(out, 'shape', ()))}: it must be an axis of the result "
            "(or None)"
        )
    return batched(out, out_axis % nd, level, origin)


def example(x: Any, level: Level, b: int) -> Any:
    """Example ``b`` of ``x`` at ``level`` (``x`` itself where it is not mapped there)."""
    if type(x) in (list, tuple):
        return type(x)(example(e, level, b) for e in x)
    v, ax = unbatched(x, level)
    return x if ax is None else at_axis(v, ax, b)


def _loop(prim: Any, args: tuple, kwargs: dict, level: Level, warn: bool = True,
          case: bool = False) -> Any:
    """The correct, slow way: one call per example, the results stacked (axis 0)."""
    name = getattr(prim, "name", getattr(prim, "__name__", repr(prim)))
    if warn:
        what = ("has no batching rule for these arguments" if case else
                "has no batching rule")
        warnings.warn(
            f"primitive {name!r} {what}: fg.vmap runs it once per example "
            f"({level.size} calls); give it one with fg.defbatch",
            VmapFallbackWarning, stacklevel=4,
        )
    outs = []
    for b in range(level.size):
        ex_args = [example(a, level, b) for a in args]
        ex_kw = {k: example(v, level, b) for k, v in kwargs.items()}
        outs.append(prim(*ex_args, **ex_kw))
    return stack_results(outs, level, repr(name))


def stack_results(outs: list, level: Level, name: str = "a primitive") -> Any:

    first = outs[0]
    if type(first) is tuple or hasattr(first, "_fields"):
        return _rebuild(first, [stack_results([o[k] for o in outs], level, name)
                                for k in range(len(first))])
    shapes = {tuple(getattr(o, "shape", ())) for o in outs}
    if len(shapes) > 1:
        raise FuncgradValueError(
            f"vmap: {name}'s results have different shapes for different examples "
            f"({sorted(shapes)}): a mapped function must give every example results of one "
            "shape (a boolean mask picks a different count per example: use fnp.where)"
        )
    return batched(_s.stack(outs), 0, level, name.strip("'"))


# -- the namespace of batched values: what raw code in rules calls ----------------

_REDUCERS = frozenset({"sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean",
                       "nansum", "nanmax", "nanmin", "count_nonzero"})


class BatchNamespace:
    """The array namespace of batched values (what ``xp_of(x)`` gives for one).

    A function called without batched arguments is the underlying namespace's
    (``xp.zeros(shape)``: the same for every example).  With batched ones:
    NumPy's ufuncs (comparisons, ``isfinite``...) broadcast over the batch,
    reductions shift their axes, ``asarray`` passes the value through, the
    ``*_like`` constructors build one example, and anything else loops over
    the examples.
    """

    def __init__(self, xp: Any, path: str = ""):
        self.xp = self.over = xp
        self.path = path  # "linalg." for xp.linalg

    def __repr__(self) -> str:
        return f"<batched namespace over {getattr(self.xp, '__name__', self.xp)!r}>"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        base = getattr(self.xp, name)
        if isinstance(base, types.ModuleType):  # xp.linalg, xp.fft: batched too
            sub = BatchNamespace(base, f"{self.path}{name}.")
            object.__setattr__(self, name, sub)
            return sub
        if not callable(base) or isinstance(base, type):
            return base
        path = self.path + name

        def call(*args: Any, **kwargs: Any) -> Any:
            level = _newest_level(args, kwargs)
            if level is None:
                return base(*args, **kwargs)
            return _namespace_call(path, args, kwargs, level)

        call.__name__ = name
        object.__setattr__(self, name, call)  # found once
        return call


def _namespace_call(name: str, args: tuple, kwargs: dict, level: Level) -> Any:
    """``xp.<name>(*args, **kwargs)`` with batched arguments at ``level`` (see
    :class:`BatchNamespace`): a few functions by name, the rest by kind."""
    return _BY_NAME.get(name, _mapped_call)(name, args, kwargs, level)


def _mapped_call(name: str, args: tuple, kwargs: dict, level: Level) -> Any:
    """A ufunc broadcast over the batch, a reduction with its axes shifted, else the loop."""
    vals, axes, seq = _unwrap_all(args, level)
    fn = _NamespaceFunction(name)
    if not (seq or _kwargs_batched(kwargs, level)):
        if _is_ufunc(name) and kwargs.keys() <= {"dtype"}:
            return batched(fn(*_broadcast(vals, axes, level), **kwargs), 0, level, name)
        if name in _REDUCERS and len(args) == 1 and axes[0] is not None:
            return _reduce_call(fn, vals[0], axes[0], kwargs, level)
    return _loop(fn, args, kwargs, level, warn=False)


def _is_ufunc(name: str) -> bool:
    return "." not in name and isinstance(getattr(numpy, name, None), numpy.ufunc)


def _leading_call(name: str, args: tuple, kwargs: dict, level: Level) -> Any:
    """A function of stacks of matrices, on a batch of them: the batch axis in front
    (NumPy's linalg maps over leading axes already)."""
    if not args or any(unbatched(a, level)[1] is not None for a in args[1:]):
        return _mapped_call(name, args, kwargs, level)
    v, ax = unbatched(args[0], level)
    out = _NamespaceFunction(name)(_to_front(v, ax), *args[1:], **kwargs)
    if isinstance(out, tuple):
        return _rebuild(out, [batched(o, 0, level) for o in out])
    return batched(out, 0, level)


def _as_array_call(name: str, args: tuple, kwargs: dict, level: Level) -> Any:
    """``asarray(x)`` of a batched ``x``: ``x`` itself (or cast to the dtype asked for)."""
    first = args[0] if args else None
    if type(first) not in _CLASSES_SET:
        return _mapped_call(name, args, kwargs, level)
    dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
    return first if dtype is None or dtype == first.dtype else first.astype(dtype)


def _like_call(name: str, args: tuple, kwargs: dict, level: Level) -> Any:
    """``zeros_like(x)`` and its kin of a batched ``x``: one example's."""
    if len(args) != 1:
        return _mapped_call(name, args, kwargs, level)
    first = args[0]
    xp = backend.namespace(innermost_raw(first))
    return getattr(xp, _LIKE[name])(first.shape, kwargs.get("dtype") or first.dtype)


_LIKE = {"zeros_like": "zeros", "ones_like": "ones", "empty_like": "empty"}
_BY_NAME = {
    **dict.fromkeys(("linalg.det", "linalg.slogdet", "linalg.inv", "linalg.cholesky",
                     "linalg.eigh", "linalg.eigvalsh", "linalg.eig", "linalg.eigvals",
                     "linalg.svd", "linalg.qr", "linalg.pinv", "linalg.matrix_power"),
                    _leading_call),
    **dict.fromkeys(("asarray", "array", "ascontiguousarray"), _as_array_call),
    **dict.fromkeys(_LIKE, _like_call),
}


def _rebuild(like: tuple, parts: list) -> tuple:
    """``parts`` as a tuple of ``like``'s type (a namedtuple stays one)."""
    return type(like)(*parts) if hasattr(like, "_fields") else tuple(parts)


def _reduce_call(fn: _NamespaceFunction, v: Any, ax: int, kwargs: dict, level: Level) -> Any:
    """A reduction of one batched array: the batch axis in front, the others shifted."""
    v = _to_front(v, ax)
    nd = len(v.shape) - 1
    axis = kwargs.get("axis")
    kw = dict(kwargs)
    kw["axis"] = (tuple(range(1, nd + 1)) if axis is None else
                  tuple(a % nd + 1 for a in axis) if isinstance(axis, tuple) else
                  axis % nd + 1)
    return batched(fn(v, **kw), 0, level, fn.name)


_FNP_NAMES = {"max": "amax", "min": "amin"}


class _NamespaceFunction:
    """``xp.<name>`` of its arguments' namespace, called once per example by the loop
    (``name`` may be dotted: ``linalg.slogdet``)."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        vals = [a.value if type(a) is Node else a for a in _flat(args, kwargs)]
        if any(type(a) is Node for a in _flat(args, kwargs)):
            # a value of an outer gradient: the function of funcgrad.numpy of that name
            # (differentiable where it is, data where it is data)

            fn = fnp
            for part in _FNP_NAMES.get(self.name, self.name).split("."):
                fn = getattr(fn, part, None)
            if fn is not None:
                return fn(*args, **kwargs)
        fn = backend.namespace(*vals)
        for part in self.name.split("."):
            fn = getattr(fn, part)
        return fn(*args, **kwargs)


def _to_front(v: Any, axis: int) -> Any:
    if axis == 0:
        return v

    return _s.moveaxis(v, axis, 0)


def _broadcast(vals: list, axes: list, level: Level) -> list:
    """Arguments of an elementwise function: batch axes in front, ranks aligned."""

    nd = 0
    for v, ax in zip(vals, axes, strict=True):
        n = len(getattr(v, "shape", ()))
        nd = max(nd, n - 1 if ax is not None else n)
    out = []
    for v, ax in zip(vals, axes, strict=True):
        if ax is None:
            out.append(v)
            continue
        v = _to_front(v, ax)
        shape = tuple(v.shape)
        k = nd - (len(shape) - 1)
        out.append(_s.reshape(v, shape[:1] + (1,) * k + shape[1:]) if k else v)
    return out


__all__ = [
    "BatchNamespace",
    "Batched",
    "Level",
    "batched",
    "innermost",
    "run",
    "running",
    "unbatched",
]
