"""The fold's fast step against its general one.

A library primitive with one rule per argument (all of ``funcgrad.numpy``'s but a few)
has its rules called by the fold itself (``backprop._step``); hooks, NaN checks, joint
rules and users' primitives go through ``prim.vjp`` (``backprop._general``).  Each case
runs with the fast step and with the general one in its place, and asks for the same
bits, types, dtypes and shapes, at first and higher orders, and for the same errors.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import MissingRuleError
from funcgrad.numpy._core import primitive as library_primitive

backprop = importlib.import_module("funcgrad.backprop")

V = np.array([0.3, -1.2, 2.0])
M = np.array([[1.0, 0.5, -2.0], [0.25, 3.0, 1.5]])


def _general(grads, mine, prim, ps, g, ans, args, kwargs):
    for (i, p), gi in zip(ps, prim.vjp(g, ans, args, kwargs, ps), strict=True):
        backprop._add(grads, mine, prim, i, p, gi)


def _nest(f, order):
    for _ in range(order):
        f = fg.grad(f)
    return f


CASES = {
    "6th derivative": (lambda x: _nest(lambda x: fnp.sin(x) * fnp.exp(x), 6)(x), 0.5),
    "broadcasting both ways": (fg.grad(lambda x: fnp.sum((x * M + x) / (M + 5.0))), V),
    "reductions with keywords": (
        fg.grad(lambda m: fnp.sum(fnp.mean(m, axis=0, keepdims=True) * fnp.max(m, axis=1)[0])),
        M),
    "two parents with keywords": (
        lambda x: _nest(lambda x: fnp.sum(_scaled(x, fnp.sin(x), scale=3.0)), 2)(x), 0.4),
    "where, three arguments": (fg.grad(lambda x: fnp.sum(fnp.where(x > 0, x * x, -x))), V),
    "float32 against float64 scalars": (
        fg.grad(lambda x: x * np.float64(2.5) + fnp.sin(x)), np.float32(0.7)),
    "float32 vector, 3rd": (lambda x: _nest(lambda x: fnp.tanh(x) * x, 3)(x), np.float32(0.4)),
    "complex, holomorphic": (fg.grad(lambda z: z * fnp.exp(z) + z ** 3, holomorphic=True),
                             np.complex128(0.5 + 0.25j)),
    "checkpoint and custom_vjp": (fg.grad(lambda x: fnp.sum(fg.checkpoint(
        lambda y: fnp.sin(y) * y)(x) * _clipped(x))), V),
    "hessian": (fg.hessian(lambda x: fnp.sum(fnp.exp(x) * x[0] * x)), V),
    "fan-in": (fg.grad(lambda x: fnp.sum(sum((x * float(i) for i in range(20)), x))), V),
}


_scaled = library_primitive(lambda x, y, scale: scale * x * y)
fg.defvjp(_scaled, lambda g, ans, x, y, scale: g * scale * y,
          lambda g, ans, x, y, scale: g * scale * x)


@fg.custom_vjp
def _clipped(x):
    return fnp.tanh(x)


_clipped.defvjp(lambda x: (fnp.tanh(x), x), lambda x, g: (g * fnp.cos(x),))


def _bits(out):
    outs = out if isinstance(out, tuple) else (out,)
    return [(type(o), o.dtype, o.shape, np.asarray(o).tobytes()) for o in outs]


@pytest.mark.parametrize("name", CASES)
def test_the_fast_step_gives_the_general_steps_bits(name, monkeypatch):
    fun, x = CASES[name]
    fast = _bits(fun(x))
    monkeypatch.setattr(backprop, "_step", _general)
    assert fast == _bits(fun(x))


def _forward_rule_only(arity):
    """A library primitive of ``arity`` arguments whose last has no VJP rule (a JVP rule
    only: bind records it, the fold finds no rule)."""
    prim = library_primitive(lambda *xs: 2.0 * xs[0] * xs[-1])
    fg.defvjp(prim, *(lambda g, ans, *xs: 2.0 * g * xs[-1],) * (arity - 1))
    fg.defjvp(prim, *(lambda t, ans, *xs: 2.0 * t,) * arity)
    return prim


@pytest.mark.parametrize("arity", [1, 2])
def test_a_missing_rule_is_named_the_same_on_both_paths(arity, monkeypatch):
    prim = _forward_rule_only(arity)
    messages = []
    for step in (backprop._step, _general):
        monkeypatch.setattr(backprop, "_step", step)
        with pytest.raises(MissingRuleError) as err:
            fg.grad(lambda x: fnp.sin(prim(*(x,) * arity)))(0.5)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert f"no VJP rule for argument {arity - 1}" in messages[0]
