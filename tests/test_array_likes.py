"""API.md §2: every fnp function takes array-likes as NumPy does, Nodes inside included.

Lists and tuples mixing Nodes and numbers, nested at any depth, are arrays, and the
gradient flows through every Node inside them.  Creation functions are
differentiable in their value arguments.  Checked against finite differences at
orders 1 and 2, in both modes, and against closed forms.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

X, Y = np.array(0.7), np.array(-1.3)

CASES = {
    "mean-list": lambda x, y: fnp.mean([x, y]),
    "sum-tuple": lambda x, y: fnp.sum((x, 2.0 * y, 1.0)),
    "norm-list": lambda x, y: fnp.linalg.norm([x, 2.0]) * y,
    "nested-array": lambda x, y: fnp.sum(fnp.array([[x, 0.5], [x, x]]) ** 2) + y,
    "nested-first-constant": lambda x, y: fnp.sum(fnp.array([[0.5, 1.0], [x, y]]) ** 3),
    "deep": lambda x, y: fnp.sum(fnp.asarray([[[x, y]], [[y, 1.0]]]) * np.arange(4.0).reshape(2, 1, 2)),
    "ufunc-list": lambda x, y: fnp.sum(fnp.sin([x, y, 0.5])),
    "binary-list": lambda x, y: fnp.sum(fnp.multiply([x, y], [y, 2.0])),
    "binary-node-and-list": lambda x, y: fnp.sum(x * fnp.add(x, [y, x])),
    "where-list": lambda x, y: fnp.sum(fnp.where([True, False], [x, y], [y, x]) ** 2),
    "matmul-lists": lambda x, y: fnp.sum(fnp.matmul([[x, y], [1.0, x]], [y, 2.0])),
    "dot-list": lambda x, y: fnp.dot([x, y], [y, x]),
    "einsum-list": lambda x, y: fnp.einsum("i,i->", [x, y], [1.0, x]),
    "stack-nested": lambda x, y: fnp.sum(fnp.stack([[x, 1.0], [y, x]]) ** 2),
    "concatenate-lists": lambda x, y: fnp.sum(fnp.concatenate([[x, y], [x]]) ** 2),
    "reshape-list": lambda x, y: fnp.sum(fnp.reshape([x, y, x, y], (2, 2)) @ np.ones(2)),
    "var-list": lambda x, y: fnp.var([x, y, 1.0]),
    "std-list": lambda x, y: fnp.std([x, y, 1.0]),
    "prod-list": lambda x, y: fnp.prod([x, y, 2.0]),
    "max-list": lambda x, y: fnp.max([x, y]),
    "cumsum-list": lambda x, y: fnp.sum(fnp.cumsum([x, y, x]) ** 2),
    "flip-list": lambda x, y: fnp.sum(fnp.flip([x, y]) * np.array([1.0, 3.0])),
    "take-list": lambda x, y: fnp.sum(fnp.take([x, y], [1, 1, 0])),
    "full": lambda x, y: fnp.sum(fnp.full((2, 3), x) * y),
    "full-array-fill": lambda x, y: fnp.sum(fnp.full((2, 2), [x, y]) ** 2),
    "full_like": lambda x, y: fnp.sum(fnp.full_like(np.ones(3), x * y) ** 2),
    "linspace": lambda x, y: fnp.sum(fnp.linspace(x, y, 5) ** 2),
    "linspace-no-endpoint": lambda x, y: fnp.sum(fnp.linspace(y, 2.0, 4, endpoint=False) ** 3),
    "softmax-list": lambda x, y: fg.nn.softmax([x, y, 0.0])[0],
}


# The same computations in plain NumPy, on numbers: the values must agree.
REFERENCE = {
    "mean-list": lambda x, y: np.mean([x, y]),
    "sum-tuple": lambda x, y: np.sum((x, 2.0 * y, 1.0)),
    "norm-list": lambda x, y: np.linalg.norm([x, 2.0]) * y,
    "nested-array": lambda x, y: np.sum(np.array([[x, 0.5], [x, x]]) ** 2) + y,
    "nested-first-constant": lambda x, y: np.sum(np.array([[0.5, 1.0], [x, y]]) ** 3),
    "deep": lambda x, y: np.sum(np.asarray([[[x, y]], [[y, 1.0]]]) * np.arange(4.0).reshape(2, 1, 2)),
    "ufunc-list": lambda x, y: np.sum(np.sin([x, y, 0.5])),
    "binary-list": lambda x, y: np.sum(np.multiply([x, y], [y, 2.0])),
    "binary-node-and-list": lambda x, y: np.sum(x * np.add(x, [y, x])),
    "where-list": lambda x, y: np.sum(np.where([True, False], [x, y], [y, x]) ** 2),
    "matmul-lists": lambda x, y: np.sum(np.matmul([[x, y], [1.0, x]], [y, 2.0])),
    "dot-list": lambda x, y: np.dot([x, y], [y, x]),
    "einsum-list": lambda x, y: np.einsum("i,i->", [x, y], [1.0, x]),
    "stack-nested": lambda x, y: np.sum(np.stack([[x, 1.0], [y, x]]) ** 2),
    "concatenate-lists": lambda x, y: np.sum(np.concatenate([[x, y], [x]]) ** 2),
    "reshape-list": lambda x, y: np.sum(np.reshape([x, y, x, y], (2, 2)) @ np.ones(2)),
    "var-list": lambda x, y: np.var([x, y, 1.0]),
    "std-list": lambda x, y: np.std([x, y, 1.0]),
    "prod-list": lambda x, y: np.prod([x, y, 2.0]),
    "max-list": lambda x, y: np.max([x, y]),
    "cumsum-list": lambda x, y: np.sum(np.cumsum([x, y, x]) ** 2),
    "flip-list": lambda x, y: np.sum(np.flip([x, y]) * np.array([1.0, 3.0])),
    "take-list": lambda x, y: np.sum(np.take([x, y], [1, 1, 0])),
    "full": lambda x, y: np.sum(np.full((2, 3), x) * y),
    "full-array-fill": lambda x, y: np.sum(np.full((2, 2), [x, y]) ** 2),
    "full_like": lambda x, y: np.sum(np.full_like(np.ones(3), x * y) ** 2),
    "linspace": lambda x, y: np.sum(np.linspace(x, y, 5) ** 2),
    "linspace-no-endpoint": lambda x, y: np.sum(np.linspace(y, 2.0, 4, endpoint=False) ** 3),
    "softmax-list": lambda x, y: (np.exp([x, y, 0.0]) / np.exp([x, y, 0.0]).sum())[0],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_array_likes_holding_nodes_compute_numpys_values(name):
    traced = fg.vjp(CASES[name], X, Y)[0]
    np.testing.assert_allclose(traced, REFERENCE[name](float(X), float(Y)), rtol=1e-13)


@pytest.mark.parametrize("name", sorted(CASES))
def test_array_likes_holding_nodes_are_differentiable(name):
    fg.check_grads(CASES[name], (X, Y), order=2)


def test_nested_array_equals_numpy_and_has_the_closed_form_gradient():
    f = lambda x: fnp.array([[x, 0.5], [x, x]])
    out = fg.vjp(f, X)[0]
    np.testing.assert_array_equal(out, np.array([[X, 0.5], [X, X]]))
    # sum of squares of three copies of x: d/dx = 6x; second derivative 6
    g = fg.grad(lambda x: fnp.sum(f(x) ** 2))
    np.testing.assert_allclose(g(X), 6 * X, rtol=1e-14)
    np.testing.assert_allclose(fg.grad(g)(X), 6.0, rtol=1e-14)


def test_mean_of_a_list_of_nodes_closed_form():
    gx, gy = fg.grad(lambda x, y: fnp.mean([x, y]) ** 2, argnums=(0, 1))(X, Y)
    assert gx == gy == pytest.approx((X + Y) / 2)  # d/dx mean^2 = mean / 2 * 2 / 2


def test_linspace_gradient_closed_form():
    # sum_k (a + (b - a) k / 4)^2 over k = 0..4
    t = np.arange(5) / 4
    f = lambda a, b: fnp.sum(fnp.linspace(a, b, 5) ** 2)
    ga, gb = fg.grad(f, argnums=(0, 1))(X, Y)
    vals = X + (Y - X) * t
    assert ga == pytest.approx(np.sum(2 * vals * (1 - t)))
    assert gb == pytest.approx(np.sum(2 * vals * t))
    np.testing.assert_array_equal(fg.vjp(lambda a: fnp.linspace(a, 1.0, 5), X)[0],
                                  np.linspace(X, 1.0, 5))


def test_array_likes_keep_float32_as_numpy_does():
    x = np.float32(0.5)
    out, f_vjp = fg.vjp(lambda v: fnp.array([[v, 0.5], [1, v]]), np.array(x))
    assert out.dtype == np.float32
    assert f_vjp(np.ones((2, 2), np.float32))[0].dtype == np.float32
    assert fg.vjp(lambda v: fnp.full((2,), v), np.array(x))[0].dtype == np.float32
    assert fg.vjp(lambda v: fnp.mean([v, v]), np.array(x))[0].dtype == np.float32


def test_a_user_vjp_rule_may_write_full_of_a_gradient():
    # the common idiom fnp.full(x.shape, g) * ... inside a rule, at second order
    cube = fg.primitive(lambda x: x ** 3)
    fg.defvjp(cube, lambda g, ans, x: fnp.full(x.shape, g) * 3 * x ** 2)
    f = lambda x: cube(x)
    np.testing.assert_allclose(fg.grad(fg.grad(f))(np.array(2.0)), 12.0)


def test_ragged_lists_of_nodes_raise_a_value_error():
    with pytest.raises(ValueError):
        fg.grad(lambda x: fnp.sum(fnp.array([[x, x], [x]])))(X)
