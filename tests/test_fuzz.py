"""Documented errors only: every public function, fuzzed with hostile inputs.

For each public name (every ``fnp`` and ``fnp.linalg`` function, ``fg.nn``, the
combinators and the functions they return, the backprop API, ``check_grads``,
``trace``, the extension API, Node's methods), hypothesis draws positional and
keyword arguments from ``fuzzing.VALUES`` -- odd dtypes, NaN and Inf, empty,
0-d and 32-d arrays, read-only, strided, Fortran-order and big-endian arrays,
``np.matrix``, masked arrays, ragged and self-holding lists, ``None``, huge
Python ints, Nodes, graph ids, wrong seeds and keywords.  A call may return or
raise a ``FuncgradError``, ``TypeError`` or ``ValueError`` with a message; it
may not raise anything else (``AttributeError``, ``IndexError``, ``KeyError``,
``OverflowError``, ``RecursionError``...), run past its time, change an input,
or hand out a Node when given none.

``FUNCGRAD_FUZZ_EXAMPLES`` sets the examples per function (8 here, for CI).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from fuzzing import ARGUMENTS, CALLS, FUNCTIONS, KEYWORDS, describe, judge
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

EXAMPLES = int(os.environ.get("FUNCGRAD_FUZZ_EXAMPLES", "8"))
TAKE_FUNCTIONS = {"fg.grad", "fg.value_and_grad", "fg.jacobian", "fg.jacrev", "fg.jacfwd",
                  "fg.hessian", "fg.vjp", "fg.jvp", "fg.hvp", "fg.check_grads", "fg.trace",
                  "fg.checkpoint", "fg.replay", "fg.replay(grad)"}


@st.composite
def calls_of(draw, call):
    args = draw(st.lists(st.sampled_from(ARGUMENTS), max_size=3))
    if call in TAKE_FUNCTIONS and draw(st.integers(0, 5)):
        args = [draw(st.sampled_from(sorted(FUNCTIONS)))] + args
    names = draw(st.lists(st.sampled_from(sorted(KEYWORDS)), max_size=2, unique=True))
    kwargs = {k: draw(st.sampled_from(KEYWORDS[k])) for k in names}
    return args, kwargs


@pytest.mark.parametrize("call", sorted(CALLS))
def test_only_documented_errors(call):
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 8, database=None,
              suppress_health_check=list(HealthCheck))
    @given(calls_of(call))
    def check(drawn):
        args, kwargs = drawn
        verdict = judge(call, args, kwargs)
        assert verdict is None, f"{describe(call, args, kwargs)}: {verdict}"

    check()


def test_every_public_function_is_fuzzed():
    names = {f"fnp.{n}" for n in fnp.__all__ if callable(getattr(fnp, n)) and n != "linalg"}
    names |= {f"fnp.linalg.{n}" for n in dir(fnp.linalg) if not n.startswith("_")}
    names |= {f"nn.{n}" for n in fg.nn.__all__}
    missing = names - set(CALLS)
    assert not missing, f"add to fuzzing.CALLS: {sorted(missing)}"


# -- the cases the reliability probe found, one by one ----------------------------------


def test_a_huge_int_argument_raises_value_error_naming_it():
    with pytest.raises(ValueError, match="too large") as info:
        fg.grad(lambda x: x * x)(10**400)
    assert isinstance(info.value, fg.FuncgradError)
    with pytest.raises(ValueError, match="bits") as info:
        fnp.add(np.ones(2), 10**400)
    assert isinstance(info.value, fg.FuncgradError)


def test_an_axis_of_a_0_d_node_raises_an_axis_error():
    x = fg.require_grad(np.array(1.0))
    for fun in (fnp.mean, fnp.var, fnp.std):
        with pytest.raises(ValueError, match="axis 0 is out of bounds") as info:
            fun(x, axis=0)
        assert isinstance(info.value, (fg.FuncgradError, IndexError))


def test_an_index_out_of_range_is_a_documented_index_error():
    x = fg.require_grad(np.ones(3))
    with pytest.raises(IndexError, match="out of bounds") as info:
        x[10]
    err = info.value
    assert isinstance(err, fg.FuncgradError) and isinstance(err, ValueError)
    assert "getitem" in str(err) and "shape (3,)" in str(err)


@pytest.mark.parametrize("fun", [fnp.equal, fnp.less, fnp.isnan, fnp.argmax])
def test_data_only_functions_never_write_into_an_argument(fun):
    a, out = np.array([1.0, 2.0]), np.zeros(2, bool)
    extra = (a, a, out) if fun not in (fnp.isnan, fnp.argmax) else (a, 0, out)
    with pytest.raises(TypeError, match="out"):
        fun(*extra)
    with pytest.raises(TypeError, match="out"):
        fun(a, a, out=out) if fun in (fnp.equal, fnp.less) else fun(a, out=out)
    assert not out.any()


def test_deep_and_self_holding_lists_raise_value_error():
    deep = 1.0
    for _ in range(5000):
        deep = [deep]
    ring = [1.0]
    ring.append(ring)
    for value in (deep, ring):
        for fun in (fnp.sin, fnp.sum, lambda v: fg.grad(lambda x: x)(v)):
            with pytest.raises((ValueError, TypeError)) as info:
                fun(value)
            assert not isinstance(info.value, RecursionError)


def test_a_user_primitives_own_errors_pass_unchanged():
    def lookup(x):
        raise IndexError("the user's own")

    picky = fg.primitive(lookup)
    with pytest.raises(IndexError) as info:
        picky(np.ones(2))
    assert not isinstance(info.value, fg.FuncgradError)
