"""``fg.check_grads`` itself: what it accepts, and the rule errors it must catch.

Planted errors are user primitives whose rules are wrong in one known way.
The checker must flag each at the first order where it shows -- and must
pass the same primitive with correct rules.  The last two plants are right at
first order and wrong only in how a rule treats a *traced* tangent or
cotangent: a checker that holds the tangent fixed at order 2 (as ours once
did) passes them.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

X = np.array([0.3, -1.2, 2.0])


def _sin_with(vjp_rule, jvp_rule):
    prim = fg.primitive(lambda x: np.sin(x))
    fg.defvjp(prim, vjp_rule)
    fg.defjvp(prim, jvp_rule)
    return prim


def _vjp_ok(g, ans, x):
    return g * fnp.cos(x)


def _jvp_ok(t, ans, x):
    return t * fnp.cos(x)


def _vjp_off(g, ans, x):  # 0.1% too large: a first-order VJP error
    return g * fnp.cos(x) * 1.001


def _jvp_off(t, ans, x):  # 0.1% too large: a first-order JVP error
    return t * fnp.cos(x) * 1.001


def _jvp_off_in_tangent(t, ans, x):
    # Right value (t - value_of(t) is 0), but its derivative in a traced
    # tangent is off by 0.1%: only a derivative in t shows it.
    return t * fnp.cos(x) + 1e-3 * (t - fg.value_of(t))


def _vjp_cotangent_as_data(g, ans, x):
    # Reads the cotangent as data: right value, no derivative in g.
    return fg.value_of(g) * fnp.cos(x)


CORRECT = _sin_with(_vjp_ok, _jvp_ok)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_correct_rules_pass_at_every_order(order):
    fg.check_grads(CORRECT, (X,), order=order)
    fg.check_grads(CORRECT, (X.astype(np.float32),), order=order)


@pytest.mark.parametrize(
    "vjp_rule, jvp_rule, modes, first_order",
    [
        (_vjp_off, _jvp_ok, ("rev",), 1),
        (_vjp_ok, _jvp_off, ("fwd",), 1),
        (_vjp_ok, _jvp_off_in_tangent, ("fwd",), 2),
        (_vjp_cotangent_as_data, _jvp_ok, ("rev",), 2),
    ],
    ids=["vjp-off", "jvp-off", "jvp-off-in-traced-tangent", "vjp-reads-cotangent-as-data"],
)
def test_planted_rule_errors_are_caught(vjp_rule, jvp_rule, modes, first_order):
    prim = _sin_with(vjp_rule, jvp_rule)
    if first_order > 1:  # invisible below its order...
        fg.check_grads(prim, (X,), order=first_order - 1, modes=modes)
    with pytest.raises(AssertionError, match=f"order {first_order}"):
        fg.check_grads(prim, (X,), order=first_order, modes=modes)
    # ...and caught with both modes too (the default).
    with pytest.raises(AssertionError):
        fg.check_grads(prim, (X,), order=first_order)


def test_second_order_checks_the_tangent_argument_of_the_jvp():
    # In f(x) = prim(x) * 2, the tangent error survives composition.
    prim = _sin_with(_vjp_ok, _jvp_off_in_tangent)
    with pytest.raises(AssertionError, match=r"order 2 \(of the jvp\)"):
        fg.check_grads(lambda x: prim(x) * 2.0, (X,), order=2, modes=("fwd",))


@pytest.mark.parametrize(
    "args",
    [
        (3.0,),
        (3,),
        (np.float64(3.0),),
        (np.float32(3.0),),
        (np.array(3.0),),
        3.0,
    ],
    ids=["python-float", "python-int", "numpy-float64", "numpy-float32", "0-d", "bare"],
)
def test_numbers_and_scalars_are_arguments(args):
    fg.check_grads(fnp.sin, args, order=2)
    fg.check_grads(lambda x: x * x, args, order=3)


def test_pytrees_of_mixed_leaves():
    def f(params, xs):
        return fnp.tanh(params["w"] * xs[0] + params["b"]) * xs[1]

    params = {"w": np.array([0.5, -1.0]), "b": 0.3}
    xs = [np.array([1.0, 2.0]), np.float64(1.5)]
    fg.check_grads(f, (params, xs), order=2)


def test_integer_leaves_are_held_fixed():
    idx = np.array([2, 0])
    fg.check_grads(lambda x, i: fnp.sin(x[i]), (X, idx), order=2)


def test_outputs_may_be_trees_numbers_and_data():
    def f(x):
        return {"s": fnp.sum(x * x), "n": 1.0, "argmax": fnp.argmax(x), "v": fnp.exp(x)}

    fg.check_grads(f, (X,), order=2)


def test_a_wrong_gradient_for_a_python_number_is_caught():
    prim = _sin_with(_vjp_off, _jvp_ok)
    with pytest.raises(AssertionError, match="reverse mode"):
        fg.check_grads(prim, (0.4,), modes=("rev",))


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="unknown mode 'both'"):
        fg.check_grads(fnp.sin, (X,), modes=("both",))
    with pytest.raises(ValueError, match="order"):
        fg.check_grads(fnp.sin, (X,), order=0)
