"""fg.replay's argument contract and what a replayed function reads (issue 16).

Each test is a case where a replay used to return a stale or wrong result with no
warning (or raised the cache's own errors); every result is checked against the
eager call of the same function, bit for bit.  The rows of the table in
docs/replay.md ("Everything a function can read") point here.
"""

from __future__ import annotations

import dataclasses
import math
import time
import tracemalloc

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import FuncgradIndexError


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert a.tobytes() == b.tobytes(), (a, b)


def check(replayed, eager, *args, **kwargs):
    """The replay's result is the eager call's, bit for bit (leaf by leaf)."""
    got, want = replayed(*args, **kwargs), eager(*args, **kwargs)
    got_leaves, got_def = fg.tree.flatten(got)
    want_leaves, want_def = fg.tree.flatten(want)
    assert got_def == want_def
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert type(g) is type(w), (type(g), type(w))
        same_bits(g, w)
    return got


# -- arguments ---------------------------------------------------------------------------


def test_signed_zero_arguments_do_not_collide():
    f = lambda x, c: x / c
    r = fg.replay(f)
    with np.errstate(divide="ignore"):
        check(r, f, np.ones(1), 0.0)
        assert r(np.ones(1), -0.0)[0] == -np.inf  # was [inf]: the 0.0 signature
        arctan2 = lambda y, x: fnp.arctan2(y, x)
        at = fg.replay(arctan2)
        for y, x in ((0.0, 1.0), (0.0, -0.0), (-0.0, -1.0), (1.0, -0.0)):
            check(at, arctan2, np.array([y]), x)  # the right quadrant at each call
    # static values that are float-like: never 0.0 == -0.0 either
    s = fg.replay(lambda x, c: x * math.copysign(1.0, c), static_argnums=1)
    assert s(np.ones(1), 0.0)[0] == 1.0 and s(np.ones(1), -0.0)[0] == -1.0
    z = fg.replay(lambda x, c: x * math.copysign(1.0, c.imag), static_argnums=1)
    assert z(np.ones(1), complex(0.0, 0.0))[0] == 1.0
    assert z(np.ones(1), complex(0.0, -0.0))[0] == -1.0
    n = fg.replay(lambda x, c: x / c)
    with np.errstate(divide="ignore"):
        assert n(np.ones(1), np.float64(0.0))[0] == np.inf
        assert n(np.ones(1), np.float64(-0.0))[0] == -np.inf


def test_python_floats_are_dynamic_and_promote_as_eager():
    def step(w, lr):
        g = fg.grad(lambda w: fnp.sum(fnp.tanh(w) ** 2))(w)
        return w - lr * g, lr * 0.5, fnp.exp(lr)

    r = fg.replay(step)
    w32 = np.array([0.5, -1.0], np.float32)
    for lr in (0.1, 0.05, 0.025, -0.3, 1e-8):  # a schedule: one trace
        out = check(r, step, w32, lr)
        assert out[0].dtype == np.float32  # a weak Python float, as eagerly
    assert r.stats.traces == 1 and r.stats.hits == 4
    # a branch on the float is a guard
    b = fg.replay(lambda x, t: x * t if t > 0.5 else x - t)
    for t in (0.9, 0.7, 0.1, 0.2, 0.8):
        check(b, lambda x, t: x * t if t > 0.5 else x - t, np.ones(2), t)
    assert b.stats.traces == 2
    # NumPy floating scalars are dynamic too, and keep their (strong) dtype
    h = fg.replay(lambda x, s: x * s)
    for s in (np.float32(2.0), np.float32(3.0)):
        check(h, lambda x, s: x * s, np.ones(2, np.float16), s)
    assert h.stats.traces == 1
    # the gradient with respect to a float argument, as eagerly
    g = fg.replay(fg.grad(lambda w, lr: fnp.sum(w * lr) * lr, argnums=1))
    for lr in (0.5, 2.0):
        check(g, fg.grad(lambda w, lr: fnp.sum(w * lr) * lr, argnums=1), np.ones(3), lr)
    assert g.stats.traces == 1


