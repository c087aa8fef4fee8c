"""Replay's records (issue 17): typed steps and guards, one renderer for every step.

A trace is a list of :class:`~funcgrad.tracer.Eqn` and :class:`~funcgrad.tracer.Guard`
records, read by name; an Eqn's ``outputs`` is always a tuple.  A plan's steps are
rendered by one function whether they are made by the fast path (a cached shape of
step) or in full, or compiled into one function: all three must compute the same,
bit for bit, as the eager call.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.tracer import Back, Eqn, Guard, Slot, Tape, back, decode

plan_module = importlib.import_module("funcgrad.plan")


def _many(x, n):
    """Calls of every kind under a gradient: a guard, keywords, slices and constants of
    the source (None, Ellipsis), a list argument, an in-place sum, an integer read."""
    y = fnp.sin(x) * x
    if fnp.sum(y) > 0:
        y = y + 1.0
    q, r = fnp.split(y, 2)
    z = fnp.concatenate([q * r, r]) + fnp.sum(y[..., 1:], axis=None, keepdims=True)
    z = fnp.clip(z, None, 3.0)
    w = np.zeros(3) + z[:3]
    w += fnp.cos(z[:3]) * int(fnp.sum(x > n / 4))
    return fnp.sum(w * w) + fnp.mean(x)


def _raw(x):
    """Raw array calls: a result unpacked (divmod), in-place updates, a guard."""
    q, r = divmod(x * 3.0, 0.75)
    q += r
    q[0] = r[1]
    return q if q.sum() > 0 else -q


def _records(fun, *args):
    tape = Tape()
    traced = [tape.input(a) for a in args]
    with tape.active():
        fun(*traced)
    tape.open = False
    return tape.entries


def test_a_trace_is_records_with_tuple_outputs():
    x = np.linspace(0.2, 1.3, 6)
    entries = _records(fg.grad(lambda x: _many(x, 3)), x) + _records(_raw, x)
    kinds = {type(e) for e in entries}
    assert kinds == {Eqn, Guard}
    eqns = [e for e in entries if type(e) is Eqn]
    assert all(type(e.outputs) is tuple for e in eqns)
    # one array made: one output; a sequence unpacked: one per item; an update: none
    assert any(e.unpack and len(e.outputs) == 2 for e in eqns)  # divmod
    assert any(e.effect and e.name == "+=" and len(e.outputs) == 1 for e in eqns)
    assert all(len(e.outputs) == 1 for e in eqns if not e.unpack and not e.effect)
    assert any(e.effect and e.outputs == () for e in eqns)  # an update with no result
    guards = [e for e in entries if type(e) is Guard]
    assert {g.name for g in guards} >= {"bool", "int"}
    assert all(g.where.startswith("test_plan_records.py:") for g in guards if g.name == "int")


@pytest.mark.parametrize("fun", [lambda x: fg.grad(_many)(x, 3), lambda x: fg.grad(_many)(x, 2),
                                 _raw])
def test_fast_full_and_compiled_steps_compute_the_same(monkeypatch, fun):
    grad = fun
    x = np.linspace(0.2, 1.3, 6)
    x2 = x * 1.01  # new values, the same guards
    want = [grad(x), grad(x2)]

    def replayed(**options):
        f = fg.replay(grad, **options)
        out = [f(x), f(x2), f(x2)]  # trace, build, replay
        assert (f.stats.traces, f.stats.hits, f.stats.eager) == (1, 2, 0)  # no eager rescue
        return out

    fast = replayed(compile_after=None)
    compiled = replayed(compile_after=0)
    monkeypatch.setattr(plan_module, "_fast_step", lambda *a: None)
    full = replayed(compile_after=None)
    for got in (fast, compiled, full):
        for a, b in zip(got, [want[0], want[1], want[1]], strict=True):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_a_tape_keeps_plain_steps_flat_and_decodes_them_as_records():
    """Each form of tracer.decode's, and records kept whole, read back where they lie."""
    tape = Tape()
    x = tape.input(np.linspace(0.1, 0.9, 4))
    lr = tape.input(0.5)  # a Python float: dynamic
    with tape.active():
        w = np.clip(np.sin(x * 2.0), 0.25, 1.0)  # two, one and three arguments
        s = np.sum(w, axis=0)  # keywords
        w += s  # an update: an Eqn in one cell
        _ = lr * 3.0  # a Python float from a traced one (Tape.result's form)
        _ = float(s)  # a guard
    tape.open = False
    records, entries = tape.records, tape.entries
    assert [e.name for e in entries] == ["*", "sin", "clip", "sum", "+=", "*", "float"]
    mul, sin, clip, total, update, scaled, guard = entries
    # A row: head, arguments (a traced one as the distance back from the slot made), and
    # the step from the slot the plain step before made (none: 0) to this one's.
    assert records[:7] == [(~2, mul.fn, "*"), back(2), 2.0, 2,  # 4 cells: makes slot 2
                           (~1, sin.fn, "sin"), back(1), 1]  # 3 cells: reads 2, makes 3
    assert [type(c) for c in records[1:4]] == [Back, float, int]
    assert records[0] is tape.records[0] and records[5] is back(1)  # shared, not made anew
    assert (mul.args, mul.outputs, sin.args, sin.outputs) == ((x.mark, 2.0), (2,), (2,), (3,))
    assert type(mul.args[0]) is Slot and type(sin.args[0]) is Slot
    assert (clip.args[1:], clip.kwargs, total.kwargs) == ((0.25, 1.0), None, {"axis": 0})
    assert update.effect and update.outputs == (6,) and update in records
    assert (scaled.args, scaled.outputs) == ((lr.mark, 3.0), (7,)) and guard in records
    assert all(type(e.outputs) is tuple for e in entries[:-1])
    prev = 0  # each record decoded alone, from where it lies, given the slot made before
    for i, entry in zip(plan_module._offsets(records), entries, strict=True):
        assert decode(records, i, i + 1, prev) == [entry]
        if type(records[i]) is tuple:
            prev = entry.outputs[0]
    assert prev == tape.prev == 5  # sum made slot 5 (the float's step is not a plain one)


def test_constants_equal_to_slot_numbers_stay_constants():
    """A Slot equals its number (an int or a float constant of the same value), and is told
    from a constant by its type alone: a plan must read 1.0, 2, 0 as constants."""
    def f(x):
        y = x * 1.0 + 2  # slots 1 and 2 exist when these are recorded
        return fnp.sum(fnp.roll(y, 1) * 0.0 + y ** 2, axis=0) + 3.0

    g = fg.replay(fg.value_and_grad(f))
    for k in range(3):
        x = np.linspace(-1.0, 1.0, 5) * (k + 1)
        want = fg.value_and_grad(f)(x)
        got = g(x)
        for a, b in zip(got, want, strict=True):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    assert g.stats.traces == 1 and g.stats.hits == 2
