"""fg.replay (API.md §8): trace once per signature, replay a guarded flat plan.

What it promises, tested here: results bit-identical to eager calls (the whole
primitive table, both modes, on new inputs); guards that retrace when control
flow, an int/float read or a data-dependent shape changes, the cache keeping
both plans; a bounded cache with readable counters; nested combinators,
checkpoint, custom_vjp, multiple graphs and the stand-in device; hooks and
debug_nans; clear errors (or an eager fallback) for what cannot be replayed.
"""

from __future__ import annotations

import importlib
import time
import tracemalloc
import zlib

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import ReplayError

replay_module = importlib.import_module("funcgrad.replay")


def same_bits(a, b):
    """Every leaf of two results: same type, dtype, shape and bytes."""
    la, lb = fg.tree.flatten(a)[0], fg.tree.flatten(b)[0]
    assert len(la) == len(lb)
    for x, y in zip(la, lb, strict=True):
        assert type(x) is type(y), (type(x), type(y))
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, x.shape, y.dtype, y.shape)
        assert x.tobytes() == y.tobytes(), (x, y)


# -- the whole primitive table, both ways --------------------------------------------


def _table():
    from test_primitives import ROWS

    for row in ROWS:
        shapes = next((s for s in row.shapes if all(np.prod(x) > 0 for x in s)), row.shapes[0])
        yield pytest.param(row, shapes, id=f"{row.name}{('-' + row.id) if row.id else ''}")


def _vjp_both(fun):
    def both(*args):
        out, vjp_fn = fg.vjp(fun, *args)
        return out, vjp_fn(fg.tree.tree_map(np.ones_like, out))

    return both


def _jvp(fun):
    return lambda *args: fg.jvp(fun, args, tuple(np.ones_like(a) for a in args))


@pytest.mark.parametrize("row, shapes", list(_table()))
def test_every_primitive_replays_bit_identical_to_eager(row, shapes):
    seed = zlib.crc32(f"replay-{row.name}{row.id}".encode())
    dtypes = ("float64", "float32") if seed % 4 == 0 else ("float64",)  # float32: a quarter
    for dtype in dtypes:
        first = row.inputs(np.random.default_rng(seed), dtype, shapes)
        second = row.inputs(np.random.default_rng(seed + 1), dtype, shapes)
        modes = [_vjp_both] + ([_jvp] if "fwd" in row.modes else [])
        for wrap in modes:
            eager = wrap(row.fun)
            replayed = fg.replay(wrap(row.fun))
            same_bits(replayed(*first), eager(*first))  # the trace
            same_bits(replayed(*second), eager(*second))  # the plan, on new data
            same_bits(replayed(*second), eager(*second))  # (or a retrace: a boolean mask)
            assert replayed.stats.hits >= 1


# -- guards -----------------------------------------------------------------------------


def branchy(x):
    if x.sum() > 0:
        return fnp.sum(fnp.sin(x) * x)
    return fnp.sum(fnp.cos(x))


def test_a_changed_branch_retraces_and_both_plans_are_kept():
    f = fg.replay(fg.value_and_grad(branchy))
    eager = fg.value_and_grad(branchy)
    pos, neg = np.array([0.5, 1.0]), np.array([-0.5, -1.0])
    same_bits(f(pos), eager(pos))
    same_bits(f(neg), eager(neg))  # the guard fails: retrace
    assert f.stats.retraces == 1 and f.stats.plans == 2
    for x in (pos * 2, neg * 2, pos, neg):  # both branches now replay
        same_bits(f(x), eager(x))
    assert f.stats.traces == 2 and f.stats.hits == 4
    guard = f.plans[0].guards[0]
    assert guard.op == "guard bool" and "test_replay.py" in guard.where


def test_int_and_float_reads_are_guards():
    def f(x, n):
        total = fnp.sum(x)
        for _ in range(int(n.sum())):  # a loop count read from data
            total = total * 2.0
        return total * float(x[0])  # a float read from data: a constant of the plan

    r = fg.replay(f)
    x = np.array([1.5, 2.0])
    same_bits(r(x, np.array([1, 1])), f(x, np.array([1, 1])))
    same_bits(r(x, np.array([1, 1])), f(x, np.array([1, 1])))
    assert r.stats.hits == 1
    same_bits(r(x, np.array([2, 1])), f(x, np.array([2, 1])))  # int changed
    same_bits(r(x + 1, np.array([2, 1])), f(x + 1, np.array([2, 1])))  # float changed
    assert r.stats.retraces == 2


