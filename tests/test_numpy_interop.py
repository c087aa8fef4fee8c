"""API.md §1: what happens when NumPy meets a Node.

The commonest mistake -- a NumPy function called on a traced value -- gives one
error, ``fg.NodeConversionError``, naming the fnp function to use.  Operators
with a NumPy array on the left still compute.  In-place assignment is refused
with the functional alternative, ``x.at[i].set(v)`` / ``.add(v)``, which is
differentiable in both ``x`` and ``v``.  ``repr`` shows a few numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

X = np.array([0.3, -1.2, 2.0])

NUMPY_CALLS = {
    "sin": lambda x: np.sin(x),
    "exp": lambda x: np.exp(x),
    "tanh": lambda x: np.tanh(x),
    "maximum": lambda x: np.maximum(x, 0.0),
    "sum": lambda x: np.sum(x),
    "mean": lambda x: np.mean(x),
    "max": lambda x: np.max(x),
    "dot": lambda x: np.dot(x, x),
    "reshape": lambda x: np.reshape(x, (3, 1)),
    "concatenate": lambda x: np.concatenate([x, x]),
    "where": lambda x: np.where(np.ones(3) > 0, x, 0.0),
    "linalg.norm": lambda x: np.linalg.norm(x),
    "cumsum": lambda x: np.cumsum(x),
    "add.reduce": lambda x: np.add.reduce(x),
}


@pytest.mark.parametrize("name", sorted(NUMPY_CALLS))
def test_a_numpy_function_on_a_node_names_the_fnp_function(name):
    with pytest.raises(fg.NodeConversionError) as info:
        fg.grad(lambda x: NUMPY_CALLS[name](x))(X)
    message = str(info.value)
    assert isinstance(info.value, TypeError) and isinstance(info.value, fg.FuncgradError)
    fnp_name = name.split(".")[0] if name == "add.reduce" else name
    assert f"fnp.{fnp_name}" in message, message
    assert f"numpy.{name}" in message, message


def test_a_numpy_function_fnp_lacks_says_how_to_go_on():
    with pytest.raises(fg.NodeConversionError, match="histogram") as info:
        fg.grad(lambda x: np.histogram(x)[0].sum())(X)
    assert "fg.primitive" in str(info.value) and "fg.value_of" in str(info.value)


OPERATORS = {
    "add": (lambda a, x: a + x, lambda a, x: np.ones_like(x)),
    "sub": (lambda a, x: a - x, lambda a, x: -np.ones_like(x)),
    "mul": (lambda a, x: a * x, lambda a, x: a),
    "div": (lambda a, x: a / x, lambda a, x: -a / x ** 2),
    "pow": (lambda a, x: a ** x, lambda a, x: np.log(a) * a ** x),
}


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operators_with_a_numpy_array_on_the_left_compute_and_differentiate(name):
    op, closed_form = OPERATORS[name]
    a = np.array([1.5, 2.0, 0.7])
    g = fg.grad(lambda x: fnp.sum(op(a, x)))(X)
    np.testing.assert_allclose(g, closed_form(a, X), rtol=1e-12)
    fg.check_grads(lambda x: op(a, x), (X,), order=2)


def test_matmul_and_comparisons_with_a_numpy_array_on_the_left():
    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(m @ x))(X), m.sum(axis=0))
    mask = fg.vjp(lambda x: np.zeros(3) < x, X)[0]
    assert mask.dtype == bool and list(mask) == [True, False, True]


def test_equality_with_a_numpy_array_on_the_left_is_elementwise():
    # numpy.equal(array, node) reaches Node.__array_ufunc__: fnp.equal, as for <
    mask = fg.vjp(lambda x: np.array([1.0, 0.0, 0.5]) == x, X)[0]
    np.testing.assert_array_equal(mask, np.array([1.0, 0.0, 0.5]) == X)
    diff = fg.vjp(lambda x: np.array([1.0, 0.0, 0.5]) != x, X)[0]
    np.testing.assert_array_equal(diff, np.array([1.0, 0.0, 0.5]) != X)


def test_in_place_assignment_names_the_functional_alternative():
    def f(x):
        x[0] = 1.0
        return fnp.sum(x)

    with pytest.raises(TypeError, match=r"x\.at\[i\]\.set\(v\)") as info:
        fg.grad(f)(X)
    assert isinstance(info.value, fg.FuncgradError)


def test_item_and_tolist_are_conversions_that_say_what_to_do():
    for method in ("item", "tolist"):
        with pytest.raises(fg.NodeConversionError, match="fg.value_of"):
            fg.grad(lambda x, m=method: getattr(x[0], m)())(X)


# --- x.at[index].set(v) / .add(v) -----------------------------------------------------

INDICES = {
    "int": 1,
    "slice": slice(1, None),
    "mask": np.array([True, False, True]),
    "array": np.array([2, 0]),
    "repeats": np.array([0, 2, 0]),
}


@pytest.mark.parametrize("kind", sorted(INDICES))
@pytest.mark.parametrize("add", [False, True])
def test_index_update_matches_numpy_and_its_derivatives_finite_differences(kind, add):
    index = INDICES[kind]
    v = np.array([0.5, -0.25, 1.5])[: np.zeros(3)[index].size].reshape(np.zeros(3)[index].shape)
    expected = X.copy()
    if add:
        np.add.at(expected, index, v)
    else:
        expected[index] = v
    got = fg.vjp(lambda x, w: fnp.index_update(x, index, w, add=add), X, v)[0]
    np.testing.assert_array_equal(got, expected)
    f = lambda x, w: fnp.index_update(x, index, w, add=add) ** 3
    fg.check_grads(f, (X, v), order=2)


def test_at_set_and_add_on_a_node_are_differentiable_in_both():
    def f(x, v):
        y = x.at[np.array([0, 2, 0])].set(v)   # last write to 0 wins: v[2]
        z = y.at[1].add(v[1] * x[1])
        return fnp.sum(z ** 2)

    v = np.array([10.0, 20.0, 30.0])
    gx, gv = fg.grad(f, argnums=(0, 1))(X, v)
    z = np.array([30.0, X[1] + 20.0 * X[1], 20.0])
    # d/dx: only x[1] survives (twice, via y[1] and the added term)
    np.testing.assert_allclose(gx, [0.0, 2 * z[1] * (1 + v[1]), 0.0], rtol=1e-12)
    # d/dv: v[0] is overwritten by v[2]: no gradient; v[1] enters z[1] and z[2]
    np.testing.assert_allclose(gv, [0.0, 2 * z[1] * X[1] + 2 * z[2], 2 * z[0]], rtol=1e-12)
    at = fg.require_grad(X).at[1:]
    assert "set" in repr(at) and at.get().shape == (2,)


def test_index_update_keeps_the_dtype_of_x():
    x = np.ones(3, np.float32)
    out, f_vjp = fg.vjp(lambda x, v: fnp.index_update(x, 0, v), x, np.array(2.0))
    assert out.dtype == np.float32
    gx, gv = f_vjp(np.ones(3, np.float32))
    assert gx.dtype == np.float32 and gv.dtype == np.float64 and gv == 1.0


# --- repr ------------------------------------------------------------------------------

def test_repr_of_a_node_shows_primitive_shape_dtype_graphs_and_some_numbers():
    seen = []
    fg.grad(lambda x: seen.append(repr(fnp.sin(x))) or fnp.sum(x))(np.arange(3.0))
    text = seen[0]
    for part in ("sin", "shape=(3,)", "float64", "graphs=[", "0.8415", "0.9093"):
        assert part in text, text
    big = repr(fg.require_grad(np.arange(1000.0)))
    assert "..." in big and len(big) < 200


def test_numpy_functions_that_read_only_metadata_work_on_nodes():
    seen = []

    def f(x):
        seen.append((np.shape(x), np.ndim(x), np.size(x), np.result_type(x, 1.0)))
        return fnp.sum(x)

    fg.grad(f)(np.ones((2, 3), np.float32))
    assert seen == [((2, 3), 2, 6, np.dtype(np.float32))]