def test_ints_bools_strings_and_none_are_part_of_the_signature_by_type_and_value():
    def f(x, n, flag, name, nothing):
        y = x * n
        if flag:
            y = y + 1
        return y * len(name) if nothing is None else y

    r = fg.replay(f)
    for args in ((1, True, "ab", None), (2, True, "ab", None), (1, False, "ab", None),
                 (1, True, "abc", None), (True, True, "ab", None), (1, 1, "ab", None)):
        check(r, f, np.ones(2), *args)
    assert r.stats.traces == 6  # True and 1 are two signatures (type and value)
    check(r, f, np.ones(2), 2, True, "ab", None)
    assert r.stats.hits == 1


def test_static_argnums_and_argnames_are_hashable_parts_of_the_signature():
    def f(x, act, *, mode):
        return act(x) if mode == "apply" else x

    r = fg.replay(f, static_argnums=(1,), static_argnames=("mode",))
    check(r, f, np.ones(2), np.tanh, mode="apply")
    check(r, f, np.ones(2), np.sin, mode="apply")
    check(r, f, 2 * np.ones(2), np.sin, mode="apply")
    assert r.stats.traces == 2 and r.stats.hits == 1
    by_name = fg.replay(f, static_argnames="act")  # a name covers the position too
    check(by_name, f, np.ones(2), np.cos, mode="skip")
    with pytest.raises(TypeError, match=r"static argument 1 \(a list\) is not hashable"):
        r(np.ones(2), [1], mode="apply")
    with pytest.raises(TypeError, match="static_argnums"):
        fg.replay(f, static_argnums=(-1,))


class _Config:
    def __init__(self, temperature):
        self.temperature = temperature


def test_plain_objects_are_refused_naming_the_argument_and_both_ways_out():
    r = fg.replay(lambda x, cfg: x / cfg.temperature)
    with pytest.raises(TypeError) as info:
        r(np.ones(2), _Config(1.0))
    message = str(info.value)
    assert "argument 1 ('cfg') is a _Config" in message
    assert "register_dataclass" in message and "static_argnums" in message
    assert isinstance(info.value, fg.FuncgradError)
    nested = fg.replay(lambda p: p["w"])
    with pytest.raises(TypeError, match=r"argument 0 \('p'\) at \['cfg'\] is a _Config"):
        nested({"w": np.ones(1), "cfg": _Config(1.0)})


def test_a_static_object_is_seen_when_its_attributes_change():
    def f(x, cfg):
        return x / cfg.temperature

    r = fg.replay(f, static_argnums=1)
    cfg = _Config(1.0)
    check(r, f, np.ones(2), cfg)
    cfg.temperature = 2.0  # was: the replay kept 1.0
    check(r, f, np.ones(2), cfg)
    check(r, f, np.ones(2), cfg)
    assert r.stats.traces == 2 and r.stats.hits == 1


@fg.tree.register_dataclass
@dataclasses.dataclass
class _Model:
    w: np.ndarray
    b: float

    @fg.replay
    def predict(self, x):
        return fnp.sum(self.w * x) + self.b


class _Plain:
    def __init__(self, w):
        self.w = w

    @fg.replay
    def predict(self, x):
        return self.w * x


def test_methods_see_self_when_it_is_a_pytree_or_static_and_refuse_it_otherwise():
    class _Static:
        def __init__(self, w):
            self.w = w

        @fg.replay(static_argnums=0)
        def predict(self, x):
            return self.w * x

    m = _Model(np.array([1.0, 2.0]), 0.0)
    assert m.predict(np.ones(2)) == 3.0
    m.w = np.array([10.0, 20.0])  # the usual training update
    assert m.predict(np.ones(2)) == 30.0  # was 3.0
    m.b = 0.5
    assert m.predict(np.ones(2)) == 30.5
    assert _Model.predict.stats.traces == 1
    s = _Static(np.array([3.0]))
    assert s.predict(np.ones(1))[0] == 3.0
    s.w = np.array([4.0])
    assert s.predict(np.ones(1))[0] == 4.0
    s.w[0] = 5.0  # in place
    assert s.predict(np.ones(1))[0] == 5.0
    with pytest.raises(TypeError, match=r"argument 0 \('self'\) is a _Plain"):
        _Plain(np.ones(1)).predict(np.ones(1))


