"""``fg.replay``: trace a function once, then run its flat plan (layer 6).

``replay(fun)`` wraps any function -- a loss, ``fg.value_and_grad(loss)``,
``fg.hessian(f)``, a ``grad`` of a ``grad``.  The first call with a given
*signature* (the arguments' pytree structure, each array's type, shape, dtype
and device, the type and value of each int, bool, string and static argument;
arrays and floats are dynamic, any other argument is refused) runs
``fun`` eagerly on recording arrays (:mod:`funcgrad.tracer`) and keeps the
:class:`~funcgrad.plan.Plan` it recorded: the forward primitives, the backward
rules and the folds' sums as one straight list of raw-array calls.  Later
calls with that signature run the plan: no Node, no graph, no fold, the array
namespace called directly, with the same functions and arguments as an eager
call, so results are bit-identical to eager.

A replay is never silently stale: wherever traced data reached Python during
the trace (``if loss > 0``, ``int(n)``, ``float(x)``, ``.item()``, a shape
that depends on data, a NaN check of :func:`fg.debug_nans`), the plan
recomputes the value and compares; a difference traces again, and the cache
keeps both plans.  What the function reads besides its arguments -- arrays and
names of its closure and globals, attributes -- is watched between calls
(:mod:`funcgrad.reads`): a change traces again.  What no guard can capture --
``print`` or ``repr`` of a traced value, ``numpy.asarray`` of one, random
numbers drawn inside ``fun``, a clock, a file read --
raises :class:`~funcgrad.tracer.ReplayError` (or, with ``fallback=True``, runs
eagerly).

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> f = fg.replay(fg.value_and_grad(lambda x: fnp.sum(fnp.tanh(x) ** 2)))
>>> x = numpy.array([0.5, -1.0])
>>> f(x)[1]                               # traces
array([ 0.72686198, -0.63970001])
>>> f(2 * x)[1]                           # replays the plan
array([ 0.63970001, -0.13621869])
>>> f.stats
ReplayStats(calls=2, hits=1, traces=1, retraces=0, eager=0, evictions=0, plans=1)
"""

from __future__ import annotations

import functools
import inspect
import os
import random
import sys
import threading
import types
import warnings
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, NamedTuple

import numpy
import optree

from . import backend, tree
from .draws import RandomWatch
from .errors import FuncgradTypeError, ReplayError
from .hooks import HOOK_WATCH, HOOKS, debugging_nans
from .node import Node
from .numpy import random as fnp_random
from .plan import GuardFailed, Plan, same
from .reads import snapshot
from .tracer import Tape, current_tape, is_traced


class ReplayWarning(UserWarning):
    """A replayed function keeps tracing: its plans do not stay valid from call to call."""


class ReplayStats(NamedTuple):
    """Counters of one replayed function (``f.stats``).

    ``calls`` every call; ``hits`` calls answered by a plan; ``traces`` calls
    that traced (a new signature, or a guard that changed); ``retraces`` the
    traces caused by a changed guard; ``eager`` calls run as plain calls
    (hooks, Node arguments, ``fallback``); ``evictions`` plans dropped to keep
    the cache at its size; ``plans`` plans held now.
    """

    calls: int
    hits: int
    traces: int
    retraces: int
    eager: int
    evictions: int
    plans: int


_EAGER = "eager"  # a cache entry: run this signature as a plain call


