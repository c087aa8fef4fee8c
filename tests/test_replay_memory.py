"""What a trace holds (issue 17): replay's first call within 1.5x an eager call's memory,
nothing kept for the process, and rows that name far arguments by their slot.

A plain step's row names each traced argument by its distance back from the slot it
makes (a shared :class:`~funcgrad.tracer.Back`), or, when that is :data:`NEAR` or more,
by the argument's :class:`~funcgrad.tracer.Slot`, one per slot and tape.  Peaks are
tracemalloc's: exact for NumPy and Python objects, and the same on every machine.
"""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.tracer import NEAR, Back, Slot, Tape, back, ref

STEPS = 3000


def _chain(x, n):
    """Euler steps of dy/dt = sin y: every value O(1) at any depth."""
    h = 1.0 / n
    y = x
    for _ in range(n):
        y = fnp.sin(y) * h + y
    return fnp.sum(y)


def _value_and_grad(n=STEPS):
    return fg.value_and_grad(lambda x: _chain(x, n))


def _peak(fun, x):
    """The tracemalloc peak of ``fun(x)`` above what was held before it."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fun(x)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def _objects(kind):
    return sum(type(o) is kind for o in gc.get_objects())


def test_a_first_call_holds_at_most_one_and_a_half_eager_calls():
    x = np.array([0.7])
    _value_and_grad(10)(x)  # every path warm
    fg.replay(_value_and_grad(10))(x)
    eager = _peak(_value_and_grad(), x)
    first = _peak(fg.replay(_value_and_grad()), x)
    assert eager > 1000 * STEPS  # the measure sees the graph: over 1 KB a step
    assert first <= 1.5 * eager, f"{first / STEPS:.0f} B/step against {eager / STEPS:.0f}"


def test_a_trace_keeps_nothing_for_the_process():
    """Once a replayed function is gone, so is everything its trace made: a long chain
    leaves no slot objects and no memory behind (a pool of them per process did)."""
    x = np.array([0.7])
    fg.replay(_value_and_grad(10))(x)
    gc.collect()
    slots, backs = _objects(Slot), _objects(Back)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        f = fg.replay(_value_and_grad())
        value, grad = f(x)
        held = tracemalloc.get_traced_memory()[0] - before
        assert held > 100 * STEPS  # the plan's records: something to give back
        del f, value, grad
        gc.collect()
        after = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert (_objects(Slot), _objects(Back)) == (slots, backs)
    assert after < 64 * 1024, f"{after} bytes kept after the replay was dropped"


def _fan_in(x, uses):
    s = 0
    for i in range(uses):
        s = s + x * float(i + 1)
    return fnp.sum(s * s)


@pytest.mark.parametrize("compile_after", [None, 0])
def test_arguments_made_far_back_are_read_from_their_slot(compile_after):
    """``x`` is read by every step, more than NEAR slots after it was made: those rows
    name it by its one Slot.  The replays must equal eager bit for bit, forward and in
    the gradient, compiled or not."""
    uses = NEAR  # over 2 * NEAR slots: the last reads of x are far
    grad = fg.grad(lambda x: _fan_in(x, uses))
    f = fg.replay(grad, compile_after=compile_after)
    for k in range(3):
        x = np.linspace(-1.0, 1.0, 3) * (k + 1)
        want = grad(x)
        got = f(x)
        assert got.tobytes() == want.tobytes()
    assert (f.stats.traces, f.stats.hits, f.stats.eager) == (1, 2, 0)


def test_a_row_names_near_arguments_by_a_shared_back_and_far_ones_by_their_slot():
    tape = Tape()
    x = tape.input(np.ones(2))
    with tape.active():
        y = x * 2.0
        for _ in range(NEAR):
            y = y + 1.0
        z = y * x  # x is NEAR + 1 slots back, y one
    tape.open = False
    row = tape.records[-4:]  # head, y, x, step
    assert row[1] is back(1)  # the one shared Back of distance 1
    assert type(row[2]) is Slot and row[2] == x.slot and tape.far == {x.slot: row[2]}
    (mul,) = tape.entries[-1:]
    assert mul.args == (Slot(y.slot), Slot(x.slot)) and mul.outputs == (z.slot,)


def test_a_distance_of_zero_or_less_is_never_a_back():
    """Arguments are made before the step that reads them, so a distance is at least 1;
    were one ever 0 or less, a Back (``_NEAR[-1]`` is the Back of 1023) would name the
    wrong slot without a word: ``ref`` names such a slot by its Slot."""
    tape = Tape()
    for made, k in ((5, 5), (5, 7), (5, 5 + NEAR)):
        r = ref(tape, made, k)
        assert type(r) is Slot and r == k
    assert ref(tape, 5, 4) is back(1) and ref(tape, NEAR + 4, 4) == 4
