"""What a replayed function reads besides its arguments, watched between calls (layer 6).

A plan holds the values the function read from its closure, its globals, the
attributes of the objects it was given as static arguments or bound to: the
arrays among them are read by its steps, and everything derived from them in
Python (``numpy.sin(c)``, ``float(c[0])``, a branch on ``c``) is baked into
it.  :func:`snapshot` records, after a trace, *where* each of those values was
found and what it was: ``World.holds()`` then checks, before each replay, that
every name is still bound to the same object (an identity check) and that
every array holds the same bytes (a byte comparison with a copy, or a digest of
large arrays).  A change means the plan is stale: the call traces again.

The walk starts from the function (and the static arguments), and follows
closure cells, defaults, the globals its code names (the code of nested
functions included), the functions and bound methods it reaches, the
attributes those codes name on the objects it reaches, and the items of
lists, tuples and dicts -- a few levels deep.  Library code (NumPy, funcgrad's
own globals, the standard library) is not walked.

>>> import numpy
>>> def scaled(c):
...     return lambda x: x * c
>>> c = numpy.ones(2)
>>> world = snapshot([scaled(c)])
>>> world.holds()
True
>>> c[0] = 5.0
>>> world.holds()
False
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import sys
import types
from collections.abc import Iterable
from typing import Any

import numpy

from . import backend
from .draws import code_names
from .node import Node
from .plan import same
from .tracer import is_traced

# Arrays up to this size are compared with a copy (exact: their bytes; above
# MEMCMP_MIN_BYTES with C's memcmp, without a temporary); larger ones with a 128-bit
# BLAKE2 digest of their bytes (no copy kept).
COPY_MAX_BYTES = 1 << 28
MEMCMP_MIN_BYTES = 1 << 14
MAX_DEPTH = 6

_MISSING = object()
# id() without its audit event (which an audit hook, as replay's own, makes a Python call):
# the object's address, rotated -- one number per object while it lives, as id() is.
_address = object.__hash__
_SCALARS = frozenset({int, float, complex, bool, str, bytes, type(None)})
_LIBRARIES = frozenset({"numpy", "scipy", "funcgrad", "optree", "pyrsistent", "attrs", "jax",
                        "jaxlib", "cupy", "dask", "torch", "pandas", "autograd", "hypothesis",
                        "pytest", "_pytest"})
_RNG_TYPES = (numpy.random.Generator, numpy.random.RandomState, numpy.random.BitGenerator)


def _is_library(module_name: str | None) -> bool:
    if not module_name:
        return False
    known = _LIBRARY_NAMES.get(module_name)
    if known is None:
        top = module_name.partition(".")[0]
        known = top in _LIBRARIES or top in sys.stdlib_module_names or top == "builtins"
        if len(_LIBRARY_NAMES) > 4096:
            _LIBRARY_NAMES.clear()
        _LIBRARY_NAMES[module_name] = known
    return known


_LIBRARY_NAMES: dict[str, bool] = {}  # module name -> whether it is library code




def _load_memcmp() -> Any:
    try:
        libc = ctypes.CDLL(None) if sys.platform != "win32" else ctypes.cdll.msvcrt
        memcmp = libc.memcmp
    except (OSError, AttributeError):
        return None
    memcmp.restype = ctypes.c_int
    memcmp.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return memcmp


_MEMCMP = _load_memcmp()


class _Copy:
    """A copy of an array's bytes, compared with memcmp (no temporary)."""

    __slots__ = ("address", "copy", "n")

    def __init__(self, a: numpy.ndarray):
        self.copy = numpy.ascontiguousarray(a).copy()
        self.address = self.copy.__array_interface__["data"][0]
        self.n = a.nbytes

    def same(self, a: numpy.ndarray) -> bool:
        if a.flags.c_contiguous:
            return _MEMCMP(a.__array_interface__["data"][0], self.address, self.n) == 0
        return numpy.ascontiguousarray(a).tobytes() == self.copy.tobytes()


def _fingerprint(a: numpy.ndarray) -> Any:
    if a.nbytes < MEMCMP_MIN_BYTES or (_MEMCMP is None and a.nbytes <= COPY_MAX_BYTES):
        return a.tobytes()
    if a.nbytes <= COPY_MAX_BYTES:
        return _Copy(a)
    return _Digest(_digest(a))


