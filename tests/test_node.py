"""API.md §1: values inside traced code -- the Node.

A Node is frozen, compared and hashed by identity, carries read-only
attributes, supports NumPy's operators and methods (checked here by value, by
gradient against finite differences and by second derivative against finite
differences of the gradient), and refuses to be turned into a raw value by
accident.
"""

from __future__ import annotations

import gc
import operator
import weakref

import numpy as np
import pyrsistent
import pytest
from numeric import numgrad

import funcgrad as fg
import funcgrad.numpy as fnp

RNG = np.random.default_rng(20240601)
X = 0.5 + RNG.uniform(0.0, 1.0, (3, 4))  # positive, distinct: max/min/abs/pow are smooth
C = RNG.standard_normal((3, 4))
M = RNG.standard_normal((4, 2))
M2 = RNG.standard_normal((2, 3))
V = RNG.standard_normal((3, 4))  # direction for second derivatives


def loss(y):
    """A scalar of any array or Node, nonlinear so that second derivatives see the op."""
    return (y * y * 0.5 + y).sum()


# id -> function written once for NumPy arrays and Nodes alike
OPERATORS = {
    "add": lambda x: x + x[::-1],
    "add_scalar": lambda x: x + 2.0,
    "radd_scalar": lambda x: 2.0 + x,
    "radd_array": lambda x: C + x,
    "sub": lambda x: x - C,
    "rsub_array": lambda x: C - x,
    "rsub_scalar": lambda x: 1.0 - x,
    "mul_self": lambda x: x * x,
    "rmul_array": lambda x: C * x,
    "div": lambda x: x / (C + 3.0),
    "div_self": lambda x: x / x[::-1],
    "rdiv_scalar": lambda x: 1.0 / x,
    "pow_int": lambda x: x ** 3,
    "pow_float": lambda x: x ** 2.5,
    "rpow_scalar": lambda x: 2.0 ** x,
    "pow_node_node": lambda x: x ** x,
    "matmul": lambda x: x @ M,
    "rmatmul": lambda x: M2 @ x,
    "matmul_self": lambda x: x @ x.T,
    "neg": lambda x: -x,
    "abs": lambda x: abs(x - 1.0),
    "T": lambda x: x.T * C.T,
    "slice": lambda x: x[1:, ::2],
    "int_index": lambda x: x[1, 2] * x[2, 0],
    "row": lambda x: x[1],
    "column": lambda x: x[:, 1],
    "int_array_repeats": lambda x: x[np.array([0, 0, 2])],
    "int_array_2d": lambda x: x[np.array([[0, 1], [2, 0]])],
    "int_arrays_pair": lambda x: x[np.array([0, 2, 2]), np.array([1, 3, 3])],
    "list_and_slice": lambda x: x[[0, 2], 1:],
    "bool_mask": lambda x: x[C > 0],
    "bool_rows": lambda x: x[np.array([True, False, True])],
    "sum": lambda x: x.sum() * x,
    "sum_axis": lambda x: x.sum(axis=0),
    "sum_axis_keepdims": lambda x: x.sum(axis=1, keepdims=True) * x,
    "mean": lambda x: x.mean() * x,
    "mean_axis": lambda x: x.mean(axis=1),
    "reshape_tuple": lambda x: x.reshape((6, 2)) * x.reshape(6, 2)[::-1],
    "reshape_flat": lambda x: x.reshape(-1),
    "transpose": lambda x: x.transpose() @ x,
    "transpose_axes": lambda x: x.transpose(1, 0) * C.T,
    "astype_same": lambda x: x.astype(np.float64) * x,
    "max": lambda x: x.max() * x,
    "max_axis": lambda x: x.max(axis=0),
    "min": lambda x: x.min() * x,
    "min_axis_keepdims": lambda x: x.min(axis=1, keepdims=True) + x,
}


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_value_matches_numpy(name):
    op = OPERATORS[name]
    out = op(fg.require_grad(X))
    assert type(out) is fg.Node
    np.testing.assert_allclose(fg.value_of(out), op(X), rtol=1e-13, atol=1e-13)
    assert out.shape == np.shape(op(X))
    assert out.dtype == np.asarray(op(X)).dtype


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_gradient_matches_finite_differences(name):
    op = OPERATORS[name]
    f = lambda x: loss(op(x))
    got = fg.grad(f)(X)
    assert type(got) is np.ndarray and got.shape == X.shape and got.dtype == X.dtype
    np.testing.assert_allclose(got, numgrad(f, X), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_second_derivative_matches_finite_differences(name):
    # H v by reverse over reverse, against central differences of the gradient.
    op = OPERATORS[name]
    f = lambda x: loss(op(x))
    grad_f = fg.grad(f)
    hv = fg.grad(lambda x: (grad_f(x) * V).sum())(X)
    eps = 1e-5
    expected = (grad_f(X + eps * V) - grad_f(X - eps * V)) / (2 * eps)
    np.testing.assert_allclose(hv, expected, rtol=1e-5, atol=1e-6)


def test_astype_casts_value_and_gradient_comes_back_in_input_dtype():
    f = lambda x: (x.astype(np.float32) ** 2).sum()
    x = fg.require_grad(X)
    assert x.astype(np.float32).dtype == np.float32
    g = fg.grad(f)(X)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, 2 * X, rtol=1e-6)


