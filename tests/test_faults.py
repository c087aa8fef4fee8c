"""Faults: threads and tasks, long loops, exceptions at every extension point, leaked
nodes, hash seeds.  Sized for two cores and CI; ``FUNCGRAD_FAULT_SCALE=10`` runs
ten times more iterations (the figures of a big run are in the closing note).

- Threads and asyncio tasks running nested gradients, hooks, custom_vjp and
  checkpoint give results bit-identical to a serial run.
- A long training loop, and loops whose every step raises, keep memory flat.
- An exception (KeyboardInterrupt included) raised by user code at any call of
  any extension point -- the traced function, hooks, user rules, custom_vjp's
  fwd and bwd, checkpoint's function -- at any nesting depth, in either mode,
  propagates unchanged and leaves no state behind: graphs recorded on, hooks,
  debug_nans, the cycle collector, its counts.
- Nodes die when the combinator that made them returns.
- Gradients are bit-identical across processes with different hash seeds.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import importlib
import os
import subprocess
import sys
import textwrap
import threading
import tracemalloc
import warnings
import weakref

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

fg_hooks = importlib.import_module("funcgrad.hooks")  # fg.hooks is the context manager
from funcgrad import context as fg_context

SCALE = max(1, int(os.environ.get("FUNCGRAD_FAULT_SCALE", "1")))


def _at_rest():
    """No context-local or process-wide state is left behind."""
    assert fg_context.ACTIVE.get() == frozenset((fg.DEFAULT_BACKPROP_ID,))
    assert fg_context.RECORDING.blocks.get() == ()
    assert fg_hooks.HOOKS.get() == () and fg_hooks._HOOK_BLOCKS.blocks.get() == ()
    assert fg_hooks._DEBUG_NANS.get() is False
    assert gc.isenabled()
    c = fg_context._COLLECTOR
    assert (c.busy, c.user) == (0, 0)
    assert not getattr(fg_context._THREAD, "stack", [])


# -- a workload touching every mechanism ------------------------------------------------


class Fault(Exception):
    """The exception injected (KeyboardInterrupt is injected too)."""


class Points:
    """Counts calls of each extension point; raises at the chosen call of the chosen one."""

    def __init__(self, where=None, at=0, exc=Fault):
        self.where, self.at, self.exc = where, at, exc
        self.calls: dict[str, int] = {}

    def hit(self, point):
        n = self.calls[point] = self.calls.get(point, 0) + 1
        if point == self.where and n == self.at:
            raise self.exc(f"injected at call {n} of {point}")


class _Hook(fg.BackwardHook):
    def __init__(self, points):
        self.points = points

    def backward_preprocess(self, node, in_values, out_grads):
        self.points.hit("hook_pre")

    def backward_postprocess(self, node, in_values, out_grads, in_grads):
        self.points.hit("hook_post")


def _tools(points):
    """A user primitive, a custom_vjp function and a checkpointed block reporting to ``points``."""
    cube = fg.primitive(lambda x: x**3)

    def cube_vjp(g, ans, x):
        points.hit("rule_vjp")
        return g * 3.0 * x * x

    def cube_jvp(t, ans, x):
        points.hit("rule_jvp")
        return t * 3.0 * x * x

    fg.defvjp(cube, cube_vjp)
    fg.defjvp(cube, cube_jvp)

    @fg.custom_vjp
    def soft(x):
        return fnp.tanh(x)

    def fwd(x):
        points.hit("custom_fwd")
        y = fnp.tanh(x)
        return y, y

    def bwd(y, g):
        points.hit("custom_bwd")
        return (g * (1.0 - y * y),)

    soft.defvjp(fwd, bwd)

    def block(h):
        points.hit("checkpoint")
        return fnp.sin(h) * h

    return cube, soft, fg.checkpoint(block)


def _workload(seed, points=None):
    """Results of nested gradients, Hessians, forward mode and a double backprop."""
    points = points or Points()
    cube, soft, ckpt = _tools(points)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, 3)
    w = rng.uniform(-1.0, 1.0, (3, 3))

    def f(w, x):
        points.hit("function")
        h = w @ x
        return fnp.sum(cube(soft(h)) + ckpt(h) * 0.5)

    out = []
    with fg.hooks(_Hook(points)):
        out += list(fg.grad(f, argnums=(0, 1))(w, x))
        out.append(fg.hessian(lambda x: f(w, x))(x))
        out.append(fg.jvp(lambda x: f(w, x), (x,), (np.ones(3),))[1])
        out.append(fg.hvp(lambda x: f(w, x), (x,), (x,)))
        # nested: the gradient of a function that takes a gradient; three levels, mixed modes
        out.append(fg.grad(lambda v: fnp.sum(v * fg.grad(lambda u: f(w, u * v))(x)))(x))
        out.append(fg.jacfwd(fg.grad(lambda u: fnp.sum(fg.grad(lambda v: f(w, v))(u) ** 2)))(x))
    with fg.debug_nans(), fg.backprop_scope("double") as bp:
        xs = fg.require_grad(x, bp)
        y = f(w, xs)
        (gx,) = fg.backprop([y], [xs], backprop_id=bp, enable_double_backprop=True).values()
        out.append(fg.backprop([fnp.sum(gx * gx)], [xs], backprop_id=bp)[xs])
    return [np.asarray(o) for o in out]


def _same(a, b):
    assert len(a) == len(b)
    for p, q in zip(a, b, strict=True):
        assert p.dtype == q.dtype and p.shape == q.shape
        assert p.tobytes() == q.tobytes(), "results differ"


# -- threads and tasks against a serial run -----------------------------------------


def test_threads_give_the_serial_results_bit_for_bit():
    n_threads, iterations = 4, 3 * SCALE
    seeds = range(n_threads)
    serial = {s: _workload(s) for s in seeds}
    errors, done = [], []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: interleave the folds
    try:
        def worker(seed):
            try:
                for _ in range(iterations):
                    _same(_workload(seed), serial[seed])
                    done.append(seed)
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(s,)) for s in seeds]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert not any(t.is_alive() for t in threads), "a thread hangs"
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
    assert len(done) == n_threads * iterations
    _at_rest()


def test_one_replayed_function_from_eight_threads_gives_the_serial_results():
    """Eight threads call one replayed function whose tiny cache (two plans for three
    signatures) evicts all the time: each call returns what eager returns, bit for bit,
    and the counters add up (before: list.remove, KeyError and IndexError from the
    cache, 89 of 1,440 calls, and counters that raced)."""
    def loss(w, x, scale):
        h = fnp.tanh(x @ w) * scale
        if fnp.sum(h) > 0:  # a guard: plans that retrace, beside the evictions
            return fnp.sum(h ** 2)
        return fnp.sum(fnp.sin(h))

    vg = fg.value_and_grad(loss)
    replayed = fg.replay(vg, max_plans=2)
    rng = np.random.default_rng(0)
    cases = [(rng.standard_normal((n, 3)), rng.standard_normal((4, n)), float(k))
             for n in (2, 3, 5) for k in (1, -2)]
    serial = [vg(*c) for c in cases]
    n_threads, calls = 8, 60 * SCALE
    errors = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        def worker(t):
            try:
                for i in range(calls):
                    j = (7 * i + t) % len(cases)
                    value, grad = replayed(*cases[j])
                    _same((value, grad), serial[j])
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                errors.append(exc)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # it does keep tracing
            threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=300)
        assert not any(t.is_alive() for t in threads), "a thread hangs"
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
    stats = replayed.stats
    assert stats.calls == n_threads * calls
    assert stats.hits + stats.traces + stats.eager == stats.calls
    assert stats.plans == len(replayed.plans) <= 2
    assert stats.traces - stats.evictions == stats.plans
    assert stats.hits > 0
    _at_rest()


def test_asyncio_tasks_give_the_serial_results_bit_for_bit():
    n_tasks, iterations = 4, 2 * SCALE
    serial = {s: _workload(s) for s in range(n_tasks)}

    async def task(seed, hook):
        for _ in range(iterations):
            with fg.hooks(hook):  # a block held across awaits, interleaved with others
                await asyncio.sleep(0)
                result = _workload(seed)
                await asyncio.sleep(0)
            _same(result, serial[seed])
        return seed

    async def main():
        hooks = [_Hook(Points()) for _ in range(n_tasks)]
        return await asyncio.gather(*(task(s, h) for s, h in enumerate(hooks)))

    assert asyncio.run(main()) == list(range(n_tasks))
    _at_rest()


# -- memory over long loops -------------------------------------------------------------


def _growth(step, n_warm, n):
    """Bytes held after ``n`` more calls of ``step`` than after ``n_warm`` (collected)."""
    for _ in range(n_warm):
        step()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(n):
            step()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


def test_a_long_training_loop_keeps_memory_flat():
    rng = np.random.default_rng(0)
    data, target = rng.normal(size=(16, 4)), rng.normal(size=(16, 1))
    params = {"w1": rng.normal(size=(4, 8)) * 0.3, "w2": rng.normal(size=(8, 1)) * 0.3}

    def loss(p):
        h = fnp.tanh(data @ p["w1"])
        return fnp.mean((h @ p["w2"] - target) ** 2)

    vg = fg.value_and_grad(loss)
    losses = [float(loss(params))]  # the first and, once done, the last

    def step():
        value, g = vg(params)
        for k, p in list(params.items()):
            params[k] = p - 0.05 * g[k]
        losses[1:] = [float(value)]

    n = 1000 * SCALE
    grown = _growth(step, 200, n)
    assert losses[-1] < losses[0]  # it trains
    assert grown < 64 * 1024, f"{grown} bytes held after {n} steps"
    _at_rest()


POINTS = ["function", "hook_pre", "hook_post", "rule_vjp", "rule_jvp", "custom_fwd",
          "custom_bwd", "checkpoint"]


def test_loops_that_raise_keep_memory_flat():
    k = [0]

    def step():
        where = POINTS[k[0] % len(POINTS)]
        k[0] += 1
        try:
            _workload(k[0] % 3, Points(where, 1))
        except Fault:
            pass
        else:
            raise AssertionError(f"no fault raised at {where}")

    n = 40 * SCALE
    grown = _growth(step, 16, n)
    assert grown < 64 * 1024, f"{grown} bytes held after {n} failing steps"
    _at_rest()


# -- exceptions at every call of every extension point -----------------------------------


@pytest.mark.parametrize("exc", [Fault, KeyboardInterrupt])
def test_an_exception_at_any_call_of_any_extension_point_leaves_no_state(exc):
    baseline_points = Points()
    baseline = _workload(5, baseline_points)
    assert set(baseline_points.calls) == set(POINTS), baseline_points.calls
    injected = 0
    for where, calls in sorted(baseline_points.calls.items()):
        # every call: the nesting depths and both modes are all among them
        for at in range(1, calls + 1, max(1, calls // (6 * SCALE))):
            with pytest.raises(exc, match=f"call {at} of {where}"):
                _workload(5, Points(where, at, exc))
            _at_rest()
            injected += 1
    _same(_workload(5), baseline)  # and everything still works
    assert injected >= 40


def test_a_fault_inside_nested_combinators_reaches_the_caller_unchanged():
    """Raised at the innermost of three nested gradients, seen as it was raised."""

    def innermost(z):
        raise Fault("deep")

    def f(x):
        return fg.grad(lambda y: fg.grad(innermost)(y) * y)(x) * x

    with pytest.raises(Fault, match="deep") as info:
        fg.grad(f)(np.array(1.0))
    assert info.value.__cause__ is None and info.value.__context__ is None
    _at_rest()


# -- leaked nodes -----------------------------------------------------------------------------


def _leak_check(run):
    refs = []

    def watch(x):
        refs.append(weakref.ref(x))
        return x

    run(watch)
    gc.collect()  # tracebacks of caught exceptions hold cycles of frames
    assert refs, "nothing was watched"
    alive = [r() for r in refs if r() is not None]
    assert not alive, f"{len(alive)} of {len(refs)} Nodes outlive the call: {alive[:3]}"


COMBINATORS = {
    "grad": lambda w: fg.grad(lambda x: fnp.sum(w(fnp.sin(w(x)))))(np.ones(3)),
    "vjp": lambda w: fg.vjp(lambda x: w(x * 2.0), np.ones(3))[1](np.ones(3)),
    "jvp": lambda w: fg.jvp(lambda x: w(fnp.exp(w(x))), (np.ones(3),), (np.ones(3),)),
    "jacobian": lambda w: fg.jacobian(lambda x: w(fnp.tanh(w(x))))(np.ones(2)),
    "jacfwd": lambda w: fg.jacfwd(lambda x: w(fnp.tanh(w(x))))(np.ones(2)),
    "hessian": lambda w: fg.hessian(lambda x: fnp.sum(w(x) ** 3))(np.ones(2)),
    "hvp": lambda w: fg.hvp(lambda x: fnp.sum(w(x) ** 3), (np.ones(2),), (np.ones(2),)),
    "nested": lambda w: fg.grad(lambda x: w(x) * fg.grad(lambda y: w(x * y))(2.0))(1.0),
    "checkpoint": lambda w: fg.grad(lambda x: fnp.sum(fg.checkpoint(
        lambda h: w(fnp.sin(w(h))))(x)))(np.ones(2)),
    "trace": lambda w: fg.trace(lambda x: w(x * x), np.ones(2)),
}


@pytest.mark.parametrize("name", sorted(COMBINATORS))
def test_nodes_die_when_the_combinator_returns(name):
    _leak_check(COMBINATORS[name])
    _at_rest()


@pytest.mark.parametrize("name", sorted(set(COMBINATORS) - {"trace"}))
def test_nodes_die_when_the_combinator_raises(name):
    def run(watch):
        def failing(x):
            watch(x)
            raise Fault("boom")

        try:
            COMBINATORS[name](lambda x: failing(x))
        except Fault:
            pass

    _leak_check(run)
    _at_rest()


def test_a_user_function_that_keeps_no_node_leaves_none_alive_without_collection():
    refs = []

    def f(x):
        y = fnp.sin(x) * x
        refs.extend([weakref.ref(x), weakref.ref(y)])
        return fnp.sum(y)

    gc.disable()
    try:
        fg.grad(f)(np.ones(3))
        fg.jvp(f, (np.ones(3),), (np.ones(3),))
        assert all(r() is None for r in refs)  # freed by reference counting: no cycles
    finally:
        gc.enable()


# -- determinism across processes ---------------------------------------------------------------

_PROGRAM = textwrap.dedent(
    """
    import hashlib, numpy as np, funcgrad as fg, funcgrad.numpy as fnp
    rng = np.random.default_rng(0)
    params = {f"p{i}": rng.normal(size=(3,)) for i in range(12)}   # dict order, str keys
    x = rng.normal(size=(3,))

    def f(p, x):
        terms = [fnp.sum(fnp.tanh(p[k] * x) * (i + 1)) for i, k in enumerate(sorted(p))]
        s = set(terms)              # Nodes hashed into a set: iteration order by hash
        return fnp.sum(fnp.stack(terms)) + 0.0 * fnp.sum(fnp.stack(list(s)))

    out = [fg.grad(f, argnums=(0, 1))(params, x)]
    out.append(fg.hessian(lambda x: f(params, x))(x))
    out.append(fg.jacfwd(lambda x: fnp.sin(x) * fnp.sum(x))(x))
    h = hashlib.sha256()
    for leaf in fg.tree.flatten(out)[0]:
        h.update(np.ascontiguousarray(leaf).tobytes())
    print(h.hexdigest())
    """
)


def test_gradients_are_bit_identical_across_hash_seeds():
    digests = set()
    for hash_seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        done = subprocess.run([sys.executable, "-c", _PROGRAM], env=env, capture_output=True,
                              text=True, timeout=120, check=True)
        digests.add(done.stdout.strip())
    assert len(digests) == 1, digests
    assert len(digests.pop()) == len(hashlib.sha256().hexdigest())
