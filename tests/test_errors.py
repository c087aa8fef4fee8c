"""API.md §8: every error derives from fg.FuncgradError and the builtin that fits,
and every message names the offending thing."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors

# class -> the builtin a caller would catch anyway
HIERARCHY = [
    (fg.BackpropError, ValueError),
    (fg.GradientTypeError, TypeError),
    (fg.DeviceMismatchError, ValueError),
    (fg.NodeConversionError, TypeError),
    (fg.MissingRuleError, NotImplementedError),
    (errors.FuncgradTypeError, TypeError),
    (errors.FuncgradValueError, ValueError),
    (errors.FuncgradStateError, RuntimeError),
    (fg.ReplayError, TypeError),
    (errors.FuncgradIndexError, IndexError),
    (fg.BatchedValueError, TypeError),
    (fg.FrozenNodeError, AttributeError),
]


@pytest.mark.parametrize(("cls", "builtin"), HIERARCHY, ids=lambda c: c.__name__)
def test_error_class_derives_from_funcgrad_error_and_builtin(cls, builtin):
    assert issubclass(cls, fg.FuncgradError)
    assert issubclass(cls, builtin)
    with pytest.raises(builtin):
        raise cls("message")
    with pytest.raises(fg.FuncgradError):
        raise cls("message")


def test_funcgrad_error_is_an_exception():
    assert issubclass(fg.FuncgradError, Exception)
    assert fg.FuncgradError is errors.FuncgradError


def _exported_errors():
    found = {}
    for module in (fg, errors):
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException)
                    and not issubclass(obj, Warning)):  # warnings are not errors
                found[name] = obj
    return sorted(found.items())


@pytest.mark.parametrize(("name", "cls"), _exported_errors(), ids=lambda v: str(v))
def test_every_exported_error_is_in_the_table(name, cls):
    assert issubclass(cls, fg.FuncgradError), f"{name} does not derive from FuncgradError"
    assert cls is fg.FuncgradError or cls in dict(HIERARCHY), f"{name}: add it to HIERARCHY"


def _raw_primitive():
    @fg.primitive
    def no_rules(x):
        return x * 2.0

    return no_rules


def _int_grad():
    return fg.grad(lambda x: x.sum())(np.arange(3))


def _nonscalar_grad():
    return fg.grad(lambda x: x * 2.0)(np.ones((2, 3)))


def _seed_shape():
    x = fg.require_grad(np.ones(3))
    return fg.backprop([x * 2.0], [x], [np.ones(4)])


def _off_graph():
    with fg.backprop_scope("the_other_graph") as bp:
        x = fg.require_grad(np.array(1.0))
        return fg.backprop([x * x], [x], backprop_id=bp)


def _conversion():
    return fg.grad(lambda x: float(x))(np.array(1.0))


def _missing_rule():
    prim = _raw_primitive()
    return fg.grad(prim)(np.array(1.0))


def _not_a_node():
    x = fg.require_grad(np.array(1.0))
    return fg.backprop([x * x], [np.array(1.0)])


def _bad_require():
    return fg.require_grad(np.array([1, 2]))


# (what, call, expected class, builtin, fragments the message must contain)
RAISES = [
    ("integer input to grad", _int_grad, errors.FuncgradError, TypeError, ["int64"]),
    ("non-scalar grad", _nonscalar_grad, errors.FuncgradError, ValueError, ["(2, 3)"]),
    ("seed shape", _seed_shape, errors.FuncgradError, ValueError, ["(4,)", "(3,)"]),
    ("off graph", _off_graph, fg.BackpropError, ValueError, ["the_other_graph"]),
    ("conversion", _conversion, fg.NodeConversionError, TypeError, ["fg.value_of"]),
    ("missing rule", _missing_rule, fg.MissingRuleError, NotImplementedError,
     ["no_rules", "argument 0"]),
    ("not a node", _not_a_node, errors.FuncgradError, TypeError, ["ndarray"]),
    ("int require_grad", _bad_require, errors.FuncgradError, TypeError, ["int64"]),
]


@pytest.mark.parametrize(("what", "call", "cls", "builtin", "fragments"), RAISES,
                         ids=[r[0] for r in RAISES])
def test_raised_errors_are_catchable_both_ways_and_name_the_culprit(
    what, call, cls, builtin, fragments
):
    with pytest.raises(cls) as info:
        call()
    assert isinstance(info.value, builtin)
    assert isinstance(info.value, fg.FuncgradError)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


def test_errors_do_not_swallow_unrelated_exceptions():
    # An exception the user's function raises comes through untouched.
    class Mine(Exception):
        pass

    def f(x):
        raise Mine("from user code")

    with pytest.raises(Mine, match="from user code"):
        fg.grad(f)(np.array(1.0))
    with pytest.raises(Mine):
        fg.jvp(f, (np.array(1.0),), (np.array(1.0),))
    assert not issubclass(Mine, fg.FuncgradError)
    # and a library op stays usable afterwards
    assert fg.grad(lambda x: fnp.sin(x))(np.array(0.0)) == 1.0
