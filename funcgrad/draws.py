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
  reach, or made inside it) and Python's ``random``.  The watch is about the
  tracing thread's own draws: NumPy's module functions are looked up through
  wrappers that know which thread traces; Python's generators are seen by a
  profile function of the tracing thread alone (their methods are C
  functions, which a profiler sees called); a NumPy generator made without a
  seed is seen taking the OS's entropy; a NumPy generator held by the
  function is compared before and after.  Another thread drawing from NumPy's
  global generator (a data loader) is no draw of the trace.

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
import random as _pyrandom
import sys
import tempfile
import threading
import types
import weakref
from typing import Any

import numpy

from .errors import ReplayError
from .numpy import random as fnp_random
from .tracer import CALL, EFFECT, Slot, _emit, _is_array, _split, _split_kw, caller, current_tape

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
    raws, targs = _split(rest, tape)
    if owner is not None:
        raws = [owner, *raws]
        slot = owner._slot
        targs = (slot[1] if slot is not None and slot[0]() is tape else owner, *targs)
        if rest and rest[0] == "shuffle" and len(rest) > 2:
            tape._check_target(rest[2], "random.shuffle")
    if kwargs.get("out") is not None:  # random(out=a), standard_normal(out=a)...
        tape._check_target(kwargs["out"], name)
    rkw, tkw = _split_kw(kwargs, tape) if kwargs else ({}, None)
    value = fn(*raws, **rkw)
    if kind == "new":  # a generator made under the trace: a value of the plan
        k = tape.n
        tape.meta.append(((), type(value).__name__))
        tape.entries.append((CALL, fn, targs, tkw, k, name))
        value._slot = (weakref.ref(tape), Slot.of(k))
        return value
    if value is None:
        tape.entries.append((EFFECT, fn, targs, tkw, None, name))
        return None
    if _is_array(type(value)):
        return _emit(tape, fn, targs, tkw, value, name, False, EFFECT)
    tape.escape(f"{name} (returning a {type(value).__name__})")
    return value


fnp_random._HOOK[0] = record


# -- every other generator: refused -------------------------------------------------

_WATCHED = threading.local()  # .seen: the list of the trace running in this thread


def _seen(what: str, where: str) -> None:
    seen = getattr(_WATCHED, "seen", None)
    if seen is not None and current_tape() is not None:
        seen.append((what, where))


def _numpy_module_functions() -> dict:
    """The draws of NumPy's global generator, by module and name (bound methods of it)."""
    found = {}
    for module in (numpy.random, numpy.random.mtrand):
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name, None)
            if callable(value) and not isinstance(value, type):
                found[(module, name)] = value
    return found


def _python_module_functions() -> dict:
    glob = _pyrandom._inst
    return {(_pyrandom, n): getattr(_pyrandom, n) for n in dir(_pyrandom)
            if getattr(getattr(_pyrandom, n), "__self__", None) is glob}


def _wrapper(original: Any, what: str) -> Any:
    @functools.wraps(original)
    def draw(*args, **kwargs):
        if current_tape() is not None:
            _seen(what, caller())
        return original(*args, **kwargs)

    draw._funcgrad_original = original
    return draw


class _Patches:
    """Module functions swapped for thread-aware wrappers while any trace runs."""

    def __init__(self):
        self.lock = threading.Lock()
        self.active = 0
        self.saved: dict = {}

    def enter(self) -> None:
        with self.lock:
            self.active += 1
            if self.active > 1:
                return
            found = {}
            for (module, name), fn in _numpy_module_functions().items():
                found[(module, name)] = (fn, f"numpy.random.{name} (NumPy's global generator)"
                                         if name != "default_rng" else
                                         "numpy.random.default_rng (a NumPy Generator)")
            for (module, name), fn in _python_module_functions().items():
                found[(module, name)] = (fn, f"random.{name} (Python's random module)")
            for (module, name), (fn, what) in found.items():
                if getattr(fn, "_funcgrad_original", None) is not None:
                    continue
                self.saved[(module, name)] = fn
                setattr(module, name, _wrapper(fn, what))

    def exit(self) -> None:
        with self.lock:
            self.active -= 1
            if self.active:
                return
            for (module, name), fn in self.saved.items():
                if getattr(getattr(module, name, None), "_funcgrad_original", None) is fn:
                    setattr(module, name, fn)
            self.saved.clear()


_PATCHES = _Patches()
_PY_RNG = _pyrandom.Random
# Python functions that read the OS's entropy: SystemRandom's (and so the secrets
# module's, and NumPy's, which takes a seed from secrets.randbits when given none).
_ENTROPY_CODES = frozenset(getattr(_pyrandom.SystemRandom, n).__code__
                           for n in ("random", "getrandbits", "randbytes")
                           if hasattr(_pyrandom.SystemRandom, n))
_RANDOM_FILE = _pyrandom.__file__
# The standard library's own use of a private generator: temporary file names.
_NOT_DRAWS = frozenset({tempfile.__file__})


