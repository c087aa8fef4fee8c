"""Random numbers under :func:`fg.replay <funcgrad.replay>` (layer 6).

Two halves:

- **fnp.random's draws are steps.**  :mod:`funcgrad.numpy.random` sends every
  draw, every seeding and every generator it makes through one hook; under a
  trace, :func:`record` makes each a step of the tape: a draw is a step that
  always runs (its result may be unused: the generator must still advance, as
  it does eagerly), a generator made inside the traced function is a value of
  the plan, made again at each replayed call, and reading a generator's state
  into Python is refused.
- **Every other generator is refused** (:class:`RandomWatch`): NumPy's
  (global, or a ``Generator``/``RandomState`` held anywhere the function can
  reach, or made inside it without a seed) and Python's ``random``.  The watch
  is about the tracing thread's own draws: while a trace runs, NumPy's module
  functions, the OS entropy NumPy seeds a generator with when it has no seed,
  Python's ``random`` functions and the methods every ``random.Random`` draws
  through are wrappers that note a call made under a trace -- a trace is
  context-local, so another thread's calls pass unnoted.  A NumPy generator
  the function holds is compared before and after.  Another thread drawing
  from NumPy's global generator (a data loader) is no draw of the trace.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> rng = fnp.random.default_rng(0)
>>> f = fg.replay(lambda x: x * rng.random(2))
>>> a, b = f(numpy.ones(2)), f(numpy.ones(2))          # traces, then replays
>>> bool((numpy.concatenate([a, b]) == numpy.random.default_rng(0).random(4)).all())
True
"""

from __future__ import annotations

import functools
import itertools
import os
import random as _pyrandom
import secrets
import sys
import tempfile
import threading
import types
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

import numpy

from .errors import ReplayError
from .numpy import random as fnp_random
from .tracer import Eqn, Slot, caller, current_tape, emit, is_array_type, split_args, split_kwargs

# -- fnp.random's draws as steps ------------------------------------------------------


def record(kind: str, fn: Any, args: tuple, kwargs: dict, name: str) -> Any:
    """``fn(*args, **kwargs)``; under a trace, also a step of the tape (see the module)."""
    tape = current_tape()
    if tape is None:
        return fn(*args, **kwargs)
    if kind == "read":  # a generator's state read, or shared with one the plan cannot see
        where = caller()
        if not tape.fallback:
            raise ReplayError(
                f"fg.replay: {name} at {where} reads a generator's state into Python, or "
                "shares it with a NumPy generator, while the function is traced: a plan "
                "cannot follow either. Make generators with fnp.random.default_rng(seed) "
                "(inside the function or outside it), or pass fallback=True to fg.replay "
                "to run such calls eagerly")
        tape.tainted = tape.tainted or f"{name} at {where}"
        return fn(*args, **kwargs)
    owner = args[0] if args and isinstance(args[0], fnp_random._Drawing) else None
    rest = args[1:] if owner is not None else args
    raws, targs = split_args(rest, tape)
    if owner is not None:
        if owner is fnp_random._GLOBAL:  # NumPy's global generator, drawn through fnp.random
            _WATCHED.through_fnp = True
        raws = [owner, *raws]
        slot = owner._slot
        targs = (slot[1] if slot is not None and slot[0]() is tape else owner, *targs)
        if rest and rest[0] == "shuffle" and len(rest) > 2:
            tape._check_target(rest[2], "random.shuffle")
    if kwargs.get("out") is not None:  # random(out=a), standard_normal(out=a)...
        tape._check_target(kwargs["out"], name)
    rkw, tkw = split_kwargs(kwargs, tape) if kwargs else ({}, None)
    value = fn(*raws, **rkw)
    if kind == "new":  # a generator made under the trace: a value of the plan
        k = tape.n
        tape.meta.append(((), type(value).__name__))
        tape.record(Eqn(fn, targs, tkw, (k,), name))
        value._slot = (weakref.ref(tape), Slot(k))
        return value
    if value is None:
        tape.record(Eqn(fn, targs, tkw, (), name, effect=True))
        return None
    if is_array_type(type(value)):
        return emit(tape, fn, targs, tkw, value, name, False, True)
    tape.escape(f"{name} (returning a {type(value).__name__})")
    return value


