"""The cycle collector: paused only inside the folds' own loops, never around user code.

User code -- the traced function, hooks, rules of user primitives, custom_vjp
and checkpoint functions -- runs with the collector as the user left it, and a
change it makes there (``gc.disable()``) is what remains when the call returns.
Other threads see the collector off only while a fold runs library code.
"""

from __future__ import annotations

import gc
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.context as fg_context
import funcgrad.numpy as fnp


def _no_fold_counted() -> bool:
    """The collector's bookkeeping is back at rest (nothing counted as running)."""
    c = fg_context._COLLECTOR
    return c.busy == 0 and c.user == 0


@pytest.fixture(autouse=True)
def collector_on():
    """Every test starts and ends with the collector on and no fold counted."""
    gc.enable()
    yield
    assert _no_fold_counted()
    enabled = gc.isenabled()
    gc.enable()
    assert enabled, "a test left the collector off"


def _cube():
    cube = fg.primitive(lambda x: x**3)
    return cube


class _Probe(fg.BackwardHook):
    """Records whether the collector runs while the hook (user code) runs."""

    def __init__(self, action=None):
        self.seen = []
        self.action = action

    def backward_preprocess(self, node, in_values, out_grads):
        self.seen.append(gc.isenabled())
        if self.action is not None:
            self.action()


def _user_primitive(seen, action=None):
    def rule(g, ans, x):
        seen.append(gc.isenabled())
        if action is not None:
            action()
        return g * 3.0 * x * x

    cube = fg.primitive(lambda x: x**3)
    fg.defvjp(cube, rule)
    return cube


def _custom(seen, action=None):
    @fg.custom_vjp
    def f(x):
        return fnp.sin(x)

    def fwd(x):
        seen.append(("fwd", gc.isenabled()))
        return fnp.sin(x), fnp.cos(x)

    def bwd(res, g):
        seen.append(("bwd", gc.isenabled()))
        if action is not None:
            action()
        return (g * res,)

    f.defvjp(fwd, bwd)
    return f


# -- user code runs with the collector on ----------------------------------------


def test_the_traced_function_runs_with_the_collector_on():
    seen = []

    def f(x):
        seen.append(gc.isenabled())
        return fnp.sum(fnp.sin(x))

    fg.grad(f)(np.ones(3))
    fg.jvp(f, (np.ones(3),), (np.ones(3),))
    fg.hessian(f)(np.ones(2))
    fg.trace(f, np.ones(3))
    assert seen and all(seen)


def test_hooks_rules_and_custom_functions_run_with_the_collector_on():
    probe = _Probe()
    seen_rule, seen_custom = [], []
    cube = _user_primitive(seen_rule)
    f = _custom(seen_custom)
    ckpt_seen = []

    def block(x):
        ckpt_seen.append(gc.isenabled())
        return fnp.sin(x) * x

    ck = fg.checkpoint(block)

    def loss(x):
        return fnp.sum(cube(x) + f(x) + ck(x))

    with fg.hooks(probe):
        g = fg.grad(loss)(np.array([0.5, 1.5]))
    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(g, 3 * x**2 + np.cos(x) + np.cos(x) * x + np.sin(x))
    # Forward mode derives the JVP of the user rule from the VJP: user code too.
    fg.jvp(loss, (x,), (np.ones(2),))
    assert probe.seen and all(probe.seen)
    assert seen_rule and all(seen_rule)
    assert seen_custom and all(s for _, s in seen_custom)
    assert ckpt_seen and all(ckpt_seen)


def test_library_folds_leave_the_collector_as_they_found_it():
    x = np.linspace(0.1, 1.0, 5)
    fg.hessian(lambda x: fnp.sum(fnp.tanh(x) ** 3))(x)
    assert gc.isenabled()
    gc.disable()
    try:
        fg.hessian(lambda x: fnp.sum(fnp.tanh(x) ** 3))(x)
        assert not gc.isenabled()
    finally:
        gc.enable()


# -- a change made by user code is kept ------------------------------------------


