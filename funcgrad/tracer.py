"""Recording arrays: what :func:`fg.replay <funcgrad.replay>` traces a function with (layer 6).

A :class:`Traced` wraps one raw array -- NumPy, CuPy, the stand-in device, any
registered namespace -- and records every computation made with it on a
:class:`Tape`, as one *step*: the function called, its arguments with each
traced array replaced by a :class:`Slot`, and the slot of each result.  Every
road raw data takes passes through it:

- primitives, through the runner it registers with :mod:`funcgrad.primitive`
  (one step per primitive, calling exactly what an eager call calls:
  ``numpy_impl`` on NumPy data, ``impl`` elsewhere);
- its array namespace -- a Traced is registered as a namespace of its own, so
  ``xp_of(x).ones(...)``, the seeds, zeros and masks of the rules record;
- Python operators (the folds' gradient sums, ``+=`` included), methods,
  indexing, and NumPy's ufuncs and functions (``__array_ufunc__``,
  ``__array_function__``).

Where traced data reaches Python -- ``bool()``, ``int()``, ``float()``,
``operator.index``, ``.item()``, ``.tolist()``, the shape of a result that
depends on data (boolean masks, integer counts) -- the value is recorded as a
*guard*, which a replay recomputes and compares.  Where it reaches Python in a
way no guard can capture (``repr``/``print``, ``numpy.asarray`` of a traced
value, pickling) the trace stops with :class:`ReplayError`, or, when the tape
allows it, is marked unreplayable and finishes eagerly.

>>> import numpy
>>> tape = Tape()
>>> x = tape.input(numpy.array([1.0, -2.0]))
>>> with tape.active():
...     y = (x * x).sum()
...     positive = bool(y > 0)
>>> [entry.name for entry in tape.entries]
['*', '.sum', '>', 'bool']
"""

from __future__ import annotations

import math
import operator
import os
import sys
import types
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, NamedTuple

import numpy

from . import backend
from .backend import NUMPY_TYPES
from .errors import ReplayError
from .node import Node
from .primitive import Primitive


class Eqn(NamedTuple):
    """One recorded step: ``fn(*args, **kwargs)``, its results filling ``outputs``.

    ``args`` and ``kwargs`` are templates: the arguments as given, a
    :class:`Slot` where a traced value was.  ``outputs`` is always a tuple of
    slot numbers: ``(k,)`` for a step that made one array, ``()`` for one that
    made none; for a step whose result is a sequence (``unpack``), one entry per
    item, None where an item is no new array.  An ``effect`` (an in-place update,
    a draw) is kept even when nothing reads its results.

    >>> step = Eqn(operator.mul, (Slot(0), 2.0), None, (1,), "*")
    >>> step.args, step.outputs, step.effect
    ((%0, 2.0), (1,), False)
    """

    fn: Callable
    args: tuple
    kwargs: dict | None
    outputs: tuple
    name: str
    effect: bool = False
    unpack: bool = False


class Guard(NamedTuple):
    """A value that traced data gave Python: ``check(value of slot) == expected`` held.

    ``where`` is the ``file:line`` of the code that read it.

    >>> Guard(operator.truth, 3, True, "bool", "loss.py:12").expected
    True
    """

    check: Callable
    slot: int
    expected: Any
    name: str
    where: str


_new = tuple.__new__  # builds a record from one tuple of its fields, in C


class Slot(float):
    """The place of one traced value in a template: ``Slot(k)`` is slot ``k``.

    A float subclass with no slots of its own (40 bytes: an int subclass takes 48).  It
    equals its number and hashes as it does, so dicts may key slots by either; it is told
    from a constant of a template by its type alone (always ``type(x) is Slot``); ``k``
    is its number as a plain int (to index a list with); ``outputs`` the ``(k,)`` of the
    steps that fill it.  A plain step's row names the slots it reads near it by a shared
    :class:`Back` instead (see :class:`Tape`): a long trace keeps no object per slot.

    >>> s = Slot(3)
    >>> s, s.k, s == 3, type(s) is Slot, type(3.0) is Slot
    (%3, 3, True, True, False)
    """

    __slots__ = ()

    k = property(int)

    @property
    def outputs(self) -> tuple:
        return (int(self),)

    def __repr__(self) -> str:
        return f"%{int(self)}"

    def __reduce__(self) -> tuple:
        return (Slot, (int(self),))


class Back(int):
    """A traced argument in a plain step's row (see :class:`Tape`): the slot ``d`` before
    the one the step makes (``made - d`` is that slot, a plain int).  One is made for each
    ``d`` below :data:`NEAR`, at import: most arguments are made a few steps before they
    are read, so a row holds no object of its own for them.  An argument made further
    back is its :class:`Slot` instead, one per slot (see :func:`ref`).

    >>> back(3) is back(3), back(3) == 3, type(back(3)) is Back, 10 - back(3)
    (True, True, True, 7)
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"back({int(self)})"

    def __reduce__(self) -> tuple:
        return (back, (int(self),))


NEAR = 1024
_NEAR = [Back(d) for d in range(NEAR)]


def back(d: int) -> Back:
    """The shared Back of distance ``d`` (``0 <= d < NEAR``)."""
    return _NEAR[d]


def ref(tape: Tape, made: int, k: int) -> Back | Slot:
    """How the row of a plain step making slot ``made`` names slot ``k``, an argument:
    a shared Back if ``k`` is near, else ``k``'s Slot, made once for the tape."""
    d = made - k
    if 0 < d < NEAR:  # (never 0 or less: were it, its Slot is right)
        return _NEAR[d]
    far = tape.far
    s = far.get(k)
    if s is None:
        s = far[k] = Slot(k)
    return s


