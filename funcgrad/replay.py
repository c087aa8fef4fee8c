"""``fg.replay``: trace a function once, then run its flat plan (layer 6).

``replay(fun)`` wraps any function -- a loss, ``fg.value_and_grad(loss)``,
``fg.hessian(f)``, a ``grad`` of a ``grad``.  The first call with a given
*signature* (the arguments' pytree structure, each array's type, shape, dtype
and device, and the value of every argument that is not an array) runs
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
keeps both plans.  What no guard can capture -- ``print`` or ``repr`` of a
traced value, ``numpy.asarray`` of one, random numbers drawn inside ``fun`` --
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
import types
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy

from . import backend, tree
from .draws import RandomWatch
from .errors import FuncgradTypeError, ReplayError
from .hooks import _HOOK_WATCH, _HOOKS, debugging_nans
from .node import Node
from .plan import GuardFailed, Plan, same
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
                 compile_after: int | None = 32):
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
        # signature -> list of plans (most recently used first), or _EAGER
        self._cache: OrderedDict[Any, Any] = OrderedDict()
        self._n_plans = 0
        self._counts = {"calls": 0, "hits": 0, "traces": 0, "retraces": 0, "eager": 0,
                        "evictions": 0}
        self._warned = False

    # -- the counters and the plans ------------------------------------------------
    @property
    def stats(self) -> ReplayStats:
        """A snapshot of the counters (:class:`ReplayStats`)."""
        return ReplayStats(**self._counts, plans=self._n_plans)

    @property
    def plans(self) -> tuple[Plan, ...]:
        """The plans held, most recently used first."""
        found = []
        for plans in reversed(self._cache.values()):
            if plans is not _EAGER:
                found += plans
        return tuple(found)

    def clear(self) -> None:
        """Drop every plan (the counters stay)."""
        self._cache.clear()
        self._n_plans = 0

    def __repr__(self) -> str:
        return f"<replay of {getattr(self.fun, '__qualname__', self.fun)!r}: {self.stats}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)

    # -- a call ------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        counts = self._counts
        counts["calls"] += 1
        if _HOOKS.get():  # hooks watch each backward step: a plan has none
            return self._eager(args, kwargs)
        key, inputs, treedef, leaves = _signature(args, kwargs)
        if key is None:  # Node arguments, or inside another trace: a plain call
            if current_tape() is not None:
                return self.fun(*args, **kwargs)
            return self._eager(args, kwargs)
        key = (key, debugging_nans())
        plans = self._cache.get(key)
        if plans is _EAGER:
            self._cache.move_to_end(key)
            return self._eager(args, kwargs)
        retrace = False
        if plans:
            plan = plans[0]
            while True:
                if plan.hits == self.compile_after:  # once per plan: it has been hot
                    plan.compile()
                try:
                    leaves_out = plan.run(inputs)
                except GuardFailed as failed:
                    plan = _other_plan(plans, plan, failed)
                    if plan is None:
                        retrace = True
                        break
                    continue
                self._cache.move_to_end(key)
                if plans[0] is not plan:
                    plans.remove(plan)
                    plans.insert(0, plan)
                counts["hits"] += 1
                plan.hits += 1
                return tree.unflatten(plan.out_treedef, leaves_out)
        return self._trace(key, args, kwargs, inputs, treedef, leaves, retrace)

    def _eager(self, args: tuple, kwargs: dict) -> Any:
        self._counts["eager"] += 1
        return self.fun(*args, **kwargs)

    def _trace(self, key, args, kwargs, inputs, treedef, leaves, retrace) -> Any:
        counts = self._counts
        counts["traces"] += 1
        if retrace:
            counts["retraces"] += 1
        tape = Tape(self.fallback)
        inputs_at = iter(tape.input(v) for v in inputs)
        if treedef is None:  # the fast signature: positional arrays only
            traced_args, traced_kwargs = tuple(inputs_at), {}
        else:
            dynamic = _dynamic_mask(leaves)
            wrapped = [next(inputs_at) if d else v for v, d in zip(leaves, dynamic, strict=True)]
            traced_args, traced_kwargs = tree.unflatten(treedef, wrapped)
        rng_watch = RandomWatch(self.fun, (args, kwargs))  # every argument, static ones too
        watch: list = []
        watch_token = _HOOK_WATCH.set(watch)
        moved = None
        try:
            rng_watch.start()
            with tape.active():
                out = self.fun(*traced_args, **traced_kwargs)
            out_leaves, out_def = tree.flatten(out)
            del out
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
                else:
                    template.append(leaf)
                    values.append(leaf)
        finally:
            tape.open = False
            _HOOK_WATCH.reset(watch_token)
            moved = rng_watch.stop()
        why = None
        if watch:
            why = "hooks"  # documented: run eagerly, quietly
        elif tape.tainted:
            why = tape.tainted
        elif moved:
            if not self.fallback:
                raise ReplayError(
                    f"fg.replay: the function drew random numbers from {moved} while it was "
                    "traced; a plan would repeat those numbers at every call. Draw them with "
                    "fnp.random (also fg.random: NumPy's API and numbers, whose draws are "
                    "steps of the plan), or outside the function and pass them in, or pass "
                    "fallback=True to fg.replay to run such calls eagerly")
            why = moved
        if why is not None:
            self._store(key, _EAGER)
        else:
            self._store(key, Plan(tape, template, out_def, _describe(inputs)))
        return tree.unflatten(out_def, values)

    def _store(self, key: Any, plan: Any) -> None:
        if plan is _EAGER:
            old = self._cache.pop(key, None)
            if old and old is not _EAGER:
                self._n_plans -= len(old)
            self._cache[key] = _EAGER
            return
        plans = self._cache.get(key)
        if not plans or plans is _EAGER:
            plans = self._cache[key] = []
        plans.insert(0, plan)
        self._cache.move_to_end(key)
        self._n_plans += 1
        while self._n_plans > self.max_plans:
            self._evict()

    def _evict(self) -> None:
        for key, plans in self._cache.items():  # least recently used signature first
            if plans is _EAGER:
                continue
            plans.pop()
            if not plans:
                del self._cache[key]
            break
        self._n_plans -= 1
        self._counts["evictions"] += 1
        if self._counts["evictions"] >= self.max_plans and not self._warned:
            self._warned = True
            warnings.warn(
                f"fg.replay({getattr(self.fun, '__name__', 'fun')}): {self.max_plans} plans "
                "evicted; the function keeps tracing (a guard such as float() of data "
                "changes at most calls, or the argument signatures vary): see f.plans and "
                "f.stats",
                ReplayWarning, stacklevel=3)


def replay(fun: Callable | None = None, *, max_plans: int = 16, fallback: bool = False,
           compile_after: int | None = 32) -> Any:
    """``fun``, traced once per input signature and replayed as a flat plan afterwards.

    - ``max_plans``: the most plans kept (all signatures together); the least
      recently used goes first.  ``f.stats`` counts calls, hits, traces,
      retraces (a guard changed), eager calls and evictions; ``f.plans`` lists
      the plans (inspectable: ``str``, ``to_dot()``, Jupyter).
    - ``fallback``: what to do with a function a plan cannot replay (it prints
      or converts a traced value, draws random numbers): raise
      :class:`~funcgrad.tracer.ReplayError` (False), or run it eagerly at
      every call of that signature (True).
    - ``compile_after``: once a plan has been replayed this many times, compile
      it into one straight-line function, which saves the dispatch of each step
      (0: before its first replay; None: never).  Compiling costs about as much
      as a few dozen replays of the plan.

    Called with Nodes (inside a function being differentiated), or while another
    replay is tracing, ``fun`` simply runs.  Active :func:`fg.hooks` (or hooks
    given to ``fg.backprop`` inside ``fun``) make the call eager: hooks watch
    every backward step, and a plan has none.  Works as a decorator, with or
    without arguments.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> @fg.replay
    ... def step(w, x):
    ...     return fg.grad(lambda w: fnp.mean((x @ w) ** 2))(w)
    >>> step(numpy.ones(2), numpy.eye(2))
    array([1., 1.])
    """
    if fun is None:
        return lambda f: Replayed(f, max_plans, fallback, compile_after)
    return Replayed(fun, max_plans, fallback, compile_after)


# -- signatures -------------------------------------------------------------------


def _signature(args: tuple, kwargs: dict) -> tuple:
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
        if t is Node or is_traced(leaf):
            return None, None, None, None
        if _is_input(t):
            sig.append((t, leaf.shape, leaf.dtype, backend.device_of(leaf)))
            inputs.append(leaf)
            continue
        try:
            hash(leaf)
        except TypeError:
            raise FuncgradTypeError(
                f"replay: argument leaf {i} (a {t.__name__}) is neither an array nor hashable; "
                "non-array arguments are part of the signature and must be hashable"
            ) from None
        sig.append((t, leaf))
    return tuple(sig), inputs, treedef, leaves


def _is_input(t: type) -> bool:
    """Arrays are inputs; NumPy scalars, like Python numbers, are values of the signature."""
    return t is numpy.ndarray or (not issubclass(t, numpy.generic)
                                  and backend._lookup(t) is not None)


def _dynamic_mask(leaves: list) -> list[bool]:
    return [_is_input(type(v)) for v in leaves]


def _describe(inputs: list) -> str:
    return ", ".join(f"{getattr(a, 'dtype', '?')}{tuple(getattr(a, 'shape', ()))}"
                     for a in inputs)


def _other_plan(plans: list, failed_plan: Plan, failed: GuardFailed) -> Plan | None:
    """The plan traced where the failed guard gave ``failed.observed`` (same guards before)."""
    k = failed.ordinal
    prefix = failed_plan.guard_values[:k]
    for plan in plans:
        g = plan.guard_values
        if plan is not failed_plan and len(g) > k and same(g[k], failed.observed) and all(
            same(a, b) for a, b in zip(g[:k], prefix, strict=True)
        ):
            return plan
    return None


__all__ = ["ReplayError", "ReplayStats", "ReplayWarning", "Replayed", "replay"]