class Replayed:
    """A function that traces once per signature and replays the plan (see :func:`replay`)."""

    def __init__(self, fun: Callable, max_plans: int = 16, fallback: bool = False,
                 compile_after: int | None = 32, static_argnums: Any = (),
                 static_argnames: Any = ()):
        if not callable(fun):
            raise FuncgradTypeError(f"replay() needs a callable, got {type(fun).__name__}")
        if not isinstance(max_plans, int) or isinstance(max_plans, bool) or max_plans < 1:
            raise FuncgradTypeError(f"replay: max_plans must be an int >= 1, got {max_plans!r}")
        if compile_after is not None and (not isinstance(compile_after, int)
                                          or compile_after < 0):
            raise FuncgradTypeError(
                f"replay: compile_after must be None or an int >= 0, got {compile_after!r}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.max_plans = max_plans
        self.fallback = bool(fallback)
        self.compile_after = compile_after
        # The names of the positional parameters: read (inspect.signature is slow) for
        # static arguments and for the message of a refused argument only.
        statics = static_argnums not in ((), None) or static_argnames not in ((), None)
        self._params = _parameters(fun) if statics else _UNREAD
        self._static = (_Statics(static_argnums, static_argnames, self._params) if statics
                        else _NO_STATICS)
        # signature -> list of plans (most recently used first), or _EAGER
        self._cache: OrderedDict[Any, Any] = OrderedDict()
        self._n_plans = 0
        self._n_eager = 0
        self._counts = {"calls": 0, "hits": 0, "traces": 0, "retraces": 0, "eager": 0,
                        "evictions": 0}
        self._warned = False
        # One lock for the cache and the counters: plans run outside it, so that
        # threads replay at once, and a trace holds it only to store its plan.
        self._lock = threading.Lock()

    # -- the counters and the plans ------------------------------------------------
    @property
    def stats(self) -> ReplayStats:
        """A snapshot of the counters (:class:`ReplayStats`)."""
        with self._lock:
            return ReplayStats(**self._counts, plans=self._n_plans)

    @property
    def plans(self) -> tuple[Plan, ...]:
        """The plans held, most recently used first."""
        found = []
        with self._lock:
            for plans in reversed(self._cache.values()):
                if plans is not _EAGER:
                    found += plans
        return tuple(found)

    def clear(self) -> None:
        """Drop every plan (the counters stay)."""
        with self._lock:
            self._cache.clear()
            self._n_plans = 0
            self._n_eager = 0

    def __repr__(self) -> str:
        return f"<replay of {getattr(self.fun, '__qualname__', self.fun)!r}: {self.stats}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)

    # -- a call ------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if HOOKS.get():  # hooks watch each backward step: a plan has none
            return self._eager(args, kwargs)
        static = self._static
        if static.any:
            dyn_args, dyn_kwargs, static_key = static.split(args, kwargs)
        else:
            dyn_args, dyn_kwargs, static_key = args, kwargs, ()
        key, inputs, treedef, leaves = _signature(dyn_args, dyn_kwargs, self)
        if key is None:  # Node arguments, or inside another trace: a plain call
            if current_tape() is not None:
                with self._lock:
                    self._counts["calls"] += 1
                return self.fun(*args, **kwargs)
            return self._eager(args, kwargs)
        key = (key, static_key, debugging_nans())
        with self._lock:
            self._counts["calls"] += 1
            plans = self._cache.get(key)
            if plans is _EAGER:
                self._cache.move_to_end(key)
                self._counts["eager"] += 1
            elif plans:
                first = plans[0]
        if plans is _EAGER:
            return self.fun(*args, **kwargs)
        if plans:
            plan, leaves_out = self._replay(key, plans, first, inputs)
            if plan is _FAILED:  # an error inside the plan: eager's own error, eagerly
                with self._lock:
                    self._counts["eager"] += 1
                return self.fun(*args, **kwargs)
            if plan is not None:
                return tree.unflatten(plan.out_treedef, leaves_out)
        return self._trace(key, args, kwargs, inputs, treedef, leaves, bool(plans))

    def _replay(self, key: Any, plans: list, plan: Plan, inputs: list) -> tuple:
        """``(plan, output leaves)`` as :meth:`_run` gives them, the hit counted; ``plan``,
        the one used last (read under the lock), is tried first: the common case."""
        lock = self._lock
        world = plan.world
        if (world is None or world.holds()) and plan.hits != self.compile_after:
            try:
                leaves_out = plan.run(inputs)
            except GuardFailed as failed:
                with lock:
                    plans = tuple(plans)
                plan, leaves_out = self._run(plans, inputs, (plan, failed))
            except Exception:  # noqa: BLE001  (the eager call raises eager's error)
                return _FAILED, None
        else:
            with lock:
                plans = tuple(plans)
            plan, leaves_out = self._run(plans, inputs)
        if plan is not None and plan is not _FAILED:
            with lock:
                self._counts["hits"] += 1
                plan.hits += 1
                if plans and plans[0] is plan and self._cache.get(key) is plans:
                    self._cache.move_to_end(key)
                else:  # evicted or reordered meanwhile (another thread), or not the first
                    self._cache_hit(key, plan)
        return plan, leaves_out

    def _run(self, plans: tuple, inputs: list, first: tuple | None = None) -> tuple:
        """``(plan, output leaves)`` of the first plan whose world and guards hold;
        ``(None, None)`` if none does; ``(_FAILED, None)`` if a step raised.  ``first``:
        the plan already tried and the guard that failed in it."""
        tried: list = []
        plan = None
        if first is not None:
            tried.append(first[0])
            plan = _other_plan(plans, first[0], first[1], tried)
        else:
            for p in plans:
                w = p.world
                if w is None or w.holds():
                    plan = p
                    break
        while plan is not None:
            if plan.hits == self.compile_after:  # once per plan: it has been hot
                plan.compile()
            try:
                return plan, plan.run(inputs)
            except GuardFailed as failed:
                tried.append(plan)
                plan = _other_plan(plans, plan, failed, tried)
            except Exception:  # noqa: BLE001  (the eager call raises eager's error)
                return _FAILED, None
        return None, None

    def _cache_hit(self, key: Any, plan: Plan) -> None:
        """``plan`` answered: its signature and itself most recently used (lock held)."""
        plans = self._cache.get(key)
        if plans and plans is not _EAGER:
            self._cache.move_to_end(key)
            if plans[0] is not plan and plan in plans:
                plans.remove(plan)
                plans.insert(0, plan)

    def _eager(self, args: tuple, kwargs: dict) -> Any:
        with self._lock:
            self._counts["calls"] += 1
            self._counts["eager"] += 1
        return self.fun(*args, **kwargs)

    def _trace(self, key, args, kwargs, inputs, treedef, leaves, retrace) -> Any:
        with self._lock:
            counts = self._counts
            counts["traces"] += 1
            if retrace:
                counts["retraces"] += 1
        static = self._static
        roots = [self.fun, *static.values(args, kwargs)] if static.any else [self.fun]
        before = snapshot(roots)
        tape = Tape(self.fallback)
        traced_args, traced_kwargs = self._traced_arguments(tape, inputs, treedef, leaves,
                                                            args, kwargs)
        rng_watch = RandomWatch(self.fun, (args, kwargs))  # every argument, static ones too
        watch: list = []
        watch_token = HOOK_WATCH.set(watch)
        opened: list = []
        opened_token = _opening(opened)
        moved = None
        try:
            rng_watch.start()
            with tape.active():
                out = self.fun(*traced_args, **traced_kwargs)
            out_leaves, out_def = tree.flatten(out)
            del out
            template, values = _output_template(out_leaves, tape)
        finally:
            tape.open = False
            HOOK_WATCH.reset(watch_token)
            _OPENED.reset(opened_token)
            moved = rng_watch.stop()
        if watch or tape.tainted:
            after = None
        elif before.holds():  # all the function read as it was: a second walk would find
            after = before  # the same places (the walk reaches them through those places)
        else:
            after = snapshot(roots, before)
        why = "hooks" if watch else self._unreplayable(tape, before, opened, moved, after)
        if why is not None:  # hooks: documented to run eagerly, quietly
            self._store(key, _EAGER)
        else:
            self._store(key, self._watched(Plan(tape, template, out_def, _describe(inputs)),
                                           after))
        return tree.unflatten(out_def, values)

    def _traced_arguments(self, tape: Tape, inputs: list, treedef: Any, leaves: Any,
                          args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The arguments the function is traced with: each input a traced value of ``tape``."""
        inputs_at = iter(tape.input(v) for v in inputs)
        if treedef is None:  # the fast signature: positional arrays only
            return tuple(inputs_at), {}
        dynamic = _dynamic_mask(leaves)
        wrapped = [next(inputs_at) if d else v for v, d in zip(leaves, dynamic, strict=True)]
        traced_args, traced_kwargs = tree.unflatten(treedef, wrapped)
        if self._static.any:
            return self._static.join(traced_args, traced_kwargs, args, kwargs)
        return traced_args, traced_kwargs

    def _unreplayable(self, tape: Tape, before: Any, opened: list, moved: str | None,
                      after: Any = None) -> str | None:
        """Why the trace cannot be a plan (None if it can): with ``fallback``, the reason;
        without, it raises, naming what the function did.  ``after``: the snapshot taken
        after the trace (from ``before``), which spares comparing again what it found
        unchanged."""
        if tape.tainted:
            return tape.tainted
        if before.clocks or opened:
            what = (f"read the clock {before.clocks[0]}" if before.clocks else
                    f"opened the file {opened[0]!r}")
            self._refuse(what, "while it was traced; a plan would keep what it read at every "
                         "call. Read it outside and pass it in as an argument")
            return what
        if moved:
            self._refuse(f"drew random numbers from {moved}",
                         "while it was traced; a plan would repeat those numbers at every "
                         "call. Draw them with fnp.random (also fg.random: NumPy's API and "
                         "numbers, whose draws are steps of the plan), or outside the function "
                         "and pass them in")
            return moved
        changed = None if after is before else before.changed(strict=True, later=after)
        if changed is not None:
            self._refuse(f"changed {changed}",
                         "while it was traced; a plan cannot redo that, and would read the "
                         "changed value at every call. Pass it in as an argument and return "
                         "its new value")
        return changed

    def _refuse(self, what: str, why: str) -> None:
        if not self.fallback:
            raise ReplayError(f"fg.replay: the function {what} {why}, or pass fallback=True "
                              "to fg.replay to run such calls eagerly")

    def _watched(self, plan: Plan, world: Any) -> Plan:
        """``plan``, watching ``world``: what the function read besides its arguments."""
        plan.world = world if len(world) else None
        n_bytes = sum(row[0].nbytes for row in world.arrays)
        if len(world) > WATCH_WARN_PLACES or n_bytes > WATCH_WARN_BYTES:
            warnings.warn(
                f"fg.replay({getattr(self.fun, '__name__', 'fun')}): the function reads "
                f"{len(world)} places besides its arguments ({n_bytes} bytes of arrays), "
                "which every call checks for changes; pass large or many values as "
                "arguments (they cost nothing to watch)", ReplayWarning, stacklevel=4)
        return plan

    def _store(self, key: Any, plan: Any) -> None:
        with self._lock:
            cache = self._cache
            old = cache.get(key)
            if plan is _EAGER:
                if old is not _EAGER:
                    if old:
                        self._n_plans -= len(old)
                    self._n_eager += 1
                cache[key] = _EAGER
                cache.move_to_end(key)
                while self._n_eager > self.max_plans:  # the eager entries are bounded too
                    self._evict(eager=True)
                return
            if not old or old is _EAGER:
                if old is _EAGER:
                    self._n_eager -= 1
                old = cache[key] = []
            old.insert(0, plan)
            cache.move_to_end(key)
            self._n_plans += 1
            while self._n_plans > self.max_plans:
                self._evict()
            warn = self._counts["evictions"] >= self.max_plans and not self._warned
            self._warned = self._warned or warn
        if warn:  # outside the lock: a warning filter may read f.stats
            warnings.warn(
                f"fg.replay({getattr(self.fun, '__name__', 'fun')}): {self.max_plans} plans "
                "evicted; the function keeps tracing (a guard such as float() of data "
                "changes at most calls, the argument signatures vary, or a closed-over or "
                "global value it reads keeps changing): see f.plans and f.stats",
                ReplayWarning, stacklevel=4)

    def _evict(self, eager: bool = False) -> None:
        """Drop the least recently used plan (or eager entry); the lock is held."""
        for key, plans in self._cache.items():  # least recently used signature first
            if (plans is _EAGER) is not eager:
                continue
            if eager:
                del self._cache[key]
                self._n_eager -= 1
                return
            plans.pop()
            if not plans:
                del self._cache[key]
            break
        self._n_plans -= 1
        self._counts["evictions"] += 1


def _output_template(out_leaves: list, tape: Tape) -> tuple[list, list]:
    """``(template, values)`` of the function's output leaves: a traced leaf's slot and its
    raw value, or a plain leaf itself (returned again by every replay)."""
    template, values = [], []
    for leaf in out_leaves:
        if is_traced(leaf):
            if leaf.tape is not tape:
                raise ReplayError("fg.replay: the function returned a traced value "
                                  "of another call")
            template.append(leaf.mark)
            values.append(leaf.v)
        elif type(leaf) is Node:
            raise ReplayError(
                "fg.replay: the function returned a funcgrad Node; replay functions "
                "that return arrays (wrap the combinator, as in "
                "fg.replay(fg.grad(f)), not the reverse)")
        elif not _plain_output(leaf):
            raise ReplayError(
                f"fg.replay: the function returned a {type(leaf).__qualname__}, which "
                "is not a pytree of arrays: a replay would return the trace's own "
                "object at every call. Return arrays, numbers, or containers of them, "
                "or register the class as a pytree (fg.tree.register_dataclass, "
                "fg.tree.register_node)")
        else:
            template.append(leaf)
            values.append(leaf)
    return template, values


_FAILED = object()  # a step of the plan raised
# Beyond these, watching what a function reads besides its arguments costs more than a
# fraction of a millisecond per call: a warning says so, once per trace.
WATCH_WARN_PLACES = 10_000
WATCH_WARN_BYTES = 1 << 26

# Files opened while a trace runs in this context (an audit hook, installed once).
_OPENED: ContextVar[list | None] = ContextVar("funcgrad_replay_opened", default=None)
_HOOK_INSTALLED: list = []
_NOT_DATA = (".py", ".pyc", ".so", ".pyd", ".pth", ".dylib")  # imports, not data


def _audit(event: str, args: tuple) -> None:
    if event == "open":
        opened = _OPENED.get()
        if opened is not None and len(args) == 3 and _reads_old_data(args[1], args[2]):
            path = args[0]
            if isinstance(path, (str, bytes)) and not os.fsdecode(path).endswith(_NOT_DATA):
                opened.append(os.fsdecode(path))
            elif isinstance(path, int):  # os.fdopen, a descriptor
                opened.append(f"file descriptor {path}")


def _reads_old_data(mode: Any, flags: Any) -> bool:
    """Whether an ``open`` (builtin ``mode``, or ``os.open``'s ``flags``) can read what the
    file held before the call: a file written, created anew or emptied cannot (writing
    is a side effect, as ``print`` is: done when the function is traced)."""
    if isinstance(mode, str):
        return "r" in mode or ("a" in mode and "+" in mode)
    if not isinstance(flags, int):
        return True
    if flags & os.O_ACCMODE == os.O_WRONLY or flags & os.O_TRUNC:
        return False
    return not (flags & os.O_CREAT and flags & os.O_EXCL)


def _opening(opened: list) -> Any:
    if not _HOOK_INSTALLED:
        with _INSTALL_LOCK:
            if not _HOOK_INSTALLED:
                sys.addaudithook(_audit)
                _HOOK_INSTALLED.append(True)
    return _OPENED.set(opened)


_INSTALL_LOCK = threading.Lock()


def replay(fun: Callable | None = None, *, max_plans: int = 16, fallback: bool = False,
           compile_after: int | None = 32, static_argnums: Any = (),
           static_argnames: Any = ()) -> Any:
    """``fun``, traced once per input signature and replayed as a flat plan afterwards.

    - Arguments: arrays, Python floats and NumPy floating scalars are dynamic
      (a new value runs the plan again), pytrees of them too (tuples, lists,
      dicts, classes registered with :func:`fg.tree.register_dataclass`);
      Python ints, bools, strings and None are part of the signature, by type
      and value.  ``static_argnums`` / ``static_argnames`` name arguments that
      are part of the signature as they are (hashable: a config, a flag...).
      Any other argument raises ``TypeError`` at the first call, naming it.
    - ``max_plans``: the most plans kept (all signatures together); the least
      recently used goes first.  ``f.stats`` counts calls, hits, traces,
      retraces (a guard changed, or a value read from the closure or globals),
      eager calls and evictions; ``f.plans`` lists the plans (inspectable:
      ``str``, ``to_dot()``, Jupyter).
    - ``fallback``: what to do with a function a plan cannot replay (it prints
      or converts a traced value, draws random numbers): raise
      :class:`~funcgrad.tracer.ReplayError` (False), or run it eagerly at
      every call of that signature (True; at most ``max_plans`` such
      signatures are remembered).
    - ``compile_after``: once a plan has been replayed this many times, compile
      it into one straight-line function, which saves the dispatch of each step
      (0: before its first replay; None: never).  Compiling costs about as much
      as a few dozen replays of the plan.

    Called with Nodes (inside a function being differentiated), or while another
    replay is tracing, ``fun`` simply runs.  Active :func:`fg.hooks` (or hooks
    given to ``fg.backprop`` inside ``fun``) make the call eager: hooks watch
    every backward step, and a plan has none.  Works as a decorator, with or
    without arguments; one replayed function may be called from many threads.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> @fg.replay
    ... def step(w, x, lr):
    ...     return w - lr * fg.grad(lambda w: fnp.mean((x @ w) ** 2))(w)
    >>> step(numpy.ones(2), numpy.eye(2), 0.5)
    array([0.5, 0.5])
    >>> step(numpy.ones(2), numpy.eye(2), 0.25), step.stats.traces   # a new lr: no new trace
    (array([0.75, 0.75]), 1)
    """
    def make(f: Callable) -> Replayed:
        return Replayed(f, max_plans, fallback, compile_after, static_argnums, static_argnames)

    if fun is None:
        return make
    return make(fun)


# -- signatures -------------------------------------------------------------------


_STATIC = object()  # where a static argument was, in the arguments flattened
_UNREAD = object()  # parameter names not read yet


def _parameters(fun: Callable) -> list[str] | None:
    """The names of ``fun``'s positional parameters (None when they cannot be read)."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


class _Statics:
    """``static_argnums`` and ``static_argnames``, each known by both (JAX's rule)."""

    def __init__(self, nums: Any, names: Any, params: list[str] | None):
        nums = (nums,) if isinstance(nums, int) else tuple(nums)
        names = (names,) if isinstance(names, str) else tuple(names)
        for n in nums:
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise FuncgradTypeError(
                    f"replay: static_argnums must be ints >= 0, got {n!r}")
        for n in names:
            if not isinstance(n, str):
                raise FuncgradTypeError(f"replay: static_argnames must be strings, got {n!r}")
        nums_set, names_set = set(nums), set(names)
        for i, p in enumerate(params or ()):
            if p in names_set:
                nums_set.add(i)
            if i in nums_set:
                names_set.add(p)
        self.nums = frozenset(nums_set)
        self.names = frozenset(names_set)
        self.any = bool(self.nums or self.names)

    def split(self, args: tuple, kwargs: dict) -> tuple[tuple, dict, tuple]:
        nums, names = self.nums, self.names
        key = []
        dyn_args = list(args)
        for i in sorted(nums):
            if i < len(args):
                key.append((i, _static_key(args[i], f"static argument {i}")))
                dyn_args[i] = _STATIC
        dyn_kwargs = dict(kwargs)
        for k in sorted(names & kwargs.keys()):
            key.append((k, _static_key(kwargs[k], f"static argument {k!r}")))
            dyn_kwargs[k] = _STATIC
        return tuple(dyn_args), dyn_kwargs, tuple(key)

    def values(self, args: tuple, kwargs: dict) -> list:
        return ([a for i, a in enumerate(args) if i in self.nums]
                + [v for k, v in kwargs.items() if k in self.names])

    def join(self, traced_args: tuple, traced_kwargs: dict, args: tuple,
             kwargs: dict) -> tuple[tuple, dict]:
        """The traced arguments with the static ones put back."""
        out_args = tuple(args[i] if i in self.nums else a for i, a in enumerate(traced_args))
        out_kwargs = {k: kwargs[k] if k in self.names else v for k, v in traced_kwargs.items()}
        return out_args, out_kwargs


_NO_STATICS = _Statics((), (), None)  # shared: it holds nothing of a function's own


def _static_key(v: Any, what: str) -> Any:
    """A key of ``v`` for the signature: by type and value, signed zeros and NaNs told
    apart (``0.0 == -0.0`` would make two signatures one)."""
    try:
        hash(v)
    except TypeError:
        raise FuncgradTypeError(
            f"replay: {what} (a {type(v).__name__}) is not hashable; a static argument is "
            "part of the signature and must be hashable (a tuple rather than a list, a "
            "frozen dataclass...)") from None
    return _value_key(v)


def _value_key(v: Any) -> Any:
    t = type(v)
    if t is float:
        return (t, v.hex())
    if t is complex:
        return (t, v.real.hex(), v.imag.hex())
    if isinstance(v, numpy.generic):
        return (t, v.tobytes())
    if t is tuple or t is frozenset:
        return (t, tuple(_value_key(o) for o in v))
    return (t, v)


_STATIC_LEAVES = frozenset({int, bool, str, bytes, type(None), complex})


def _signature(args: tuple, kwargs: dict, replayed: Replayed) -> tuple:
    """``(key, inputs, treedef, leaves)``; key None when the call must simply run."""
    if not kwargs:  # fast path: NumPy arrays as the positional arguments
        sig = []
        for a in args:
            if type(a) is not numpy.ndarray:
                break
            sig.append((a.shape, a.dtype))
        else:
            return tuple(sig), list(args), None, None
    leaves, treedef = tree.flatten((args, kwargs))
    sig = [treedef]
    inputs = []
    for i, leaf in enumerate(leaves):
        t = type(leaf)
        if t is numpy.ndarray:
            sig.append((t, leaf.shape, leaf.dtype))
            inputs.append(leaf)
        elif t is float:  # dynamic, as in JAX
            sig.append(t)
            inputs.append(leaf)
        elif t in _STATIC_LEAVES:
            sig.append(_value_key(leaf))
        elif leaf is _STATIC:
            sig.append(None)
        elif t is Node or is_traced(leaf):
            return None, None, None, None
        elif isinstance(leaf, numpy.generic):
            if leaf.dtype.kind in "fc":  # NumPy floating scalars are dynamic
                sig.append((t, leaf.dtype))
                inputs.append(leaf)
            elif leaf.dtype.kind in "biu":
                sig.append(_value_key(leaf))
            else:
                raise _refused(replayed, args, kwargs, i, leaf)
        elif isinstance(leaf, numpy.ndarray):
            # A subclass (numpy.matrix, a masked array): its arithmetic is not an
            # array's; the eager call handles it (or refuses it) as it does.
            return None, None, None, None
        elif backend.lookup(t) is not None:
            sig.append((t, leaf.shape, leaf.dtype, backend.device_of(leaf)))
            inputs.append(leaf)
        elif _by_identity(t):
            sig.append(_Identity(leaf))
        else:
            raise _refused(replayed, args, kwargs, i, leaf)
    orders = _dict_orders(args, kwargs)
    if orders:
        sig.append(orders)
    return tuple(sig), inputs, treedef, leaves


def _dict_orders(args: tuple, kwargs: dict) -> tuple:
    """The key order of every dict in the arguments: pytrees of dicts that differ only in
    it have equal structures, but eager results (gradients) follow it."""
    found: list = []
    stack = list(args)
    stack.extend(kwargs.values())
    while stack:
        o = stack.pop()
        t = type(o)
        if t is dict:
            found.append(tuple(o))
            stack.extend(o.values())
        elif t is list or t is tuple:
            stack.extend(o)
    return tuple(found)


def _by_identity(t: type) -> bool:
    """Arguments in the signature by identity: ``fnp.random``'s generators (their draws
    are steps of the plan, made from the generator the call was traced with)."""
    return issubclass(t, fnp_random._Drawing)


class _Identity:
    """A signature entry equal only to itself's object (and keeping it alive)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return type(other) is _Identity and other.obj is self.obj


_GENERATORS = (numpy.random.Generator, numpy.random.RandomState, numpy.random.BitGenerator,
               random.Random)


def _refused(replayed: Replayed, args: tuple, kwargs: dict, index: int, leaf: Any) -> Exception:
    """The TypeError for an argument that is neither dynamic nor a signature value."""
    where = f"argument leaf {index}"
    try:
        paths = optree.tree_flatten_with_path((args, kwargs), namespace=tree.NAMESPACE)[0]
        path = paths[index]
    except Exception:  # noqa: BLE001  (a message only)
        path = None
    if path:
        if replayed._params is _UNREAD:
            replayed._params = _parameters(replayed.fun)
        params = replayed._params or []
        if path[0] == 0 and len(path) > 1:
            pos = path[1]
            name = params[pos] if isinstance(pos, int) and pos < len(params) else None
            where = f"argument {pos}" + (f" ({name!r})" if name else "")
            rest = path[2:]
        else:
            where = f"argument {path[1]!r}" if len(path) > 1 else "an argument"
            rest = path[2:]
        if rest:
            where += " at " + "".join(f"[{p!r}]" for p in rest)
    kind = type(leaf).__qualname__
    fun = getattr(replayed.fun, "__qualname__", "fun")
    if isinstance(leaf, _GENERATORS):
        owner = "a NumPy" if isinstance(leaf, _GENERATORS[:3]) else "a Python"
        return ReplayError(
            f"fg.replay({fun}): {where} is {owner} {kind}: a plan would repeat its draws at "
            "every call. Draw with fnp.random (also fg.random: NumPy's API and numbers, "
            "whose draws are steps of the plan) and pass its generator, or draw outside and "
            "pass the numbers in")
    return FuncgradTypeError(
        f"fg.replay({fun}): {where} is a {kind}, which a plan cannot follow: it is neither an "
        "array, a number, a string, nor a registered pytree, and what it holds could change "
        f"between calls unseen. Either register {kind} as a pytree "
        f"(fg.tree.register_dataclass({kind}) or fg.tree.register_node), so that its arrays "
        "are inputs of the plan, or declare the argument static (fg.replay(..., "
        "static_argnums=..., static_argnames=...)), so that it is part of the signature")


def _plain_output(leaf: Any) -> bool:
    """Leaves a replay can return again: numbers, strings, None, arrays (copied)."""
    t = type(leaf)
    return (t in _STATIC_LEAVES or t is float or isinstance(leaf, (numpy.ndarray, numpy.generic))
            or backend.lookup(t) is not None)


def _dynamic_mask(leaves: list) -> list[bool]:
    return [_is_input(v) for v in leaves]


def _is_input(v: Any) -> bool:
    t = type(v)
    if t is numpy.ndarray or t is float:
        return True
    if isinstance(v, numpy.generic):
        return v.dtype.kind in "fc"
    return (t not in _STATIC_LEAVES and v is not _STATIC and not isinstance(v, numpy.ndarray)
            and backend.lookup(t) is not None)


def _describe(inputs: list) -> str:
    return ", ".join([_described(a) for a in inputs])


def _described(a: Any) -> str:
    """``float``, or ``dtype(shape)``: NumPy's dtype names are made in Python (about 10k
    instructions each, a tenth of a small function's first call): remembered."""
    if type(a) is float:
        return "float"
    key = (getattr(a, "dtype", "?"), tuple(getattr(a, "shape", ())))
    text = _DESCRIBED.get(key)
    if text is None:
        if len(_DESCRIBED) > 1024:
            _DESCRIBED.clear()
        text = _DESCRIBED[key] = f"{key[0]}{key[1]}"
    return text


_DESCRIBED: dict = {}


def _other_plan(plans: tuple, failed_plan: Plan, failed: GuardFailed,
                tried: list) -> Plan | None:
    """The plan traced where the failed guard gave ``failed.observed`` (same guards before),
    whose world holds, not tried yet."""
    k = failed.ordinal
    prefix = failed_plan.guard_values[:k]
    for plan in plans:
        g = plan.guard_values
        if plan not in tried and len(g) > k and same(g[k], failed.observed) and all(
            same(a, b) for a, b in zip(g[:k], prefix, strict=True)
        ) and (plan.world is None or plan.world.holds()):
            return plan
    return None


__all__ = ["ReplayError", "ReplayStats", "ReplayWarning", "Replayed", "replay"]