# --- frozen ---------------------------------------------------------------

ATTRIBUTES = ["value", "shape", "dtype", "ndim", "size", "device", "primitive", "inputs",
              "rank", "backprop_id", "T", "grad", "some_new_attribute"]


@pytest.mark.parametrize("attr", ATTRIBUTES)
def test_node_is_frozen(attr):
    x = fg.require_grad(np.ones(3))
    y = fnp.sin(x)
    for node in (x, y):
        with pytest.raises(AttributeError):
            setattr(node, attr, np.zeros(3))
    np.testing.assert_array_equal(fg.value_of(x), np.ones(3))
    assert not hasattr(x, "grad")


@pytest.mark.parametrize("attr", ["value", "primitive", "rank"])
def test_node_attributes_cannot_be_deleted(attr):
    x = fnp.sin(fg.require_grad(np.ones(3)))
    with pytest.raises(AttributeError):
        delattr(x, attr)
    assert getattr(x, attr) is not None


# --- identity -----------------------------------------------------------------

def test_equality_is_elementwise_as_numpy_s():
    a = fg.require_grad(np.array([1.0, 2.0, 3.0]))
    b = fg.require_grad(np.array([1.0, 0.0, 3.0]))
    np.testing.assert_array_equal(a == b, [True, False, True])
    np.testing.assert_array_equal(a != b, [False, True, False])
    np.testing.assert_array_equal(a == 2.0, [False, True, False])
    np.testing.assert_array_equal(2.0 != a, [True, False, True])
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a == a)  # noqa: PLR0124 -- as for a NumPy array


def test_hash_is_identity_based_and_stable():
    a = fg.require_grad(np.ones(3))
    b = fg.require_grad(np.ones(3))
    assert hash(a) == hash(a)
    assert hash(a) != hash(b)  # equal values, distinct nodes (ids differ while both live)


def test_nodes_are_keys_of_dict_set_and_pmap():
    a = fg.require_grad(np.ones(3))
    b = fg.require_grad(np.ones(3))
    c = a * 1.0
    d = {a: "a", b: "b", c: "c"}
    assert len(d) == 3 and d[a] == "a" and d[b] == "b" and d[c] == "c"
    s = {a, b, c, a}
    assert len(s) == 3 and b in s
    # the maps the fold returns look Nodes up by identity, whatever == says
    m = fg.backprop([fnp.sum(a * b)], [a, b]).set(c, 3)
    assert isinstance(m, pyrsistent.PMap) and len(m) == 3 and m[c] == 3
    np.testing.assert_array_equal(m[a], np.ones(3))
    assert m.discard(a).get(a) is None and m.discard(a)[c] == 3 and a not in m.discard(a)
    assert list(m.keys()) and all(any(k is n for n in (a, b, c)) for k in m)