def test_dict_arguments_give_gradients_in_their_own_key_order():
    f = fg.grad(lambda p: fnp.sum(p["a"] * 2.0 + p["b"]))
    r = fg.replay(f)
    first = check(r, f, {"a": np.ones(1), "b": np.ones(1)})
    second = check(r, f, {"b": np.ones(1), "a": np.ones(1)})
    assert list(first) == ["a", "b"] and list(second) == ["b", "a"]  # was ['a', 'b']


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_masked_arrays_and_matrices_are_refused_as_eager_refuses_them():
    f = fg.grad(lambda m: fnp.sum(m * 2.0))
    r = fg.replay(f)
    r(np.ones(2))
    for a in (np.ma.masked_array([1.0, 2.0], mask=[0, 1]), np.matrix([[1.0, 2.0]])):
        with pytest.raises(fg.FuncgradError) as eager:
            f(a)
        with pytest.raises(type(eager.value), match="cannot differentiate"):
            r(a)  # was: accepted (masked), or NumPy's raw TypeError (matrix)


# -- results -----------------------------------------------------------------------------


@fg.tree.register_dataclass
@dataclasses.dataclass
class _Out:
    loss: np.ndarray
    grad: np.ndarray


def test_a_dataclass_result_is_a_fresh_object_and_other_objects_are_refused():
    def f(w):
        value, grad = fg.value_and_grad(lambda w: fnp.sum(w ** 2))(w)
        return _Out(value, grad)

    r = fg.replay(f)
    a, b = r(np.ones(2)), r(2 * np.ones(2))
    assert a is not b and type(a) is _Out and not fg.replay.__module__ in repr(type(a.loss))
    same_bits(b.grad, f(2 * np.ones(2)).grad)
    assert type(b.grad) is np.ndarray  # not the trace's own values
    refused = fg.replay(lambda w: _Config(w * 2))
    with pytest.raises(fg.ReplayError, match="returned a _Config, which is not a pytree"):
        refused(np.ones(2))


def test_errors_raised_inside_a_plan_are_the_eager_ones():
    f = fg.grad(lambda x, i: fnp.sum(x[i] ** 2))
    r = fg.replay(f)
    check(r, f, np.ones(3), np.array([1]))
    with pytest.raises(FuncgradIndexError, match="out of bounds"):
        r(np.ones(3), np.array([5]))  # was: NumPy's bare IndexError


# -- closed-over and global arrays -------------------------------------------------------


def test_in_place_changes_to_closed_over_arrays_reach_every_derived_use():
    c = np.array([0.5, 1.0, 1.5])

    def f(x):
        y = x * c + np.sin(c) + fnp.sin(c) + float(c[0]) + c.sum()
        return fnp.sum(y if c[0] > 0 else -y)

    r = fg.replay(fg.value_and_grad(f))
    eager = fg.value_and_grad(f)
    check(r, eager, np.ones(3))
    c[:] = -1  # was: 1.89 where eager gives -2.52
    check(r, eager, np.ones(3))
    check(r, eager, 2 * np.ones(3))
    assert r.stats.hits == 1 and r.stats.retraces == 1
    c[0] = 7.0
    check(r, eager, np.ones(3))


def test_rebinding_a_closed_over_name_is_seen():
    scale = np.ones(2)

    def f(x):
        return fnp.sum(x * scale) * float(scale[0])

    r = fg.replay(f)
    check(r, f, np.ones(2))
    scale = np.array([3.0, 4.0])
    check(r, f, np.ones(2))
    assert r(np.ones(2)) == 21.0


W = np.array([1.0, -1.0])
TEMPERATURE = 1.0


def _reads_globals(x):
    return fnp.sum(fnp.tanh(x @ W) / TEMPERATURE)


