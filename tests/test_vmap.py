"""fg.vmap: the oracle ``vmap(f)(X) == stack([f(x) for x in X])`` over the primitive table
(NumPy and the strict stand-in device), its compositions with every combinator, its
errors, and vectorized Jacobians (one batched pass: counted).

A differential test against JAX's vmap and Jacobians is in test_vmap_jax.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from table import load_rows

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import tree
from funcgrad.primitive import Primitive

ROWS = load_rows()
B = 3


def _case(row, k, size=None):
    """Inputs for one row: B examples of its first non-empty shapes, random axes."""
    size = B if size is None else size
    shapes = next((s for s in row.shapes if not any(0 in x for x in s)), None)
    if shapes is None:
        return None
    rng = np.random.default_rng(k)
    exs = [row.inputs(rng, "float64", shapes) for _ in range(size)]
    n = len(exs[0])
    in_axes = tuple(
        None if n > 1 and rng.random() < 0.3 else int(rng.integers(-a.ndim - 1, a.ndim + 1))
        for a in exs[0]
    )
    if all(a is None for a in in_axes):
        in_axes = (0,) + in_axes[1:]
    args = [exs[0][i] if ax is None else np.stack([e[i] for e in exs], axis=ax)
            for i, ax in enumerate(in_axes)]

    def one(b, f=row.fun):
        return f(*[exs[0][i] if ax is None else exs[b][i] for i, ax in enumerate(in_axes)])

    return in_axes, args, one, rng


def _expected(one, size=B):
    outs = [tree.flatten(one(b))[0] for b in range(size)]
    return [np.stack([np.asarray(o[k]) for o in outs]) for k in range(len(outs[0]))]


def _same_shapes(want):
    return all(w.dtype != object for w in want)


@pytest.mark.parametrize("k,row", list(enumerate(ROWS)), ids=[r.name + r.id for r in ROWS])
def test_vmap_matches_the_loop_over_the_table(k, row):
    case = _case(row, k)
    if case is None:
        pytest.skip("no non-empty shape")
    in_axes, args, one, rng = case
    try:
        want = _expected(one)
    except ValueError:  # per-example results of different shapes (a value mask)
        with pytest.raises(fg.FuncgradError, match="different shapes"), pytest.warns(
                fg.VmapFallbackWarning, match="for these arguments"):
            fg.vmap(row.fun, in_axes=in_axes)(*args)
        return
    out_axes = int(rng.integers(-want[0].ndim, want[0].ndim)) if len(want) == 1 else 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", fg.VmapFallbackWarning)  # every row has a rule
        got = tree.flatten(fg.vmap(row.fun, in_axes=in_axes, out_axes=out_axes)(*args))[0]
    for g, w in zip(got, want, strict=True):
        assert type(g) is np.ndarray
        np.testing.assert_allclose(g, np.moveaxis(w, 0, out_axes % w.ndim), rtol=1e-10,
                                   atol=1e-12)


@pytest.mark.parametrize("k,row", list(enumerate(ROWS))[::4], ids=[r.name + r.id
                                                                 for r in ROWS[::4]])
def test_a_batch_of_one(k, row):
    case = _case(row, k, size=1)
    if case is None:
        pytest.skip("no non-empty shape")
    in_axes, args, one, _ = case
    want = _expected(one, 1)
    got = tree.flatten(fg.vmap(row.fun, in_axes=in_axes)(*args))[0]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("k,row", [(k, r) for k, r in enumerate(ROWS) if r.order >= 1],
                         ids=[r.name + r.id for r in ROWS if r.order >= 1])
def test_per_example_gradients_match_the_loop(k, row):
    case = _case(row, k)
    if case is None:
        pytest.skip("no non-empty shape")
    in_axes, args, one, _ = case

    def loss(*a):
        return sum(fnp.sum(o) for o in tree.flatten(row.fun(*a))[0])

    mapped = [i for i, ax in enumerate(in_axes) if ax is not None]
    g = fg.grad(loss, argnums=tuple(mapped))
    try:
        _expected(one)
    except ValueError:  # per-example results of different shapes (a value mask): refused
        with pytest.raises(fg.FuncgradError, match="different shapes"), pytest.warns(
                fg.VmapFallbackWarning):
            fg.vmap(g, in_axes=in_axes)(*args)
        return
    want = _expected(lambda b: one(b, g))
    with warnings.catch_warnings():
        warnings.simplefilter("error", fg.VmapFallbackWarning)
        got = tree.flatten(fg.vmap(g, in_axes=in_axes)(*args))[0]
    for a, w in zip(got, want, strict=True):
        np.testing.assert_allclose(a, w, rtol=1e-9, atol=1e-11)


STANDIN_ROWS = list(enumerate(ROWS))


@pytest.mark.parametrize("k,row", STANDIN_ROWS, ids=[r.name + r.id for _, r in STANDIN_ROWS])
def test_batching_rules_run_on_the_standin_device(k, row, standin):
    case = _case(row, k)
    if case is None:
        pytest.skip("no non-empty shape")
    in_axes, args, one, _ = case
    try:
        want = _expected(one)
    except ValueError:
        pytest.skip("results of different shapes per example")
    try:
        on_device = [standin.put(a) for a in args]
        eager = row.fun(*[standin.put(a[(slice(None),) * (ax % a.ndim) + (0,)])
                          if ax is not None else standin.put(a)
                          for a, ax in zip(args, in_axes, strict=True)])
    except standin.StrictnessError:
        pytest.skip("the row itself mixes host data with the device")
    del eager
    got = tree.flatten(fg.vmap(row.fun, in_axes=in_axes)(*on_device))[0]
    for g, w in zip(got, want, strict=True):
        assert type(g) is standin.StrictArray
        np.testing.assert_allclose(standin.get(g), w, rtol=1e-10, atol=1e-12)
    if row.order < 1:
        return

    def loss(*a):
        return sum(fnp.sum(o) for o in tree.flatten(row.fun(*a))[0])

    mapped = tuple(i for i, ax in enumerate(in_axes) if ax is not None)
    g = fg.grad(loss, argnums=mapped)
    want = _expected(lambda b: one(b, g))
    got = tree.flatten(fg.vmap(g, in_axes=in_axes)(*on_device))[0]  # per-example gradients
    for a, w in zip(got, want, strict=True):
        assert type(a) is standin.StrictArray
        np.testing.assert_allclose(standin.get(a), w, rtol=1e-9, atol=1e-11)


# -- compositions ----------------------------------------------------------------------

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
W = RNG.standard_normal((3, 3))


def f(x):
    return fnp.sum(fnp.tanh(W @ x) ** 2)


def loop(fun, xs):
    return np.stack([fun(x) for x in xs])


def test_per_example_gradients():
    np.testing.assert_allclose(fg.vmap(fg.grad(f))(X), loop(fg.grad(f), X), rtol=1e-12, atol=1e-14)
    # closed form: d/dx sum tanh(Wx)^2 = W^T (2 tanh (1 - tanh^2))
    t = np.tanh(X @ W.T)
    np.testing.assert_allclose(fg.vmap(fg.grad(f))(X), (2 * t * (1 - t * t)) @ W, rtol=1e-12)


def test_grad_of_a_sum_of_vmap():
    got = fg.grad(lambda xs: fnp.sum(fg.vmap(f)(xs)))(X)
    np.testing.assert_allclose(got, loop(fg.grad(f), X), rtol=1e-12, atol=1e-14)
    w = np.ones(3)  # closed over, and differentiated through the map
    got = fg.grad(lambda w: fnp.sum(fg.vmap(lambda x: fnp.sum(w * x) ** 2)(X)))(w)
    np.testing.assert_allclose(got, 2 * (X @ w) @ X, rtol=1e-12, atol=1e-14)


def test_second_order_through_vmap():
    h = fg.hessian(lambda xs: fnp.sum(fg.vmap(f)(xs)))(X)
    for i in range(4):
        np.testing.assert_allclose(h[i, :, i, :], fg.hessian(f)(X[i]), rtol=1e-12, atol=1e-14)
    fg.check_grads(lambda xs: fnp.sum(fg.vmap(f)(xs)), (X,), order=2)


def test_stop_gradient_inside_vmap_cuts_every_graph():
    got = fg.grad(lambda xs: fnp.sum(fg.vmap(lambda x: x * fg.stop_gradient(x))(xs)))(X)
    np.testing.assert_allclose(got, X)


def test_vmap_of_vmap_and_in_axes():
    np.testing.assert_allclose(fg.vmap(fg.vmap(lambda a: fnp.sin(a) * 2))(X), 2 * np.sin(X))
    dots = fg.vmap(fg.vmap(lambda a, b: fnp.sum(a * b), in_axes=(0, None)), in_axes=(None, 0))
    np.testing.assert_allclose(dots(X, X), X @ X.T, rtol=1e-12, atol=1e-14)


def test_jacobians_of_vmap_and_vmap_of_hessians():
    stacked = lambda xs: fnp.stack([f(xs[i]) for i in range(4)])
    want = fg.jacfwd(stacked)(X)
    np.testing.assert_allclose(fg.jacfwd(fg.vmap(f))(X), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fg.jacobian(fg.vmap(f))(X), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fg.vmap(fg.hessian(f))(X), loop(fg.hessian(f), X), rtol=1e-12)


def test_vmap_of_hvp_and_jvp():
    got = fg.vmap(lambda x, v: fg.hvp(f, (x,), (v,)))(X, X[::-1])
    np.testing.assert_allclose(got, np.stack([fg.hessian(f)(x) @ v for x, v in zip(X, X[::-1],
                                                                                   strict=True)]),
                               rtol=1e-12)
    got = fg.vmap(lambda x: fg.jvp(f, (x,), (x,))[1])(X)
    np.testing.assert_allclose(got, np.einsum("bi,bi->b", loop(fg.grad(f), X), X), rtol=1e-12)


def test_levels_are_never_confused():
    # The analogue of grad(lambda x: x * grad(lambda y: x + y)(1.0))(1.0) == 1.0: the inner
    # map's x is a constant of it, mapped only by the outer one.
    got = fg.vmap(lambda x: x * fnp.sum(fg.vmap(lambda y: x + y)(np.ones(2))))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(got, [1.0 * 2 * 2.0, 2.0 * 2 * 3.0])
    assert fg.grad(lambda x: x * fnp.sum(fg.vmap(lambda y: x + y)(np.ones(2))))(1.0) == 6.0
    # a gradient inside a map inside a gradient, closing over the outermost value
    inner = lambda w, x: fnp.sum(fg.grad(lambda v: fnp.sum(fnp.sin(v * x)))(w) ** 2)
    got = fg.grad(lambda w: fnp.sum(fg.vmap(lambda x: inner(w, x))(X)))(np.ones(3))
    want = fg.grad(lambda w: sum(inner(w, X[i]) for i in range(4)))(np.ones(3))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_with_checkpoint_custom_vjp_hooks_and_graphs():
    with warnings.catch_warnings():
        warnings.simplefilter("error", fg.VmapFallbackWarning)
        np.testing.assert_allclose(fg.vmap(fg.grad(fg.checkpoint(f)))(X), loop(fg.grad(f), X),
                                   rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(
            fg.grad(lambda xs: fnp.sum(fg.vmap(fg.checkpoint(f))(xs)))(X), loop(fg.grad(f), X),
            rtol=1e-12, atol=1e-14)

        @fg.custom_vjp
        def sq(x):
            return x * x

        sq.defvjp(lambda x: (x * x, x), lambda x, g: (2.0 * x * g,))
        np.testing.assert_allclose(fg.vmap(fg.grad(lambda x: fnp.sum(sq(x))))(X), 2 * X)
        np.testing.assert_allclose(fg.grad(lambda xs: fnp.sum(fg.vmap(sq)(xs)))(X), 2 * X)
    seen = []

    class Count(fg.BackwardHook):
        def backward_postprocess(self, node, in_values, out_grads, in_grads):
            seen.append(node.primitive.name)

    with fg.hooks(Count()):
        fg.vmap(fg.grad(f))(X)
    assert len(seen) == len(set(seen)) * 1 and seen  # one batched backward: no step twice
    with fg.backprop_scope("bp") as bp:
        x = fg.require_grad(X, bp)
        y = fg.vmap(lambda r: fnp.sum(r ** 3))(x)
        assert fg.is_grad_required(y, bp)
        g = fg.backprop([fnp.sum(y)], [x], backprop_id=bp)[x]
    np.testing.assert_allclose(g, 3 * X ** 2)


def test_replayed_per_example_gradients_are_one_plan_of_batched_calls():
    lengths = []
    for n in (4, 16):
        xs = RNG.standard_normal((n, 3))
        r = fg.replay(fg.vmap(fg.grad(f)))
        r(xs)
        np.testing.assert_allclose(r(xs + 1), loop(fg.grad(f), xs + 1), rtol=1e-12, atol=1e-14)
        assert r.stats.hits == 1
        lengths.append(len(r.plans[0]))
    assert lengths[0] == lengths[1]  # as many steps for 16 examples as for 4


def test_axes_kwargs_axis_size_and_chunks():
    np.testing.assert_allclose(fg.vmap(lambda x: fnp.outer(x, x), out_axes=1)(X),
                               np.stack([np.outer(x, x) for x in X], 1))
    np.testing.assert_allclose(fg.vmap(lambda x: x.sum(), in_axes=-1)(X), X.sum(0))
    np.testing.assert_allclose(fg.vmap(lambda x, y=None: x * y)(X, y=X), X * X)
    np.testing.assert_allclose(fg.vmap(lambda: fnp.ones(2), axis_size=3)(), np.ones((3, 2)))
    tree_in = {"a": X, "b": (X[0], X)}
    got = fg.vmap(lambda t: t["a"] + t["b"][0] * t["b"][1], in_axes=({"a": 0, "b": (None, 0)},))
    np.testing.assert_allclose(got(tree_in), X + X[0] * X)
    out = fg.vmap(lambda x: (x, fnp.sum(W)), out_axes=(1, None))(np.ones((2, 3)))
    assert out[0].shape == (3, 2) and out[1].shape == ()
    for c in (1, 3, 4, 10):
        np.testing.assert_allclose(fg.vmap(fg.grad(f), chunk_size=c)(X), loop(fg.grad(f), X),
                                   rtol=1e-12, atol=1e-14)
    same = fg.vmap(lambda x: x)(X)
    assert same is not X and not np.shares_memory(same, X)


def test_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="different sizes.*argument 0: 4.*argument 1: 3"):
        fg.vmap(lambda a, b: a + b)(X, X.T)
    with pytest.raises(ValueError, match="argument 0 is mapped along axis 2"):
        fg.vmap(lambda a: a, in_axes=2)(X)
    with pytest.raises(ValueError, match="axis_size"):
        fg.vmap(lambda a: a, in_axes=None)(X)
    with pytest.raises(ValueError, match="in_axes has 2 entries for 1"):
        fg.vmap(lambda a: a, in_axes=(0, 0))(X)
    with pytest.raises(ValueError, match="out_axes gives it None"):
        fg.vmap(lambda a: a, out_axes=None)(X)
    with pytest.raises(TypeError, match="in_axes must be an int"):
        fg.vmap(lambda a: a, in_axes="0")
    with pytest.raises(ValueError, match="chunk_size"):
        fg.vmap(lambda a: a, chunk_size=0)


@pytest.mark.parametrize("read", [
    lambda x: x if x.sum() > 0 else -x,
    lambda x: float(x.sum()),
    lambda x: int(x[0]),
    lambda x: x.sum().item(),
    lambda x: [1.0, 2.0][x[0].astype(int)],
    lambda x: bool(fnp.all(x > 0)),
])
def test_python_control_flow_on_a_batched_value_raises(read):
    with pytest.raises(fg.BatchedValueError, match="fnp.where"):
        fg.vmap(read)(X)
    assert issubclass(fg.BatchedValueError, TypeError)


def test_a_library_that_reads_a_batched_value_as_an_array_is_refused():
    with pytest.raises(fg.BatchedValueError, match="converted to a NumPy array"):
        fg.vmap(lambda x: fnp.random.default_rng(0).normal(loc=x))(X)
    with pytest.raises(fg.BatchedValueError, match="converted to a NumPy array"):
        fg.vmap(lambda x: np.asarray(x))(X)


def test_the_error_names_the_primitive_that_made_the_value():
    with pytest.raises(fg.BatchedValueError, match=r"float\(\) of a value .*result of 'sum'"):
        fg.vmap(lambda x: float(fnp.sum(x)))(X)


def test_a_primitive_without_a_rule_loops_with_a_warning_and_defbatch_replaces_it():
    calls = []

    def impl(x):
        calls.append(x.shape)
        return np.cumsum(x[::-1])[::-1] * 1.0

    rev = fg.primitive(impl)
    fg.defvjp(rev, lambda g, ans, x: fnp.cumsum(g))
    with pytest.warns(fg.VmapFallbackWarning, match="'impl' has no batching rule"):
        got = fg.vmap(rev)(X)
    np.testing.assert_allclose(got, loop(impl, X))
    assert calls[-4:] == [(3,)] * 4
    with pytest.warns(fg.VmapFallbackWarning):
        g = fg.vmap(fg.grad(lambda x: fnp.sum(rev(x) ** 2)))(X)
    np.testing.assert_allclose(g, loop(fg.grad(lambda x: fnp.sum(rev(x) ** 2)), X))
    fg.defbatch(rev, lambda args, axes: (_rev_rule(args[0], axes[0]), 0))
    want = loop(impl, X)
    calls.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", fg.VmapFallbackWarning)
        np.testing.assert_allclose(fg.vmap(rev)(X), want)
    assert calls == []  # the rule, in fnp, never called the primitive's own function
    with pytest.raises(TypeError, match="primitive"):
        fg.defbatch(lambda x: x, lambda args, axes: None)
    fg.defbatch(rev, lambda args, axes: (_rev_rule(args[0], axes[0]), -2))  # negative: fine
    np.testing.assert_allclose(fg.vmap(rev)(X), want)
    fg.defbatch(rev, lambda args, axes: (_rev_rule(args[0], axes[0]), 2))
    with pytest.raises(ValueError, match="returned out_axis 2 for a result of shape"):
        fg.vmap(rev)(X)


def _rev_rule(x, axis):
    x = fnp.moveaxis(x, axis, 0)
    return fnp.flip(fnp.cumsum(fnp.flip(x, 1), axis=1), 1)


# -- vectorized Jacobians ---------------------------------------------------------------


def _count_calls(fun, *args):
    """How many times library primitives run (NumPy functions called) during ``fun``."""
    import gc

    prims = [p for p in gc.get_objects() if isinstance(p, Primitive) and p.library]
    count = [0]
    saved = []
    for p in prims:
        for field in ("impl", "numpy_impl"):
            f0 = getattr(p, field)

            def counted(*a, _f=f0, **k):
                count[0] += 1
                return _f(*a, **k)

            saved.append((p, field, f0))
            object.__setattr__(p, field, counted)
    try:
        fun(*args)
    finally:
        for p, field, f0 in saved:
            object.__setattr__(p, field, f0)
    return count[0]


def test_hessian_makes_as_many_batched_calls_for_200_inputs_as_for_20():
    def make(n):
        w = np.random.default_rng(n).standard_normal((n, n)) / n
        return lambda x: fnp.sum(fnp.tanh(w @ x))

    counts = [_count_calls(fg.hessian(make(n)), np.ones(n)) for n in (20, 200)]
    assert counts[0] == counts[1] < 200, counts
    n = 7
    w = np.random.default_rng(n).standard_normal((n, n)) / n
    x = np.linspace(-1, 1, n)
    t = np.tanh(w @ x)
    closed = w.T @ np.diag(-2 * t * (1 - t * t)) @ w
    np.testing.assert_allclose(fg.hessian(make(n))(x), closed, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(fg.hessian(make(n), chunk_size=3)(x), closed, rtol=1e-12,
                               atol=1e-15)


def test_jacobians_agree_with_each_other_and_chunks():
    fun = lambda x, y: {"a": fnp.tanh(W @ x) * y[0], "b": fnp.sum(x * y[1:])}
    x, y = X[0], np.arange(4.0)
    for argnums in (0, 1, (0, 1)):
        rev = fg.jacobian(fun, argnums)(x, y)
        for other in (fg.jacfwd(fun, argnums)(x, y), fg.jacobian(fun, argnums, chunk_size=2)(x, y),
                      fg.jacfwd(fun, argnums, chunk_size=1)(x, y)):
            for a, b in zip(tree.flatten(rev)[0], tree.flatten(other)[0], strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    j = fg.jacobian(lambda x: fnp.tanh(W @ x))(x)
    np.testing.assert_allclose(j, (1 - np.tanh(W @ x) ** 2)[:, None] * W, rtol=1e-12, atol=1e-14)
    assert fg.jacobian(lambda x: x[:0])(x).shape == (0, 3)
    assert fg.jacfwd(lambda x: x * 2)(np.ones(0)).shape == (0, 0)


def test_per_example_gradients_of_dask_arrays_stay_lazy():
    da = pytest.importorskip("dask.array")
    xs = da.from_array(X, chunks=2)
    out = fg.vmap(fg.grad(lambda x: fnp.sum(fnp.sin(x) * x)))(xs)
    assert isinstance(out, da.Array)
    np.testing.assert_allclose(out.compute(), np.cos(X) * X + np.sin(X), rtol=1e-12, atol=1e-14)


def test_debug_nans_and_graphs_see_the_whole_batch():
    with fg.debug_nans(), np.errstate(invalid="ignore"):
        np.testing.assert_allclose(fg.vmap(fg.grad(lambda x: fnp.sum(fnp.sin(x))))(X),
                                   np.cos(X))
        bad = np.abs(X) + 0.1
        bad[2, 1] = -1.0  # one example's square root of a negative number
        with pytest.raises(FloatingPointError, match="'sqrt'"):
            fg.vmap(fg.grad(lambda x: fnp.sum(fnp.sqrt(x))))(bad)
    graph = fg.trace(fg.vmap(lambda x: fnp.sin(x) * 2.0), X)
    assert sorted(n.primitive.name for n in graph.nodes if n.primitive) == ["multiply", "sin"]


def test_implicit_solves_under_vmap_are_right_or_refused():
    d = np.array([2.0, 4.0, 5.0])
    bs = RNG.standard_normal((4, 3))

    def f(b):  # the solve is raw code: it sees one example at a time
        x = fg.custom_linear_solve(lambda v: d * v, b, lambda mv, r: np.asarray(r) / d,
                                   symmetric=True)
        return fnp.sum(x ** 2)

    np.testing.assert_allclose(fg.vmap(f)(bs), np.sum((bs / d) ** 2, axis=1), rtol=1e-13)
    # the raw solve of a gradient would see every example at once: mapped as a loop
    np.testing.assert_allclose(fg.vmap(fg.grad(f))(bs), 2 * bs / d ** 2, rtol=1e-13)
    # Jacobians and Hessians take one basis vector at a time where a rule cannot batch
    np.testing.assert_allclose(fg.hessian(f)(bs[0]), np.diag(2 / d ** 2), rtol=1e-13)
    # a gradient through a map of a solver: refused, never a lost derivative
    with pytest.raises(fg.BatchedValueError, match="custom_linear_solve inside fg.vmap"):
        fg.grad(lambda bs: fnp.sum(fg.vmap(f)(bs)))(bs)
