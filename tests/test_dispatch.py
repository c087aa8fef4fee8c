"""Dispatch goes through the inputs' array namespace, registered in one place.

A stand-in array type (a NumPy subclass) is registered with a namespace that
records every function it is asked for: primitives, their rules and the folds
must all compute there, forward and backward, without any other change.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import backend


class TracedArray(np.ndarray):
    """An array type funcgrad has never heard of."""


class RecordingNamespace(types.SimpleNamespace):
    def __init__(self):
        super().__init__(calls=[])

    def __getattr__(self, name):
        fun = getattr(np, name)
        if not callable(fun):
            return fun

        def call(*args, **kwargs):
            self.calls.append(name)
            out = fun(*args, **kwargs)
            return out.view(TracedArray) if isinstance(out, np.ndarray) else out

        return call


@pytest.fixture
def traced():
    xp = RecordingNamespace()
    backend.register_namespace(TracedArray, xp, lambda a: "traced:0")
    try:
        yield xp
    finally:
        backend.unregister_namespace(TracedArray)


def test_primitives_and_their_rules_run_in_the_registered_namespace(traced):
    x = np.array([0.1, 0.5, 0.9]).view(TracedArray)
    assert fg.device_of(x) == "traced:0"
    g = fg.grad(lambda v: fnp.sum(fnp.sin(v) * fnp.exp(v)))(x)
    np.testing.assert_allclose(np.asarray(g), np.exp(x.view(np.ndarray)) *
                               (np.sin(x.view(np.ndarray)) + np.cos(x.view(np.ndarray))))
    # forward: sin, exp, multiply, sum; backward: cos (sin's rule) among others
    for name in ("sin", "exp", "cos"):
        assert name in traced.calls, (name, traced.calls)


def test_mixing_the_registered_type_with_numpy_names_both_devices(traced):
    x = np.ones(2).view(TracedArray)
    with pytest.raises(fg.DeviceMismatchError, match="traced:0"):
        fnp.add(x, np.ones(2))


# --- every argument position dispatches (API.md §7) ----------------------------------
# The stand-in device (tests/standin.py) refuses Nodes and NumPy arrays in raw code: a
# Node that a primitive failed to record, in any position, fails there loudly.


def _put(standin, *arrays):
    return [standin.put(a) for a in arrays]


@pytest.mark.parametrize("position", [0, 1, 2])
def test_a_node_is_recorded_whatever_the_position_of_device_arrays(standin, position):
    # where(c, x, y) with the traced value in each position and device arrays elsewhere
    rng = np.random.default_rng(position)
    c = rng.standard_normal(4) > 0
    x, y = rng.standard_normal(4), rng.standard_normal(4)

    def f(v):
        args = [standin.put(c), standin.put(x), standin.put(y)]
        if position == 0:  # the condition is data: a traced value enters through it
            return fnp.sum(fnp.where(v > 0, args[1], args[2]) * v)
        args[position] = v
        return fnp.sum(fnp.where(*args) ** 2)

    v0 = {0: x, 1: x, 2: y}[position]
    g = fg.grad(f)(standin.put(v0))
    assert type(g) is standin.StrictArray
    if position == 0:
        expected = np.where(x > 0, x, y)
    else:
        expected = 2 * np.where(c, x, 0) if position == 1 else 2 * np.where(c, 0, y)
    np.testing.assert_allclose(standin.get(g), expected, rtol=1e-12)


def test_device_arrays_first_then_nodes_in_variadic_and_binary_primitives(standin):
    a, b = _put(standin, np.arange(3.0), np.ones(3))

    def f(w):
        s = fnp.stack([a, w, b])                       # device array first, Node in the middle
        c = fnp.concatenate([b, w])                    # Node last
        e = fnp.einsum("i,i->", a, w)                  # device array first in einsum
        m = a @ fnp.reshape(w, (3, 1))                 # device array on the left of @
        return fnp.sum(s * s) + fnp.sum(c) + e + fnp.sum(m) + fnp.sum(fnp.power(a + 1.0, w))

    w0 = np.array([0.3, -0.2, 0.5])
    g = fg.grad(f)(standin.put(w0))
    aa = np.arange(3.0)
    expected = 2 * w0 + 1 + aa + aa + np.log(aa + 1) * (aa + 1) ** w0
    np.testing.assert_allclose(standin.get(g), expected, rtol=1e-12)


def test_raw_device_arrays_alone_run_in_their_namespace(standin):
    a, b = _put(standin, np.arange(3.0), np.ones(3))
    out = fnp.where(standin.put(np.array([True, False, True])), a, b)
    assert type(out) is standin.StrictArray
    np.testing.assert_array_equal(standin.get(out), [0.0, 1.0, 2.0])
    assert "where" in standin.xp.calls


def test_numpy_and_device_float_arrays_together_raise_device_mismatch(standin):
    a = standin.put(np.ones(3))
    with pytest.raises(fg.DeviceMismatchError) as info:
        fnp.add(np.ones(3), a)
    assert "cpu" in str(info.value) and standin.DEVICE in str(info.value)
    with pytest.raises(fg.DeviceMismatchError):
        fg.grad(lambda v: fnp.sum(fnp.where(np.ones(3) > 0, v, np.zeros(3))))(a)


def test_numpy_index_data_moves_to_the_device_of_the_indexed_array(standin):
    idx, mask = np.array([0, 0, 2]), np.array([True, False, True])
    g = fg.grad(lambda v: v[idx].sum() + v[mask].sum() + fnp.take(v, idx).sum())(
        standin.put(np.ones(3)))
    assert type(g) is standin.StrictArray
    np.testing.assert_array_equal(standin.get(g), [5.0, 0.0, 3.0])


def test_a_namespace_that_absorbs_numpy_takes_numpy_arrays_beside_its_own():
    class Lazy(np.ndarray):
        pass

    calls = []

    class LazyNamespace(types.SimpleNamespace):
        def __getattr__(self, name):
            fun = getattr(np, name)

            def call(*args, **kwargs):
                calls.append(name)
                out = fun(*args, **kwargs)
                return out.view(Lazy) if isinstance(out, np.ndarray) else out

            return call

    backend.register_namespace(Lazy, LazyNamespace(), lambda a: "cpu", absorbs_numpy=True)
    try:
        x = np.arange(3.0).view(Lazy)
        g = fg.grad(lambda v: fnp.sum(fnp.where(np.array([True, False, True]), v, 0.0) * x))(
            np.ones(3))
        np.testing.assert_array_equal(np.asarray(g), [0.0, 0.0, 2.0])
        assert "where" in calls and "multiply" in calls
    finally:
        backend.unregister_namespace(Lazy)


def test_two_device_namespaces_together_raise_naming_both(standin, traced):
    with pytest.raises(fg.DeviceMismatchError) as info:
        fnp.add(standin.put(np.ones(2)), np.ones(2).view(TracedArray))
    assert standin.DEVICE in str(info.value) and "traced:0" in str(info.value)


def test_to_device_moves_to_and_from_a_registered_device(standin):
    a = fg.to_device(np.arange(3.0), standin.DEVICE)
    assert type(a) is standin.StrictArray and fg.device_of(a) == standin.DEVICE
    back = fg.to_device(a, "cpu")
    assert type(back) is np.ndarray
    np.testing.assert_array_equal(back, [0.0, 1.0, 2.0])


def test_lists_of_device_arrays_are_arrays_on_that_device(standin):
    # NumPy takes lists of arrays as arrays; so does funcgrad, for any device's arrays.
    a, b = standin.put(np.array([1.0, 2.0])), standin.put(np.array([3.0, 5.0]))
    m = fnp.mean([a, b], axis=0)
    assert type(m) is standin.StrictArray
    np.testing.assert_array_equal(standin.get(m), [2.0, 3.5])
    s = fnp.add([a, b], 1.0)
    np.testing.assert_array_equal(standin.get(s), [[2.0, 3.0], [4.0, 6.0]])
    g = fg.grad(lambda w: fnp.sum(fnp.multiply([a, w], [w, b])))(standin.put(np.ones(2)))
    np.testing.assert_array_equal(standin.get(g), standin.get(a) + standin.get(b))
    # a tuple holding device arrays is an index, not an array-like
    x = standin.put(np.arange(6.0).reshape(2, 3))
    idx = standin.put(np.array([1, 0]))
    np.testing.assert_array_equal(standin.get(fnp.getitem(x, (idx, slice(0, 2)))),
                                  [[3.0, 4.0], [0.0, 1.0]])