def decode(records: list, start: int = 0, stop: int | None = None,
           prev: int = 0) -> list[Eqn | Guard]:
    """The records of a tape's flat ``records`` (see :class:`Tape`), as Eqn and Guard:
    those beginning from offset ``start`` (where one begins) before ``stop``; ``prev``
    is the slot made by the last plain step before ``start`` (0 if none).

    A plain step (one array made, no effect) lies in a row of cells: ``head, arg_1 ...
    arg_n, kwargs, step``, its ``head`` the tuple ``(n, fn, name)`` shared by every step
    alike (``~n`` and no kwargs cell when it has no keywords).  It makes slot ``prev +
    step``, ``prev`` the slot the plain step before it made; an argument that is a
    :class:`Back` ``d`` reads slot ``made - d``.  :meth:`Tape.result` writes ``n, fn,
    arg_1 ... arg_n, kwargs, outputs, name``.  Any other record (a Guard; an Eqn with an
    effect, unpacked results, or made elsewhere) is itself, in one cell.
    """
    out: list = []
    append = out.append
    i, end = start, len(records) if stop is None else stop
    new = _new
    while i < end:
        o = records[i]
        t = type(o)
        if t is tuple:  # (n, fn, name), arg_1 ... arg_n, [kwargs,] step
            m, fn, name = o
            j = i + 1 + (m if m >= 0 else ~m)
            kwargs, step = (records[j], records[j + 1]) if m >= 0 else (None, records[j])
            made = prev = prev + step
            args = tuple(Slot(made - a) if type(a) is Back else a for a in records[i + 1:j])
            outputs = (made,)
            i = j + 2 if m >= 0 else j + 1
        elif t is int:  # n, fn, arg_1 ... arg_n, kwargs, outputs, name
            j = i + 2 + o
            fn, args, kwargs, outputs, name = (records[i + 1], tuple(records[i + 2:j]),
                                               records[j], records[j + 1], records[j + 2])
            i = j + 3
        else:  # a record in one cell
            append(o)
            i += 1
            continue
        append(new(Eqn, (fn, args, kwargs, outputs, name, False, False)))
    return out


_TAPE: ContextVar[Tape | None] = ContextVar("funcgrad_replay_tape", default=None)
_HERE = os.path.dirname(os.path.abspath(__file__))


def caller() -> str:
    """``file:line`` of the innermost frame outside funcgrad (where user code asked)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(_HERE) and not name.startswith("<funcgrad"):
            return f"{os.path.basename(name)}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


class Tape:
    """The steps of one trace, in order, and the slots they fill.

    Slots ``0..n_inputs-1`` are the inputs (:meth:`input`); every traced
    result takes the next one.  ``meta[k]`` is slot ``k``'s ``(shape, dtype)``,
    for display.  ``fallback`` says what a step no guard can capture does:
    raise :class:`ReplayError` (False) or mark the tape ``tainted`` and go on.
    """

    __slots__ = ("__weakref__", "fallback", "far", "inputs", "last", "meta", "open", "owned",
                 "prev", "records", "tainted")

    def __init__(self, fallback: bool = False):
        # The steps, flat (see decode): a plain step (neither effect nor unpack) as a
        # shared head, its arguments and the step from the slot the plain step before
        # made to its own, in a row; any other record (a Guard, an Eqn with effect or
        # unpack) as itself, in one cell.  No tuple per step, and no object per slot: a
        # row names the slots it reads by their distance back (see Back), mostly a
        # shared one.  ``entries`` reads them as records.
        self.records: list = []
        self.prev = 0  # the slot the last plain step made (see decode)
        self.far: dict[int, Slot] = {}  # the Slot of each slot a row names from far (see ref)
        self.meta: list[tuple] = []  # (shape, dtype) of each slot: len(meta) slots so far
        self.last: tuple = ((), None)  # the (shape, dtype) pair met last: most slots share it
        self.inputs: list = []
        self.owned: frozenset | bool | None = None  # see _may_share_an_input
        self.open = True
        self.fallback = fallback
        self.tainted: str | None = None

    @property
    def entries(self) -> tuple[Eqn | Guard, ...]:
        """The steps recorded so far, in order, as :class:`Eqn` and :class:`Guard` records
        (read anew at each call, a tuple: steps are recorded with :meth:`record`)."""
        return tuple(decode(self.records))

    def record(self, entry: Eqn | Guard) -> None:
        """Append one record (an Eqn or a Guard) to the steps."""
        self.records.append(entry)

    # -- slots ------------------------------------------------------------------
    @property
    def n(self) -> int:
        """The number of slots so far."""
        return len(self.meta)

    def new(self, v: Any) -> Traced:
        """A Traced holding ``v`` (a raw array) in the next slot."""
        return _wrap(self, v)

    def input(self, v: Any) -> Traced:
        """The next input slot, holding the caller's array ``v`` (or Python float)."""
        if self.n != len(self.inputs):
            raise RuntimeError("inputs come before every step")
        self.inputs.append(v)
        self.owned = None
        if type(v) is float:
            return _number(self, v)
        return self.new(v)

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    def active(self) -> _Active:
        """Within the block, namespace calls without a traced argument record here."""
        return _Active(self)

    # -- steps ------------------------------------------------------------------
    def call(self, fn: Callable, args: tuple, kwargs: dict | None, name: str,
             check_shape: bool = False) -> Any:
        """Call ``fn`` on the raw values of ``args``; record it; return its result, traced."""
        raws, targs = split_args(args, self)
        if kwargs:
            rkw, tkw = split_kwargs(kwargs, self)
            value = fn(*raws, **rkw)
            effect = "out" in kwargs and kwargs["out"] is not None
            if effect:
                self._check_target(kwargs["out"], name)
        else:
            value = fn(*raws)
            tkw = None
            effect = False
        return self.result(fn, targs, tkw, value, name, check_shape, effect)

    def result(self, fn, targs, tkw, value, name, check_shape=False, effect=False) -> Any:
        """Record the step that computed ``value``; ``value`` with its arrays traced."""
        if not self.open:
            raise ReplayError(_closed_message())
        t = type(value)
        if t in _TRACED:  # the function returned a traced value itself: no new step
            return value
        if is_array_type(t):
            return emit(self, fn, targs, tkw, value, name, check_shape, effect)
        if isinstance(value, (tuple, list)) and value:
            return self._results(fn, targs, tkw, value, name, check_shape, effect)
        if value is None:
            if effect or _holds_slot(targs) or _holds_slot(tkw):
                self.records.append(_new(Eqn, (fn, targs, tkw, (), name, True, False)))
            return None
        if not (_holds_slot(targs) or _holds_slot(tkw)):
            return value  # made from constants alone
        if t is float:  # a Python float made from traced data: traced itself, like the input
            self.records += (len(targs), fn, *targs, tkw, (len(self.meta),), name)
            return _number(self, value)
        if t in _PY_SCALARS:
            # A Python number computed from traced data: recomputed and compared.
            slot = len(self.meta)
            self.meta.append(((), t.__name__))
            self.records += (len(targs), fn, *targs, tkw, (slot,), name)
            self.records.append(Guard(_SAME, slot, value, name, caller()))
            return value
        if isinstance(value, (numpy.dtype, type)):
            return value  # metadata
        self.escape(f"{name} (returning a {t.__name__} made from traced data)")
        return value

    def _results(self, fn, targs, tkw, value, name, check_shape, effect):
        outs = []
        items = []
        for v in value:
            tv = type(v)
            if tv in _TRACED:
                items.append(v)
                outs.append(None)
            elif is_array_type(tv):
                tr = self.new(v)
                items.append(tr)
                outs.append(tr.slot)
            elif tv in _PY_SCALARS or isinstance(v, (tuple, list)):
                if _holds_slot(targs) or _holds_slot(tkw):
                    raise ReplayError(
                        f"fg.replay: {name} returned Python data computed from traced values "
                        f"inside a {type(value).__name__}; a plan cannot guard it")
                items.append(v)
                outs.append(None)
            else:
                items.append(v)
                outs.append(None)
        if any(o is not None for o in outs) or effect:
            self.records.append(Eqn(fn, targs, tkw, tuple(outs), name, effect, unpack=True))
            if check_shape:
                for o, v in zip(outs, value, strict=True):
                    if o is not None:
                        self.records.append(Guard(_SHAPE, o, v.shape, name, caller()))
        if isinstance(value, list):
            return items
        if type(value) is tuple:
            return tuple(items)
        if hasattr(value, "_fields"):  # a named tuple (NumPy's EighResult...)
            return type(value)(*items)
        return type(value)(items)

    def guard(self, check: Callable, traced: Traced, value: Any, name: str) -> Any:
        """Record that ``check(traced) == value`` held; return ``value``."""
        if not self.open:
            raise ReplayError(_closed_message())
        self.records.append(Guard(check, traced.slot, value, name, caller()))
        return value

    def escape(self, what: str) -> None:
        """Traced data reached Python where no guard can follow it: raise, or taint."""
        if not self.open:
            raise ReplayError(_closed_message())
        where = caller()
        if self.fallback:
            self.tainted = self.tainted or f"{what} at {where}"
            return
        raise ReplayError(
            f"fg.replay: {what} at {where} reads a traced value for Python itself, which a "
            "replay cannot redo (it would keep this call's numbers forever). Compute with "
            "funcgrad.numpy functions, move the Python side effect out of the function, or "
            "pass fallback=True to fg.replay to run such calls eagerly"
        )

    def _check_target(self, target: Any, name: str) -> None:
        """An in-place update must write to an array the function made itself."""
        targets = target if isinstance(target, tuple) else (target,)
        for t in targets:
            if t is None:
                continue
            if type(t) not in _TRACED:
                raise ReplayError(
                    f"fg.replay: {name} updates in place an array that is not traced (a "
                    f"constant of the plan) at {caller()}; update arrays the function makes")
            if t.k < len(self.inputs) or _may_share_an_input(t.v, self):
                raise ReplayError(
                    f"fg.replay: {name} updates an argument of the function in place at "
                    f"{caller()}; a replay cannot undo that if it has to trace again: "
                    "update a copy")


