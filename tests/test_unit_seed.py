"""``grad`` seeds its folds with an unwritable one (``primitive.UNIT_SEEDS``), and a
multiply of a Node by it records the product without computing it, as a Node of a
multiply whose rules skip the arithmetic the seed makes void.

Each case computes derivatives with the seeds on and with them off (fresh ones, which
take the general path) and asks for the same bits, dtype, type and shape, and for the
same graphs: as many Nodes, and hooks seeing the same steps (sums in the same order).
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.arguments
import funcgrad.numpy as fnp
from funcgrad.node import serial_mark
from funcgrad.primitive import UNIT_SEEDS

V = np.array([0.3, -1.2, 2.0])
M = np.array([[1.0, 0.5, -2.0], [0.25, 3.0, 1.5]])


def _nest(f, order):
    for _ in range(order):
        f = fg.grad(f)
    return f


def _inner(x):
    """The inner gradient's value as the outer function sees it, type included."""
    seen = []

    def outer(x):
        g = fg.grad(lambda y: y * x)(x)  # seed times x (a 0-d array): their product
        seen.append(np.array(type(fg.value_of(g)).__name__))
        return g * x
    return fg.grad(outer)(x), seen[0]


def _hvp(x):
    g = fg.grad(lambda x: fnp.sum(fnp.tanh(x) * x * x))
    return fg.grad(lambda x: fnp.sum(g(x) * V))(x)


POINTS = np.array([0.5, 0.25, 0.1, 1.3, -2.2, 3.7, 0.0, -0.0])
CASES = {
    "sin*exp, 6th": (lambda x: _nest(lambda x: fnp.sin(x) * fnp.exp(x), 6)(x), 0.5),
    "sin*exp, 6th, many points": (
        lambda xs: tuple(_nest(lambda x: fnp.sin(x) * fnp.exp(x), 6)(x) for x in xs), POINTS),
    "sin*exp*tanh, 5th, many points": (lambda xs: tuple(_nest(
        lambda x: fnp.sin(x) * fnp.exp(x) * fnp.tanh(x) + x * x * x, 5)(x) for x in xs), POINTS),
    "cube, 4th": (lambda x: _nest(lambda x: x * x * x, 4)(x), np.array(1.5)),
    "power and tanh, 3rd": (lambda x: _nest(lambda x: fnp.tanh(x) ** 3 * x, 3)(x), 0.7),
    "float32, 3rd": (lambda x: _nest(lambda x: fnp.sin(x) * x * x, 3)(x), np.float32(0.4)),
    "the leaf times itself, 2nd": (lambda x: _nest(lambda x: x * x, 2)(x), np.array(-2.0)),
    "a 0-d array inside": (_inner, np.array(-2.0)),
    "mixed precision": (lambda x: _nest(lambda x: x * fnp.sin(x).astype(np.float32), 3)(x), 0.5),
    "vector, broadcast": (lambda x: fg.grad(lambda x: fnp.sum(fg.grad(
        lambda x: fnp.sum(fnp.sin(x) * M))(x) * x))(x), V),
    "scalar times matrix": (lambda x: fg.grad(lambda s: fg.grad(
        lambda s: fnp.sum(fnp.exp(s * M)))(s) * s)(x), 0.3),
    "hvp": (_hvp, V),
    "hessian": (lambda x: fg.hessian(lambda x: fnp.sum(fnp.sin(x) * x * x[0]))(x), V),
    "forward over reverse": (lambda x: fg.jvp(fg.grad(lambda x: fnp.sum(fnp.cos(x) * x)),
                                              (x,), (V,))[1], V),
    "checkpoint": (lambda x: _nest(fg.checkpoint(lambda x: fnp.sin(x) * x), 3)(x), 0.9),
    "with hooks": (lambda x: _with_hooks(lambda: _nest(lambda x: fnp.exp(x) * x, 3)(x)), 0.2),
    "infinite and nan": (lambda x: _nest(lambda x: fnp.exp(x) * x, 3)(x), np.array(np.inf)),
}


def _with_hooks(thunk):
    timer = fg.TimerHook()
    with fg.hooks(timer):
        return thunk()


def _bits(out):
    return [(type(o), o.dtype, o.shape, np.asarray(o).tobytes())
            for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name", CASES)
def test_the_unit_seed_gives_the_bits_of_fresh_ones(name, monkeypatch):
    fun, x = CASES[name]
    with np.errstate(all="ignore"):
        fast = _bits(fun(x))
        monkeypatch.setattr(funcgrad.arguments, "UNIT_SEEDS", {})
        general = _bits(fun(x))
    assert fast == general


class _Steps(fg.BackwardHook):
    def __init__(self):
        self.seen = []

    def backward_postprocess(self, node, in_values, out_grads, in_grads):
        self.seen.append((node.primitive.name, node.rank,
                          tuple(None if g is None else fg.value_of(g).tobytes()
                                for g in in_grads)))


def test_the_unit_seed_keeps_the_graphs_as_they_were(monkeypatch):
    d5 = _nest(lambda x: fnp.sin(x) * fnp.exp(x) + x * fnp.cos(x), 5)
    seen = []
    for seeds in (UNIT_SEEDS, {}):
        monkeypatch.setattr(funcgrad.arguments, "UNIT_SEEDS", seeds)
        steps = _Steps()
        mark = serial_mark()
        with fg.hooks(steps):
            d5(0.3)
        seen.append((serial_mark() - mark, steps.seen))
    assert seen[0] == seen[1]


def test_the_unit_seeds_cannot_be_written_nor_leave_as_a_gradient():
    for dtype, one in UNIT_SEEDS.items():
        assert one.shape == () and one.dtype == dtype and one == 1
        assert not one.flags.writeable
        with pytest.raises(ValueError):
            one.flags.writeable = True
    g = fg.grad(lambda x: x)(0.5)  # the seed itself is the gradient: a fresh copy comes back
    assert g == 1.0 and g.flags.writeable and g is not UNIT_SEEDS[g.dtype]


def test_users_rules_may_write_to_the_gradient_they_are_given():
    # A rule that scales its gradient in place worked when every grad made its own one; the
    # shared seed reaches users' code as a writable copy, and stays one.
    @fg.custom_vjp
    def f(x):
        return fnp.sin(x)

    def bwd(c, g):
        g *= 2.0
        return (g * c,)

    f.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), bwd)
    for x in (0.5, np.float64(0.5), np.array(0.5), np.float32(0.5)):
        got = fg.grad(f)(x)
        np.testing.assert_allclose(got, 2 * np.cos(0.5), rtol=1e-6)
        h = 1e-6  # against a central difference of the function the rule says it differentiates
        np.testing.assert_allclose(got, (2 * np.sin(0.5 + h) - 2 * np.sin(0.5 - h)) / (2 * h),
                                   rtol=1e-6)
    # second order: d/dx of 2 cos(x) (the outer fold's gradient is a Node: written as a value)
    np.testing.assert_allclose(fg.grad(fg.grad(f))(0.5), -2 * np.sin(0.5), rtol=1e-12)
    assert all(float(one) == 1.0 and not one.flags.writeable for one in UNIT_SEEDS.values())