def test_rebinding_a_global_is_seen_as_in_a_notebook_training_loop():
    global W, TEMPERATURE
    step = fg.replay(fg.value_and_grad(_reads_globals))
    eager = fg.value_and_grad(_reads_globals)
    x = np.array([[0.5, 0.1], [0.2, 0.3]])
    saved = W, TEMPERATURE
    try:
        for _ in range(3):
            check(step, eager, x)
            W = W - 0.1 * np.ones(2)  # the loop rebinds what the function reads
        TEMPERATURE = 2.0
        check(step, eager, x)
        W[0] = 5.0
        check(step, eager, x)
        assert step.stats.traces == 5  # every change traced again: never stale
        check(step, eager, 2 * x)
        assert step.stats.hits == 1
    finally:
        W, TEMPERATURE = saved


def test_lists_dicts_and_objects_held_by_the_closure_are_watched():
    params = {"w": np.ones(2)}
    layers = [np.ones(2)]
    cfg = _Config(1.0)

    def f(x):
        return fnp.sum(x * params["w"] * layers[0] / cfg.temperature)

    r = fg.replay(f)
    check(r, f, np.ones(2))
    params["w"] = 2 * np.ones(2)
    check(r, f, np.ones(2))
    layers[0] = 3 * np.ones(2)
    check(r, f, np.ones(2))
    cfg.temperature = 4.0
    check(r, f, np.ones(2))
    layers[0][1] = 9.0
    check(r, f, np.ones(2))
    assert r.stats.traces == 5
    check(r, f, np.ones(2))
    assert r.stats.hits == 1


def test_default_arguments_holding_arrays_are_watched():
    def f(x, c=np.ones(2)):  # noqa: B008 - the case under test
        return x * fnp.exp(c)

    r = fg.replay(f)
    check(r, f, np.ones(2))
    f.__defaults__[0][:] = 2.0
    check(r, f, np.ones(2))


def test_a_function_that_changes_what_it_reads_while_traced_is_refused():
    c = np.ones(2)

    def f(x):
        c[:] += 1  # eagerly: a new c at each call; a plan cannot redo it
        return x * c

    with pytest.raises(fg.ReplayError, match="changed 'c'"):
        fg.replay(f)(np.ones(2))
    r = fg.replay(f, fallback=True)
    c[:] = 0
    assert r(np.ones(2))[0] == 1.0 and r(np.ones(2))[0] == 2.0


# -- data-dependent shapes of float data ---------------------------------------------------


@pytest.mark.parametrize("fun", [
    lambda x: fnp.sum(x) / len(np.unique(x)),
    lambda x: fnp.sum(x[np.nonzero(x)]),
    lambda x: fnp.sum(x) * np.flatnonzero(x).shape[0],
    lambda x: fnp.sum(x) * np.argwhere(x).size,
    lambda x: fnp.sum(np.compress(x > 0.5, x)),
    lambda x: fnp.sum(x[x > 0.5]),
    lambda x: fnp.sum(x) * len(np.where(x)[0]),
    lambda x: fnp.sum(x) * x.nonzero()[0].size,
], ids=["unique", "nonzero", "flatnonzero", "argwhere", "compress", "mask", "where", "method"])
def test_shapes_that_float_data_decides_are_guarded(fun):
    r = fg.replay(fun)
    for v in ([1.0, 2.0, 3.0], [1.0, 1.0, 4.0], [0.0, 0.0, 5.0], [1.0, 2.0, 3.0]):
        check(r, fun, np.array(v))
    assert r.stats.hits >= 1


# -- what no plan can replay ---------------------------------------------------------------


def test_clocks_and_files_read_while_traced_are_refused(tmp_path):
    def clock(x):
        return x * time.time()

    path = tmp_path / "w.npy"
    np.save(path, np.ones(2))

    def file(x):
        return x * np.load(path)

    for fun, what in ((clock, "clock time.time"), (file, "opened the file")):
        with pytest.raises(fg.ReplayError, match=what):
            fg.replay(fun)(np.ones(2))
    r = fg.replay(file, fallback=True)
    r(np.ones(2))
    np.save(path, 3 * np.ones(2))
    assert r(np.ones(2))[0] == 3.0 and r.stats.eager == 1


def test_the_fallback_cache_is_bounded():
    def f(x, n):
        repr(x)  # a traced value read by Python: eager with fallback
        return x * n

    r = fg.replay(f, fallback=True, max_plans=4)
    for n in range(200):
        r(np.ones(1), n)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for n in range(200, 1200):
        r(np.ones(1), n)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert len(r._cache) <= 4  # was: one eager entry per signature, forever
    assert grown < 100_000, grown