class _Active:
    """``Tape.active()``'s block: a class, cheaper than a generator's context manager."""

    __slots__ = ("tape", "token")

    def __init__(self, tape: Tape):
        self.tape = tape

    def __enter__(self) -> Tape:
        self.token = _TAPE.set(self.tape)
        return self.tape

    def __exit__(self, *exc: object) -> None:
        _TAPE.reset(self.token)


def _may_share_an_input(v: Any, tape: Tape) -> bool:
    """Whether the raw array ``v`` may share memory with a NumPy input of ``tape``.  Two
    arrays that each own their data (``base`` None) and are not one share none: the
    common case (a sum the fold updates in place) is spared ``numpy.may_share_memory``."""
    if type(v) is not numpy.ndarray:
        return False
    owned = tape.owned
    if owned is None:
        owned = tape.owned = _owned(tape.inputs)
    if v.base is None and owned is not False and _address(v) not in owned:
        return False
    return any(type(i) is numpy.ndarray and numpy.may_share_memory(v, i) for i in tape.inputs)


def _owned(inputs: list) -> frozenset | bool:
    """The addresses of the NumPy arrays among ``inputs`` when each owns its data, else
    False."""
    arrays = [i for i in inputs if type(i) is numpy.ndarray]
    if all(i.base is None for i in arrays):
        return frozenset(_address(i) for i in arrays)
    return False


_address = object.__hash__  # id() without its audit event: see funcgrad.reads


def _closed_message() -> str:
    return ("fg.replay: a traced value was used after its trace ended (it was stored by a side "
            "effect of the traced function); return it instead")


# -- templates: arguments with traced arrays replaced by slots --------------------


def split_args(args: tuple, tape: Tape) -> tuple[list, tuple]:
    """The raw values of ``args`` and their template (lists are copied: a snapshot)."""
    raws = list(args)
    tmpl = None
    for i, a in enumerate(args):
        t = type(a)
        if t in _TRACED:
            if a.tape is not tape:
                raise ReplayError(_foreign_message(a))
            raws[i] = a.v
            if tmpl is None:
                tmpl = list(args)
            tmpl[i] = a.mark
        elif t is list or t is tuple or t is slice or t is dict:
            r, m = _deep(a, tape)
            raws[i] = r
            if m is not a:
                if tmpl is None:
                    tmpl = list(args)
                tmpl[i] = m
    return raws, args if tmpl is None else tuple(tmpl)


