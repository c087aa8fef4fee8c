"""Backward hooks, timing, printing and NaN checks (layer 3).

Hooks run around every step of a backward fold.  ``with hooks(h):`` applies
them to each fold inside the block, in this context only (other threads and
tasks are unaffected); ``fg.backprop(..., hooks=[h])`` to one call.  Hooks of
the context run before those of the call.

>>> import numpy, funcgrad as fg
>>> timer = fg.TimerHook()
>>> with fg.hooks(timer):
...     _ = fg.grad(lambda x: fg.numpy.sin(x).sum())(numpy.ones(3))
>>> sorted(name for name, _, _ in timer.rows())   # rows() puts the slowest first
['sin', 'sum']
"""

from __future__ import annotations

import sys
import time
from contextvars import ContextVar
from typing import Any

from .context import Block, ContextStack
from .errors import FuncgradTypeError, describe
from .node import value_of

HOOKS: ContextVar[tuple] = ContextVar("funcgrad_hooks", default=())
_DEBUG_NANS: ContextVar[bool] = ContextVar("funcgrad_debug_nans", default=False)
_HOOK_BLOCKS = ContextStack(HOOKS)
_NAN_BLOCKS = ContextStack(_DEBUG_NANS)
# Set by fg.replay while it traces: a list told of every fold that runs hooks,
# which a plan cannot replay (the function then runs eagerly).
HOOK_WATCH: ContextVar[list | None] = ContextVar("funcgrad_hook_watch", default=None)


class BackwardHook:
    """Base class of backward hooks: override either method (both do nothing).

    ``node`` is the Node whose rule runs, ``in_values`` the raw values of its
    arguments, ``out_grads`` a 1-tuple holding its output gradient and
    ``in_grads`` the gradients computed for its arguments (None where none was
    asked for).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> class Norms(fg.BackwardHook):
    ...     def __init__(self):
    ...         self.seen = []
    ...     def backward_postprocess(self, node, in_values, out_grads, in_grads):
    ...         self.seen.append((node.primitive.name, float(numpy.abs(in_grads[0]).max())))
    >>> norms = Norms()
    >>> x = fg.require_grad(numpy.array([1.0, -2.0]))
    >>> _ = fg.backprop([fnp.sum(x * 3.0)], [x], hooks=[norms])
    >>> norms.seen
    [('sum', 1.0), ('multiply', 3.0)]
    """

    name = "BackwardHook"

    def backward_preprocess(self, node: Any, in_values: tuple, out_grads: tuple) -> None:
        """Called before the rules of ``node`` run."""

    def backward_postprocess(
        self, node: Any, in_values: tuple, out_grads: tuple, in_grads: tuple
    ) -> None:
        """Called after the rules of ``node`` ran."""


def _check_hooks(hs: Any) -> tuple:
    hs = tuple(hs)
    for h in hs:
        if not isinstance(h, BackwardHook):
            raise FuncgradTypeError(
                f"hooks must be fg.BackwardHook instances, got {describe(h)}"
            )
    return hs


class hooks(Block):
    """Apply the hooks ``hs`` to every backward fold inside the block (this context only).

    Blocks nest; hooks of the context run before those given to one
    ``fg.backprop(..., hooks=...)`` call.  Other threads and asyncio tasks do
    not see them.  Blocks may also end out of order (interleaved generators):
    each takes away exactly its own hooks.

    >>> import numpy, funcgrad as fg
    >>> timer = fg.TimerHook()
    >>> with fg.hooks(timer):
    ...     _ = fg.grad(lambda x: (x * x).sum())(numpy.ones(2))
    >>> sorted(name for name, calls, seconds in timer.rows())
    ['multiply', 'sum']
    """

    __slots__ = ("hooks",)
    stack = _HOOK_BLOCKS

    def __init__(self, *hs: BackwardHook):
        self.hooks = _check_hooks(hs)

    def change(self, active: tuple) -> tuple:
        return active + self.hooks

    def describe(self) -> str:
        return "a fg.hooks block"