fnp_random._HOOK[0] = record

_STATEFUL = frozenset({fnp_random._draw, fnp_random._reseed, fnp_random._set_state})


def held_generators(entries: list) -> tuple:
    """The fnp.random generators that the steps of a tape draw from, held from outside
    (constants of the plan; a generator the plan makes is made afresh at each run)."""
    found: dict[int, Any] = {}
    for e in entries:
        if type(e) is Eqn and e.effect and e.fn in _STATEFUL:
            owner = e.args[0]
            if isinstance(owner, fnp_random._Drawing):
                found[_address(owner)] = owner
    return tuple(found.values())


def save_generators(held: tuple) -> list:
    return [g._np.bit_generator.state if isinstance(g, fnp_random.Generator)
            else g._np.get_state() for g in held]


def generator_locks(held: tuple) -> list:
    """One lock per generator, in one order: a plan drawing from held generators runs
    holding them, so that a restore never takes back another thread's draws."""
    with _LOCKS_LOCK:
        return [_LOCKS.setdefault(g, threading.RLock())
                for g in sorted(held, key=id)]


_LOCKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def restore_generators(held: tuple, saved: list) -> None:
    for g, state in zip(held, saved, strict=True):
        if isinstance(g, fnp_random.Generator):
            g._np.bit_generator.state = state
        else:
            g._np.set_state(state)


# -- every other generator: refused -------------------------------------------------

_WATCHED = threading.local()  # .seen: the list of the trace running in this thread


def _seen(what: str, where: str) -> None:
    seen = getattr(_WATCHED, "seen", None)
    if seen is not None and current_tape() is not None:
        seen.append((what, where))


def _where() -> str | None:
    """``file:line`` of the code that drew: the first frame outside funcgrad and Python's
    random and secrets modules; None when it is the standard library's own temporary
    file names (tempfile's private generator), which are no draws of the function."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name in _NOT_DRAWS:
            return None
        if not (name.startswith((_HERE, "<funcgrad")) or name in _LIBRARY):
            return f"{os.path.basename(name)}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


_HERE = os.path.dirname(os.path.abspath(__file__))
_LIBRARY = frozenset({_pyrandom.__file__, secrets.__file__})
_NOT_DRAWS = frozenset({tempfile.__file__})


def _wrapper(original: Any, what: str, method: bool = False) -> Any:
    """``original``, noting a call made under a trace (``method``: a generator class's
    method, named by its instance)."""

    @functools.wraps(original)
    def draw(*args, **kwargs):
        if current_tape() is not None:
            where = _where()
            if where is not None:
                if method:
                    owner = args[0] if args else None
                    name = ("Python's random module" if owner is _pyrandom._inst else
                            f"a {type(owner).__name__} of Python's random module")
                    _seen(f"{name} (its {original.__name__})", where)
                else:
                    _seen(what, where)
        return original(*args, **kwargs)

    draw._funcgrad_original = original
    draw.__funcgrad_what__ = what
    return draw


def _targets() -> dict:
    """What the watch swaps while a trace runs: ``(owner, name) -> (function, what)``.

    NumPy's module functions (the global generator's draws, ``seed``,
    ``default_rng``), the OS entropy NumPy seeds unseeded generators with, and
    Python's ``random``: the module's functions (bound methods of its hidden
    instance) and the methods every ``random.Random`` draws through.
    """
    found = {}
    for module in (numpy.random, numpy.random.mtrand):
        for name in getattr(module, "__all__", ()):
            fn = getattr(module, name, None)
            if callable(fn) and not isinstance(fn, type):
                found[(module, name)] = (fn, f"numpy.random.{name} (NumPy's global generator)"
                                         if name != "default_rng" else
                                         "numpy.random.default_rng (a NumPy Generator)")
    bits = numpy.random.bit_generator
    if callable(getattr(bits, "randbits", None)):  # NumPy: SeedSequence() with no entropy
        found[(bits, "randbits")] = (bits.randbits, ("the OS's entropy (a NumPy generator "
                                     "made without a seed)"))
    for name in ("randbits", "randbelow", "choice"):
        if callable(getattr(secrets, name, None)):
            found[(secrets, name)] = (getattr(secrets, name), (f"secrets.{name} (the OS's "
                                      "entropy)"))
    glob = _pyrandom._inst
    for name in dir(_pyrandom):
        fn = getattr(_pyrandom, name)
        if getattr(fn, "__self__", None) is glob:
            found[(_pyrandom, name)] = (fn, f"random.{name} (Python's random module)")
    for cls, names in ((_pyrandom.Random, ("random", "getrandbits", "seed", "setstate")),
                       (_pyrandom.SystemRandom, ("random", "getrandbits"))):
        for name in names:
            found[(cls, name)] = (getattr(cls, name), None)
    return found


class _WatchedModule(types.ModuleType):
    """The class of a watched module while any trace runs (see :class:`_Patches`): the
    functions of it that draw are read as their wrappers.  Its dictionary is left alone."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        value = _MODULE_ATTRIBUTE(self, name)
        what = _PATCHES.names.get((self, name))
        if what is None:
            return value
        return _PATCHES.wrapped(self, name, value, what)