def _digest(a: numpy.ndarray) -> bytes:
    data = a if a.flags.c_contiguous else numpy.ascontiguousarray(a)
    return hashlib.blake2b(data.view(numpy.uint8).reshape(-1), digest_size=16).digest()


class _Digest(bytes):
    """The BLAKE2 digest of a large array's bytes."""

    __slots__ = ()


def _host_fingerprint(a: Any) -> Any:
    """The fingerprint of an array of another namespace (through the host), or None."""
    entry = backend.lookup(type(a))
    if entry is None or entry.lazy or entry.to_host is None:
        return None  # lazy (Dask) arrays are immutable: their identity is enough
    host = numpy.ascontiguousarray(entry.to_host(a))
    return host.tobytes() if host.nbytes <= COPY_MAX_BYTES else _digest(host)


class World:
    """Where the values a function read were found, and what they were.

    ``cells``: ``(cell, value, where)``; ``items``: ``(mapping, key, value,
    where)`` (globals, ``__dict__``s, dicts); ``sizes``: ``(container, length,
    where)``; ``arrays``: ``(array, shape, dtype, fingerprint, where)`` (``where``
    describes the place, through :func:`_text`);
    ``foreign``: arrays of other namespaces.  :meth:`holds` is the check made
    before each replay, :meth:`changed` names what changed.
    """

    __slots__ = ("arrays", "cells", "clocks", "foreign", "items", "sizes")

    def __init__(self):
        self.clocks: list[str] = []  # clocks the code reads: what no plan can replay
        self.cells: list = []
        self.items: list = []
        self.sizes: list = []
        self.arrays: list = []
        self.foreign: list = []

    def __len__(self) -> int:
        return (len(self.cells) + len(self.items) + len(self.sizes) + len(self.arrays)
                + len(self.foreign))

    def holds(self) -> bool:
        """Whether every name is bound as it was and every array holds the same bytes."""
        for cell, want, _ in self.cells:
            try:
                got = cell.cell_contents
            except ValueError:  # emptied
                return False
            if got is not want and not _same_scalar(got, want):
                return False
        for mapping, key, want, _ in self.items:
            got = mapping.get(key, _MISSING)
            if got is not want and not _same_scalar(got, want):
                return False
        for seq, n, _ in self.sizes:
            if len(seq) != n:
                return False
        for a, shape, dtype, fp, _ in self.arrays:
            if a.shape != shape or a.dtype != dtype:
                return False
            t = type(fp)
            if t is bytes:
                if a.tobytes() != fp:
                    return False
            elif t is _Copy:
                if not fp.same(a):
                    return False
            elif _digest(a) != fp:
                return False
        for a, fp, _ in self.foreign:
            if _host_fingerprint(a) != fp:
                return False
        return True

    def changed(self, strict: bool = False, later: World | None = None) -> str | None:
        """The first watched place that no longer holds, described (None if all hold).

        ``strict``: arrays, closure cells, globals and attributes only -- what a
        function changing while it runs makes a plan wrong (a list it appends
        to, a dict it fills, are not counted).  ``later``: a snapshot taken since
        with this one as its ``earlier``: the arrays whose byte copy it shares were
        found unchanged then, and are not compared again."""
        shared = ({_address(row[3]) for row in later.arrays if type(row[3]) is _Copy}
                  if later is not None else ())
        whole = World()  # every place but the shared arrays, checked at once: if all hold
        whole.cells, whole.items, whole.sizes, whole.foreign = (  # (the common case), none
            self.cells, self.items, self.sizes, self.foreign)  # is to be named
        whole.arrays = [row for row in self.arrays if _address(row[3]) not in shared]
        if whole.holds():
            return None
        rows = [(w, World()) for w in ("arrays", "foreign", "cells", "items", "sizes")]
        for kind, probe in rows:
            if strict and kind == "sizes":
                continue
            for row in getattr(self, kind):
                if kind == "arrays" and _address(row[3]) in shared:
                    continue
                if strict and kind == "items" and not _text(row[-1]).startswith(
                        ("global", "attribute")):
                    continue
                setattr(probe, kind, [row])
                if not probe.holds():
                    return _text(row[-1])
        return None