def test_backprop_result_is_keyed_by_the_input_nodes():
    a = fg.require_grad(np.array(2.0))
    b = fg.require_grad(np.array(2.0))  # same value, a different node
    grads = fg.backprop([a * a * b], [a, b])
    assert isinstance(grads, pyrsistent.PMap)
    assert float(grads[a]) == 8.0 and float(grads[b]) == 4.0


# --- attributes ---------------------------------------------------------------

def test_leaf_attributes():
    arr = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = fg.require_grad(arr)
    np.testing.assert_array_equal(x.value, arr)
    assert type(x.value) is np.ndarray
    assert x.shape == (2, 3)
    assert x.dtype == np.float32
    assert x.ndim == 2
    assert x.size == 6
    assert x.device == "cpu"
    assert x.primitive is None
    assert x.inputs == ()
    assert x.rank == 0
    assert x.backprop_id is fg.DEFAULT_BACKPROP_ID
    assert isinstance(x.backprop_id, fg.BackpropId)


def test_derived_node_attributes_and_rank():
    x = fg.require_grad(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    w = fg.require_grad(np.ones(3, np.float32))
    y = fnp.sin(x)
    z = y * w
    u = z + x
    s = u.sum()
    assert y.primitive.name == "sin" and y.inputs == (x,) and y.rank == 1
    assert z.primitive.name == "multiply" and z.inputs == (y, w) and z.rank == 2
    assert u.inputs == (z, x) and u.rank == 3  # 1 + max(2, 0)
    assert s.rank == 4 and s.shape == () and s.ndim == 0 and s.size == 1
    assert (x * 2.0).inputs == (x,)  # constants are not inputs
    assert (2.0 * x).inputs == (x,)
    assert z.dtype == np.float32 and z.shape == (2, 3)
    for node in (y, z, u, s):
        assert node.backprop_id is fg.DEFAULT_BACKPROP_ID
        assert node.device == "cpu"
    np.testing.assert_allclose(u.value, np.sin(x.value) + x.value, rtol=1e-6)


def test_backprop_id_attribute_names_the_graph():
    with fg.backprop_scope("weights") as bp:
        x = fg.require_grad(np.ones(2), bp)
        y = x * 3.0
    assert bp.name == "weights"
    assert x.backprop_id is bp and y.backprop_id is bp
    assert fg.is_grad_required(y, bp) and not fg.is_grad_required(y)


def test_backprop_scopes_are_distinct():
    with fg.backprop_scope("same") as a, fg.backprop_scope("same") as b:
        assert a is not b and a != b
        assert a.name == b.name == "same"


def test_nodes_inside_traced_functions():
    seen = []

    def f(x):
        seen.append((type(x), x.shape, x.dtype, x.rank, x.primitive))
        return (x * x).sum()

    fg.grad(f)(np.ones((2, 2), np.float32))
    assert seen == [(fg.Node, (2, 2), np.float32, 0, None)]


# --- comparisons ----------------------------------------------------------------

COMPARISONS = [
    ("lt", lambda x, y: x < y, np.less),
    ("le", lambda x, y: x <= y, np.less_equal),
    ("gt", lambda x, y: x > y, np.greater),
    ("ge", lambda x, y: x >= y, np.greater_equal),
]


@pytest.mark.parametrize(("name", "cmp", "ref"), COMPARISONS, ids=[c[0] for c in COMPARISONS])
def test_comparisons_return_plain_bool_arrays(name, cmp, ref):
    x, y = fg.require_grad(X), fg.require_grad(X[::-1])
    threshold = float(np.median(X))
    cases = [
        (cmp(x, threshold), ref(X, threshold)),
        (cmp(threshold, x), ref(threshold, X)),
        (cmp(x, y), ref(X, X[::-1])),
        (cmp(C, x), ref(C, X)),
        (cmp(x, C), ref(X, C)),
    ]
    for got, expected in cases:
        assert type(got) is np.ndarray, type(got)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, expected)


