"""API.md §3: returned gradients and tangents are writable arrays that alias no caller input.

A rule may hand on a view (``reshape``, ``transpose``, ``broadcast_to`` -- a
read-only zero-stride view above 4,096 elements, a fresh array below), the
cotangent it was given (``x + 1``), or one array for two inputs (``x + y``).
Whatever the size, what a user gets back is theirs: ``g *= lr`` works and
changes nothing else.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

# Sizes on both sides of every internal threshold (broadcast_to: 4,096 elements).
SIZES = [1, 2, 4095, 4096, 4097, 9000]


def _arrays(tree):
    return [a for a in fg.tree.flatten(tree)[0] if a is not None]


def _check_owned(results, caller):
    """Each result is a writable ndarray sharing memory with no caller array nor each other."""
    results = _arrays(results)
    caller = _arrays(caller)
    before = [c.copy() for c in caller]
    for r in results:
        assert isinstance(r, np.ndarray), type(r)
        assert r.flags.writeable, f"a read-only result of shape {r.shape}"
        for c in caller:
            assert not np.shares_memory(r, c), f"a result of shape {r.shape} aliases an input"
    for r, s in itertools.combinations(results, 2):
        assert not np.shares_memory(r, s), "two results share memory"
    for r in results:
        r *= 2.0  # the caller's to write
        r += 1.0
    for c, b in zip(caller, before, strict=True):
        np.testing.assert_array_equal(c, b)


def _x(n):
    return np.linspace(0.5, 1.5, n)


def _echo():
    """A user primitive whose VJP rule returns the cotangent itself."""
    p = fg.primitive(lambda x: x * 1.0)
    fg.defvjp(p, lambda g, ans, x: g)
    fg.defjvp(p, lambda t, ans, x: t)
    return p


def _custom_identity():
    @fg.custom_vjp
    def f(x):
        return x * 1.0

    f.defvjp(lambda x: (x * 1.0, None), lambda res, g: (g,))
    return f


REVERSE = {  # name -> (function of x, or of (x, y)), number of arguments
    "sum": (lambda x: fnp.sum(x), 1),
    "mean": (lambda x: fnp.mean(x), 1),
    "sum_of_squares": (lambda x: fnp.sum(x * x), 1),
    "add_constant": (lambda x: x + 1.0, 1),
    "identity": (lambda x: x, 1),
    "reshape": (lambda x: fnp.reshape(x, (1, -1)), 1),
    "transpose": (lambda x: fnp.reshape(x, (-1, 1)).T, 1),
    "broadcast": (lambda x: fnp.broadcast_to(x, (2,) + x.shape), 1),
    "slice": (lambda x: x[::1], 1),
    "user_rule_echo": (lambda x: _echo()(x), 1),
    "custom_vjp_echo": (lambda x: _custom_identity()(x), 1),
    "x_plus_y": (lambda x, y: x + y, 2),
    "x_plus_y_summed": (lambda x, y: fnp.sum(x + y), 2),
    "scalar_y_broadcast": (lambda x, y: fnp.sum(x * y), 2),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(REVERSE))
def test_vjp_results_are_owned(name, n):
    f, nargs = REVERSE[name]
    primals = (_x(n),) if nargs == 1 else (_x(n), np.array(0.7) if "scalar" in name else _x(n))
    out, fn = fg.vjp(f, *primals)
    ct = np.ones_like(np.asarray(out))
    grads = fn(ct)
    _check_owned(grads, primals + (ct,))


@pytest.mark.parametrize("n", SIZES)
def test_the_same_primal_twice_gets_two_owned_gradients(n):
    a = _x(n)
    _, fn = fg.vjp(lambda x, y: x + y, a, a)
    ct = np.ones(n)
    _check_owned(fn(ct), (a, ct))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ["sum", "mean", "x_plus_y_summed", "scalar_y_broadcast"])
def test_grad_results_are_owned(name, n):
    f, nargs = REVERSE[name]
    primals = (_x(n),) if nargs == 1 else (_x(n), np.array(0.7) if "scalar" in name else _x(n))
    g = fg.grad(f, argnums=tuple(range(nargs)))(*primals)
    _check_owned(g, primals)
    _, g = fg.value_and_grad(f, argnums=tuple(range(nargs)))(*primals)
    _check_owned(g, primals)


FORWARD = {
    "identity": lambda x: x,
    "add_constant": lambda x: x + 1.0,
    "reshape": lambda x: fnp.reshape(x, (1, -1)),
    "broadcast_scalar": lambda x: fnp.broadcast_to(fnp.sum(x), x.shape),
    "broadcast_rows": lambda x: fnp.broadcast_to(x, (2,) + x.shape),
    "user_rule_echo": lambda x: _echo()(x),
    "two_outputs": lambda x: (x, x + 0.0),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(FORWARD))
def test_jvp_results_are_owned(name, n):
    x, t = _x(n), np.full(n, 0.25)
    _, t_out = fg.jvp(FORWARD[name], (x,), (t,))
    _check_owned(t_out, (x, t))


@pytest.mark.parametrize("n", [1, 2, 4097])
def test_hvp_results_are_owned(n):
    x, v = _x(n), np.ones(n)
    h = fg.hvp(lambda x: fnp.sum(x * x), (x,), (v,))
    _check_owned(h, (x, v))


@pytest.mark.parametrize("n", [1, 3])
def test_jacobians_and_hessians_are_owned(n):
    x = _x(n)
    for jac in (fg.jacobian, fg.jacfwd):
        _check_owned(jac(lambda x: x)(x), (x,))
        _check_owned(jac(lambda x: x + 1.0)(x), (x,))
    _check_owned(fg.hessian(lambda x: fnp.sum(x * x))(x), (x,))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ["sum", "add_constant", "identity", "reshape", "broadcast"])
def test_backprop_results_are_owned(name, n):
    f, _ = REVERSE[name]
    a = _x(n)
    x = fg.require_grad(a)
    y = f(x)
    ct = np.ones(y.shape)
    grads = fg.backprop([y], [x], [ct])
    _check_owned(grads[x], (a, ct))


@pytest.mark.parametrize("n", [1, 4097])
def test_backprop_gradient_of_an_intermediate_is_owned(n):
    a = _x(n)
    x = fg.require_grad(a)
    h = x * 2.0
    y = fnp.sum(h)
    grads = fg.backprop([y], [x, h])
    _check_owned([grads[x], grads[h]], (a, h.value))
