"""Graph identities, the context that records on them, and the collector pause (layer 0).

Everything here is context-local state that nested blocks change: which graphs
new nodes are recorded on (:class:`recording`, :func:`backprop_scope`), the
blocks behind it (:class:`Block`, :class:`ContextStack`, which
:mod:`funcgrad.hooks` uses too), and the cycle collector's pause during a
fold (:class:`collector_paused`, :class:`user_code`).  Stdlib only: every
layer above may use it.

>>> with backprop_scope('weights') as bp:
...     bp in ACTIVE.get(), DEFAULT_BACKPROP_ID in ACTIVE.get()
(True, True)
>>> bp in ACTIVE.get()
False
"""

from __future__ import annotations

import gc
import itertools
import threading
from contextvars import ContextVar
from typing import Any

from .errors import FrozenNodeError, FuncgradStateError, FuncgradTypeError

_ordinals = itertools.count(1)
_set = object.__setattr__


class BackpropId:
    """The identity of one graph.  Compared by identity; ``name`` is for messages.

    Immutable; ``ordinal`` places it in the one order of graphs and vmap levels.

    >>> with backprop_scope('weights') as bp:
    ...     bp.name
    'weights'
    """

    # ``closed``: its backprop_scope has ended, so it takes no new leaf (even where a
    # copy of the context, an asyncio task made inside the block, still lists it).
    __slots__ = ("__weakref__", "closed", "name", "ordinal")

    def __init__(self, name: str, ordinal: int | None = None):
        _set(self, "name", name)
        _set(self, "ordinal", next(_ordinals) if ordinal is None else ordinal)
        _set(self, "closed", False)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenNodeError(f"BackpropId is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenNodeError(f"BackpropId is immutable: cannot delete {name!r}")

    def __repr__(self) -> str:
        return f"BackpropId({self.name!r})"

    def __reduce__(self) -> str | tuple:
        # The default graph is one object everywhere: it pickles by reference.  Any
        # other id unpickles as a new graph of the same name (graphs are local).
        if self is DEFAULT_BACKPROP_ID:
            return "DEFAULT_BACKPROP_ID"
        return BackpropId, (self.name,)


DEFAULT_BACKPROP_ID = BackpropId("default", 0)


def next_ordinal() -> int:
    """The next place in the one order of graphs and vmap levels (their creation's).

    >>> next_ordinal() < BackpropId('later').ordinal
    True
    """
    return next(_ordinals)


def check_id(backprop_id: Any) -> BackpropId:
    """``backprop_id`` itself, the default graph for None; ``TypeError`` for anything else.

    >>> check_id(None) is DEFAULT_BACKPROP_ID
    True
    """
    if backprop_id is None:
        return DEFAULT_BACKPROP_ID
    if not isinstance(backprop_id, BackpropId):
        raise FuncgradTypeError(
            f"backprop_id must be a BackpropId (from fg.backprop_scope), "
            f"got {type(backprop_id).__name__}"
        )
    return backprop_id


# -- blocks that may end in any order --------------------------------------------------


class ContextStack:
    """Context-local state changed by nested blocks that may be left in any order.

    A ``ContextVar`` reset by token undoes a block correctly only when blocks
    end in the order they began.  Interleaved generators, each inside its own
    block across a ``yield``, or a misused ``ExitStack``, end them otherwise:
    a plain reset would then bring back the state of a block already closed,
    for good.  Here each block also goes on a stack; when it ends out of order
    it is taken off the stack and the value is recomputed from the blocks still
    open, so every block's change lasts exactly as long as the block.  Hot
    paths read ``var`` as before; the usual, ordered exit is two resets.

    >>> flags = ContextStack(ContextVar('flags', default=()))
    >>> flags.var.get(), flags.blocks.get()
    ((), ())
    """

    __slots__ = ("blocks", "var")

    def __init__(self, var: ContextVar):
        self.var = var
        self.blocks: ContextVar[tuple] = ContextVar(f"{var.name}_blocks", default=())

    def exit_out_of_order(self, block: Block, blocks: tuple) -> None:
        """End ``block`` where its own tokens cannot (it is not the last block open, or it
        began in another copy of the context): the value is recomputed from the others."""
        if not any(b is block for b in blocks):
            raise FuncgradStateError(
                f"{block.describe()} ended twice, or in another thread or task than the one it "
                "began in"
            )
        rest = tuple(b for b in blocks if b is not block)
        if rest and blocks[0] is block:  # the first block open: the next one starts there
            rest[0]._before = block._before
        value = rest[0]._before if rest else block._before
        for b in rest:
            value = b.change(value)
        try:
            self.blocks.set(rest)
            self.var.set(value)
        except BaseException:
            self.blocks.set(rest)
            self.var.set(value)
            raise


class Block:
    """One block of a :class:`ContextStack`: what it changed, to undo it alone.

    Subclasses name their ``stack`` (a class attribute) and say how the block
    changes the value (:meth:`change`) and what it is, for messages (:meth:`describe`).

    >>> class Flag(Block):
    ...     __slots__ = ('flag',)
    ...     stack = ContextStack(ContextVar('flags', default=()))
    ...     def __init__(self, flag):
    ...         self.flag = flag
    ...     def change(self, flags):
    ...         return flags + (self.flag,)
    >>> a, b = Flag('a'), Flag('b')
    >>> a.__enter__(); b.__enter__(); a.__exit__()   # a ends first
    >>> Flag.stack.var.get()
    ('b',)
    >>> b.__exit__(); Flag.stack.var.get()
    ()
    """

    # ``_depth``, not the stack tuple the block pushed: that tuple holds the block, and
    # a cycle would leave every block (and its graph) to the cycle collector.
    __slots__ = ("_before", "_depth", "_stack_token", "_value_token")
    stack: ContextStack

    def change(self, value: Any) -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        return f"a {type(self).__name__} block"

    def __enter__(self) -> None:
        stack = self.stack
        var, stack_var = stack.var, stack.blocks
        before = var.get()
        below = stack_var.get()
        value = self.change(before)
        pushed = (*below, self)
        self._before = before
        self._depth = len(pushed)
        try:
            self._stack_token = stack_var.set(pushed)
            self._value_token = var.set(value)
        except BaseException:  # interrupted: the block never began, so undo it
            stack_var.set(below)
            var.set(before)
            raise

    def __exit__(self, *exc: object) -> None:
        stack = self.stack
        blocks = stack.blocks.get()
        # In order: every later block has ended (a block ended out of order shortens
        # the stack, so the length and the top tell it from this block's own push).
        if len(blocks) == self._depth and blocks[-1] is self:
            try:
                stack.var.reset(self._value_token)
                stack.blocks.reset(self._stack_token)
                return
            except ValueError:  # entered in a copy of this context: undone below
                pass
            except BaseException:  # interrupted: the block has ended all the same
                stack.var.set(self._before)
                stack.blocks.set(blocks[:-1])
                raise
        stack.exit_out_of_order(self, blocks)


# -- the graphs new nodes are recorded on -----------------------------------------------

# The default graph, every open backprop_scope and every running combinator --
# less the graph a fold is running on (unless double backprop is asked for).  A
# finished call's graph drops out, so values it leaves behind are plain constants
# to everyone else.  Context-local: threads and asyncio tasks never see each
# other's graphs.
ACTIVE: ContextVar[frozenset] = ContextVar(
    "funcgrad_active_graphs", default=frozenset((DEFAULT_BACKPROP_ID,))
)
RECORDING = ContextStack(ACTIVE)


class recording(Block):
    """Within the block, record (or with ``on=False``, stop recording) on ``backprop_id``.

    >>> bp = BackpropId('mine')
    >>> with recording(bp):
    ...     bp in ACTIVE.get()
    True
    """

    __slots__ = ("backprop_id", "on")
    stack = RECORDING

    def __init__(self, backprop_id: BackpropId, on: bool = True):
        self.backprop_id = backprop_id
        self.on = on

    def change(self, active: frozenset) -> frozenset:
        bp = self.backprop_id
        return active | {bp} if self.on else active - {bp}

    def describe(self) -> str:
        return f"recording on graph {self.backprop_id.name!r}"


def backprop_scope(name: str) -> _Scope:
    """Yield a fresh :class:`BackpropId` named ``name``, recorded on inside the block.

    Once the block has ended, the graph takes no new leaf.

    >>> import numpy, funcgrad as fg
    >>> with backprop_scope('bp_x') as bp_x:
    ...     x = fg.require_grad(numpy.ones(2), bp_x)
    ...     fg.is_grad_required(x, bp_x), fg.is_grad_required(x)
    (True, False)
    """
    if not isinstance(name, str):
        raise FuncgradTypeError(f"backprop_scope name must be a str, got {type(name).__name__}")
    return _Scope(BackpropId(name))


class _Scope(recording):
    """A :func:`backprop_scope` block: it yields its graph, and closes it on exit."""

    __slots__ = ()

    def __enter__(self) -> BackpropId:
        recording.__enter__(self)
        return self.backprop_id

    def __exit__(self, *exc: object) -> None:
        _set(self.backprop_id, "closed", True)
        recording.__exit__(self)


class unrecorded(Block):
    """Record on none of the graphs open here, within the block (a graph opened inside
    it records as usual): a solver's steps are computed, not recorded.

    >>> with unrecorded():
    ...     ACTIVE.get()
    frozenset()
    """

    __slots__ = ("_off",)
    stack = RECORDING

    def __init__(self) -> None:
        self._off = None

    def change(self, active: frozenset) -> frozenset:
        if self._off is None:  # on entering: the graphs open then
            self._off = active
        return active - self._off

    def describe(self) -> str:
        return "a block recording on no graph"


# -- the cycle collector --------------------------------------------------------
# The folds make no reference cycles, so the collector has nothing to find in
# them; left running, it would traverse the whole live graph again and again
# while a fold records a graph of its own (double backprop, forward mode).  So
# a fold pauses it -- but only for its own loop: user code that a fold calls
# (hooks, rules of user primitives, custom_vjp and checkpoint functions) runs
# with the collector as the user left it, and a change the user makes there
# (gc.disable()) is the state restored when the last fold ends.  The traced
# function itself never runs paused.  The collector is one per process, so the
# bookkeeping is too: folds of every thread are counted under one lock, and the
# collector is off only while some fold runs outside user code.


class _Collector:
    __slots__ = ("busy", "user", "wanted")

    def __init__(self) -> None:
        self.busy = 0  # threads running a fold now
        self.user = 0  # of which, inside user code now (innermost)
        self.wanted = True  # the user's setting: collector on when no fold runs


_COLLECTOR = _Collector()
_COLLECTOR_LOCK = threading.Lock()
_THREAD = threading.local()  # .stack: per thread, True for user code, False for a fold


# Signals: a KeyboardInterrupt is raised only where the interpreter checks for
# one -- after a call or on entering a Python function, never between plain
# attribute and arithmetic steps.  So each transition makes its calls first,
# changes the counts in steps that call nothing, then switches the collector;
# interrupted there, an entry is undone and an exit completed.


def _switch(c: _Collector) -> None:
    if c.busy and not c.user:
        gc.disable()
    elif c.wanted:  # user code runs, or the last fold is over
        gc.enable()


def _push(user: bool) -> None:
    stack = getattr(_THREAD, "stack", None)
    if stack is None:
        stack = _THREAD.stack = []
    c = _COLLECTOR
    with _COLLECTOR_LOCK:
        enabled = gc.isenabled()
        depth = len(stack)
        saved = (c.busy, c.user, c.wanted)
        try:
            if not depth:
                if not c.busy:
                    c.wanted = enabled
                c.busy += 1
            elif stack[-1]:
                c.user -= 1
            stack += [user]
            if user:
                c.user += 1
            _switch(c)
        except BaseException:  # interrupted: the block never began, so undo it
            c.busy, c.user, c.wanted = saved
            del stack[depth:]
            _switch(c)
            raise


def _pop() -> None:
    stack = _THREAD.stack
    c = _COLLECTOR
    with _COLLECTOR_LOCK:
        enabled = gc.isenabled()
        if stack[-1]:
            c.user -= 1
            c.wanted = enabled  # what user code left is the user's setting
        del stack[-1]
        if stack:
            if stack[-1]:
                c.user += 1
        else:
            c.busy -= 1
        try:
            _switch(c)
        except BaseException:  # interrupted: the block has ended all the same
            _switch(c)
            raise


class collector_paused:
    """Pause the cycle collector for a fold's own loop (see the comment above).

    Re-entrant and thread-safe; on exit the collector is as the user last set
    it, even if user code called ``gc.disable()`` or ``gc.enable()`` meanwhile.

    >>> with collector_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """

    __slots__ = ()

    def __enter__(self) -> None:
        _push(False)

    def __exit__(self, *exc: object) -> None:
        _pop()


class user_code:
    """Within a fold, a block of user code: the collector runs as the user left it.

    >>> with collector_paused(), user_code():
    ...     gc.isenabled()
    True
    """

    __slots__ = ()

    def __enter__(self) -> None:
        _push(True)

    def __exit__(self, *exc: object) -> None:
        _pop()