def split_kwargs(kwargs: dict, tape: Tape) -> tuple[dict, dict]:
    raw, tmpl = _deep(kwargs, tape)
    return raw, tmpl


def _deep(obj: Any, tape: Tape) -> tuple[Any, Any]:
    """``(raw, template)`` of a nested argument; lists and dicts are always copied."""
    t = type(obj)
    if t in _TRACED:
        if obj.tape is not tape:
            raise ReplayError(_foreign_message(obj))
        return obj.v, obj.mark
    if t is list or t is tuple:
        pairs = [_deep(o, tape) for o in obj]
        raw = t(r for r, _ in pairs)
        if t is tuple and _unchanged(pairs, obj):
            return raw, obj
        return raw, t(m for _, m in pairs)
    if t is dict:
        pairs = {k: _deep(v, tape) for k, v in obj.items()}
        return {k: r for k, (r, _) in pairs.items()}, {k: m for k, (_, m) in pairs.items()}
    if t is slice:
        bounds = (obj.start, obj.stop, obj.step)
        pairs = [_deep(p, tape) for p in bounds]
        if _unchanged(pairs, bounds):
            return obj, obj
        return slice(*(r for r, _ in pairs)), slice(*(m for _, m in pairs))
    return obj, obj


def _unchanged(pairs: list, items: tuple) -> bool:
    """Whether every template of ``pairs`` is its item itself (no traced value inside)."""
    return all(m is o for (_, m), o in zip(pairs, items, strict=True))


def _holds_slot(tmpl: Any) -> bool:
    t = type(tmpl)
    if t is Slot:
        return True
    if t is tuple or t is list:
        return any(_holds_slot(o) for o in tmpl)
    if t is dict:
        return any(_holds_slot(o) for o in tmpl.values())
    if t is slice:
        return any(_holds_slot(o) for o in (tmpl.start, tmpl.stop, tmpl.step))
    return False


def _foreign_message(t: Traced) -> str:
    if not t.tape.open:
        return _closed_message()
    return "fg.replay: a traced value of one call was used by the trace of another"


def _suspect(obj: Any, ints: bool = True, in_slice: bool = False) -> bool:
    """Whether ``obj`` holds data that can decide a result's shape: a boolean (or, with
    ``ints``, integer) traced array, or a traced bound of a slice."""
    t = type(obj)
    if t in _TRACED:
        return in_slice or obj.dtype.kind in ("biu" if ints else "b")
    if t is tuple or t is list:
        for o in obj:
            if _suspect(o, ints, in_slice):
                return True
    elif t is dict:
        for o in obj.values():
            if _suspect(o, ints, in_slice):
                return True
    elif t is slice:
        return (_suspect(obj.start, ints, True) or _suspect(obj.stop, ints, True)
                or _suspect(obj.step, ints, True))
    return False


# -- checks that guards recompute ----------------------------------------------------


def _shape(v: Any) -> tuple:
    return v.shape


def _same(v: Any) -> Any:
    return v


_SHAPE = _shape
_SAME = _same
_PY_SCALARS = frozenset({bool, int, float, complex})


def _item(v: Any) -> Any:
    return v.item()


def _tolist(v: Any) -> Any:
    return v.tolist()


# -- the Traced array types ------------------------------------------------------------

# Functions whose result depends only on shapes and dtypes: answered, never recorded.
METADATA = frozenset({
    "shape", "ndim", "size", "result_type", "iscomplexobj", "isrealobj", "isscalar",
    "can_cast", "min_scalar_type", "promote_types", "issubdtype", "broadcast_shapes",
    "may_share_memory", "shares_memory", "get_array_module", "get_printoptions",
    "errstate", "iinfo", "finfo", "dtype", "common_type", "ndarray",
})
# Functions whose result's shape depends on the values of their data, whatever its dtype
# (a float array's unique values, its nonzero entries, the bins of its histogram): their
# shapes are guarded.  Shapes that integer or boolean data decides (counts, indices,
# masks) are guarded wherever such data goes (see _suspect).
DATA_SHAPED = frozenset({
    "unique", "unique_values", "unique_counts", "unique_inverse", "unique_all", "nonzero",
    "flatnonzero", "argwhere", "compress", "extract", "trim_zeros", "setdiff1d",
    "intersect1d", "union1d", "setxor1d", "histogram", "histogram_bin_edges", "histogramdd",
    "histogram2d", "roots",
})


def _data_shaped(name: str, args: tuple) -> bool:
    """Whether a call of ``name`` on ``args`` makes a shape from data: one of DATA_SHAPED,
    or ``where`` given its condition alone (which is ``nonzero``)."""
    return name in DATA_SHAPED or (name == "where" and len(args) == 1)


# Methods that change their array in place.
_IN_PLACE_METHODS = frozenset({"fill", "sort", "resize", "put", "itemset", "partition",
                               "setfield", "setflags", "byteswap"})


def _elementwise(fn: Any) -> bool:
    """A ufunc (NumPy's or CuPy's): its result has the broadcast shape of its inputs."""
    return type(fn) is numpy.ufunc or (hasattr(fn, "nin") and hasattr(fn, "nout"))