def _text(where: Any) -> str:
    """The description of a place: ``where`` as the walk left it, a string or, made only
    when a message needs it, ``(format, parent, *values)`` (formatting each place's
    description as it was found cost a sixth of a walk)."""
    if type(where) is str:
        return where
    fmt, parent, *values = where
    return fmt.format(_text(parent), *values)


def _same_scalar(got: Any, want: Any) -> bool:
    """Equal immutable scalars (a float rebound to an equal value is not a change)."""
    return type(got) in _SCALARS and same(got, want)


class _Walk:
    def __init__(self, earlier: World | None = None):
        self.world = World()
        # The byte copies of an earlier snapshot, by array: one whose bytes are unchanged
        # is shared, not copied again (a trace snapshots before and after the call).
        self.copies = {_address(row[0]): (row[0], row[3]) for row in earlier.arrays
                       if type(row[3]) is _Copy} if earlier is not None else {}
        self.seen: set[int] = set()
        self.names: set[str] = set()  # attribute and global names the reached code uses
        self.objects: list = []  # (object, depth) whose attributes wait for the names
        self.keep: list = []  # what `seen` names stays alive while we walk
        self.modules: list = []  # clock modules reached: their names, checked at the end

    # -- places ----------------------------------------------------------------------
    def cell(self, cell: Any, depth: int, where: str) -> None:
        try:
            value = cell.cell_contents
        except ValueError:
            return
        self.world.cells.append((cell, value, where))
        self.value(value, depth, where)

    def item(self, mapping: dict, key: Any, depth: int, where: str) -> None:
        value = mapping.get(key, _MISSING)
        if value is _MISSING:
            return
        self.world.items.append((mapping, key, value, where))
        self.value(value, depth, where)

    # -- values ----------------------------------------------------------------------
    def value(self, v: Any, depth: int, where: str) -> None:
        t = type(v)
        if t in _SCALARS or depth > MAX_DEPTH:
            return
        key = _address(v)
        if key in self.seen:
            return
        self.seen.add(key)
        self.keep.append(v)
        _VISITS.get(t, _Walk.other)(self, v, depth, where)

    # One method per kind of value, looked up by exact type in _VISITS (below the
    # class); every other type goes through `other`, which tests by isinstance.
    def array(self, v: numpy.ndarray, depth: int, where: str) -> None:
        known = self.copies.get(_address(v))
        if known is not None and known[0] is v and known[1].n == v.nbytes and known[1].same(v):
            fp = known[1]
        else:
            fp = _fingerprint(v)
        self.world.arrays.append((v, v.shape, v.dtype, fp, where))

    def leaf(self, v: Any, depth: int, where: str) -> None:
        """Nothing to watch: immutable, or watched elsewhere."""

    def method(self, v: types.MethodType, depth: int, where: str) -> None:
        self.value(v.__func__, depth + 1, where)
        self.value(v.__self__, depth + 1, ("{0}.__self__", where))

    def partial(self, v: functools.partial, depth: int, where: str) -> None:
        self.value(v.func, depth + 1, where)
        for i, a in enumerate(v.args):
            self.value(a, depth + 1, ("{0} argument {1}", where, i))
        for k in v.keywords:
            self.item(v.keywords, k, depth + 1, ("{0} keyword {1}", where, k))

    def list_value(self, v: list, depth: int, where: str) -> None:
        self.world.sizes.append((v, len(v), where))
        for i in range(len(v)):
            self.item(_Items(v), i, depth + 1, ("{0}[{1}]", where, i))

    def sequence(self, v: Any, depth: int, where: str) -> None:
        """A tuple (a namedtuple too) or a frozenset: each item."""
        for i, o in enumerate(v):
            self.value(o, depth + 1, ("{0}[{1}]", where, i))

    def dict_value(self, v: dict, depth: int, where: str) -> None:
        self.world.sizes.append((v, len(v), where))
        for k in list(v):
            self.item(v, k, depth + 1, ("{0}[{1!r}]", where, k))

    def other(self, v: Any, depth: int, where: str) -> None:
        t = type(v)
        if is_traced(v) or isinstance(v, (numpy.generic, *_RNG_TYPES)):
            return  # immutable (a traced value kept by a side effect cannot be used later);
            # generators are watched by the random-number checks
        if backend.lookup(t) is not None:  # an array of another namespace
            fp = _host_fingerprint(v)
            if fp is not None:
                self.world.foreign.append((v, fp, where))
        elif isinstance(v, (tuple, frozenset)):
            self.sequence(v, depth, where)
        elif isinstance(v, (types.ModuleType, type)):
            self.clock_module(v, where)
            if isinstance(v, types.ModuleType) and not _is_library(v.__name__):
                self.objects.append((v, depth))  # a user module: the attributes code names
        elif isinstance(v, (types.BuiltinFunctionType, numpy.ufunc)):
            if v.__name__ in _CLOCKS.get(getattr(v, "__module__", None), ()):
                self.world.clocks.append(f"{v.__module__}.{v.__name__} ({_text(where)})")
        elif (t.__module__ or "").startswith("funcgrad"):
            self.wrapper(v, depth, where)
        elif not _is_library(t.__module__):
            self.instance(v, depth)

    def wrapper(self, v: Any, depth: int, where: str) -> None:
        """One of funcgrad's objects (fg.replay, custom_vjp...): the user's functions it
        wraps, not its own state."""
        for name, o in list(getattr(v, "__dict__", {}).items()):
            if callable(o):
                self.value(o, depth + 1, ("{0}.{1}", where, name))
        inner = getattr(v, "fun", None)
        if inner is not None:
            self.value(inner, depth + 1, ("{0}.fun", where))

    def instance(self, v: Any, depth: int) -> None:
        """A user's object: the attributes its class's code names (see attributes)."""
        try:
            attrs = object.__getattribute__(v, "__dict__")
        except AttributeError:  # __slots__ only: not watched (documented)
            return
        if not isinstance(attrs, dict):
            return
        self.objects.append((v, depth))
        for klass in type(v).__mro__:
            if _is_library(klass.__module__):
                continue
            for o in vars(klass).values():
                if isinstance(o, (types.FunctionType, property, staticmethod, classmethod)):
                    f = getattr(o, "fget", None) or getattr(o, "__func__", o)
                    if isinstance(f, types.FunctionType):
                        self.code_names(f.__code__)

    def clock_module(self, v: Any, where: str) -> None:
        """A module or class whose clock functions the code may call (``time.time()``)."""
        key = v.__name__ if isinstance(v, types.ModuleType) else (
            f"{v.__module__}.{v.__qualname__}")
        if key in _CLOCKS:
            self.modules.append((v, key, where))

    def function(self, f: types.FunctionType, depth: int, where: str = "") -> None:
        name = getattr(f, "__qualname__", "function")
        # The module that holds its code (functools.wraps copies __module__ from the
        # function it wraps: funcgrad's wrappers would pass for the user's code).
        glob = f.__globals__
        library = _is_library(glob.get("__name__"))
        # __code__, __defaults__ and __kwdefaults__ are read once each: every read raises
        # an audit event, which the hook replay installs makes a Python call.
        code = f.__code__
        for cellname, cell in zip(code.co_freevars, f.__closure__ or (), strict=False):
            self.cell(cell, depth + 1, ("{1!r} (closed over by {2})", "", cellname, name))
        for i, d in enumerate(f.__defaults__ or ()):
            self.value(d, depth + 1, ("default {1} of {2}", "", i, name))
        kwdefaults = f.__kwdefaults__
        for k in (kwdefaults or {}):
            self.item(kwdefaults, k, depth + 1, ("default {1!r} of {2}", "", k, name))
        if library:
            return
        names = self.code_names(code)
        for n in names:
            if n in glob:
                self.item(glob, n, depth + 1, ("global {1!r} (read by {2})", "", n, name))

    def code_names(self, code: types.CodeType) -> tuple[str, ...]:
        names = code_names(code)
        self.names.update(names)
        return names

    def attributes(self) -> None:
        """The attributes that the reached code names, of the objects reached (until no
        new object or name turns up): each pair of an object and a name once."""
        objects = self.objects
        done_objects, done_names = 0, frozenset()  # every pair of these was looked at
        while True:
            names = frozenset(self.names)  # a copy: the walk below may add names
            new = names - done_names
            n_objects = len(objects)
            if not new and done_objects == n_objects:
                return
            for i in range(n_objects):
                pending = new if i < done_objects else names
                if pending:
                    o, d = objects[i]
                    self.attributes_of(o, d, pending)
            done_objects, done_names = n_objects, names

    def attributes_of(self, o: Any, d: int, names: frozenset) -> None:
        """The attributes ``names`` of ``o``: in its ``__dict__``, a watched place; else a
        method or property of its class, whose code names more attributes."""
        try:
            attrs = object.__getattribute__(o, "__dict__")
        except AttributeError:
            attrs = None
        if not isinstance(attrs, dict):
            attrs = {}
        cls = type(o)
        found = _class_names(cls)
        label = None
        for n in names:
            if n in attrs:
                if label is None:
                    label = getattr(o, "__name__", None) or f"a {cls.__name__}"
                self.item(attrs, n, d + 1, ("attribute {1!r} of {2}", "", n, label))
            elif found is None or n in found:  # a method of its class: more names
                f = getattr(cls, n, None)
                f = getattr(f, "fget", None) or getattr(f, "__func__", f)
                if isinstance(f, types.FunctionType) and not _is_library(f.__module__):
                    self.value(f, d + 1, n)


