"""API.md §4: fg.backprop, rule by rule, and the fold's guarantees.

Each rule of the contract is one test (or one parametrized table).  Gradients
are checked against closed forms.  The fold's promises -- determinism, release
of consumed gradients, no recursion on deep graphs, checks of what rules
return -- have a test each.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import tracemalloc
import warnings
import weakref

import numpy as np
import pyrsistent
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def leaf(value, dtype=np.float64, backprop_id=None):
    return fg.require_grad(np.asarray(value, dtype=dtype), backprop_id)


# --- seeds ----------------------------------------------------------------------

def test_sole_node_gets_ones():
    x = leaf(2.0)
    grads = fg.backprop([x], [x])
    assert isinstance(grads, pyrsistent.PMap)
    assert list(grads) == [x]
    assert type(grads[x]) is np.ndarray
    assert grads[x].shape == () and grads[x].dtype == np.float64 and grads[x] == 1.0


def test_sole_size_one_node_gets_ones_with_deprecation_warning():
    x = leaf([2.0], np.float32)
    with pytest.warns(DeprecationWarning, match=r"\(1,\)"):
        gx = fg.backprop([x], [x])[x]
    np.testing.assert_array_equal(gx, np.ones((1,), np.float32))
    assert gx.dtype == np.float32


@pytest.mark.parametrize("shape", [(1,), (1, 1), (1, 1, 1)])
def test_size_one_output_that_is_not_0d_warns_but_works(shape):
    x = leaf(np.full(shape, 3.0))
    with pytest.warns(DeprecationWarning):
        gx = fg.backprop([x * x], [x])[x]
    np.testing.assert_array_equal(gx, np.full(shape, 6.0))


def test_0d_output_does_not_warn():
    x = leaf(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fg.backprop([x * x], [x])[x] == 6.0


@pytest.mark.parametrize("shape", [(2,), (2, 3), (0,)])
def test_non_scalar_output_without_seed_is_a_value_error_naming_the_shape(shape):
    x = leaf(np.ones(shape))
    with pytest.raises(ValueError, match=rf"{shape}".replace("(", r"\(").replace(")", r"\)")):
        fg.backprop([x * 2.0], [x])
    # An explicit None is no request for ones: the output is dropped.
    assert fg.backprop([x * 2.0], [x], [None])[x] is None


def test_output_seeds_scale_the_gradients():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x  # dy/dx = 2x, elementwise
    seed = np.array([1.0, -2.0, 0.5])
    np.testing.assert_array_equal(fg.backprop([y], [x], [seed])[x], 2 * x.value * seed)


def test_seeds_of_several_outputs_add_up():
    x = leaf([1.0, 2.0])
    y1 = x * x  # 2x
    y2 = fnp.sin(x)  # cos x
    s1, s2 = np.array([3.0, 5.0]), np.array([-1.0, 2.0])
    gx = fg.backprop([y1, y2], [x], [s1, s2])[x]
    np.testing.assert_allclose(gx, s1 * 2 * x.value + s2 * np.cos(x.value), rtol=1e-15)


def test_none_seed_entries_drop_their_outputs():
    # API.md §4, as chainer.backward: an explicit None contributes no gradient;
    # ones are the seed only when grad_outputs itself is None.
    x = leaf(2.0)
    y1, y2 = x * x, x * x * x  # 2x = 4 and 3x^2 = 12
    assert fg.backprop([y1, y2], [x])[x] == 16.0
    assert fg.backprop([y1, y2], [x], [None, np.array(2.0)])[x] == 24.0
    assert fg.backprop([y1, y2], [x], [np.array(1.0), None])[x] == 4.0
    assert fg.backprop([y1, y2], [x], [None, np.array(2.0)], loss_scale=0.5)[x] == 12.0
    got = fg.backprop([y1, y2], [x, y1], [None, None])
    assert got[x] is None and got[y1] is None  # nothing seeded: nothing reached


def test_none_seed_entries_at_second_order():
    # y1 = sin x is dropped; y2 = x^3 seeded with v: g = 3 v x^2, dg/dx = 6 v x
    x = leaf(np.array([0.5, -1.5]))
    y1, y2 = fnp.sin(x), x ** 3
    v = np.array([2.0, 3.0])
    g = fg.backprop([y1, y2], [x], [None, v], enable_double_backprop=True)[x]
    np.testing.assert_allclose(fg.value_of(g), 3 * v * x.value ** 2, rtol=1e-15)
    gg = fg.backprop([g], [x], [np.ones(2)])[x]
    np.testing.assert_allclose(gg, 6 * v * x.value, rtol=1e-15)


def test_a_none_seed_of_a_non_scalar_output_is_no_error_nor_warning():
    x = leaf(np.array([1.0, 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fg.backprop([x * x, fnp.sum(x * 5.0, keepdims=True)], [x], [None, np.ones(1)])
    np.testing.assert_array_equal(got[x], [5.0, 5.0])


def test_seed_is_cast_to_the_output_dtype():
    x = leaf([1.0, 2.0], np.float32)
    gx = fg.backprop([x * 3.0], [x], [[1.0, 1.0]])[x]  # a list, float64 values
    assert gx.dtype == np.float32
    np.testing.assert_array_equal(gx, [3.0, 3.0])


@pytest.mark.parametrize("n_seeds", [0, 2, 3])
def test_wrong_number_of_seeds_is_a_value_error(n_seeds):
    x = leaf(2.0)
    with pytest.raises(ValueError, match=str(n_seeds)):
        fg.backprop([x * x], [x], [np.array(1.0)] * n_seeds)


@pytest.mark.parametrize(("out_shape", "seed_shape"),
                         [((3,), (4,)), ((3,), ()), ((2, 3), (3, 2)), ((), (1,))])
def test_seed_of_wrong_shape_names_both_shapes(out_shape, seed_shape):
    x = leaf(np.ones(out_shape))
    with pytest.raises(ValueError) as info:
        fg.backprop([x * 2.0], [x], [np.ones(seed_shape)])
    assert str(out_shape) in str(info.value) and str(seed_shape) in str(info.value)
    assert isinstance(info.value, fg.FuncgradError)


@pytest.mark.parametrize("scale", [2.0, 0.5, 1024.0])
def test_loss_scale_multiplies_the_seeds(scale):
    x = leaf([1.0, -2.0])
    y = (x * x * x).sum()  # 3x^2
    plain = fg.backprop([y], [x])[x]
    scaled = fg.backprop([y], [x], loss_scale=scale)[x]
    np.testing.assert_allclose(plain, 3 * x.value ** 2)
    np.testing.assert_allclose(scaled, scale * plain, rtol=1e-15)
    seeded = fg.backprop([x * x], [x], [np.array([1.0, 3.0])], loss_scale=scale)[x]
    np.testing.assert_allclose(seeded, scale * np.array([1.0, 3.0]) * 2 * x.value)


# --- arguments -------------------------------------------------------------------

def _not_nodes():
    x = leaf(2.0)
    return x, [np.array(2.0), 2.0, "x", None, [x], (x,)]


@pytest.mark.parametrize("k", range(6))
def test_outputs_that_are_not_nodes_are_a_type_error(k):
    x, bad = _not_nodes()
    with pytest.raises(TypeError):
        fg.backprop([x * x, bad[k]], [x])


@pytest.mark.parametrize("k", range(6))
def test_inputs_that_are_not_nodes_are_a_type_error(k):
    x, bad = _not_nodes()
    with pytest.raises(TypeError):
        fg.backprop([x * x], [x, bad[k]])


@pytest.mark.parametrize("bad", [None, 3.0, "outputs"])
def test_outputs_that_are_not_a_sequence_are_a_type_error(bad):
    x = leaf(2.0)
    with pytest.raises(TypeError):
        fg.backprop(bad, [x])
    with pytest.raises(TypeError):
        fg.backprop([x * x], bad)


@pytest.mark.parametrize("kwargs", [{"retain_grad": True}, {"body": None}, {"backprop_ids": None},
                                    {"enable_double_backward": True}])
def test_unknown_keyword_arguments_are_a_type_error(kwargs):
    x = leaf(2.0)
    with pytest.raises(TypeError):
        fg.backprop([x * x], [x], **kwargs)


def test_backprop_id_is_keyword_only():
    with fg.backprop_scope("bp") as bp:
        x = leaf(2.0, backprop_id=bp)
        with pytest.raises(TypeError):
            fg.backprop([x * x], [x], None, bp)
        assert fg.backprop([x * x], [x], None, backprop_id=bp)[x] == 4.0


# --- which nodes get what ------------------------------------------------------------

def test_input_the_outputs_do_not_reach_maps_to_none():
    x, w = leaf(3.0), leaf(5.0)
    y = x * x
    grads = fg.backprop([y], [x, w])
    assert grads[x] == 6.0
    assert grads[w] is None
    assert set(grads) == {x, w}


def test_input_used_only_by_another_output_maps_to_none():
    x, w = leaf(3.0), leaf(5.0)
    y, unused = x * 2.0, w * 2.0
    assert fg.backprop([y], [x, w])[w] is None
    assert unused.rank == 1


def test_intermediate_nodes_as_inputs_get_the_total_gradient():
    x = leaf(0.7)
    h = fnp.sin(x)
    y = h * h + h * 3.0  # dy/dh = 2h + 3 (two paths into h)
    grads = fg.backprop([y], [h, x])
    s, c = np.sin(0.7), np.cos(0.7)
    np.testing.assert_allclose(grads[h], 2 * s + 3.0, rtol=1e-15)
    np.testing.assert_allclose(grads[x], (2 * s + 3.0) * c, rtol=1e-15)


def test_an_output_may_also_be_an_input():
    x = leaf(2.0)
    h = x * x
    y = h * 3.0
    grads = fg.backprop([y, h], [h, x])  # h is seeded with 1 and receives 3 from y
    assert grads[h] == 4.0
    assert grads[x] == 16.0  # (3 + 1) * 2x


def test_only_gradients_are_returned_nothing_is_mutated():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    before = (x.value.copy(), y.value.copy())
    g1 = fg.backprop([y], [x])[x]
    g2 = fg.backprop([y], [x])[x]
    np.testing.assert_array_equal(g1, g2)
    assert g1 is not g2
    for node in (x, y):
        assert not hasattr(node, "grad")
    np.testing.assert_array_equal(x.value, before[0])
    np.testing.assert_array_equal(y.value, before[1])
    g1[...] = 99.0  # the caller owns its result: the next call is unaffected
    np.testing.assert_array_equal(fg.backprop([y], [x])[x], [2.0, 4.0])


# --- graphs --------------------------------------------------------------------------

def test_output_not_on_the_graph_is_a_backprop_error_naming_it():
    x = leaf(2.0)
    y = x * x
    with fg.backprop_scope("the_graph_named_here") as bp, \
            pytest.raises(fg.BackpropError, match="the_graph_named_here"):
        fg.backprop([y], [x], backprop_id=bp)


def test_input_not_on_the_graph_is_a_backprop_error_naming_it():
    with fg.backprop_scope("graph_of_x") as bp:
        x = leaf(2.0, backprop_id=bp)
        w = leaf(3.0)  # default graph only
        y = x * w
        with pytest.raises(fg.BackpropError, match="graph_of_x") as info:
            fg.backprop([y], [x, w], backprop_id=bp)
    assert isinstance(info.value, ValueError) and isinstance(info.value, fg.FuncgradError)


def test_inputs_and_outputs_on_another_graph_than_asked():
    # ChainerX's test_backprop_multiple_graphs_non_existing.
    with fg.backprop_scope("bp1") as bp1, fg.backprop_scope("bp2") as bp2:
        xs = (leaf([2.0], np.float32, bp1), leaf([5.0], np.float32, bp1))
        y = (xs[0] * xs[1]).sum()
        with pytest.raises(fg.BackpropError, match="bp2"):
            fg.backprop([y], list(xs), backprop_id=bp2)
        grads = fg.backprop([y], list(xs), backprop_id=bp1)
        assert grads[xs[0]] == 5.0 and grads[xs[1]] == 2.0


def test_a_backprop_id_with_no_graph_is_an_error():
    with fg.backprop_scope("finished") as done:
        pass
    orphan = fg.BackpropId("orphan")
    x = leaf(2.0)
    for bp in (done, orphan):
        with pytest.raises(fg.BackpropError, match=bp.name):
            fg.backprop([x * x], [x], backprop_id=bp)
        with pytest.raises(fg.BackpropError, match=bp.name):
            fg.require_grad(np.ones(2), bp)  # its scope is not open here


@pytest.mark.parametrize("bad", ["default", 0, object()])
def test_a_backprop_id_that_is_not_a_backprop_id_is_a_type_error(bad):
    x = leaf(2.0)
    with pytest.raises(TypeError):
        fg.backprop([x * x], [x], backprop_id=bad)


def test_nodes_made_after_a_scope_closes_are_not_on_its_graph():
    with fg.backprop_scope("short") as bp:
        x = leaf(2.0, backprop_id=bp)
        inside = x * x
    outside = x * x
    assert fg.is_grad_required(inside, bp)
    assert not isinstance(outside, fg.Node) or not fg.is_grad_required(outside, bp)


# --- double backprop --------------------------------------------------------------------

SECOND_ORDER = [  # f, f', f''
    ("cube", lambda x: x * x * x, lambda x: 3 * x ** 2, lambda x: 6 * x),
    ("sin_times_x", lambda x: fnp.sin(x) * x,
     lambda x: np.cos(x) * x + np.sin(x), lambda x: 2 * np.cos(x) - x * np.sin(x)),
    ("exp_over_x", lambda x: fnp.exp(x) / x,
     lambda x: np.exp(x) * (x - 1) / x ** 2,
     lambda x: np.exp(x) * (x ** 2 - 2 * x + 2) / x ** 3),
]


@pytest.mark.parametrize(("name", "f", "df", "d2f"), SECOND_ORDER, ids=[r[0] for r in SECOND_ORDER])
def test_enable_double_backprop_gives_differentiable_gradients(name, f, df, d2f):
    x0 = np.array([0.5, 1.5, -0.7]) if name != "exp_over_x" else np.array([0.5, 1.5, 2.0])
    x = leaf(x0)
    y = f(x).sum()
    gx = fg.backprop([y], [x], enable_double_backprop=True)[x]
    assert type(gx) is fg.Node and fg.is_grad_required(gx)
    np.testing.assert_allclose(gx.value, df(x0), rtol=1e-13)
    ggx = fg.backprop([gx.sum()], [x])[x]
    assert type(ggx) is np.ndarray
    np.testing.assert_allclose(ggx, d2f(x0), rtol=1e-12)


def test_without_double_backprop_gradients_are_raw_arrays():
    x = leaf([0.5, 1.0], np.float32)
    gx = fg.backprop([(fnp.sin(x) * x).sum()], [x])[x]
    assert type(gx) is np.ndarray and gx.dtype == np.float32


def test_third_order_by_repeated_double_backprop():
    x = leaf(0.3)
    y = x ** 4  # 4x^3, 12x^2, 24x
    g1 = fg.backprop([y], [x], enable_double_backprop=True)[x]
    g2 = fg.backprop([g1], [x], enable_double_backprop=True)[x]
    g3 = fg.backprop([g2], [x])[x]
    np.testing.assert_allclose([g1.value, g2.value, g3], [4 * 0.3 ** 3, 12 * 0.09, 24 * 0.3])


# --- determinism -----------------------------------------------------------------------------

def _fan_in_program():
    """Many float32 terms of very different sizes into one leaf: sums are order-sensitive."""
    rng = np.random.default_rng(7)
    x = leaf(rng.standard_normal(64), np.float32)
    W = rng.standard_normal((64, 64)).astype(np.float32)
    terms = []
    for k in range(40):
        scale = np.float32(10.0 ** ((k % 9) - 4))
        h = fnp.sin(x * np.float32(k + 1)) * scale
        terms.append((h @ W * x).sum() if k % 3 == 0 else (h * h).sum())
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return x, total


def test_the_fold_is_deterministic_bit_for_bit():
    x1, y1 = _fan_in_program()
    x2, y2 = _fan_in_program()
    g1 = fg.backprop([y1], [x1])[x1]
    g2 = fg.backprop([y2], [x2])[x2]
    g1_again = fg.backprop([y1], [x1])[x1]
    assert g1.dtype == np.float32
    assert np.array_equal(g1, g2) and np.array_equal(g1, g1_again)
    assert np.all(np.isfinite(g1)) and np.any(g1 != 0)
    # and through the combinator, which runs the same fold
    run = lambda: fg.grad(lambda v: _terms_of(v))(np.linspace(-1, 1, 64, dtype=np.float32))
    assert np.array_equal(run(), run())


def _terms_of(x):
    total = 0.0
    for k in range(20):
        total = total + (fnp.sin(x * float(k + 1)) * x).sum() * 10.0 ** ((k % 9) - 4)
    return total


# --- release ------------------------------------------------------------------------------

class _GradRefs(fg.BackwardHook):
    """Weak references to each step's output gradient, and who is alive at each step."""

    def __init__(self):
        self.refs = []
        self.alive_before = []

    def backward_preprocess(self, node, in_values, out_grads):
        self.alive_before.append(sum(r() is not None for r in self.refs))
        self.refs.append(weakref.ref(out_grads[0]))