class Traced:
    """A raw array under trace: every computation with it becomes a step of its tape."""

    # ``shape`` and ``dtype`` are static (part of the signature): plain attributes.
    __slots__ = ("dtype", "k", "shape", "tape", "v")  # k: its slot's number
    __array_priority__ = 1000

    slot = property(lambda self: self.k)
    mark = property(lambda self: Slot(self.k))  # its slot, for a template

    ndim = property(lambda self: self.v.ndim)
    size = property(lambda self: self.v.size)

    def __len__(self) -> int:
        return len(self.v)

    def __iter__(self):
        return (self[i] for i in range(len(self.v)))

    @property
    def T(self) -> Any:
        return self.tape.call(_T, (self,), None, ".T")

    @property
    def mT(self) -> Any:
        return self.tape.call(_MT, (self,), None, ".mT")

    # -- data reaching Python: guards ----------------------------------------------
    def __bool__(self) -> bool:
        return self.tape.guard(operator.truth, self, bool(self.v), "bool")

    def __int__(self) -> int:
        return self.tape.guard(int, self, int(self.v), "int")

    def __float__(self) -> float:
        return self.tape.guard(float, self, float(self.v), "float")

    def __complex__(self) -> complex:
        return self.tape.guard(complex, self, complex(self.v), "complex")

    def __index__(self) -> int:
        return self.tape.guard(operator.index, self, operator.index(self.v), "index")

    def __contains__(self, item: Any) -> bool:
        return bool((self == item).any())

    # -- ... and where no guard can follow: escapes ------------------------------------
    def __array__(self, dtype=None, copy=None):
        self.tape.escape("numpy.asarray() (or a NumPy conversion) of a traced value")
        return numpy.asarray(self.v, dtype=dtype)

    def __repr__(self) -> str:
        if not self.tape.open:
            return f"<traced value of a finished fg.replay trace, shape {self.shape}>"
        self.tape.escape("repr() or print() of a traced value")
        return repr(self.v)

    def __str__(self) -> str:
        self.tape.escape("str() or print() of a traced value")
        return str(self.v)

    def __format__(self, spec: str) -> str:
        self.tape.escape("formatting a traced value")
        return format(self.v, spec)

    def __reduce_ex__(self, protocol):
        raise ReplayError("fg.replay: a traced value cannot be pickled")

    def __copy__(self) -> Any:
        return self.tape.call(_copy, (self,), None, "copy")

    def __deepcopy__(self, memo: dict) -> Any:
        return self.__copy__()

    __hash__ = None  # arrays are unhashable

    # -- NumPy's protocols ---------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(_owns_operators(type(a)) for a in inputs):
            return NotImplemented  # the Node's own hook records it
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        if method == "at":  # numpy.add.at(a, index, b): in place
            self.tape._check_target(inputs[0], name)
            return _record_effect(self.tape, fn, inputs, kwargs, name)
        check = method not in ("__call__", "reduce", "accumulate") and _suspect(inputs)
        return self.tape.call(fn, inputs, kwargs, name, check)

    def __array_function__(self, func, types_, args, kwargs):
        if any(_owns_operators(t) for t in types_):
            return NotImplemented
        name = func.__name__
        if name in METADATA:
            return func(*split_args(args, self.tape)[0], **split_kwargs(kwargs, self.tape)[0])
        return self.tape.call(func, args, kwargs, name,
                              _data_shaped(name, args) or _suspect(args) or _suspect(kwargs))


def _record_effect(tape: Tape, fn, args, kwargs, name):
    raws, targs = split_args(args, tape)
    rkw, tkw = split_kwargs(kwargs, tape) if kwargs else ({}, None)
    value = fn(*raws, **rkw)
    return tape.result(fn, targs, tkw, value, name, effect=True)


_T = operator.attrgetter("T")
_MT = operator.attrgetter("mT")


def _copy(v: Any) -> Any:
    return v.copy()


# Methods and attributes of the wrapped arrays: generated for each Traced class from
# its array type (no __getattr__, which would slow every attribute of a Traced).
_ESCAPES = frozenset({"tobytes", "tostring", "tofile", "dump", "dumps", "ctypes", "data",
                      "flat", "__dlpack__", "toDlpack", "hex"})


def _method(name: str) -> Callable:
    def method(self, *args, **kwargs):
        tape = self.tape
        if name == "item":
            check = operator.methodcaller("item", *args) if args else _item
            return tape.guard(check, self, self.v.item(*args), ".item()")
        if name == "tolist":
            return tape.guard(_tolist, self, self.v.tolist(), ".tolist()")
        if name in _ESCAPES:
            tape.escape(f".{name}() of a traced value")
            return getattr(self.v, name)(*args, **kwargs)
        unbound = getattr(type(self.v), name)
        if name in _IN_PLACE_METHODS and not (name == "byteswap" and not kwargs.get(
                "inplace", args[0] if args else False)):
            tape._check_target(self, f".{name}()")
            return _record_effect(tape, unbound, (self, *args), kwargs, f".{name}")
        return tape.call(unbound, (self, *args), kwargs, f".{name}",
                         name in DATA_SHAPED or _suspect(args) or _suspect(kwargs))

    method.__name__ = method.__qualname__ = name
    return method


def _attribute(name: str) -> property:
    def get(self):
        value = getattr(self.v, name)
        if is_array_type(type(value)):  # .real, .imag, .base
            return emit(self.tape, operator.attrgetter(name), (self.mark,), None, value,
                         f".{name}")
        if name in _ESCAPES:  # a view of the data itself
            self.tape.escape(f".{name} of a traced value")
        return value  # .strides, .flags, .itemsize, .device...

    return property(get)


def _install_members(cls: type, array_types: tuple) -> None:
    """Give ``cls`` the public methods and attributes of ``array_types``."""
    names = set()
    for t in array_types:
        names.update(n for n in dir(t) if not n.startswith("_"))
    for name in sorted(names):
        if name in cls.__dict__ or name in Traced.__dict__ or name in Traced.__slots__:
            continue
        member = next(getattr(t, name) for t in array_types if hasattr(t, name))
        setattr(cls, name, _method(name) if callable(member) else _attribute(name))


def _owns_operators(t: type) -> bool:
    """Nodes and fg.vmap's batched values: their own operators record what they compute."""
    return t is Node or getattr(t, "__funcgrad_wraps__", False)


