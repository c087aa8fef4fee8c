"""Context state cannot leak: hooks, debug_nans, backprop_scope and recording blocks
may end in any order (interleaved generators, a misused ExitStack) and each takes away
exactly its own change; a block ended twice raises; a closed scope takes no new leaf.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import context as fg_context


class Recorder(fg.BackwardHook):
    def __init__(self):
        self.calls = 0

    def backward_preprocess(self, node, in_values, out_grads):
        self.calls += 1


def _hooks_applied(*hs):
    """Which of the hooks ``hs`` a backward fold runs now."""
    before = [h.calls for h in hs]
    fg.grad(fnp.sin)(np.array(0.5))
    return [h.calls > b for h, b in zip(hs, before, strict=True)]


def _nan_check_on():
    try:
        fg.grad(lambda x: x * np.inf)(np.array(1.0))
    except FloatingPointError:
        return True
    return False


def _in_block(cm):
    """A generator that enters ``cm`` on its first step and leaves it on its second."""
    with cm as value:
        yield value
        yield value


def _at_rest():
    """Every context-local state is back to its default."""
    assert fg_context.ACTIVE.get() == frozenset((fg.DEFAULT_BACKPROP_ID,))
    h1 = Recorder()
    assert _hooks_applied(h1) == [False]
    assert not _nan_check_on()


# -- interleaved generators ---------------------------------------------------------


def test_hooks_blocks_ended_out_of_order_each_take_away_their_own_hooks():
    h1, h2 = Recorder(), Recorder()
    g1, g2 = _in_block(fg.hooks(h1)), _in_block(fg.hooks(h2))
    next(g1)
    next(g2)
    assert _hooks_applied(h1, h2) == [True, True]
    next(g1, None)  # the first block ends while the second is open
    next(g1, None)
    assert _hooks_applied(h1, h2) == [False, True]
    next(g2, None)
    next(g2, None)
    assert _hooks_applied(h1, h2) == [False, False]
    _at_rest()


def test_debug_nans_blocks_ended_out_of_order():
    on, off = _in_block(fg.debug_nans(True)), _in_block(fg.debug_nans(False))
    next(on)
    assert _nan_check_on()
    next(off)
    assert not _nan_check_on()
    for _ in range(2):
        next(on, None)  # the outer block ends first: the inner one's setting stays
    assert not _nan_check_on()
    for _ in range(2):
        next(off, None)
    _at_rest()
    # and the other way round: an inner "on" outlives an outer "off"
    off, on = _in_block(fg.debug_nans(False)), _in_block(fg.debug_nans(True))
    next(off)
    next(on)
    for _ in range(2):
        next(off, None)
    assert _nan_check_on()
    for _ in range(2):
        next(on, None)
    _at_rest()


def test_backprop_scopes_ended_out_of_order():
    x = np.array([1.0, 2.0])
    ga, gb = _in_block(fg.backprop_scope("a")), _in_block(fg.backprop_scope("b"))
    bp_a, bp_b = next(ga), next(gb)
    y = fg.require_grad(fg.require_grad(x, bp_a), bp_b)
    assert fg.is_grad_required(y * y, bp_a) and fg.is_grad_required(y * y, bp_b)
    for _ in range(2):
        next(ga, None)  # scope a ends while b is open
    z = fg.require_grad(x, bp_b) * 2.0
    assert fg.is_grad_required(z, bp_b) and not fg.is_grad_required(z, bp_a)
    with pytest.raises(fg.BackpropError, match="'a'"):
        fg.require_grad(x, bp_a)
    for _ in range(2):
        next(gb, None)
    for bp in (bp_a, bp_b):
        with pytest.raises(fg.BackpropError):
            fg.require_grad(x, bp)
    _at_rest()


def test_recording_blocks_ended_out_of_order():
    a, b = fg.BackpropId("a"), fg.BackpropId("b")
    ra, rb = fg_context.recording(a), fg_context.recording(b, on=True)
    ra.__enter__()
    rb.__enter__()
    ra.__exit__(None, None, None)
    assert fg_context.ACTIVE.get() == {fg.DEFAULT_BACKPROP_ID, b}
    rb.__exit__(None, None, None)
    _at_rest()
    # a block that stops recording on the default graph, ended under another block
    stop, rb = fg_context.recording(fg.DEFAULT_BACKPROP_ID, on=False), fg_context.recording(b)
    stop.__enter__()
    rb.__enter__()
    assert fg_context.ACTIVE.get() == {b}
    stop.__exit__(None, None, None)
    assert fg_context.ACTIVE.get() == {fg.DEFAULT_BACKPROP_ID, b}
    rb.__exit__(None, None, None)
    _at_rest()


def test_three_blocks_ended_in_every_order():
    import itertools

    for order in itertools.permutations(range(3)):
        hs = [Recorder() for _ in range(3)]
        blocks = [fg.hooks(h) for h in hs]
        for b in blocks:
            b.__enter__()
        still = [True] * 3
        for k in order:
            blocks[k].__exit__(None, None, None)
            still[k] = False
            assert _hooks_applied(*hs) == still, order
        _at_rest()


# -- ExitStack misuse -----------------------------------------------------------------


def test_an_exit_stack_closed_under_a_block_entered_later():
    h1, h2 = Recorder(), Recorder()
    stack = contextlib.ExitStack()
    stack.enter_context(fg.hooks(h1))
    bp = stack.enter_context(fg.backprop_scope("s"))
    stack.enter_context(fg.debug_nans())
    later = fg.hooks(h2)
    later.__enter__()
    stack.close()  # ends three blocks that began before `later`
    assert _hooks_applied(h1, h2) == [False, True]
    assert not _nan_check_on()
    with pytest.raises(fg.BackpropError):
        fg.require_grad(np.ones(2), bp)
    later.__exit__(None, None, None)
    _at_rest()


@pytest.mark.parametrize("make", [lambda: fg.hooks(Recorder()), lambda: fg.debug_nans(),
                                  lambda: fg_context.recording(fg.BackpropId("r"))],
                         ids=["hooks", "debug_nans", "recording"])
def test_a_block_ended_twice_raises_and_changes_nothing(make):
    h = Recorder()
    outer = fg.hooks(h)
    outer.__enter__()
    try:
        block = make()
        block.__enter__()
        block.__exit__(None, None, None)
        with pytest.raises(fg.FuncgradError, match="ended twice"):
            block.__exit__(None, None, None)
        assert _hooks_applied(h) == [True]
    finally:
        outer.__exit__(None, None, None)
    _at_rest()


def test_blocks_left_by_an_exception_restore_the_state():
    h = Recorder()
    with pytest.raises(KeyError), fg.hooks(h), fg.debug_nans(), fg.backprop_scope("e"):
        raise KeyError("boom")
    _at_rest()


# -- a closed scope takes no new leaf -------------------------------------------------------


def test_a_closed_scope_takes_no_leaf_in_a_copy_of_its_context():
    x = np.ones(2)
    with fg.backprop_scope("copied") as bp:
        ctx = contextvars.copy_context()  # a snapshot that still lists the scope
    with pytest.raises(fg.BackpropError, match="copied"):
        ctx.run(fg.require_grad, x, bp)
    with pytest.raises(fg.BackpropError, match="copied"):
        fg.require_grad(x, bp)


def test_a_closed_scope_takes_no_leaf_in_a_task_made_inside_it():
    async def main():
        gate = asyncio.Event()

        async def late(bp):
            await gate.wait()  # runs after the scope has ended
            return fg.require_grad(np.ones(2), bp)

        with fg.backprop_scope("task") as bp:
            task = asyncio.ensure_future(late(bp))
            await asyncio.sleep(0)
        gate.set()
        with pytest.raises(fg.BackpropError, match="task"):
            await task

    asyncio.run(main())
    _at_rest()


def test_blocks_in_one_task_do_not_touch_another():
    """Tasks interleave their blocks at awaits; each sees only its own."""

    async def worker(h, other, seen):
        with fg.hooks(h):
            await asyncio.sleep(0)
            seen.append(_hooks_applied(h, other))
            await asyncio.sleep(0)

    async def main():
        h1, h2 = Recorder(), Recorder()
        s1, s2 = [], []
        await asyncio.gather(worker(h1, h2, s1), worker(h2, h1, s2))
        return s1, s2

    s1, s2 = asyncio.run(main())
    assert s1 == [[True, False]] and s2 == [[True, False]]
    _at_rest()