def test_comparisons_inside_grad_give_masks():
    def relu_sq(x):
        mask = x > 0
        assert type(mask) is np.ndarray and mask.dtype == np.bool_
        return fnp.where(mask, x * x, 0.0).sum()

    x = np.array([-2.0, -0.5, 0.5, 3.0])
    np.testing.assert_array_equal(fg.grad(relu_sq)(x), [0.0, 0.0, 1.0, 6.0])


# --- accidental conversions -------------------------------------------------------

CONVERSIONS = {
    "numpy.asarray": np.asarray,
    "numpy.array": np.array,
    "float": float,
    "int": int,
    "complex": complex,
    "bool": bool,
    "if": lambda n: 1.0 if n else 0.0,
    "and": lambda n: n and 1.0,
    "operator.index": operator.index,
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_accidental_conversion_inside_grad_raises_type_error(name):
    convert = CONVERSIONS[name]

    def f(x):
        return x * convert(x)

    with pytest.raises(TypeError, match=r"fg\.value_of") as info:
        fg.grad(f)(np.array(1.5))
    assert isinstance(info.value, fg.NodeConversionError)
    assert isinstance(info.value, fg.FuncgradError)


def test_if_node_raises_type_error_naming_value_of():
    def f(x):
        if x:
            return x * 2.0
        return x

    with pytest.raises(TypeError, match=r"fg\.value_of"):
        fg.grad(f)(np.array(1.0))


@pytest.mark.parametrize("name", ["numpy.asarray", "float", "int"])
def test_conversion_of_a_leaf_outside_combinators_also_raises(name):
    with pytest.raises(TypeError, match=r"fg\.value_of"):
        CONVERSIONS[name](fg.require_grad(np.array(1.5)))


def test_value_of_reads_the_value_without_gradient():
    def f(x):
        raw = fg.value_of(x)
        assert type(raw) is np.ndarray
        return x * raw  # d/dx = raw, not 2x

    assert float(fg.grad(f)(np.array(3.0))) == 3.0
    assert fg.value_of(4.0) == 4.0
    a = np.ones(2)
    assert fg.value_of(a) is a


def test_the_frozen_error_is_a_library_error_and_attrs_one():
    import attrs

    x = fg.require_grad(np.ones(2))
    with pytest.raises(fg.FuncgradError, match="'value'") as info:
        x.value = np.zeros(2)
    assert isinstance(info.value, attrs.exceptions.FrozenInstanceError)
    assert isinstance(info.value, AttributeError)


def test_nodes_can_be_weak_referenced():
    x = fg.require_grad(np.array([1.0, 2.0]))
    y = fnp.sin(x) * x
    refs = [weakref.ref(x), weakref.ref(y)]
    cache = weakref.WeakValueDictionary({id(y): y})  # keyed by id: == is elementwise
    assert refs[1]() is y and cache[id(y)] is y
    del x, y
    gc.collect()
    assert [r() for r in refs] == [None, None]  # weak references keep nothing alive
    assert len(cache) == 0


def test_nodes_met_in_a_traced_function_die_when_the_combinator_returns():
    refs = []

    def f(x):
        y = fnp.tanh(x) * 2.0
        refs.extend([weakref.ref(x), weakref.ref(y)])
        return fnp.sum(y)

    g = fg.grad(f)(np.ones(3))
    np.testing.assert_allclose(g, 2 * (1 - np.tanh(1.0) ** 2))
    assert refs and all(r() is None for r in refs)  # no collection needed: no cycles