def active_hooks(local: Any = ()) -> tuple:
    """The hooks of the context, then ``local`` ones."""
    found = HOOKS.get() + (_check_hooks(local) if local else ())
    if found:
        watch = HOOK_WATCH.get()
        if watch is not None:
            watch.append(found)
    return found


class debug_nans(Block):
    """Raise ``FloatingPointError`` naming the primitive when a backward step makes NaN or Inf.

    A context manager; ``debug_nans(False)`` turns the check off inside a block.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> with fg.debug_nans(), numpy.errstate(divide="ignore"):
    ...     fg.grad(lambda x: fnp.sqrt(x).sum())(numpy.array([0.0, 4.0]))
    Traceback (most recent call last):
      ...
    FloatingPointError: NaN or Inf in a gradient computed by the VJP rule of primitive 'sqrt'
    """

    __slots__ = ("enabled",)
    stack = _NAN_BLOCKS

    def __init__(self, enabled: bool = True):
        self.enabled = bool(enabled)

    def change(self, _: bool) -> bool:
        return self.enabled

    def describe(self) -> str:
        return "a fg.debug_nans block"


def debugging_nans() -> bool:
    """Whether :func:`debug_nans` is on in this context."""
    return _DEBUG_NANS.get()


class TimerHook(BackwardHook):
    """Time spent in each primitive's backward rules; ``summary()`` gives a table.

    The clock starts in ``backward_preprocess`` and stops in
    ``backward_postprocess``; on a GPU the time is that of launching the kernels.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> timer = fg.TimerHook()
    >>> with fg.hooks(timer):
    ...     for _ in range(3):
    ...         _ = fg.grad(lambda x: fnp.tanh(x).sum())(numpy.ones(10))
    >>> sorted((name, calls) for name, calls, seconds in timer.rows())
    [('sum', 3), ('tanh', 3)]
    >>> print(timer.summary())                     # doctest: +ELLIPSIS
    primitive               calls   total ms    mean us
    ...
    """

    name = "TimerHook"

    def __init__(self) -> None:
        self._totals: dict[str, list] = {}
        self._start: list[float] = []

    def backward_preprocess(self, node, in_values, out_grads):
        self._start.append(time.perf_counter())

    def backward_postprocess(self, node, in_values, out_grads, in_grads):
        elapsed = time.perf_counter() - self._start.pop()
        entry = self._totals.setdefault(node.primitive.name, [0, 0.0])
        entry[0] += 1
        entry[1] += elapsed

    def rows(self) -> list[tuple[str, int, float]]:
        """``(primitive, calls, total seconds)``, slowest first."""
        return sorted(
            ((k, n, t) for k, (n, t) in self._totals.items()), key=lambda r: -r[2]
        )

    def total_time(self) -> float:
        """Seconds spent in backward rules, all primitives together."""
        return sum(t for _, _, t in self.rows())

    def summary(self) -> str:
        """A plain-text table: primitive, calls, total and mean time."""
        lines = [f"{'primitive':<20} {'calls':>8} {'total ms':>10} {'mean us':>10}"]
        for name, n, t in self.rows():
            lines.append(f"{name:<20} {n:>8} {t * 1e3:>10.3f} {t / n * 1e6:>10.2f}")
        return "\n".join(lines)


class PrintHook(BackwardHook):
    """Print each backward step: the primitive, its input shapes, the gradient's shape and dtype.

    ``file`` is where to print (``sys.stdout`` when None).

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> x = fg.require_grad(numpy.ones(3))
    >>> _ = fg.backprop([fnp.sum(fnp.exp(x))], [x], hooks=[fg.PrintHook()])
    backward sum: inputs ((3,)) grad shape () dtype float64
    backward exp: inputs ((3,)) grad shape (3,) dtype float64
    """

    name = "PrintHook"

    def __init__(self, file: Any = None) -> None:
        self.file = file

    def backward_preprocess(self, node, in_values, out_grads):

        shapes = ", ".join(str(getattr(v, "shape", ())) for v in in_values)
        g = value_of(out_grads[0])
        print(
            f"backward {node.primitive.name}: inputs ({shapes}) "
            f"grad shape {getattr(g, 'shape', ())} dtype {getattr(g, 'dtype', '?')}",
            file=self.file or sys.stdout,
        )