def test_gradients_are_released_once_consumed():
    x = leaf(np.linspace(0.1, 1.0, 1000))
    y = x
    for _ in range(50):
        y = fnp.sin(y)
    refs = _GradRefs()
    gx = fg.backprop([y.sum()], [x], hooks=[refs])[x]
    assert len(refs.refs) == 51  # sum + 50 sines
    # Each step sees at most its predecessor's gradient still alive, never the pile.
    assert max(refs.alive_before) <= 2, refs.alive_before
    assert gx.shape == (1000,)


def test_peak_memory_of_backward_stays_near_the_forward_values():
    n, depth = 100_000, 30  # 800 kB per array; keeping every gradient would cost 24 MB
    x = leaf(np.linspace(0.1, 1.0, n))
    y = x
    for _ in range(depth):
        y = fnp.sin(y)
    out = y.sum()
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        gx = fg.backprop([out], [x])[x]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    nbytes = x.value.nbytes
    assert gx.shape == (n,)
    assert peak - base < 8 * nbytes, f"backward peaked at {(peak - base) / nbytes:.1f} arrays"


# --- deep graphs --------------------------------------------------------------------------------

DEEP = 100_000


def test_a_100k_step_chain_backpropagates_without_recursion_error():
    x = leaf(1.0)
    y = x
    for _ in range(DEEP):
        y = y * 1.0000001
    assert y.rank == DEEP
    gx = fg.backprop([y], [x])[x]
    np.testing.assert_allclose(gx, 1.0000001 ** DEEP, rtol=1e-9)