@pytest.mark.parametrize("where", ["function", "hook", "rule", "custom_vjp"])
def test_a_gc_disable_made_by_user_code_stays(where):
    x = np.array([0.3, 0.7])
    seen = []
    act = gc.disable if where != "function" else None
    probe = _Probe(act if where == "hook" else None)
    cube = _user_primitive(seen, act if where == "rule" else None)
    f = _custom(seen, act if where == "custom_vjp" else None)

    def loss(x):
        if where == "function":
            gc.disable()
        return fnp.sum(cube(x) + f(x))

    try:
        with fg.hooks(probe):
            fg.grad(loss)(x)
        assert not gc.isenabled(), f"gc.disable() in the {where} was undone"
    finally:
        gc.enable()


@pytest.mark.parametrize("where", ["function", "hook", "rule"])
def test_a_gc_enable_made_by_user_code_stays(where):
    x = np.array([0.3, 0.7])
    act = gc.enable
    probe = _Probe(act if where == "hook" else None)
    cube = _user_primitive([], act if where == "rule" else None)

    def loss(x):
        if where == "function":
            gc.enable()
        return fnp.sum(cube(x))

    gc.disable()
    try:
        with fg.hooks(probe):
            fg.grad(loss)(x)
        assert gc.isenabled(), f"gc.enable() in the {where} was undone"
    finally:
        gc.enable()


@pytest.mark.parametrize("where", ["function", "hook", "rule", "custom_vjp"])
def test_user_code_that_raises_leaves_the_collector_as_it_was(where):
    class Boom(Exception):
        pass

    def boom():
        raise Boom

    x = np.array([0.3, 0.7])
    probe = _Probe(boom if where == "hook" else None)
    cube = _user_primitive([], boom if where == "rule" else None)
    f = _custom([], boom if where == "custom_vjp" else None)

    def loss(x):
        if where == "function":
            boom()
        return fnp.sum(cube(x) + f(x))

    for initially in (True, False):
        (gc.enable if initially else gc.disable)()
        try:
            with pytest.raises(Boom), fg.hooks(probe):
                fg.grad(loss)(x)
            assert gc.isenabled() is initially
            assert _no_fold_counted()
        finally:
            gc.enable()


# -- cyclic garbage made by the traced function is collected ----------------------


def _cyclic_garbage(n: int, size: int) -> None:
    for _ in range(n):
        a = [bytearray(size)]
        a.append(a)  # a cycle: only the collector frees it


def test_cyclic_garbage_of_the_traced_function_is_collected():
    def f(x):
        _cyclic_garbage(6000, 2000)  # 12 MB if nothing is collected
        return fnp.sum(x * x)

    def peak(fun, *args):
        gc.collect()
        tracemalloc.start()
        try:
            fun(*args)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    x = np.ones(3)
    plain = peak(f, x)
    traced = peak(fg.grad(f), x)
    assert plain < 6e6  # the collector keeps up with the plain call
    assert traced < 2 * plain + 1e6, (traced, plain)


# -- threads ------------------------------------------------------------------------


def test_other_threads_see_the_collector_on_while_user_code_runs():
    """A thread tracing a long function never switches the collector off for the others."""
    inside = threading.Event()
    done = threading.Event()
    samples = []

    def slow(x):
        y = x
        for _ in range(300):
            y = fnp.sin(y) * 0.5 + y
        inside.set()
        for _ in range(50000):  # user code that runs a while, graph built
            _ = [0] * 10
        inside.clear()
        return fnp.sum(y)

    def worker():
        try:
            for _ in range(4):
                fg.grad(slow)(np.ones(2))
        finally:
            done.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: many samples
    try:
        t = threading.Thread(target=worker)
        t.start()
        while not done.is_set():
            if inside.is_set():
                samples.append(gc.isenabled())
        t.join()
    finally:
        sys.setswitchinterval(interval)
    # A sample may straddle the end of the user code (a thread switch between
    # the two reads), hence a margin.
    assert len(samples) > 20
    off = samples.count(False) / len(samples)
    assert off < 0.2, f"collector off in {off:.0%} of {len(samples)} samples"


def test_concurrent_folds_restore_the_collector_once_all_are_done():
    errors = []
    barrier = threading.Barrier(4, timeout=60)

    def worker(seed):
        try:
            rng = np.random.default_rng(seed)
            x = rng.uniform(0.1, 1.0, 4)
            barrier.wait()
            for _ in range(15):
                fg.hessian(lambda x: fnp.sum(fnp.tanh(x) ** 3))(x)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert gc.isenabled()
    assert _no_fold_counted()