def test_a_shape_that_depends_on_data_is_guarded():
    def loss(x):
        return fnp.sum(x[x > 0] ** 2)

    f = fg.replay(fg.value_and_grad(loss))
    eager = fg.value_and_grad(loss)
    a, b = np.array([1.0, -2.0, 3.0]), np.array([1.0, 2.0, 3.0])
    same_bits(f(a), eager(a))
    same_bits(f(a * 2), eager(a * 2))  # same count of positives: replayed
    assert f.stats.hits == 1
    same_bits(f(b), eager(b))  # three positives: the mask's shape differs
    assert f.stats.retraces == 1
    assert any(g.op == "guard getitem" for g in f.plans[0].guards)  # the mask's count


def test_a_new_shape_or_dtype_is_a_new_signature():
    f = fg.replay(fg.grad(lambda x: fnp.sum(fnp.tanh(x))))
    for x in (np.ones(2), np.ones(3), np.ones(2, np.float32), np.ones(3)):
        same_bits(f(x), fg.grad(lambda x: fnp.sum(fnp.tanh(x)))(x))
    assert f.stats == replay_module.ReplayStats(calls=4, hits=1, traces=3, retraces=0,
                                                eager=0, evictions=0, plans=3)


def test_ints_are_part_of_the_signature_and_floats_are_dynamic():
    def f(x, scale, *, power):
        return fnp.sum(x ** power) * scale

    r = fg.replay(f)
    x = np.array([1.0, 2.0])
    assert r(x, 2.0, power=2) == 10.0
    assert r(x, 3.0, power=2) == 15.0  # another float: the same plan
    assert r(x, 3.0, power=3) == 27.0  # another int: another trace
    assert r(x + 1, 3.0, power=3) == 105.0  # replayed
    assert r.stats.traces == 2 and r.stats.hits == 2
    with pytest.raises(TypeError, match="argument 1 .'scale'. is a _Unhashable"):
        r(x, _Unhashable(), power=2)


class _Unhashable:
    __hash__ = None


# -- the cache --------------------------------------------------------------------------


def test_the_cache_is_bounded_least_recently_used_first():
    f = fg.replay(lambda x: fnp.sum(x * x), max_plans=2)
    f(np.ones(1))
    f(np.ones(2))
    f(np.ones(1))  # 1 is now the most recent
    f(np.ones(3))  # evicts 2
    assert f.stats.evictions == 1 and f.stats.plans == 2
    assert [p.inputs[0][0] for p in f.plans] == [(3,), (1,)]
    f(np.ones(1))
    assert f.stats.hits == 2
    f.clear()
    assert f.stats.plans == 0 and f.plans == ()


def test_a_function_that_keeps_retracing_is_warned_about():
    f = fg.replay(lambda x: x * float(x.sum()), max_plans=2)  # float(): a new plan per value
    got = []
    with pytest.warns(replay_module.ReplayWarning, match="keeps tracing"):  # noqa: PT031
        for k in range(6):
            got.append(f(np.full(2, float(k))))
    for k, g in enumerate(got):
        np.testing.assert_array_equal(g, np.full(2, float(k)) * 2 * k)


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="callable"):
        fg.replay(3)
    with pytest.raises(TypeError, match="max_plans"):
        fg.replay(np.sin, max_plans=0)
    with pytest.raises(fg.FuncgradError):
        fg.replay(np.sin, compile_after=-1)


# -- combinators, nested and otherwise --------------------------------------------------


def poly(x):
    return fnp.sum(fnp.sin(x) * x ** 3 + fnp.exp(-x * x))


VECTORS = (np.array([0.3, -0.7]), np.array([1.1, 0.2]))
SCALARS = (np.array(0.3), np.array(-1.1))


@pytest.mark.parametrize("make, inputs", [
    (lambda: fg.grad(fg.grad(lambda x: fnp.sin(x) * fnp.exp(x))), SCALARS),
    (lambda: fg.hessian(poly), VECTORS),
    (lambda: fg.jacfwd(fg.jacrev(poly)), VECTORS),
    (lambda: fg.grad(lambda x: fnp.sum(fg.grad(poly)(x) ** 2)), VECTORS),
    (lambda: lambda x: fg.jvp(poly, (x,), (np.ones_like(x),)), VECTORS),
    (lambda: lambda x: fg.hvp(poly, (x,), (np.ones_like(x),)), VECTORS),
    (lambda: fg.jacobian(lambda x: fnp.tanh(x)[::-1] * x), VECTORS),
], ids=["grad-grad", "hessian", "jacfwd-jacrev", "grad-of-grad-norm", "jvp", "hvp",
        "jacobian"])