def test_a_100k_step_chain_is_garbage_collected_without_recursion_error():
    # In a subprocess: freeing a deep graph recursively would crash the interpreter.
    code = textwrap.dedent(f"""
        import gc, weakref, numpy as np, funcgrad as fg, funcgrad.numpy as fnp
        x = fg.require_grad(np.array([1.0, 0.5]))
        y = x
        for _ in range({DEEP}):
            y = fnp.sin(y)
        first = weakref.ref(y.inputs[0].value)  # an intermediate value of the graph
        gx = fg.backprop([y.sum()], [x])[x]
        del y
        gc.collect()
        assert first() is None, "the graph is still alive"
        assert np.all(np.isfinite(gx)) and np.all(gx > 0)
        print("ok")
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.startswith("ok")


def test_a_100k_step_chain_through_grad_and_jvp():
    def f(x):
        for _ in range(DEEP // 2):
            x = x * 1.0000001
        return x

    np.testing.assert_allclose(fg.grad(f)(np.array(2.0)), 1.0000001 ** (DEEP // 2), rtol=1e-9)
    _, t = fg.jvp(f, (np.array(2.0),), (np.array(3.0),))
    np.testing.assert_allclose(t, 3.0 * 1.0000001 ** (DEEP // 2), rtol=1e-9)


# --- what rules return -------------------------------------------------------------------------

def _prim_with_rule(rule, name):
    def impl(x):
        return x * 2.0

    impl.__name__ = name
    prim = fg.primitive(impl)
    fg.defvjp(prim, rule)
    return prim


BAD_RULES = [
    ("wrong_shape", lambda g, ans, x: fnp.sum(g), ["(3,)", "()"]),
    ("wrong_shape_broadcast", lambda g, ans, x: fnp.ones((2, 3)) * g, ["(3,)", "(2, 3)"]),
    ("int_dtype", lambda g, ans, x: np.ones(x.shape, dtype=np.int64), ["float64", "int64"]),
    ("bool_dtype", lambda g, ans, x: np.ones(x.shape, dtype=bool), ["float64", "bool"]),
    ("none", lambda g, ans, x: None, ["(3,)"]),
]


@pytest.mark.parametrize(("name", "rule", "fragments"), BAD_RULES, ids=[r[0] for r in BAD_RULES])
def test_a_wrong_rule_raises_gradient_type_error_naming_the_primitive(name, rule, fragments):
    prim = _prim_with_rule(rule, f"my_{name}_prim")
    x = leaf([1.0, 2.0, 3.0])
    y = prim(x).sum()
    with pytest.raises(fg.GradientTypeError) as info:
        fg.backprop([y], [x])
    message = str(info.value)
    assert f"my_{name}_prim" in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert isinstance(info.value, TypeError) and isinstance(info.value, fg.FuncgradError)
    with pytest.raises(fg.GradientTypeError, match=f"my_{name}_prim"):
        fg.grad(lambda v: prim(v).sum())(np.ones(3))


def test_a_rule_returning_another_float_dtype_is_cast_to_the_input_dtype():
    prim = _prim_with_rule(lambda g, ans, x: (g * 2.0).astype(np.float32), "f32_rule")
    gx = fg.grad(lambda v: prim(v).sum())(np.ones(3))
    assert gx.dtype == np.float64
    np.testing.assert_array_equal(gx, [2.0, 2.0, 2.0])


def test_a_primitive_without_a_rule_fails_at_node_creation():
    @fg.primitive
    def no_rule_prim(x, y):
        return x * y

    fg.defvjp(no_rule_prim, lambda g, ans, x, y: g * y, None)
    x = leaf(2.0)
    assert float(no_rule_prim(x, np.array(3.0)).value) == 6.0  # argument 0 has a rule
    with pytest.raises(fg.MissingRuleError) as info:
        no_rule_prim(np.array(3.0), x)  # fails here, before any backward
    message = str(info.value)
    assert "no_rule_prim" in message and "1" in message
    assert isinstance(info.value, NotImplementedError) and isinstance(info.value, fg.FuncgradError)

    @fg.primitive
    def ruleless(x):
        return x + 1.0

    with pytest.raises(fg.MissingRuleError, match="ruleless") as info:
        fg.grad(ruleless)(np.array(1.0))
    assert "argument 0" in str(info.value)
    assert float(ruleless(np.array(1.0))) == 2.0  # raw values still work


def test_a_user_primitive_with_a_good_rule_works_to_second_order():
    @fg.primitive
    def cube(x):
        return x ** 3

    fg.defvjp(cube, lambda g, ans, x: g * 3.0 * x * x)
    x0 = np.array([0.5, -1.0])
    np.testing.assert_allclose(fg.grad(lambda x: cube(x).sum())(x0), 3 * x0 ** 2)
    np.testing.assert_allclose(
        fg.grad(lambda x: fg.grad(lambda y: cube(y).sum())(x).sum())(x0), 6 * x0
    )