def _class_names(cls: type) -> set | None:
    """The names defined in the dictionaries of ``cls``'s classes, which is all that
    ``getattr(cls, name)`` can find under the plain metaclass ``type`` (None under
    another: any name is looked up).  A name not among them needs no lookup (a lookup
    that fails raises and catches an exception: most names a code reads are not
    attributes of every object reached)."""
    if type(cls) is not type:
        return None
    known = _CLASS_NAMES.get(cls)
    if known is not None:
        return known
    found = set(type.__dict__)  # what the metaclass itself answers (``mro``, ``__name__``)
    for klass in cls.__mro__:
        found.update(klass.__dict__)
    if cls.__flags__ & _IMMUTABLE_TYPE:  # a built-in type (a module's): never changes
        _CLASS_NAMES[cls] = found
    return found


_CLASS_NAMES: dict[type, set] = {}
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE


# The exact types `_Walk.value` dispatches on; every other goes to `_Walk.other`.
_VISITS = {
    numpy.ndarray: _Walk.array,
    Node: _Walk.leaf,  # immutable
    types.FunctionType: _Walk.function,
    types.MethodType: _Walk.method,
    functools.partial: _Walk.partial,
    list: _Walk.list_value,
    tuple: _Walk.sequence,
    frozenset: _Walk.sequence,
    dict: _Walk.dict_value,
}

