"""Jacobians of pytree functions, and fnp.array / asarray keeping the gradient."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def f(d):
    return {"a": d["x"] * d["y"], "b": fnp.sum(d["x"] ** 2)}


X = {"x": np.array([1.0, 2.0]), "y": np.array([3.0, 5.0])}


@pytest.mark.parametrize("jac", [fg.jacobian, fg.jacfwd], ids=["rev", "fwd"])
def test_pytree_jacobian_nests_outputs_outside_inputs(jac):
    J = jac(f)(X)
    np.testing.assert_allclose(J["a"]["x"], np.diag(X["y"]))
    np.testing.assert_allclose(J["a"]["y"], np.diag(X["x"]))
    np.testing.assert_allclose(J["b"]["x"], 2 * X["x"])
    np.testing.assert_allclose(J["b"]["y"], np.zeros(2))


def test_hessian_with_two_arguments_gives_blocks():
    def g(x, y):
        return fnp.sum(x * x * y)

    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    (hxx, hxy), (hyx, hyy) = fg.hessian(g, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(hxx, np.diag(2 * y))
    np.testing.assert_allclose(hxy, np.diag(2 * x))
    np.testing.assert_allclose(hyx, np.diag(2 * x))
    np.testing.assert_allclose(hyy, np.zeros((2, 2)))


def test_jacobians_of_python_scalars():
    assert fg.jacobian(lambda x: x ** 3)(2.0) == pytest.approx(12.0)
    assert fg.hessian(lambda x: x ** 3)(2.0) == pytest.approx(12.0)


@pytest.mark.parametrize("make", [fnp.array, fnp.asarray], ids=["array", "asarray"])
def test_array_of_nodes_is_differentiable(make):
    def h(x):
        return fnp.sum(make([[x, 1.0], [x * x, 2.0]]) * np.array([[1.0, 0.0], [3.0, 0.0]]))

    assert fg.grad(h)(2.0) == pytest.approx(1.0 + 3.0 * 2 * 2.0)
    assert fg.grad(fg.grad(h))(2.0) == pytest.approx(6.0)
    fg.check_grads(h, (np.array(0.7),), order=2)


def test_asarray_of_plain_data_stays_plain():
    out = fnp.asarray([1, 2, 3])
    assert isinstance(out, np.ndarray) and out.dtype.kind == "i"
