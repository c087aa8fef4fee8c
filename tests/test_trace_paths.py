"""The tracer's fast paths record what its general paths record (fg.replay's first call).

A traced step is recorded by a short path where it is common -- a primitive of one
argument, of two, a Traced operator, an in-place operator -- and by the general path
(``_run_general``, ``Tape.call``) otherwise.  Each case here runs both on tapes of their
own and compares everything they leave: the step records (decoded), the slots' shapes
and dtypes, the traced result, and the refusal when there is one.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import funcgrad.numpy as fnp
from funcgrad import tracer
from funcgrad.errors import ReplayError
from funcgrad.tracer import Tape, split_args

X = np.array([0.5, -1.0, 2.0])
Y = np.array([1.5, 2.0, -0.5])
IDX = np.array([2, 0, 1])


def _fields(e):
    if type(e) is tracer.Guard:
        return ("guard", e.check, e.slot, repr(e.expected), e.name)
    return (e.fn, tuple(e.args), e.kwargs, e.outputs, e.name, e.effect, e.unpack)


def _both(fast, general, inputs):
    """Run ``fast`` and ``general`` (each given the traced inputs of a fresh tape) and
    return what each left: records, slot metadata, result."""
    left = []
    for run in (fast, general):
        tape = Tape()
        traced = [tape.input(v) for v in inputs]
        with tape.active(), np.errstate(all="ignore"):
            try:
                out = run(tape, *traced)
            except ReplayError as e:
                out = ("refused", str(e).split(" at ")[0])
            except (ValueError, TypeError) as e:  # NumPy's own refusal, the same by both
                out = ("raised", type(e), str(e))
        left.append(([_fields(e) for e in tape.entries], list(tape.meta), _seen(out)))
    return left


def _seen(out):
    if tracer.is_traced(out):
        return (type(out), out.slot, out.shape, out.dtype, repr(out.v))
    if isinstance(out, (tuple, list)):
        return type(out), [_seen(o) for o in out]
    return type(out), repr(out)


UNARY = [fnp.sin, fnp.exp, fnp.negative, fnp.abs, fnp.sum, fnp.cumsum, fnp.where,
         fnp.transpose, fnp.real, fnp.squeeze, fnp.max]


@pytest.mark.parametrize("data", [X, IDX, np.array(2.5), np.float64(1.5)], ids=repr)
@pytest.mark.parametrize("prim", UNARY, ids=lambda p: p.name)
def test_a_primitive_of_one_traced_argument_records_as_the_general_path(prim, data):
    fast, general = _both(lambda tape, t: tracer._run_primitive(prim, (t,), {}),
                          lambda tape, t: tracer._run_general(prim, (t,), {}), [data])
    assert fast == general


BINARY = [fnp.multiply, fnp.add, fnp.subtract, fnp.true_divide, fnp.maximum, fnp.power,
          fnp.matmul, fnp.broadcast_to]


@pytest.mark.parametrize("data", ["float", "int"])
@pytest.mark.parametrize("order", ["tc", "ct", "tt", "tf", "ft", "ti"])
@pytest.mark.parametrize("prim", BINARY, ids=lambda p: p.name)
def test_a_primitive_of_two_arguments_records_as_the_general_path(prim, order, data):
    def args(t, u):
        pick = {"t": None, "c": Y, "f": 2.0, "i": IDX}
        first = t if order[0] == "t" else pick[order[0]]
        second = (u if order[0] == "t" else t) if order[1] == "t" else pick[order[1]]
        return first, second

    inputs = [X, Y] if data == "float" else [IDX, IDX[::-1].copy()]
    fast, general = _both(lambda tape, t, u: tracer._run_primitive(prim, args(t, u), {}),
                          lambda tape, t, u: tracer._run_general(prim, args(t, u), {}),
                          inputs)
    assert fast == general


OPERATORS = [(operator.mul, "*"), (operator.add, "+"), (operator.sub, "-"),
             (operator.truediv, "/"), (operator.pow, "**"), (operator.lt, "<"),
             (operator.matmul, "@"), (operator.mod, "%")]


@pytest.mark.parametrize("other", ["traced", "array", "float", "int", "list"])
@pytest.mark.parametrize("reflected", [False, True])
@pytest.mark.parametrize(("op", "symbol"), OPERATORS, ids=[s for _, s in OPERATORS])
def test_a_traced_operator_records_as_tape_call(op, symbol, reflected, other):
    def operand(u):
        return {"traced": u, "array": Y, "float": 1.5, "int": 3, "list": [1.0, 2.0, 3.0]}[other]

    def fast(tape, t, u):
        o = operand(u)
        return op(o, t) if reflected else op(t, o)

    def general(tape, t, u):
        o = operand(u)
        return tape.call(op, (o, t) if reflected else (t, o), None, symbol)

    if reflected and (other in ("traced", "array") or symbol == "<"):
        pytest.skip("the left operand's own operator runs (a Traced's, or NumPy's ufunc), "
                    "or Python swaps the comparison (1.5 < t is t > 1.5)")
    fast_left, general_left = _both(fast, general, [X, Y])
    assert fast_left == general_left


UNARY_OPERATORS = [(operator.neg, "-"), (operator.pos, "+"), (operator.abs, "abs"),
                   (operator.invert, "~")]


@pytest.mark.parametrize("data", [X, IDX, np.float64(1.5), np.array(True)], ids=repr)
@pytest.mark.parametrize(("op", "symbol"), UNARY_OPERATORS, ids=[s for _, s in UNARY_OPERATORS])
def test_a_traced_unary_operator_records_as_tape_call(op, symbol, data):
    fast, general = _both(lambda tape, t: op(t),
                          lambda tape, t: tape.call(op, (t,), None, symbol), [data])
    assert fast == general


IN_PLACE = [(operator.iadd, "+=", operator.add), (operator.imul, "*=", operator.mul),
            (operator.isub, "-=", operator.sub), (operator.itruediv, "/=", operator.truediv)]


@pytest.mark.parametrize("target", ["made", "input"])
@pytest.mark.parametrize("other", ["traced", "array", "float", "list"])
@pytest.mark.parametrize(("iop", "symbol", "op"), IN_PLACE, ids=[s for _, s, _ in IN_PLACE])
def test_an_in_place_operator_records_as_the_general_path(iop, symbol, op, other, target):
    def operands(t, u):
        made = t if target == "input" else t * 1.0
        o = {"traced": u, "array": Y, "float": 1.5, "list": [1.0, 2.0, 3.0]}[other]
        return made, o

    def fast(tape, t, u):
        made, o = operands(t, u)
        return iop(made, o)

    def general(tape, t, u):
        made, o = operands(t, u)
        tape._check_target(made, symbol)
        raws, targs = split_args((made, o), tape)
        return tape.result(getattr(operator, f"i{op.__name__}"), targs, None,
                           getattr(operator, f"i{op.__name__}")(*raws), symbol, effect=True)

    fast_left, general_left = _both(fast, general, [X, Y])
    assert fast_left == general_left


def test_a_traced_value_of_a_finished_trace_is_refused_by_every_path():
    tape = Tape()
    t = tape.input(X)
    tape.open = False
    for run in (lambda: fnp.sin(t), lambda: fnp.multiply(t, Y), lambda: t * Y,
                lambda: tracer._run_general(fnp.sin, (t,), {})):
        with pytest.raises(ReplayError, match="after its trace ended"):
            run()
    made = Tape()
    u = made.input(X) * 1.0
    made.open = False
    with pytest.raises(ReplayError, match="after its trace ended"):
        u += Y


def test_every_numpy_array_type_is_traced_by_one_class():
    # The short paths wrap a NumPy result in that class without looking it up.
    from funcgrad import backend

    for t in backend.NUMPY_ARRAY_TYPES:
        assert tracer.traced_class(t) is tracer._NUMPY_TRACED
