"""API.md §3 and §4: seeds, cotangents and tangents are checked against their primals.

``grad_outputs`` is None or a sequence of array-likes; ``loss_scale`` a Python
or 0-d number; a cotangent or tangent must be a real floating array of its
primal's shape -- else ``TypeError`` (wrong kind) or ``ValueError`` (wrong
shape), naming the argument and the shape and dtype expected.  A float of
another precision is cast to the primal's dtype.  Constant outputs get
Jacobians and Hessians of zeros.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _raises(kind, *words):
    """``pytest.raises`` for a funcgrad error of builtin ``kind`` whose message holds ``words``."""

    class _Check:
        def __enter__(self):
            self.ctx = pytest.raises(kind)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            swallowed = self.ctx.__exit__(*exc)
            err = self.info.value
            assert isinstance(err, fg.FuncgradError), type(err)
            for w in words:
                assert w in str(err), f"{w!r} not in {str(err)!r}"
            return swallowed

    return _Check()


def _graph(dtype="float64"):
    x = fg.require_grad(np.array([1.0, 2.0, 3.0], dtype=dtype))
    return x, x * x


# -- fg.backprop's grad_outputs and loss_scale --------------------------------------


@pytest.mark.parametrize("bad", [{"a": np.ones(3)}, "abc", b"ab", np.ones((1, 3)), 3.0])
def test_grad_outputs_that_is_not_a_sequence_raises_type_error(bad):
    x, y = _graph()
    with _raises(TypeError, "grad_outputs"):
        fg.backprop([y], [x], bad)


@pytest.mark.parametrize("bad", [object(), "abc", {"a": 1}, {1.0, 2.0}, True])
def test_a_grad_outputs_entry_that_is_no_array_raises_type_error(bad):
    x, y = _graph()
    with _raises(TypeError, "grad_outputs[0]", "float64", "(3,)"):
        fg.backprop([y], [x], [bad])


@pytest.mark.parametrize(
    "bad",
    [np.ones(3, complex), np.ones(3, int), np.ones(3, bool), np.array(["a", "b", "c"]),
     [1j, 2j, 3j]],
    ids=["complex", "int", "bool", "str", "complex_list"],
)
def test_a_grad_outputs_entry_of_the_wrong_kind_raises_type_error(bad):
    x, y = _graph()
    with _raises(TypeError, "grad_outputs[0]", "float64", "(3,)"):
        fg.backprop([y], [x], [bad])


@pytest.mark.parametrize("bad", [np.ones(2), np.ones((3, 1)), np.ones(()), [1.0, 2.0]])
def test_a_grad_outputs_entry_of_the_wrong_shape_raises_value_error(bad):
    x, y = _graph()
    with _raises(ValueError, "grad_outputs[0]", "(3,)", str(np.shape(bad))):
        fg.backprop([y], [x], [bad])


def test_grad_outputs_of_another_float_precision_are_cast():
    for out_dtype, seed_dtype in (("float64", "float32"), ("float32", "float64")):
        x, y = _graph(out_dtype)
        g = fg.backprop([y], [x], [np.ones(3, seed_dtype)])[x]
        assert g.dtype == out_dtype
        np.testing.assert_allclose(g, 2 * np.array([1.0, 2.0, 3.0]))


def test_grad_outputs_entries_may_be_lists_of_numbers():
    x, y = _graph()
    np.testing.assert_array_equal(fg.backprop([y], [x], [[1.0, 0.0, 2]])[x], [2.0, 0.0, 12.0])


@pytest.mark.parametrize("scale", [np.ones(3), np.ones((1,)), [2.0]], ids=["(3,)", "(1,)", "list"])
def test_a_loss_scale_that_is_not_0_d_raises(scale):
    x, y = _graph()
    with pytest.raises((TypeError, ValueError), match="loss_scale") as info:
        fg.backprop([y], [x], [np.ones(3)], loss_scale=scale)
    assert isinstance(info.value, fg.FuncgradError)


@pytest.mark.parametrize("scale", ["2", 1j, np.complex128(1), True, object()])
def test_a_loss_scale_that_is_no_real_number_raises_type_error(scale):
    x, y = _graph()
    with _raises(TypeError, "loss_scale"):
        fg.backprop([y], [x], [np.ones(3)], loss_scale=scale)


def test_a_huge_loss_scale_raises_value_error():
    x, y = _graph()
    with _raises(ValueError, "loss_scale"):
        fg.backprop([y], [x], [np.ones(3)], loss_scale=10**400)


@pytest.mark.parametrize("scale", [2, 2.0, np.float32(2), np.float64(2), np.array(2.0),
                                   np.array(2, dtype=np.int64)])
def test_a_0_d_loss_scale_scales_without_changing_the_dtype(scale):
    x, y = _graph("float32")
    g = fg.backprop([y], [x], [np.ones(3, "float32")], loss_scale=scale)[x]
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 4 * np.array([1.0, 2.0, 3.0]))


# -- vjp cotangents ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", [np.ones(3, complex), np.ones(3, np.int32), np.array(["a", "b", "c"]), "abc",
            object()],
    ids=["complex", "int", "str_array", "str", "object"],
)
def test_a_cotangent_of_the_wrong_kind_raises_type_error(bad):
    _, fn = fg.vjp(fnp.sin, np.ones(3))
    with _raises(TypeError, "cotangent", "float64", "(3,)"):
        fn(bad)


@pytest.mark.parametrize("bad", [np.ones(2), np.ones((3, 3)), np.array(1.0)])
def test_a_cotangent_of_the_wrong_shape_raises_value_error(bad):
    _, fn = fg.vjp(fnp.sin, np.ones(3))
    with _raises(ValueError, "cotangent", "(3,)", str(bad.shape)):
        fn(bad)


def test_a_cotangent_of_a_constant_output_is_checked_too():
    _, fn = fg.vjp(lambda x: (fnp.sin(x), np.ones(2)), np.ones(3))
    with _raises(TypeError, "cotangent leaf 1", "(2,)"):
        fn((np.ones(3), np.ones(2, complex)))
    with _raises(ValueError, "cotangent leaf 1", "(2,)"):
        fn((np.ones(3), np.ones(5)))
    g = fn((np.ones(3), np.ones(2)))[0]
    np.testing.assert_allclose(g, np.cos(np.ones(3)))


@pytest.mark.parametrize("primal, ct", [("float32", "float64"), ("float64", "float32"),
                                        ("float32", "float16")])
def test_a_cotangent_of_another_precision_is_cast(primal, ct):
    x = np.array([0.5, 1.0], dtype=primal)
    _, fn = fg.vjp(fnp.sin, x)
    g = fn(np.ones(2, ct))[0]
    assert g.dtype == primal
    np.testing.assert_allclose(g, np.cos(x), rtol=1e-3)


# -- jvp tangents -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", [np.ones(3, complex), np.ones(3, np.int64), np.ones(3, bool), "abc", None],
    ids=["complex", "int", "bool", "str", "none"],
)
def test_a_tangent_of_the_wrong_kind_raises_type_error(bad):
    with _raises(TypeError, "tangent", "float64", "(3,)"):
        fg.jvp(fnp.sin, (np.ones(3),), (bad,))


@pytest.mark.parametrize("bad", [np.ones(2), np.ones((3, 1)), [1.0]])
def test_a_tangent_of_the_wrong_shape_raises_value_error(bad):
    with _raises(ValueError, "tangent", "(3,)"):
        fg.jvp(fnp.sin, (np.ones(3),), (bad,))


def test_a_float64_tangent_on_a_float32_primal_gives_float32_tangents():
    x = np.array([0.5, 1.0], np.float32)
    out, t = fg.jvp(lambda x: fnp.sin(x) * 2.0, (x,), (np.ones(2, np.float64),))
    assert out.dtype == np.float32 and t.dtype == np.float32
    np.testing.assert_allclose(t, 2 * np.cos(x), rtol=1e-6)
    h = fg.hvp(lambda x: fnp.sum(fnp.sin(x)), (x,), (np.ones(2, np.float64),))
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, -np.sin(x), rtol=1e-6)


def test_hvp_checks_its_tangents():
    with _raises(TypeError, "tangent", "float64"):
        fg.hvp(lambda x: fnp.sum(x * x), (np.ones(2),), (np.ones(2, complex),))
    with _raises(ValueError, "tangent", "(2,)"):
        fg.hvp(lambda x: fnp.sum(x * x), (np.ones(2),), (np.ones(3),))


# -- constant outputs -------------------------------------------------------------------------


@pytest.mark.parametrize("const", [1.0, 2, np.float64(3.0), np.ones(3), np.ones((2, 2))],
                         ids=["float", "int", "np_float", "array", "matrix"])
@pytest.mark.parametrize("jac", [fg.jacobian, fg.jacfwd])
def test_constant_outputs_have_zero_jacobians(jac, const):
    x = np.ones(2)
    j = jac(lambda x: const)(x)
    assert j.shape == np.shape(const) + (2,)
    assert not j.any()


@pytest.mark.parametrize("const", [1.0, 2, np.float64(3.0)], ids=["float", "int", "np_float"])
def test_constant_outputs_have_zero_hessians_and_gradients(const):
    x = np.ones((2, 3))
    h = fg.hessian(lambda x: const)(x)
    assert h.shape == (2, 3, 2, 3) and not h.any()
    g = fg.grad(lambda x: const)(x)
    assert g.shape == (2, 3) and not g.any()


def test_a_constant_leaf_beside_a_traced_one_gets_zero_blocks():
    x = np.array([1.0, 2.0])
    j = fg.jacobian(lambda x: (1.0, x * x))(x)
    assert j[0].shape == (2,) and not j[0].any()
    np.testing.assert_allclose(j[1], np.diag(2 * x))


def test_messages_name_the_expected_shape_and_dtype():
    _, fn = fg.vjp(fnp.sin, np.ones((2, 3), np.float32))
    with pytest.raises(TypeError) as info:
        fn(np.ones((2, 3), complex))
    assert re.search(r"float32.*\(2, 3\)", str(info.value)), str(info.value)