def _binary(op: Callable, symbol: str, reflected: bool = False) -> Callable:
    def method(self, other):
        t = type(other)
        tape = self.tape
        if t in _TRACED:
            if other.tape is not tape:
                raise ReplayError(_foreign_message(other))
            o, ok = other.v, other.k
        elif t in _PLAIN_OPERANDS:  # the common constants, spared the checks below
            o, ok = other, None
        elif _owns_operators(t):
            return NotImplemented  # the Node's reflected operator records it
        elif t in _CONTAINERS:
            return tape.call(op, (other, self) if reflected else (self, other), None, symbol)
        else:
            o, ok = other, None
        value = op(o, self.v) if reflected else op(self.v, o)
        if type(value) in _NUMPY_ARRAYS:
            t = _wrap(tape, value)
            k = t.k  # emit's record, inline (ref's near case too)
            a = _NEAR[d] if 0 < (d := k - self.k) < NEAR else ref(tape, k, self.k)
            b = o if ok is None else _NEAR[d] if 0 < (d := k - ok) < NEAR else ref(tape, k, ok)
            tape.records += (head(op, -3, symbol), b, a, k - tape.prev) if reflected else (
                head(op, -3, symbol), a, b, k - tape.prev)
            tape.prev = k
            return t
        a, b = Slot(self.k), o if ok is None else Slot(ok)
        return tape.result(op, (b, a) if reflected else (a, b), None, value, symbol)

    return method


_PLAIN_OPERANDS = frozenset({float, int, bool, complex, numpy.ndarray, numpy.float64,
                             numpy.float32})


def _in_place(op: Callable, symbol: str) -> Callable:
    def method(self, other):
        t = type(other)
        tape = self.tape
        if t in _TRACED and other.tape is tape:
            o, mark = other.v, Slot(other.k)
        elif t in _PLAIN_OPERANDS:
            o = mark = other
        else:
            if _owns_operators(t):
                return NotImplemented
            tape._check_target(self, symbol)
            raws, targs = split_args((self, other), tape)
            return tape.result(op, targs, None, op(*raws), symbol, effect=True)
        tape._check_target(self, symbol)
        value = op(self.v, o)
        if type(value) in _NUMPY_ARRAYS:
            return emit(tape, op, (self.mark, mark), None, value, symbol, effect=True)
        return tape.result(op, (self.mark, mark), None, value, symbol, effect=True)

    return method


def _getitem(self, index):
    check = _suspect(index, ints=False)
    return self.tape.call(operator.getitem, (self, index), None, "[]", check)


def _setitem(self, index, value):
    tape = self.tape
    tape._check_target(self, "[]=")
    raws, targs = split_args((self, index, value), tape)
    operator.setitem(*raws)
    tape.records.append(Eqn(operator.setitem, targs, None, (), "[]=", effect=True))


_OPERATORS = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
    "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^", "lshift": "<<",
    "rshift": ">>",
}
for _name, _symbol in _OPERATORS.items():
    _op = getattr(operator, _name if _name not in ("and", "or") else f"{_name}_")
    setattr(Traced, f"__{_name}__", _binary(_op, _symbol))
    setattr(Traced, f"__r{_name}__", _binary(_op, _symbol, reflected=True))
    setattr(Traced, f"__i{_name}__", _in_place(getattr(operator, f"i{_name}"), _symbol + "="))
for _name, _symbol in {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==",
                       "ne": "!="}.items():
    setattr(Traced, f"__{_name}__", _binary(getattr(operator, _name), _symbol))
def _unary(op: Callable, symbol: str) -> Callable:
    def method(self):
        tape = self.tape
        value = op(self.v)
        if type(value) in _NUMPY_ARRAYS:  # Tape.call's step, shorter
            t = _wrap(tape, value)
            k = t.k
            a = _NEAR[d] if 0 < (d := k - self.k) < NEAR else ref(tape, k, self.k)
            tape.records += (head(op, -2, symbol), a, k - tape.prev)
            tape.prev = k
            return t
        return tape.result(op, (self.mark,), None, value, symbol)

    return method


for _name, _symbol in {"neg": "-", "pos": "+", "abs": "abs", "invert": "~"}.items():
    setattr(Traced, f"__{_name}__", _unary(getattr(operator, _name), _symbol))
Traced.__getitem__ = _getitem
Traced.__setitem__ = _setitem
Traced.__divmod__ = _binary(divmod, "divmod")


# One Traced class per namespace of the arrays it wraps, each registered as a
# namespace of its own (a recording one) beside the wrapped type's.
_CLASSES: dict[type, type] = {}
_TRACED: set[type] = set()


def is_array_type(t: type) -> bool:
    """Whether values of type ``t`` are raw arrays (of a registered namespace)."""
    return t in _NUMPY_ARRAYS or (t not in _TRACED and backend.lookup(t) is not None)


_NUMPY_ARRAYS = backend.NUMPY_ARRAY_TYPES  # ndarray and the NumPy scalar types


def traced_class(t: type) -> type:
    """The Traced class for raw arrays of type ``t`` (made and registered once)."""
    cls = _CLASSES.get(t)
    if cls is not None:
        return cls
    entry = backend.lookup(t)
    if entry is None or t in _TRACED:
        raise ReplayError(f"fg.replay: cannot trace a value of type {t.__name__}")
    for known, made in list(_CLASSES.items()):  # one class per namespace
        if backend.lookup(known) is entry:
            _CLASSES[t] = made
            return made
    name = "Traced" + ("" if entry.xp is numpy else "_" + getattr(entry.xp, "__name__", t.__name__))
    cls = type(name.replace(".", "_"), (Traced,), {"__slots__": ()})
    _install_members(cls, (numpy.ndarray, numpy.float64) if entry.xp is numpy else (t,))
    recorder = Recorder(entry.xp)
    backend.register_namespace(
        cls, recorder, lambda a, e=entry: e.device(a.v),
        absorbs_numpy=entry.xp is numpy or entry.absorbs_numpy,
        to_host=_to_host_of(entry), as_array=_as_array, run=_run_primitive,
    )
    _TRACED.add(cls)
    _CLASSES[t] = cls
    return cls


def _to_host_of(entry: Any) -> Callable:
    move = entry.to_host if entry.to_host is not None else numpy.asarray

    def to_host(a: Traced) -> Any:
        return a.tape.call(move, (a,), None, "to_host")

    return to_host


def _as_array(a: Traced) -> Any:
    if isinstance(a.v, numpy.generic):
        return a.tape.call(numpy.asarray, (a,), None, "asarray")
    return a


