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
        del backend._REGISTRY[TracedArray]


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