def test_closed_over_arrays_of_another_device_are_watched_too(standin):
    c = standin.put(np.array([1.0, 2.0]))

    def f(x):
        return fnp.sum(x * c)

    r = fg.replay(fg.value_and_grad(f))
    x = standin.put(np.array([3.0, 4.0]))
    value, _ = r(x)
    assert float(standin.get(value)) == 11.0
    c[0] = 10.0  # in place, on the device
    value, grad = r(x)
    assert float(standin.get(value)) == 38.0
    assert np.array_equal(standin.get(grad), [10.0, 2.0])
    assert r.stats.retraces == 1


_FLOAT_USES = {
    "array": lambda x, lr: fnp.array([lr, 2.0]) * x[:2],
    "array_of_x": lambda x, lr: fnp.array([x[0], lr]),
    "linspace": lambda x, lr: fnp.linspace(0, lr, 5),
    "full": lambda x, lr: fnp.full(3, lr) + x,
    "maximum": lambda x, lr: fnp.maximum(x, lr),
    "clip": lambda x, lr: fnp.clip(x, -lr, lr),
    "where": lambda x, lr: fnp.where(x > lr, x, lr),
    "pow": lambda x, lr: fnp.abs(x) ** lr + lr ** fnp.abs(x),
    "fnp_exp": lambda x, lr: fnp.exp(lr) * x,
    "math_exp": lambda x, lr: math.exp(lr) * x,  # a guard: traces per value
    "numpy_scalar": lambda x, lr: np.float32(lr) * x,  # a guard too
    "returned": lambda x, lr: (lr * 2, lr),
    "int": lambda x, lr: x * int(lr * 10),
    "round_floor": lambda x, lr: x * round(lr, 1) + math.floor(lr * 3),
    "mod": lambda x, lr: x * (lr % 0.3) + (lr // 0.2) - lr + abs(-lr),
    "softmax": lambda x, lr: fg.nn.softmax(x / (lr + 1.0)),
    "grad_wrt_float": lambda x, lr: fg.grad(lambda t: fnp.sum(x * t) * t)(lr),
    "grad_wrt_x": lambda x, lr: fg.grad(lambda x: fnp.sum(fnp.tanh(x * lr)))(x),
    "hessian": lambda x, lr: fg.hessian(lambda t: fnp.sin(t) * t)(lr),
    "jvp": lambda x, lr: fg.jvp(lambda t: fnp.sum(x) * fnp.cos(t), (lr,), (1.0,)),
    "value_and_grad": lambda x, lr: fg.value_and_grad(
        lambda w, t: fnp.sum((w * t) ** 2), argnums=(0, 1))(x, lr),
    "checkpoint": lambda x, lr: fg.grad(fg.checkpoint(lambda w: fnp.sum(w * lr)))(x),
    "concatenate": lambda x, lr: fnp.concatenate([x, fnp.array([lr])]),
}


@pytest.mark.parametrize("name", sorted(_FLOAT_USES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_float_argument_behaves_as_eager_wherever_it_goes(name, dtype):
    f = _FLOAT_USES[name]
    r = fg.replay(f)
    x = np.array([0.5, -1.5, 2.0], dtype)
    for lr in (0.1, 0.25, -0.0, 0.1):
        check(r, f, x, lr)  # values, types and dtypes: the eager call's
    if name not in ("math_exp", "numpy_scalar", "int", "round_floor", "mod"):
        assert r.stats.traces == 1, r.stats


def test_reading_very_many_places_besides_the_arguments_warns():
    vocabulary = {f"w{i}": i for i in range(20_000)}

    def f(x):
        return x * len(vocabulary)

    r = fg.replay(f)
    with pytest.warns(UserWarning, match=r"reads 2000\d places besides its arguments"):
        r(np.ones(1))
    vocabulary["new"] = 1  # still watched: the change traces again, which warns again
    with pytest.warns(UserWarning, match=r"reads 2000\d places besides its arguments"):
        assert r(np.ones(1))[0] == 20_001.0