class TracedNumber(Traced):
    """A Python float under trace (an argument, or computed from one): dynamic, as in JAX.

    Its raw value stays a Python float, so that NumPy promotes it as it promotes
    the float of an eager call (a weak scalar: ``float32_array * lr`` stays
    float32); arithmetic and ``funcgrad.numpy`` functions record steps, and
    what reads it for Python (``bool``, ``int``, ``float``, ``round``...) is a guard.
    """

    __slots__ = ()

    real = property(lambda self: self.tape.call(_REAL, (self,), None, ".real"))
    imag = property(lambda self: self.tape.call(_IMAG, (self,), None, ".imag"))

    def __round__(self, ndigits=None):
        args = (self,) if ndigits is None else (self, ndigits)
        return self.tape.call(round, args, None, "round")

    def __trunc__(self):
        return self.tape.call(math.trunc, (self,), None, "trunc")

    def __floor__(self):
        return self.tape.call(math.floor, (self,), None, "floor")

    def __ceil__(self):
        return self.tape.call(math.ceil, (self,), None, "ceil")

    def __rdivmod__(self, other):
        return self.tape.call(divmod, (other, self), None, "divmod")

    def __array__(self, dtype=None, copy=None):
        # NumPy converting the number (numpy.float32(lr)): its value, guarded, as float()
        value = self.tape.guard(float, self, self.v, "numpy conversion")
        return numpy.asarray(value, dtype=dtype)


_REAL = operator.attrgetter("real")
_IMAG = operator.attrgetter("imag")
_FLOAT64 = numpy.dtype(numpy.float64)
_NUMBER_META = ((), _FLOAT64)


def _number(tape: Tape, v: float) -> TracedNumber:
    """A TracedNumber holding the Python float ``v`` in the next slot."""
    if not tape.open:
        raise ReplayError(_closed_message())
    t = object.__new__(TracedNumber)
    meta = tape.meta
    k = len(meta)
    t.v = v
    t.tape = tape
    t.k = k
    t.shape = ()
    t.dtype = _FLOAT64
    meta.append(_NUMBER_META)
    return t


def _register_number() -> None:
    for name in ("as_integer_ratio", "conjugate", "hex", "is_integer"):
        setattr(TracedNumber, name, _method(name))
    backend.register_namespace(TracedNumber, Recorder(numpy, "replay(float)"),
                               absorbs_numpy=True, as_array=_as_array, run=_run_primitive,
                               weak=True)
    _TRACED.add(TracedNumber)


def emit(tape: Tape, fn, targs, tkw, value, name, check=False, effect=False) -> Traced:
    """The step that made ``value``, one new array: recorded, and ``value`` traced."""
    t = _wrap(tape, value)
    k = t.k
    if effect:
        tape.records.append(_new(Eqn, (fn, targs, tkw, (k,), name, True, False)))
    else:  # a plain step: its shared head, arguments, keywords if any, step (see decode)
        n = ~len(targs) if tkw is None else len(targs)
        records = tape.records
        records.append(head(fn, n, name))
        records += [ref(tape, k, int(a)) if type(a) is Slot else a for a in targs]
        records += (k - tape.prev,) if n < 0 else (tkw, k - tape.prev)
        tape.prev = k
    if check:  # a shape read from data: a guard
        tape.records.append(Guard(_SHAPE, k, t.shape, name, caller()))
    return t


_NEW = object.__new__  # a Traced is made without __init__: its slots are set in place


def _wrap(tape: Tape, value: Any) -> Traced:
    """``value``, a raw array, traced in the tape's next slot (nothing recorded).

    Every step's result goes through here: kept to the fewest operations.
    """
    if not tape.open:
        raise ReplayError(_closed_message())
    try:
        t = _NEW(_CLASSES[type(value)])
    except KeyError:
        t = _NEW(traced_class(type(value)))
    meta = tape.meta
    k = len(meta)
    t.v = value
    t.tape = tape
    t.k = k
    # Shapes and dtypes are static (the signature fixes them): read once, here.
    shape = value.shape
    dtype = t.dtype = value.dtype
    pair = tape.last
    if pair[1] is not dtype or pair[0] != shape:
        pair = _meta(tape, shape, dtype)
    t.shape = pair[0]
    meta.append(pair)
    return t


_HEADS: dict = {}  # name -> the head made last for it; each head -> itself


def head(fn: Callable, n: int, name: str) -> tuple:
    """The head a plain step of ``fn`` called ``name`` begins with (see :func:`_head`)."""
    h = _HEADS.get(name)
    if h is None or h[1] is not fn or h[0] != n:
        h = _head(fn, n, name)
    return h


def _head(fn: Callable, n: int, name: str) -> tuple:
    """The one ``(n, fn, name)`` that the cells of a plain step begin with, shared by every
    step alike (see decode): ``n`` its number of arguments, ``~n`` if it has no keywords."""
    head = (n, fn, name)
    try:
        if len(_HEADS) > 4096:  # bounded: a process calling many functions starts afresh
            _HEADS.clear()
        head = _HEADS[name] = _HEADS.setdefault(head, head)
    except TypeError:  # an unhashable function (a method of an unhashable object)
        pass
    return head


_PAIRS: dict = {}  # every (shape, dtype) pair met, one tuple each: slots share them


def _meta(tape: Tape, shape: tuple, dtype: Any) -> tuple:
    """The one ``(shape, dtype)`` pair equal to these, remembered as the tape's last."""
    key = (shape, dtype)
    pair = _PAIRS.get(key)
    if pair is None:
        if len(_PAIRS) > 4096:  # bounded: a process tracing many shapes starts afresh
            _PAIRS.clear()
        pair = _PAIRS[key] = key
    tape.last = pair
    return pair


_CONTAINERS = frozenset({list, tuple, dict, slice})
_UNARY_SHAPED = DATA_SHAPED | {"where"}  # where(condition) alone is nonzero