class _Items:
    """A list seen as a mapping from index to item (``get`` as dicts have it)."""

    __slots__ = ("seq",)

    def __init__(self, seq: list):
        self.seq = seq

    def get(self, i: int, default: Any = None) -> Any:
        seq = self.seq
        return seq[i] if i < len(seq) else default


# Clocks: functions whose value changes from call to call with no argument changing.
_CLOCKS = {
    "time": frozenset({"time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic",
                       "monotonic_ns", "process_time", "process_time_ns", "thread_time",
                       "thread_time_ns", "localtime", "gmtime", "ctime", "asctime",
                       "strftime"}),
    "datetime": frozenset({"now", "utcnow", "today"}),
    "datetime.datetime": frozenset({"now", "utcnow", "today"}),
    "datetime.date": frozenset({"today"}),
}


def snapshot(roots: Iterable[Any], earlier: World | None = None) -> World:
    """The :class:`World` of what ``roots`` (a function, static arguments) read.

    ``earlier``, a snapshot of the same roots, lends the byte copies of the arrays
    whose bytes have not changed since it was taken.
    """
    walk = _Walk(earlier)
    for i, r in enumerate(roots):
        walk.value(r, 0, "the function" if i == 0 else f"static argument {i}")
    walk.attributes()
    for _, key, where in walk.modules:
        for name in sorted(_CLOCKS[key] & walk.names):
            walk.world.clocks.append(f"{key}.{name} ({_text(where)})")
    return walk.world


__all__ = ["COPY_MAX_BYTES", "World", "snapshot"]