_MODULE_ATTRIBUTE = types.ModuleType.__getattribute__


class _Patches:
    """Functions swapped for thread-aware wrappers while any trace runs.

    A module whose drawing functions are read from outside (``numpy.random.randn``,
    ``random.random``) is given the class :class:`_WatchedModule` for the time: one
    assignment in and one out, where setting its hundred names in and out at every trace
    cost a fifth of a short function's eager call.  What is read where setting a class
    cannot reach -- the methods of ``random.Random`` and NumPy's entropy, which its own code
    reads as a global -- is set in place, and put back after.  The wrappers are made
    once (a function replaced since, by a mock, gets one of its own).
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.active = 0
        self.saved: list = []
        self.modules: tuple = ()  # the modules whose class is swapped
        self.names: dict = {}  # (module, name) -> what it draws from, for those modules
        self.wrappers: dict = {}  # (owner, name) -> (original, wrapper)
        self.in_place: dict = {}  # (owner, name) -> (original, wrapper), set in place

    def _prepare(self) -> None:
        for (owner, name), (fn, what) in _targets().items():
            if isinstance(owner, types.ModuleType) and owner not in _OWN_GLOBALS:
                self.names[(owner, name)] = what
                self.wrappers[(owner, name)] = (fn, _wrapper(fn, what))
            else:
                self.in_place[(owner, name)] = (fn, _wrapper(fn, what, isinstance(owner, type)))
        self.modules = tuple({owner: None for owner, _ in self.names})

    def wrapped(self, module: Any, name: str, value: Any, what: str) -> Any:
        """The wrapper of ``value``, found as ``module.name`` while a trace runs."""
        known = self.wrappers.get((module, name))
        if known is not None and known[0] is value:
            return known[1]
        if not callable(value) or hasattr(value, "_funcgrad_original"):
            return value
        wrapper = _wrapper(value, what)  # replaced since (a test's mock): watched too
        self.wrappers[(module, name)] = (value, wrapper)
        return wrapper

    def enter(self) -> None:
        with self.lock:
            self.active += 1
            if self.active > 1:
                return
            if not self.in_place:
                self._prepare()
            for module in self.modules:
                kind = type(module)
                if kind is types.ModuleType:
                    module.__class__ = _WatchedModule
                elif kind is not _WatchedModule:  # another's class: its names set in place
                    self._set_in_place(module)
            for (owner, name), (fn, wrapper) in self.in_place.items():
                own = owner.__dict__.get(name)  # None: a class's inherited method
                current = getattr(owner, name, None) if own is None else own
                if current is not fn:  # ours already (another trace), or replaced since
                    if current is None or current is wrapper or hasattr(
                            current, "_funcgrad_original"):
                        continue
                    # replaced since (a test's mock): watched too
                    wrapper = _wrapper(current, wrapper.__funcgrad_what__,
                                       isinstance(owner, type))
                    self.in_place[(owner, name)] = (current, wrapper)
                self.saved.append((owner, name, own, wrapper))
                setattr(owner, name, wrapper)

    def _set_in_place(self, module: Any) -> None:
        """The drawing functions of a module whose class is not ours to swap (a subclass of
        ModuleType another library gave it), set in place for the trace: put back by exit."""
        for (owner, name), what in self.names.items():
            own = owner.__dict__.get(name) if owner is module else None
            if own is not None and callable(own) and not hasattr(own, "_funcgrad_original"):
                wrapper = self.wrapped(module, name, own, what)
                self.saved.append((owner, name, own, wrapper))
                setattr(owner, name, wrapper)

    def exit(self) -> None:
        with self.lock:
            self.active -= 1
            if self.active:
                return
            for module in self.modules:
                if type(module) is _WatchedModule:
                    module.__class__ = types.ModuleType
            for owner, name, own, wrapper in self.saved:
                if owner.__dict__.get(name) is wrapper:  # unless replaced meanwhile
                    if own is None:
                        delattr(owner, name)  # the inherited method shows again
                    else:
                        setattr(owner, name, own)
            self.saved.clear()


# Modules whose own code reads their drawing function as a global (NumPy's SeedSequence
# reads ``randbits``): a class cannot reach that read, so the name is set in place.
_OWN_GLOBALS = frozenset({numpy.random.bit_generator})
_PATCHES = _Patches()
_PY_RNG = _pyrandom.Random


class RandomWatch:
    """While a trace runs: the draws from generators other than fnp.random's.

    Made with the function and what it is called with (``(args, kwargs)``: the
    generators held there are compared before and after); ``start()`` before
    the trace, ``stop()`` after it, in the same thread: ``stop`` returns a
    description of the first draw seen, or None.
    """

    def __init__(self, fun: Any, arguments: Any = ()):
        found: dict[int, Any] = {}
        visited: set = set()
        _collect(arguments, found, 0, visited)
        _collect(fun, found, 0, visited)
        self.held = [(g, _state(g)) for g in found.values()]
        self.outer: Any = None

    def start(self) -> None:
        self.outer = getattr(_WATCHED, "seen", None)
        _WATCHED.seen = []
        _WATCHED.through_fnp = False
        _PATCHES.enter()

    def stop(self) -> str | None:
        _PATCHES.exit()
        seen, _WATCHED.seen = _WATCHED.seen, self.outer
        if seen:
            what, where = seen[0]
            return f"{what} at {where}"
        through_fnp, _WATCHED.through_fnp = getattr(_WATCHED, "through_fnp", False), False
        for g, before in self.held:
            if g is numpy.random.mtrand._rand and through_fnp:
                continue  # moved by fnp.random's own draws (its module functions share it)
            if _state(g) != before:
                return _name(g)
        return None


def _name(g: Any) -> str:
    if g is numpy.random.mtrand._rand:
        return "numpy.random (NumPy's global generator)"
    if g is _pyrandom._inst:
        return "Python's random module"
    if isinstance(g, _PY_RNG):
        return f"a {type(g).__name__} of Python's random module"
    return f"a NumPy {type(g).__name__}"


def _state(g: Any) -> Any:
    if isinstance(g, _PY_RNG):
        return g.getstate()
    bits = g.bit_generator if isinstance(g, numpy.random.Generator) else g._bit_generator
    return _freeze(bits.state)


def _freeze(state: Any) -> Any:
    if isinstance(state, dict):
        return tuple((k, _freeze(v)) for k, v in state.items())
    if isinstance(state, numpy.ndarray):
        return state.tobytes()
    return state


_RNG_TYPES = (numpy.random.Generator, numpy.random.RandomState, _PY_RNG)
# id() without its audit event (which replay's own audit hook makes a Python call): the
# object's address, rotated -- one number per object while it lives, as id() is.
_address = object.__hash__
_LEAVES = (numpy.ndarray, numpy.generic, str, bytes, int, float, complex, bool, type(None),
           type, types.ModuleType, fnp_random._Drawing)
_ITEMS = 1000  # items looked at in one container (a data set in a closure is not walked)
_OURS = frozenset({"funcgrad.combinators", "funcgrad.custom", "funcgrad.backprop",
                   "funcgrad.forward", "funcgrad.nn", "funcgrad.replay",
                   "funcgrad.jacobians", "funcgrad.arguments"})


# Exact types told apart without isinstance (which, against a tuple of a dozen types,
# was most of the walk's cost): leaves, and what is walked, being neither a leaf nor a
# generator.  Subclasses and other types go through the isinstance checks.
_LEAF_TYPES = frozenset({numpy.ndarray, numpy.float64, numpy.float32, numpy.int64, numpy.bool_,
                         str, bytes, int, float, complex, bool, type(None), type,
                         types.ModuleType})
_WALKED = frozenset({list, tuple, set, frozenset, dict, types.FunctionType, types.MethodType,
                     functools.partial})
_SEQUENCES = frozenset({list, tuple, set, frozenset})  # no attributes, no __self__


def _collect(obj: Any, found: dict, depth: int, visited: set) -> None:
    """NumPy and Python generators reachable from ``obj``: itself; bound methods of one
    (``from numpy.random import randn``); a function's closure, defaults, the globals
    its code names; an object's attributes; items of lists, tuples, sets and dicts;
    partials and wrapped functions -- a few levels deep."""
    t = type(obj)
    if t in _LEAF_TYPES:
        return
    if t not in _WALKED:
        if isinstance(obj, _RNG_TYPES):
            found[_address(obj)] = obj
            return
        if isinstance(obj, _LEAVES):
            return
    if depth > 5 or len(visited) > 5000:
        return
    key = _address(obj)
    if key in visited:
        return
    visited.add(key)
    if t in _SEQUENCES or t is dict:
        items = itertools.islice(obj if t is not dict else obj.values(), _ITEMS)
    else:
        owner = getattr(obj, "__self__", None)
        if owner is not None and isinstance(owner, _RNG_TYPES):
            found[_address(owner)] = owner
            return
        items = _reached(obj, owner)
    for o in items:
        _collect(o, found, depth + 1, visited)


def _reached(obj: Any, owner: Any) -> Iterable:
    """What ``_collect`` looks into from ``obj`` (one level; lazily, in order)."""
    t = type(obj)
    if t is types.FunctionType:
        return _reached_by_function(obj)
    if isinstance(obj, (list, tuple, set, frozenset)):
        return itertools.islice(obj, _ITEMS)
    if isinstance(obj, dict):
        return itertools.islice(obj.values(), _ITEMS)
    if isinstance(obj, functools.partial):
        return (obj.func, *obj.args, *obj.keywords.values())
    if isinstance(obj, types.MethodType):
        return obj.__func__, owner
    if isinstance(obj, types.FunctionType):
        return _reached_by_function(obj)
    return _reached_by_object(obj)


def _reached_by_function(f: types.FunctionType) -> Iterator:
    """Its closure; unless it is one of funcgrad's wrappers, also its defaults, the globals
    its code names and the function it wraps."""
    for cell in f.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        yield value
    glob = f.__globals__
    if f.__module__ in _OURS or glob.get("__name__") in _OURS:  # the code is one of ours:
        return  # functools.wraps gives funcgrad's wrappers the user's __module__
    yield from f.__defaults__ or ()
    yield from (f.__kwdefaults__ or {}).values()
    for name in code_names(f.__code__):
        if name in glob:
            yield glob[name]
    wrapped = getattr(f, "__wrapped__", None)
    if wrapped is not None:
        yield wrapped


def _reached_by_object(obj: Any) -> Iterator:
    inner = getattr(obj, "fun", None)  # fg.replay's Replayed, combinators' wrappers
    if callable(inner):
        yield inner
    attrs = getattr(obj, "__dict__", None)
    if isinstance(attrs, dict):
        yield from attrs.values()


def code_names(code: types.CodeType) -> tuple[str, ...]:
    """The names (globals, attributes) that a code object and the functions nested in it
    read, sorted.  Remembered by code object: a closure made anew at each call, as
    combinators and lambdas are, has the same code."""
    known = _CODE_NAMES.get(_address(code))
    if known is not None and known[0] is code:
        return known[1]
    found: set[str] = set()
    stack = [code]
    while stack:
        c = stack.pop()
        found.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    if len(_CODE_NAMES) > 4096:  # bounded: code made at run time (exec) starts it afresh
        _CODE_NAMES.clear()
    names = tuple(sorted(found))
    _CODE_NAMES[_address(code)] = (code, names)  # the code kept alive: its key its own
    return names


_CODE_NAMES: dict[int, tuple] = {}


__all__ = ["RandomWatch", "code_names", "generator_locks", "held_generators", "record",
           "restore_generators", "save_generators"]