def _profile(frame: Any, event: str, arg: Any) -> None:
    """The tracing thread's profile function: Python's generators, and OS entropy."""
    if event == "c_call":
        owner = getattr(arg, "__self__", None)
        if isinstance(owner, _PY_RNG) and current_tape() is not None:
            user = frame
            while user is not None and user.f_code.co_filename == _RANDOM_FILE:
                user = user.f_back  # random.choice and friends: their caller
            if user is not None and user.f_code.co_filename in _NOT_DRAWS:
                return
            what = ("random." + arg.__name__ + " (Python's random module)"
                    if owner is _pyrandom._inst else
                    f"a {type(owner).__name__} of Python's random module (its "
                    f"{arg.__name__})")
            where = user if user is not None else frame
            _seen(what, f"{where.f_code.co_filename.rpartition('/')[2]}:{where.f_lineno}")
    elif event == "call" and frame.f_code in _ENTROPY_CODES and current_tape() is not None:
        _seen("the OS's entropy (secrets, random.SystemRandom, or a NumPy generator made "
              "without a seed)", caller())


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
        self.profiled = False
        self.outer: Any = None

    def start(self) -> None:
        self.outer = getattr(_WATCHED, "seen", None)
        _WATCHED.seen = []
        _PATCHES.enter()
        if sys.getprofile() is None:  # another profiler (cProfile) is left alone
            sys.setprofile(_profile)
            self.profiled = True

    def stop(self) -> str | None:
        if self.profiled and sys.getprofile() is _profile:
            sys.setprofile(None)
        _PATCHES.exit()
        seen, _WATCHED.seen = _WATCHED.seen, self.outer
        if seen:
            what, where = seen[0]
            return f"{what} at {where}"
        for g, before in self.held:
            if isinstance(g, _PY_RNG) and self.profiled:
                continue  # seen by the profile function
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
_LEAVES = (numpy.ndarray, numpy.generic, str, bytes, int, float, complex, bool, type(None),
           type, types.ModuleType, fnp_random._Drawing)
_ITEMS = 1000  # items looked at in one container (a data set in a closure is not walked)
_OURS = frozenset({"funcgrad.combinators", "funcgrad.custom", "funcgrad.backprop",
                   "funcgrad.forward", "funcgrad.nn", "funcgrad.replay"})


def _collect(obj: Any, found: dict, depth: int, visited: set) -> None:
    """NumPy and Python generators reachable from ``obj``: itself; bound methods of one
    (``from numpy.random import randn``); a function's closure, defaults, the globals
    its code names; an object's attributes; items of lists, tuples, sets and dicts;
    partials and wrapped functions -- a few levels deep."""
    if isinstance(obj, _RNG_TYPES):
        found[id(obj)] = obj
        return
    if depth > 5 or isinstance(obj, _LEAVES) or id(obj) in visited or len(visited) > 5000:
        return
    visited.add(id(obj))
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, _RNG_TYPES):
        found[id(owner)] = owner
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for o in itertools.islice(obj, _ITEMS):
            _collect(o, found, depth + 1, visited)
        return
    if isinstance(obj, dict):
        for o in itertools.islice(obj.values(), _ITEMS):
            _collect(o, found, depth + 1, visited)
        return
    if isinstance(obj, functools.partial):
        for o in (obj.func, *obj.args, *obj.keywords.values()):
            _collect(o, found, depth + 1, visited)
        return
    if isinstance(obj, types.MethodType):
        _collect(obj.__func__, found, depth + 1, visited)
        _collect(owner, found, depth + 1, visited)
        return
    code = getattr(obj, "__code__", None)
    if isinstance(obj, types.FunctionType) and code is not None:
        if obj.__module__ in _OURS:
            for cell in obj.__closure__ or ():
                try:
                    _collect(cell.cell_contents, found, depth + 1, visited)
                except ValueError:
                    pass
            return
        for cell in obj.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            _collect(value, found, depth + 1, visited)
        for value in obj.__defaults__ or ():
            _collect(value, found, depth + 1, visited)
        for value in (obj.__kwdefaults__ or {}).values():
            _collect(value, found, depth + 1, visited)
        glob = obj.__globals__
        for name in _names(code):
            if name in glob:
                _collect(glob[name], found, depth + 1, visited)
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is not None:
            _collect(wrapped, found, depth + 1, visited)
        return
    inner = getattr(obj, "fun", None)  # fg.replay's Replayed, combinators' wrappers
    if callable(inner):
        _collect(inner, found, depth + 1, visited)
    attrs = getattr(obj, "__dict__", None)
    if isinstance(attrs, dict):
        for o in attrs.values():
            _collect(o, found, depth + 1, visited)


def _names(code: types.CodeType) -> set:
    """The global names a code object and the functions nested in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


__all__ = ["RandomWatch", "record"]