def test_nested_combinators_replay(make, inputs):
    eager, replayed = make(), fg.replay(make())
    for x in inputs:
        same_bits(replayed(x), eager(x))
    assert replayed.stats.hits == 1


def test_sixth_derivative_replays_and_drops_dead_steps():
    def f(x):
        return fnp.sin(x) * fnp.exp(x)

    for _ in range(6):
        f = fg.grad(f)
    r = fg.replay(f)
    for x in (np.array(0.5), np.array(0.25)):
        same_bits(r(x), f(x))
    closed = -8 * np.exp(0.25) * np.cos(0.25)  # 2^3 e^x sin(x + 6 pi / 4)
    np.testing.assert_allclose(r(np.array(0.25)), closed, rtol=1e-12)
    assert r.plans[0].dropped > 0  # lower-order values nothing reads


def test_checkpoint_custom_vjp_and_multiple_graphs_replay():
    @fg.custom_vjp
    def clipped(x):
        return fnp.tanh(x)

    clipped.defvjp(lambda x: (fnp.tanh(x), x), lambda x, g: (g * fnp.cos(x),))

    def loss(x, w):
        h = fg.checkpoint(lambda h: fnp.sin(h * w) * w)(x)
        return fnp.sum(clipped(h) ** 2)

    def two_graphs(x, y):
        with fg.backprop_scope("y") as by, fg.backprop_scope("x") as bx:
            xn, yn = fg.require_grad(x, bx), fg.require_grad(y, by)
            z = fnp.sum(xn * (xn + yn))
            gx = fg.backprop([z], [xn], backprop_id=bx)[xn]
            gy = fg.backprop([fnp.sum(xn * gx)], [yn], backprop_id=by)[yn]  # x, a Node on bx
            return fg.value_of(gx), fg.value_of(gy)

    for fun, args in ((fg.value_and_grad(loss, argnums=(0, 1)), (np.array([0.2, 0.9]), 1.3)),
                      (fg.hessian(loss), (np.array([0.2, 0.9]), 1.3)),
                      (two_graphs, (np.array([2.0, 1.0]), np.array([3.0, 4.0])))):
        r = fg.replay(fun)
        same_bits(r(*args), fun(*args))
        new = (args[0] * 0.5,) + args[1:]
        same_bits(r(*new), fun(*new))
        assert r.stats.hits == 1


def test_a_plain_function_and_pytrees_replay():
    def f(params, batch):
        h = fnp.tanh(batch["x"] @ params[0] + params[1])
        return {"out": h, "mean": fnp.mean(h), "n": 3, "same": batch["x"]}

    r = fg.replay(f)
    params = (np.ones((2, 3)), np.zeros(3))
    batch = {"x": np.array([[0.5, -1.0]])}
    same_bits(r(params, batch), f(params, batch))
    out = r(params, {"x": np.array([[1.5, 2.0]])})
    same_bits(out, f(params, {"x": np.array([[1.5, 2.0]])}))
    assert out["n"] == 3 and r.stats.hits == 1


def test_called_on_nodes_or_inside_a_trace_it_just_runs():
    inner = fg.replay(lambda x: fnp.sin(x) * x)
    g = fg.grad(lambda x: fnp.sum(inner(x)))  # inner sees Nodes: plain calls
    x = np.array([0.3, 0.6])
    same_bits(g(x), fg.grad(lambda x: fnp.sum(fnp.sin(x) * x))(x))
    assert inner.stats.eager == 1 and inner.stats.traces == 0
    outer = fg.replay(g)
    same_bits(outer(x), g(x))
    same_bits(outer(x + 1), g(x + 1))
    assert outer.stats.hits == 1


def test_compiled_plans_compute_the_same():
    loss = fg.value_and_grad(branchy)
    f = fg.replay(loss, compile_after=0)
    for x in (np.array([0.5, 1.0]), np.array([1.5, 1.0]), np.array([-1.5, 1.0])):
        same_bits(f(x), loss(x))
    assert all(p.compiled for p in f.plans if p.hits)
    assert f.stats.retraces == 1


# -- the stand-in device (CuPy's paths without a GPU) ----------------------------------