def _run_primitive(prim: Primitive, args: tuple, kwargs: dict) -> Any:
    """A primitive given a traced argument: one step calling what eager would call
    (``numpy_impl`` when every argument is NumPy data, else ``impl``)."""
    if kwargs or len(args) != 1:
        if not kwargs and len(args) == 2:
            return _run_binary(prim, args)
        return _run_general(prim, args, kwargs)
    # One traced argument, the commonest case: run and recorded here, spared two calls.
    a = args[0]
    v = a.v
    impl = prim.numpy_impl if type(v) in NUMPY_TYPES else prim.impl
    value = impl(v)
    name = prim.name
    check = name in _UNARY_SHAPED or (  # _shape_guarded, inline
        a.dtype.kind in "biu" and not _elementwise(prim.numpy_impl))
    tape = a.tape
    if check or type(value) not in _NUMPY_ARRAYS:
        return tape.result(impl, (Slot(a.k),), None, value, name, check)
    t = _wrap(tape, value)
    k = t.k  # emit's record, inline (ref's near case too)
    c = _NEAR[d] if 0 < (d := k - a.k) < NEAR else ref(tape, k, a.k)
    tape.records += (head(impl, -2, name), c, k - tape.prev)
    tape.prev = k
    return t


def _run_binary(prim: Primitive, args: tuple) -> Any:
    """Two arguments: a traced value and a constant, or two (a container: the general
    path)."""
    a, b = args
    tb = type(b)
    if type(a) in _TRACED:
        tape, av, ak = a.tape, a.v, a.k
        if tb in _TRACED:
            if b.tape is not tape:
                raise ReplayError(_foreign_message(b))
            bv, bk = b.v, b.k
        elif tb in _CONTAINERS:
            return _run_general(prim, args, {})
        else:
            bv, bk = b, None
    elif type(a) in _CONTAINERS or tb not in _TRACED:
        return _run_general(prim, args, {})
    else:
        tape, bv, bk = b.tape, b.v, b.k
        av, ak = a, None
    impl = prim.numpy_impl if type(av) in NUMPY_TYPES and type(bv) in NUMPY_TYPES else prim.impl
    value = impl(av, bv)
    check = type(prim.numpy_impl) is not numpy.ufunc and _shape_guarded(prim, args, None)
    if check or type(value) not in _NUMPY_ARRAYS:
        return tape.result(impl, (av if ak is None else Slot(ak), bv if bk is None else Slot(bk)),
                           None, value, prim.name, check)
    t = _wrap(tape, value)
    k = t.k  # emit's record, inline (ref's near case too)
    a = av if ak is None else _NEAR[d] if 0 < (d := k - ak) < NEAR else ref(tape, k, ak)
    b = bv if bk is None else _NEAR[d] if 0 < (d := k - bk) < NEAR else ref(tape, k, bk)
    tape.records += (head(impl, -3, prim.name), a, b, k - tape.prev)
    tape.prev = k
    return t


def _run_general(prim: Primitive, args: tuple, kwargs: dict) -> Any:
    """Any arguments: traced values among them, in containers too, and keywords."""
    tape = None  # a top-level argument is traced: runners are found by those
    native = True
    for a in args:
        t = type(a)
        if t in _TRACED:
            if tape is None:
                tape = a.tape
            if type(a.v) not in NUMPY_TYPES:
                native = False
        elif t not in NUMPY_TYPES and t not in _CONTAINERS:
            native = False
    raws, targs = split_args(args, tape)
    impl = prim.numpy_impl if native else prim.impl
    if kwargs:
        rkw, tkw = split_kwargs(kwargs, tape)
        value = impl(*raws, **rkw)
    else:
        value, tkw = impl(*raws), None
    check = _shape_guarded(prim, args, kwargs)
    if type(value) in _NUMPY_ARRAYS:
        return emit(tape, impl, targs, tkw, value, prim.name, check)
    return tape.result(impl, targs, tkw, value, prim.name, check)


def _shape_guarded(prim: Primitive, args: tuple, kwargs: dict | None) -> bool:
    """Whether a step of ``prim`` makes a shape that data decides, which is guarded: a
    step that is not elementwise given integer or boolean traced data (indices, masks,
    counts), or one of DATA_SHAPED."""
    return (not _elementwise(prim.numpy_impl) and (
        _suspect(args) or bool(kwargs) and _suspect(kwargs))) or _data_shaped(prim.name, args)


class Recorder:
    """An array namespace that records: ``xp`` called through it, one step per call."""

    def __init__(self, xp: Any, name: str | None = None):
        self._xp = xp
        self.__name__ = name or f"replay({getattr(xp, '__name__', xp)})"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._xp, name)
        if isinstance(value, (types.ModuleType, types.SimpleNamespace)):
            value = Recorder(value, f"{self.__name__}.{name}")
        elif isinstance(value, type) or not callable(value):
            pass  # dtypes, constants
        elif name in METADATA:
            value = _metadata(value)
        else:
            value = _recording(value, name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"<recording namespace {self.__name__}>"


def _metadata(fn: Callable) -> Callable:
    def call(*args, **kwargs):
        tape = _TAPE.get()
        if tape is None:
            return fn(*args, **kwargs)
        return fn(*split_args(args, tape)[0], **split_kwargs(kwargs, tape)[0])

    return call


def _recording(fn: Callable, name: str) -> Callable:
    elementwise = _elementwise(fn)

    def call(*args, **kwargs):
        tape = _TAPE.get()
        if tape is None:
            raise ReplayError(_closed_message())
        check = not elementwise and (_data_shaped(name, args) or _suspect(args)
                                     or _suspect(kwargs))
        return tape.call(fn, args, kwargs, name, check)

    call.__name__ = name
    return call


def is_traced(x: Any) -> bool:
    """Whether ``x`` is a traced array."""
    return type(x) in _TRACED


def current_tape() -> Tape | None:
    """The tape being recorded in this context, if any."""
    return _TAPE.get()


_NUMPY_TRACED = traced_class(numpy.ndarray)  # the Traced class of every NumPy array type
_register_number()


__all__ = ["ReplayError", "Slot", "Tape", "Traced", "is_traced", "traced_class"]