def test_replay_on_the_standin_device(standin):
    def loss(x, w):
        return fnp.sum(fnp.tanh(x @ w) ** 2) + fnp.mean(fnp.maximum(x, 0.1))

    vg = fg.value_and_grad(loss, argnums=(0, 1))
    r = fg.replay(vg)
    rng = np.random.default_rng(3)
    for _ in range(2):
        x, w = standin.put(rng.standard_normal((3, 4))), standin.put(rng.standard_normal((4, 2)))
        got, want = r(x, w), vg(x, w)
        for a, b in zip(fg.tree.flatten(got)[0], fg.tree.flatten(want)[0], strict=True):
            assert type(a) is standin.StrictArray
            assert standin.get(a).tobytes() == standin.get(b).tobytes()
    assert r.stats.hits == 1 and fg.device_of(got[0]) == standin.DEVICE
    h = fg.replay(fg.hessian(lambda x: fnp.sum(fnp.sin(x) ** 3)))
    for v in ([0.3, 0.5], [0.1, -0.4]):
        x = standin.put(np.array(v))
        assert standin.get(h(x)).tobytes() == standin.get(
            fg.hessian(lambda x: fnp.sum(fnp.sin(x) ** 3))(x)).tobytes()
    with pytest.raises(standin.StrictnessError):  # NumPy beside the device: as eager
        fg.replay(lambda a, b: a + b)(standin.put(np.ones(2)), np.ones(2))


# -- hooks and debug_nans -----------------------------------------------------------


def test_hooks_make_calls_eager():
    f = fg.replay(fg.grad(lambda x: fnp.sum(fnp.sin(x))))
    x = np.ones(2)
    f(x)
    timer = fg.TimerHook()
    with fg.hooks(timer):
        same_bits(f(x), fg.grad(lambda x: fnp.sum(fnp.sin(x)))(x))
    assert f.stats.eager == 1 and sorted(r[0] for r in timer.rows()) == ["sin", "sum"]

    local = fg.TimerHook()

    def with_local_hook(x):
        xn = fg.require_grad(x)
        return fg.backprop([fnp.sum(fnp.sin(xn))], [xn], hooks=[local])[xn]

    g = fg.replay(with_local_hook)
    for _ in range(3):
        g(x)
    assert g.stats.traces == 1 and g.stats.eager == 2 and local.rows()[0][1] == 3


def test_debug_nans_is_replayed_as_guards():
    def loss(x):
        return fnp.sum(fnp.sqrt(x))

    f = fg.replay(fg.grad(loss))
    with fg.debug_nans():
        f(np.array([1.0, 4.0]))
        f(np.array([1.0, 9.0]))
        assert f.stats.hits == 1 and f.plans[0].guards  # the NaN checks
        with pytest.raises(FloatingPointError, match="sqrt"), np.errstate(divide="ignore"):
            f(np.array([0.0, 4.0]))  # 1/(2 sqrt 0) = inf in the backward of sqrt
    with np.errstate(divide="ignore"):  # without debug_nans: a plan of its own, and inf
        np.testing.assert_array_equal(f(np.array([0.0, 4.0])), [np.inf, 0.25])
    assert f.stats.traces == 3  # debug_nans is part of the signature


# -- what cannot be replayed -------------------------------------------------------------


@pytest.mark.parametrize("body, what", [
    (lambda x: print(fg.value_of(x)) or x, "print"),
    (lambda x: x + np.asarray(fg.value_of(x)).sum(), "numpy.asarray"),
    (lambda x: x * fnp.sum(x).tobytes().__len__(), "tobytes"),
])
def test_data_read_for_python_itself_raises_or_falls_back(body, what, capsys):
    x = np.array([1.0, 2.0])
    with pytest.raises(ReplayError, match=what):
        fg.replay(body)(x)
    assert issubclass(ReplayError, fg.FuncgradError) and issubclass(ReplayError, TypeError)
    f = fg.replay(body, fallback=True)
    for k in (1.0, 2.0):
        same_bits(f(x * k), body(x * k))
    assert f.stats.traces == 1 and f.stats.eager == 1


def test_random_numbers_drawn_inside_are_refused():
    rng = np.random.default_rng(0)
    for fun in (lambda x: x + np.random.normal(size=x.shape),
                lambda x: x + rng.normal(size=x.shape)):
        with pytest.raises(ReplayError, match="random"):
            fg.replay(fun)(np.ones(2))
        f = fg.replay(fun, fallback=True)
        assert not np.array_equal(f(np.ones(2)), f(np.ones(2)))  # eager: fresh draws
    noise = fg.replay(lambda x, e: fnp.sum((x + e) ** 2))  # drawn outside: replayed
    x = np.ones(3)
    e1, e2 = rng.normal(size=3), rng.normal(size=3)
    assert noise(x, e1) != noise(x, e2) and noise.stats.hits == 1


def test_random_numbers_drawn_from_a_module_of_another_class_are_refused(monkeypatch):
    # The watch gives numpy.random and random a class of its own during a trace; a module
    # another library has already given a class (a lazy loader's) has its names set instead.
    import random
    import types

    before = (random.random, np.random.normal)
    for module in (random, np.random):
        monkeypatch.setattr(module, "__class__", type("Lazy", (types.ModuleType,), {}))
    for fun in (lambda x: x + random.random(), lambda x: x + np.random.normal(size=x.shape)):
        with pytest.raises(ReplayError, match="random"):
            fg.replay(fun)(np.ones(2))
        f = fg.replay(fun, fallback=True)
        assert not np.array_equal(f(np.ones(2)), f(np.ones(2)))  # eager: fresh draws
    assert (random.random, np.random.normal) == before  # put back after each trace
    assert type(random).__name__ == type(np.random).__name__ == "Lazy"


def test_other_impure_calls_run_at_trace_time_only():
    calls = []

    def f(x):
        calls.append("traced")  # a Python side effect: documented, done at trace time
        return fnp.sum(x)

    r = fg.replay(f)
    r(np.ones(2))
    r(np.ones(2))
    assert len(calls) == 1 and r.stats.hits == 1


def test_reading_a_clock_is_refused_or_eager_with_fallback():
    calls = []

    def f(x):
        calls.append(time.perf_counter())  # a value no plan can replay
        return fnp.sum(x)

    with pytest.raises(ReplayError, match="clock time.perf_counter"):
        fg.replay(f)(np.ones(2))
    r = fg.replay(f, fallback=True)
    r(np.ones(2))
    r(np.ones(2))
    assert len(calls) == 3 and r.stats.eager == 1 and r.stats.hits == 0


def test_updating_an_argument_in_place_raises():
    def f(x):
        v = fg.value_of(x)
        v += 1.0
        return v

    with pytest.raises(ReplayError, match="in place"):
        fg.replay(f)(np.ones(2))


def test_a_traced_value_kept_by_a_side_effect_cannot_be_used_later():
    kept = []
    f = fg.replay(lambda x: kept.append(x * 2) or fnp.sum(x))
    f(np.ones(2))
    with pytest.raises(ReplayError, match="after its trace ended"):
        kept[0] + 1
    assert "finished" in repr(kept[0])


def test_returning_a_node_raises():
    with pytest.raises(ReplayError, match="Node"):
        fg.replay(lambda x: fg.require_grad(x))(np.ones(2))


# -- inspection and liveness ------------------------------------------------------------


def test_a_plan_is_inspectable_like_a_graph():
    f = fg.replay(fg.grad(lambda x: fnp.sum(fnp.sin(x) * x)))
    f(np.ones(3))
    plan = f.plans[0]
    text = str(plan)
    assert text.startswith("Plan: 1 input, 1 output") and "sin" in text and "cos" in text
    assert "frees" in text.splitlines()[1]
    assert plan.dropped == 3  # the forward product and sum: grad does not return them
    assert [s.op for s in plan][:2] == ["sin", "ones"]
    dot = plan.to_dot()
    assert dot.startswith('digraph "plan" {') and "in0 -> s0" in dot and dot.endswith("}\n")
    html = plan._repr_html_()
    assert "<table" in html and "broadcast_to" in html
    read_last = {f for s in plan for f in s.frees}
    assert 0 in read_last  # the input is released after its last reader
    assert repr(f).startswith("<replay of")


def test_a_plan_keeps_only_what_backward_reads():
    # y = sin(y) * h + y, 100 times: backward reads each sin's input and nothing else.
    def chain(x):
        y = x
        for _ in range(100):
            y = fnp.sin(y) * 0.01 + y
        return fnp.sum(y)

    f = fg.replay(fg.grad(chain))
    x = np.random.default_rng(0).standard_normal(10_000)
    f(x)
    f(x)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    f(x)
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    arrays = peak / x.nbytes
    assert 100 <= arrays <= 104, arrays  # the 100 residuals, and a few temporaries


def test_an_in_place_update_of_memory_an_input_views_is_refused():
    big = np.arange(6.0)

    def through_base(x):
        b = x.base  # the array the argument views: its memory is the argument's
        b += 1.0
        return fnp.sum(x)

    with pytest.raises(ReplayError, match="in place"):
        fg.replay(through_base)(big[:3])

    def fresh(x):
        y = x * 2.0  # owns its data: updating it is fine
        y += 1.0
        return fnp.sum(y)

    r = fg.replay(fresh)
    assert r(big[:3]) == fresh(big[:3]) and r(big[3:]) == fresh(big[3:])
