"""The GPU's code paths, walked on the CPU through the strict stand-in device (issue 7).

``tests/standin.py``'s ``StrictArray`` computes with NumPy underneath but
refuses what CuPy refuses, and more: Nodes in raw code, NumPy arrays beside
its own, implicit conversions.  Everything here runs on it -- the whole
primitive table with the stand-in array in every argument position, every
combinator, ``fg.backprop``, hooks, NaN checks, graph display, indexing,
``fg.nn`` and an MLP trained a few steps -- and is compared with the NumPy run
of the same computation, to rounding.  Results must be ``StrictArray``\\ s of
the inputs' dtypes; mixing NumPy float arrays with stand-in arrays must raise
``fg.DeviceMismatchError`` naming both devices.
"""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
from table import load_rows

import funcgrad as fg
import funcgrad.numpy as fnp

ROWS = load_rows()

# Same NumPy kernels underneath, but not always the same calls (NumPy fast
# paths, NumPy's own wrappers): agreement to a few ulps, not bit for bit.
TOL = {np.dtype("float64"): (1e-12, 1e-13), np.dtype("float32"): (2e-6, 1e-6)}


def _host(x):
    """A NumPy copy of a stand-in or NumPy array (or number)."""
    import standin

    return standin.get(x) if type(x) is standin.StrictArray else np.asarray(x)


def assert_on_device(tree, dtypes=None):
    """Every leaf of ``tree`` a StrictArray (of the matching dtype in ``dtypes``)."""
    import standin

    leaves = fg.tree.flatten(tree)[0]
    for k, leaf in enumerate(leaves):
        assert type(leaf) is standin.StrictArray, f"leaf {k} is a {type(leaf).__name__}"
    if dtypes is not None:
        for k, (leaf, d) in enumerate(zip(leaves, dtypes, strict=True)):
            assert leaf.dtype == np.dtype(d), f"leaf {k}: dtype {leaf.dtype}, expected {d}"


def assert_same(dev, host, what=""):
    """``dev`` (stand-in results) on the device, equal to ``host`` (NumPy's) to rounding."""
    dev_leaves, dev_def = fg.tree.flatten(dev)
    host_leaves, host_def = fg.tree.flatten(host)
    assert dev_def == host_def, f"{what}: structure {dev_def} vs {host_def}"
    assert_on_device(dev, [np.asarray(h).dtype for h in host_leaves])
    for k, (d, h) in enumerate(zip(dev_leaves, host_leaves, strict=True)):
        h = np.asarray(h)
        rtol, atol = TOL.get(h.dtype, (1e-12, 1e-13))
        np.testing.assert_allclose(_host(d), h, rtol=rtol, atol=atol, err_msg=f"{what} leaf {k}")


# --- the primitive table ------------------------------------------------------------
# Each row runs with every non-empty set of its arguments traced; the others are
# raw stand-in constants closed over, so the stand-in array stands first, last and
# in the middle of the arguments, beside Nodes and alone.


def _traced_sets(n: int) -> list:
    return [s for k in range(n, 0, -1) for s in itertools.combinations(range(n), k)]


def _table_cases():
    for row in ROWS:
        for shapes in row.shapes:
            for dtype in row.dtypes:
                if dtype not in ("float32", "float64"):
                    continue
                n = len(row.inputs(np.random.default_rng(0), dtype, shapes))  # make= may differ
                for traced in _traced_sets(n):
                    label = f"{row.name}{('-' + row.id) if row.id else ''}-{shapes}-{dtype}"
                    if n > 1:
                        label += "-traced" + "".join(map(str, traced))
                    yield pytest.param(row, shapes, dtype, traced, id=label)


TABLE_CASES = list(_table_cases())


def _representative(row):
    """The shapes of ``row`` checked against finite differences: the first without a
    size-0 argument."""
    return next((s for s in row.shapes if all(np.prod(x) > 0 for x in s)), row.shapes[0])


def _closing(fun, args, traced):
    """``fun`` of the ``traced`` arguments, the others fixed at their values in ``args``."""

    def partial(*xs):
        full = list(args)
        for i, x in zip(traced, xs, strict=True):
            full[i] = x
        return fun(*full)

    return partial


def _derivatives(fun, xs, row, rng, put):
    """First- and second-order derivatives of ``fun`` at ``xs`` along random directions
    drawn from ``rng`` (the same draws on both devices), as one tree."""
    out = fun(*xs)
    u = fg.tree.tree_map(lambda o: put(rng.standard_normal(np.shape(o)), o.dtype), out)
    t = tuple(put(rng.standard_normal(x.shape), x.dtype) for x in xs)
    found = {}
    if "rev" in row.modes:
        value, vjp_fn = fg.vjp(fun, *xs)
        found["value"] = value
        found["vjp"] = vjp_fn(u)
        if row.order >= 2:  # reverse over reverse: the vjp of x -> vjp(u), along t
            found["vjp2"] = fg.vjp(lambda *a: fg.vjp(fun, *a)[1](u), *xs)[1](t)
    if "fwd" in row.modes:
        value, found["jvp"] = fg.jvp(fun, xs, t)
        if row.order >= 2:  # forward over forward
            found["jvp2"] = fg.jvp(lambda *a: fg.jvp(fun, a, t)[1], xs, t)[1]
    return found


@pytest.mark.parametrize("row, shapes, dtype, traced", TABLE_CASES)
def test_row_on_the_standin(standin, row, shapes, dtype, traced):
    seed = abs(zlib.crc32(f"{row.name}{row.id}{shapes}".encode())) % 2**32
    host = row.inputs(np.random.default_rng(seed), dtype, shapes)
    dev = tuple(standin.put(a) for a in host)
    # Raw stand-in arrays alone: the namespace's path, no Node anywhere.
    assert_same(row.fun(*dev), row.fun(*host), "raw value")
    fun_dev, fun_host = _closing(row.fun, dev, traced), _closing(row.fun, host, traced)
    xs_dev = tuple(dev[i] for i in traced)
    xs_host = tuple(host[i] for i in traced)
    if dtype == "float64" and shapes == _representative(row):
        # Against finite differences, every order and mode mixed, once per row and set
        # of traced arguments: check_grads' own paths (traced tangents and cotangents)
        # on the device.  Every case is held to NumPy's run, below, more tightly; the
        # NumPy table checks that run against finite differences.
        fg.check_grads(fun_dev, xs_dev, order=row.order, modes=row.modes, rtol=row.rtol,
                       atol=row.atol)
    found_dev = _derivatives(fun_dev, xs_dev, row, np.random.default_rng(seed),
                             lambda a, d: standin.put(a, d))
    found_host = _derivatives(fun_host, xs_host, row, np.random.default_rng(seed),
                              lambda a, d: np.asarray(a, d))
    for what in found_host:
        assert_same(found_dev[what], found_host[what], what)


# --- combinators --------------------------------------------------------------------
# Each case runs one combinator on stand-in arrays and on the same NumPy arrays; the
# results must agree and live on the stand-in device.


def _f(x, y):
    """Two arguments: a matrix product, broadcasting, indexing, a reduction."""
    return fnp.sum(fnp.tanh(x @ y) * fnp.exp(-y[0]) + fnp.sin(x[:, :1]))


def _vec(x, y):
    """A vector of both arguments."""
    return fnp.concatenate([fnp.sin(x).ravel() * y[0, 0], fnp.cumsum(y ** 2, axis=0)[-1]])


def _custom():
    @fg.custom_vjp
    def smooth(x):
        return fnp.log1p(fnp.exp(x))

    def fwd(x):
        s = fg.nn.sigmoid(x)
        return fnp.log1p(fnp.exp(x)), s

    smooth.defvjp(fwd, lambda s, g: (g * s,))
    return smooth


def _combinator_cases():
    ck = fg.checkpoint(lambda x, y: fnp.sum(fnp.exp(x @ y) * y[0]))
    smooth = _custom()
    return {
        "grad": lambda x, y: fg.grad(_f)(x, y),
        "grad-argnums": lambda x, y: fg.grad(_f, argnums=(0, 1))(x, y),
        "grad-has_aux": lambda x, y: fg.grad(lambda a, b: (_f(a, b), {"h": a * 2, "b": b}),
                                             has_aux=True)(x, y),
        "grad-unused-input": lambda x, y: fg.grad(lambda a, b: fnp.sum(a * a),
                                                  argnums=(0, 1))(x, y),
        "value_and_grad": lambda x, y: fg.value_and_grad(_f, argnums=1)(x, y),
        "value_and_grad-has_aux": lambda x, y: fg.value_and_grad(
            lambda a, b: (_f(a, b), a[0]), argnums=(0, 1), has_aux=True)(x, y),
        "vjp": lambda x, y: _vjp_with(_vec, x, y),
        "vjp-pytree": lambda x, y: _vjp_with(lambda p: {"v": _vec(p["x"], p["y"]),
                                                        "s": (p["x"] * 3.0,)}, {"x": x, "y": y}),
        "jvp": lambda x, y: fg.jvp(_vec, (x, y), (fnp.cos(x), fnp.sin(y))),
        "jvp-constant-output": lambda x, y: fg.jvp(lambda a: (a * 2.0, y + 1.0), (x,),
                                                   (fnp.cos(x),)),
        "jacobian": lambda x, y: fg.jacobian(_vec, argnums=(0, 1))(x, y),
        "jacrev": lambda x, y: fg.jacrev(_vec)(x, y),
        "jacfwd": lambda x, y: fg.jacfwd(_vec, argnums=(0, 1))(x, y),
        "jacobian-empty-output": lambda x, y: fg.jacobian(lambda a: a[:0] * 2.0)(x),
        "jacfwd-empty-output": lambda x, y: fg.jacfwd(lambda a: a[:0] * 2.0)(x),
        "jacobian-empty-input": lambda x, y: fg.jacobian(lambda a: fnp.sum(a) + y)(x[:0]),
        "jacfwd-empty-input": lambda x, y: fg.jacfwd(lambda a: fnp.sum(a) + y)(x[:0]),
        "hessian": lambda x, y: fg.hessian(lambda a: _f(a, y))(x),
        "hessian-argnums": lambda x, y: fg.hessian(_f, argnums=(0, 1))(x, y),
        "hvp": lambda x, y: fg.hvp(_f, (x, y), (fnp.cos(x), y * 0.5)),
        "stop_gradient": lambda x, y: fg.grad(
            lambda a: fnp.sum(a * fg.stop_gradient(a * y[:, 0]) + a))(x),
        "checkpoint": lambda x, y: fg.grad(ck, argnums=(0, 1))(x, y),
        "checkpoint-jvp": lambda x, y: fg.jvp(ck, (x, y), (fnp.cos(x), y)),
        "checkpoint-order2": lambda x, y: fg.hessian(lambda a: ck(a, y))(x),
        "checkpoint-closure": lambda x, y: fg.grad(
            lambda b: fg.checkpoint(lambda a: fnp.sum(fnp.exp(a @ b)))(x))(y),
        "custom_vjp": lambda x, y: fg.grad(lambda a: fnp.sum(smooth(a) * y[:, 0]))(x),
        "custom_vjp-jvp": lambda x, y: fg.jvp(smooth, (x,), (fnp.cos(x),)),
        "custom_vjp-order2": lambda x, y: fg.hessian(lambda a: fnp.sum(smooth(a)))(x),
        "custom_vjp-plain-call": lambda x, y: smooth(x),
        "grad-of-grad": lambda x, y: fg.grad(lambda a: fnp.sum(fg.grad(_f)(a, y) ** 2))(x),
        "jacfwd-of-jacrev": lambda x, y: fg.jacfwd(fg.jacrev(lambda a: fnp.sin(a) * y[0, 0]))(
            x[0]),
        "nested-levels": lambda x, y: fg.grad(
            lambda a: fnp.sum(a * fg.grad(lambda b: fnp.sum(a * b))(y[:, 0])))(x),
    }


def _vjp_with(fun, *args):
    out, vjp_fn = fg.vjp(fun, *args)
    ct = fg.tree.tree_map(lambda o: fnp.cos(o) + 0.5, out)  # cotangents on o's device
    return out, vjp_fn(ct)


COMBINATORS = _combinator_cases()


def _implicit_cases():
    """custom_jvp, linearize, elementwise_grad, custom_root, custom_linear_solve (issues 18, 20)."""

    @fg.custom_jvp
    def soft(x):
        return fnp.log1p(fnp.exp(x))

    soft.defjvp(lambda p, t: (soft(p[0]), t[0] * fg.nn.sigmoid(p[0])))

    def newton(f, x):
        for _ in range(30):
            x = x - f(x) / fg.elementwise_grad(f)(x)
        return x

    def root(a):  # x^3 + x = a, entrywise
        return fg.custom_root(lambda x: x ** 3 + x - a, fnp.zeros_like(a), newton,
                              lambda g, y: fnp.linalg.solve(fg.jacobian(g)(y), y))

    def lsolve(x, y):
        A = x @ y + 3.0 * fnp.eye(3, like=x)
        return fg.custom_linear_solve(lambda v: A @ v, y[0], lambda mv, b: fnp.linalg.solve(
            fg.value_of(A), b), lambda vm, b: fnp.linalg.solve(fg.value_of(A).T, b))

    return {
        "custom_jvp": lambda x, y: fg.grad(lambda a: fnp.sum(soft(a) * y[:, 0]))(x),
        "custom_jvp-jvp": lambda x, y: fg.jvp(soft, (x,), (fnp.cos(x),)),
        "custom_jvp-order2": lambda x, y: fg.hessian(lambda a: fnp.sum(soft(a)))(x),
        "linearize": lambda x, y: fg.linearize(_vec, x, y)[1](fnp.cos(x), fnp.sin(y)),
        "elementwise_grad": lambda x, y: fg.elementwise_grad(lambda a: fnp.tanh(a) * a)(x),
        "custom_root": lambda x, y: fg.jacobian(root)(y[0]),
        "custom_root-order2": lambda x, y: fg.hessian(lambda a: fnp.sum(root(a)))(y[0]),
        "custom_linear_solve": lambda x, y: fg.grad(lambda a, b: fnp.sum(lsolve(a, b) ** 2),
                                                    argnums=(0, 1))(x, y),
    }


COMBINATORS.update(_implicit_cases())


def _xy(dtype):
    rng = np.random.default_rng(7)
    return (rng.standard_normal((3, 2)).astype(dtype), rng.standard_normal((2, 3)).astype(dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(COMBINATORS))
def test_combinator_on_the_standin(standin, name, dtype):
    x, y = _xy(dtype)
    run = COMBINATORS[name]
    found = run(standin.put(x), standin.put(y))
    assert_on_device(found, [dtype] * len(fg.tree.flatten(found)[0]))
    assert_same(found, run(x, y), name)


# --- fg.backprop: seeds, loss_scale, double backprop, several graphs ------------------


def _graph(standin, dtype="float64"):
    x = fg.require_grad(standin.put([0.5, -1.0, 2.0], dtype))
    w = fg.require_grad(standin.put([1.5, 0.5, -0.5], dtype))
    y = fnp.sin(x) * w
    return x, w, y, fnp.sum(y * y)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_backprop_default_seed_and_loss_scale_stay_on_the_device(standin, dtype):
    x, w, _, s = _graph(standin, dtype)
    plain = fg.backprop([s], [x, w])
    for scale in (4.0, np.float32(4.0), 4, np.array(4.0), standin.put(4.0, "float64")):
        scaled = fg.backprop([s], [x, w], loss_scale=scale)
        assert_on_device([scaled[x], scaled[w]], [dtype, dtype])
        np.testing.assert_allclose(_host(scaled[x]), 4 * _host(plain[x]), rtol=1e-6)
    xv, wv = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.5, -0.5])
    np.testing.assert_allclose(_host(plain[x]), 2 * (np.sin(xv) * wv) * wv * np.cos(xv),
                               rtol=1e-6)


def test_backprop_seeds_on_the_device(standin):
    x, _, y, _ = _graph(standin)
    seed = standin.put([1.0, 2.0, 3.0])
    g = fg.backprop([y], [x], grad_outputs=[seed])[x]
    assert_on_device(g, ["float64"])
    xv, wv = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.5, -0.5])
    expected = np.array([1.0, 2.0, 3.0]) * wv * np.cos(xv)
    np.testing.assert_allclose(_host(g), expected, rtol=1e-12)
    # a Python list or number seed is data: it goes to the output's device
    g = fg.backprop([y], [x], grad_outputs=[[1.0, 2.0, 3.0]])[x]
    assert_on_device(g, ["float64"])
    np.testing.assert_allclose(_host(g), expected, rtol=1e-12)


def test_backprop_a_numpy_seed_for_a_device_output_is_a_device_mismatch(standin):
    x, _, y, _ = _graph(standin)
    with pytest.raises(fg.DeviceMismatchError) as info:
        fg.backprop([y], [x], grad_outputs=[np.ones(3)])
    assert "cpu" in str(info.value) and standin.DEVICE in str(info.value)


def test_double_backprop_on_the_device(standin):
    x, w, _, s = _graph(standin)
    gx = fg.backprop([s], [x], enable_double_backprop=True)[x]
    assert type(gx) is fg.Node and type(gx.value) is standin.StrictArray
    h = fg.backprop([fnp.sum(gx)], [x, w])
    assert_on_device([h[x], h[w]], ["float64", "float64"])
    # the same on NumPy
    xn = fg.require_grad(np.array([0.5, -1.0, 2.0]))
    wn = fg.require_grad(np.array([1.5, 0.5, -0.5]))
    sn = fnp.sum((fnp.sin(xn) * wn) ** 2)
    hn = fg.backprop([fnp.sum(fg.backprop([sn], [xn], enable_double_backprop=True)[xn])],
                     [xn, wn])
    assert_same([h[x], h[w]], [hn[xn], hn[wn]])


def test_several_graphs_on_the_device(standin):
    # API.md §4's example, with every array on the stand-in
    with fg.backprop_scope("bp_y") as bp_y, fg.backprop_scope("bp_x") as bp_x:
        x = fg.require_grad(fnp.full((), 2.0, "float32", like=standin.put(0.0)), bp_x)
        y = fg.require_grad(standin.put(3.0, "float32"), bp_y)
        z = x * (x + y)
        gx = fg.backprop([z], [x], backprop_id=bp_x)[x]
        assert not fg.is_grad_required(gx, bp_x) and fg.is_grad_required(gx, bp_y)
        assert type(gx.value) is standin.StrictArray
        gy = fg.value_of(fg.backprop([x * gx], [y], backprop_id=bp_y)[y])
    assert_on_device(gy, ["float32"])
    assert _host(gy).tolist() == 2.0


# --- hooks, debug_nans, graph display -----------------------------------------------


class _Types(fg.BackwardHook):
    def __init__(self):
        self.seen = []

    def backward_preprocess(self, node, in_values, out_grads):
        self.seen.append(("pre", node.primitive.name, in_values, out_grads))

    def backward_postprocess(self, node, in_values, out_grads, in_grads):
        self.seen.append(("post", node.primitive.name, in_values, out_grads, in_grads))


def test_hooks_see_stand_in_arrays(standin):
    import io

    rec, timer, out = _Types(), fg.TimerHook(), io.StringIO()
    x, y = (standin.put(a) for a in _xy("float64"))
    with fg.hooks(timer):
        g = fg.grad(_f, argnums=(0, 1))(x, y)
        fg.grad(_f)(x, y)
    x2, w, _, s = _graph(standin)
    fg.backprop([s], [x2, w], hooks=[rec, fg.PrintHook(out)])
    assert_on_device(g)
    assert rec.seen and {e[1] for e in rec.seen} >= {"sum", "multiply", "sin"}
    for entry in rec.seen:
        values = [v for v in entry[2] if hasattr(v, "shape")]  # arrays among the arguments
        grads = [v for part in entry[3:] for v in part if v is not None]
        assert values and grads
        for v in values + grads:
            assert type(v) is standin.StrictArray, (entry[1], type(v))
    names = [name for name, _, _ in timer.rows()]
    assert {"sum", "matmul", "tanh", "exp", "getitem"} <= set(names)
    assert "matmul" in timer.summary()
    printed = out.getvalue()
    assert "backward sum" in printed and "backward multiply" in printed


def test_debug_nans_on_the_device(standin):
    x = standin.put([1.0, 0.0, 4.0])
    with fg.debug_nans():
        g = fg.grad(lambda v: fnp.sum(fnp.sqrt(v + 1.0)))(x)  # finite: quiet
        assert_on_device(g, ["float64"])
        with pytest.raises(FloatingPointError, match="sqrt"), np.errstate(divide="ignore"):
            fg.grad(lambda v: fnp.sum(fnp.sqrt(v)))(x)  # 1 / (2 sqrt 0)
    with np.errstate(divide="ignore"):
        assert_on_device(fg.grad(lambda v: fnp.sum(fnp.sqrt(v)))(x), ["float64"])  # off again


def test_trace_and_graph_display_on_the_device(standin):
    x, y = (standin.put(a) for a in _xy("float64"))
    g = fg.trace(_f, x, y)
    assert all(type(n.value) is standin.StrictArray for n in g)
    text, dot, page = str(g), g.to_dot(), g._repr_html_()
    for name in ("matmul", "tanh", "getitem", "sum"):
        assert name in text and name in dot and name in page
    assert "(3, 2)" in text and "float64" in text
    # the graph folds like any other, on the device
    grads = fg.backprop(g.outputs, g.inputs, backprop_id=g.backprop_id)
    assert_same([grads[n] for n in g.inputs], list(fg.grad(_f, argnums=(0, 1))(*_xy("float64"))))
    # and its gradient flow is measured and drawn on the device too
    flow = g.with_gradients()
    assert all(type(flow.gradients[n]) is standin.StrictArray for n in g.inputs)
    assert {flow.status(n) for n in g} <= {"finite", "zero"} and "<svg" in flow.to_svg()
    assert "class='node'" in g.to_svg(engine="funcgrad")


# --- indexing with index arrays ------------------------------------------------------


def _indexings():
    rows, mask = np.array([2, 0, 2, 1]), np.array([True, False, True])
    return {
        "int-array": lambda v: v[rows],
        "int-array-2d": lambda v: v[np.array([[0, 2], [2, 2]]), 1],
        "bool-mask": lambda v: v[mask],
        "bool-mask-axis1": lambda v: v[:, np.array([False, True])],
        "mixed": lambda v: v[rows[:2], np.array([1, 1])],
        "list": lambda v: v[[1, 1, 0]],
        "value-mask": lambda v: v[v > 0],
        "take": lambda v: fnp.take(v, rows, axis=0),
        "take-flat": lambda v: fnp.take(v, np.array([5, 0, 5]), mode="clip"),
        "take-wrap": lambda v: fnp.take(v, [7, -1], axis=0, mode="wrap"),
        "repeat": lambda v: fnp.repeat(v, np.array([2, 0, 1]), axis=0),
        "device-index": lambda v: v[fnp.argmax(v, axis=0)],
        # x.at[i].set(v) / .add(v), as functions (raw arrays have no .at)
        "index_update": lambda v: fnp.index_update(v, np.array([0, 2]), v[1] * 2.0),
        "index_update-mask": lambda v: fnp.index_update(v, mask, 0.5),
        "index_update-add-repeats": lambda v: fnp.index_update(v, rows, v[rows[::-1]] ** 2,
                                                               add=True),
        "index_update-add-list": lambda v: fnp.index_update(v, ([0, 0], 1), v[1, 0], add=True),
    }


INDEXINGS = _indexings()


@pytest.mark.parametrize("name", list(INDEXINGS))
def test_numpy_index_data_moves_to_the_device(standin, name):
    index = INDEXINGS[name]
    x = np.random.default_rng(3).standard_normal((3, 2))
    xd = standin.put(x)

    def f(v):
        return fnp.sum(fnp.sin(index(v)) * 1.5)

    assert_same(index(fg.require_grad(xd)).value, index(fg.require_grad(x)).value, "value")
    assert_same(fg.grad(f)(xd), fg.grad(f)(x), "gradient")
    t = np.ones_like(x)
    assert_same(fg.jvp(f, (xd,), (standin.put(t),)), fg.jvp(f, (x,), (t,)), "tangent")
    assert_same(fg.hessian(f)(xd), fg.hessian(f)(x), "hessian")
    fg.check_grads(f, (xd,), order=2)


def test_a_float_index_array_from_another_device_is_a_device_mismatch(standin):
    xd = standin.put(np.ones(3))
    with pytest.raises(fg.DeviceMismatchError) as info:
        fg.grad(lambda v: fnp.sum(v[np.array([0.0, 1.0])]))(xd)
    assert "cpu" in str(info.value) and standin.DEVICE in str(info.value)
    # and a device index for a NumPy array
    with pytest.raises(fg.DeviceMismatchError) as info:
        fg.grad(lambda v: fnp.sum(v[standin.put([0, 1])]))(np.ones(3))
    assert "cpu" in str(info.value) and standin.DEVICE in str(info.value)


# --- fg.nn and an MLP trained on the device --------------------------------------------


def _nn_cases():
    nn = fg.nn
    labels = np.array([2, 0, 1, 1])
    return {
        "sigmoid": lambda z: nn.sigmoid(z),
        "relu": lambda z: nn.relu(z),
        "softplus": lambda z: nn.softplus(z),
        "logsumexp": lambda z: nn.logsumexp(z, axis=1),
        "log_softmax": lambda z: nn.log_softmax(z),
        "softmax": lambda z: nn.softmax(z, axis=0),
        "cross_entropy-numpy-labels": lambda z: nn.softmax_cross_entropy(z, labels),
        "cross_entropy-list-labels": lambda z: nn.softmax_cross_entropy(z, [2, 0, 1, 1]),
    }


NN = _nn_cases()


@pytest.mark.parametrize("name", list(NN))
def test_nn_on_the_device(standin, name):
    fun = NN[name]
    z = np.random.default_rng(5).standard_normal((4, 3)) * 3
    zd = standin.put(z)
    assert_same(fun(zd), fun(z), "value")  # raw stand-in arrays

    def f(v):
        return fnp.sum(fun(v) * 0.75)

    assert_same(fg.grad(f)(zd), fg.grad(f)(z), "gradient")
    assert_same(fg.hessian(f)(zd), fg.hessian(f)(z), "hessian")
    fg.check_grads(f, (zd,), order=2)


def test_nn_cross_entropy_with_labels_on_the_device(standin):
    z = np.random.default_rng(6).standard_normal((4, 3))
    labels, probs = np.array([2, 0, 1, 1]), np.random.default_rng(7).dirichlet(np.ones(3), 4)
    for lab, lab_dev in ((labels, standin.put(labels)), (probs, standin.put(probs))):
        g = fg.grad(fg.nn.softmax_cross_entropy, argnums=(0, 1) if lab.dtype.kind == "f" else 0)
        assert_same(g(standin.put(z), lab_dev), g(z, lab))


def _mlp_params(rng, sizes, put):
    return {f"layer{i}": {"w": put(rng.standard_normal((m, n)) / np.sqrt(m)), "b": put(np.zeros(n))}
            for i, (m, n) in enumerate(itertools.pairwise(sizes))}


def _mlp_loss(params, x, labels):
    h = x
    layers = list(params.values())
    for layer in layers[:-1]:
        h = fg.nn.relu(h @ layer["w"] + layer["b"])
    logits = h @ layers[-1]["w"] + layers[-1]["b"]
    return fg.nn.softmax_cross_entropy(logits, labels)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mlp_trains_on_the_device_with_a_raw_device_batch(standin, dtype):
    # The GPU failure of issue 7: the batch x is a raw device array, the first op x @ W1.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 5)).astype(dtype)
    labels = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0)
    runs = {}
    for where, put in (("device", lambda a: standin.put(a, dtype)),
                       ("numpy", lambda a: np.asarray(a, dtype))):
        params = _mlp_params(np.random.default_rng(1), (5, 8, 8, 3), put)
        xb = put(x)
        lb = standin.put(labels) if where == "device" else labels
        step = fg.value_and_grad(_mlp_loss)
        losses = []
        for _ in range(5):
            loss, grads = step(params, xb, lb)
            losses.append(loss)
            params = fg.tree.tree_map(lambda p, g: p - 0.5 * g, params, grads)
        runs[where] = (losses, params, grads)
    assert_same(runs["device"], runs["numpy"])
    losses = [float(_host(v)) for v in runs["device"][0]]
    assert losses[-1] < 0.8 * losses[0], losses


# --- mixing devices ----------------------------------------------------------------


def _mixing_cases():
    for row in ROWS:
        shapes = _representative(row)
        n = len(row.inputs(np.random.default_rng(0), "float64", shapes))
        for k in range(n if n > 1 else 0):
            label = f"{row.name}{('-' + row.id) if row.id else ''}-numpy{k}"
            yield pytest.param(row, shapes, k, id=label)


@pytest.mark.parametrize("row, shapes, k", list(_mixing_cases()))
def test_a_numpy_float_array_beside_stand_in_arrays_is_a_device_mismatch(standin, row, shapes, k):
    args = row.inputs(np.random.default_rng(0), "float64", shapes)
    mixed = [a if i == k else standin.put(a) for i, a in enumerate(args)]
    with pytest.raises(fg.DeviceMismatchError) as info:  # raw arrays
        row.fun(*mixed)
    assert "cpu" in str(info.value) and standin.DEVICE in str(info.value)
    traced = [i for i in range(len(args)) if i != k]
    with pytest.raises(fg.DeviceMismatchError) as info:  # the stand-in ones traced
        fg.vjp(_closing(row.fun, mixed, traced), *(mixed[i] for i in traced))
    assert "cpu" in str(info.value) and standin.DEVICE in str(info.value)
    with pytest.raises(fg.DeviceMismatchError):  # the NumPy one traced
        fg.jvp(_closing(row.fun, mixed, [k]), (args[k],), (np.ones_like(args[k]),))


SCALARS = {
    "python-float": lambda d: 1.5,
    "python-int": lambda d: 2,
    "numpy-scalar": lambda d: np.dtype(d).type(1.5),
    "numpy-float64-scalar": lambda d: np.float64(1.5),
    "numpy-int-scalar": lambda d: np.int64(2),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind", list(SCALARS))
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "power", "maximum",
                                "arctan2", "logaddexp", "where"])
def test_numpy_scalars_and_python_numbers_beside_stand_in_arrays_are_fine(standin, op, kind,
                                                                           dtype):
    c = SCALARS[kind](dtype)
    x = np.array([0.5, 1.5, 2.5], dtype)

    def op_on(put):  # the operation, its data (where's condition) made by ``put``
        if op == "where":
            cond = put(np.array([True, False, True]))
            return lambda a, b: fnp.where(cond, a, b)
        return getattr(fnp, op)

    for first in (True, False):  # the scalar first, then last
        results = []
        for put in (standin.put, np.asarray):
            fun = op_on(put)

            def f(v, fun=fun, first=first):
                return fnp.sum(fun(c, v) if first else fun(v, c))

            xs = put(x)
            results.append((fun(c, xs) if first else fun(xs, c), fg.value_and_grad(f)(xs),
                            fg.jvp(f, (xs,), (put(np.ones_like(x)),))))
        assert_same(*results, f"{op} scalar {'first' if first else 'last'}")


def test_functional_updates_refuse_values_from_another_device(standin):
    xd = standin.put(np.ones(3))
    with pytest.raises(fg.DeviceMismatchError) as info:
        fg.grad(lambda v: fnp.sum(v.at[np.array([0, 1])].set(np.array([2.0, 3.0]))))(xd)
    assert "cpu" in str(info.value) and standin.DEVICE in str(info.value)
    # a Python list of values is data: it goes to x's device
    g = fg.grad(lambda v: fnp.sum(v.at[np.array([0, 1])].set([2.0, 3.0]) * v))(xd)
    assert_same(g, fg.grad(lambda v: fnp.sum(v.at[np.array([0, 1])].set([2.0, 3.0]) * v))(
        np.ones(3)))


def test_a_tangent_or_cotangent_on_another_device_than_its_primal_is_refused(standin):
    xd = standin.put(np.ones(3))
    with pytest.raises(fg.DeviceMismatchError, match="tangent") as info:
        fg.jvp(lambda v: v.reshape((3, 1)), (xd,), (np.ones(3),))
    assert "cpu" in str(info.value) and standin.DEVICE in str(info.value)
    _, vjp_fn = fg.vjp(lambda v: v.reshape((3, 1)), xd)
    with pytest.raises(fg.DeviceMismatchError) as info:
        vjp_fn(np.ones((3, 1)))
    assert "cpu" in str(info.value) and standin.DEVICE in str(info.value)
    with pytest.raises(fg.DeviceMismatchError):
        fg.jvp(lambda v: v * 2.0, (np.ones(3),), (xd,))


def test_array_of_a_list_of_stand_in_arrays_is_built_on_the_device(standin):
    a, b = standin.put([1.0, 2.0]), standin.put([3.0, 4.0])
    for make in (fnp.array, fnp.asarray):
        assert_same(make([a, b]), make([np.array([1.0, 2.0]), np.array([3.0, 4.0])]))
        assert_same(make([[a[0], 0.5], [b[1], 2]]), np.array([[1.0, 0.5], [4.0, 2.0]]))
        assert_same(make(a, "float32"), np.array([1.0, 2.0], "float32"))
    with pytest.raises(fg.DeviceMismatchError):
        fnp.array([a, np.array([3.0, 4.0])])
    g = fg.grad(lambda v: fnp.sum(fnp.array([v, b]) ** 2))(a)
    assert_same(g, np.array([2.0, 4.0]))


# --- the stand-in itself: it refuses what a GPU would, so the tests above mean something --


def test_the_stand_in_refuses_host_arrays_nodes_and_implicit_conversions(standin):
    a = standin.put([1.0, 2.0])
    bad = {
        "NumPy array beside": lambda: standin.xp.add(a, np.ones(2)),
        "0-d NumPy array beside": lambda: a * np.array(2.0),
        "Node in raw code": lambda: standin.xp.sin(fg.require_grad(a)),
        "implicit conversion": lambda: np.asarray(a),
        "NumPy function": lambda: np.sin(a),
        "list of floats as an array": lambda: standin.xp.add(a, [1.0, 2.0]),
        "NumPy index in an assignment": lambda: a.__setitem__(np.array([0]), 1.0),
    }
    for what, fun in bad.items():
        with pytest.raises(TypeError):
            fun()
            pytest.fail(f"the stand-in let through: {what}")
    # what CuPy takes passes: numbers, NumPy scalars, explicit copies, NumPy indices
    assert _host(standin.xp.add(a, np.float32(1.0)) * 2 + 1).tolist() == [5.0, 7.0]
    assert _host(a[np.array([1, 1])]).tolist() == [2.0, 2.0]
    assert type(standin.xp.asarray(np.ones(2))) is standin.StrictArray


def test_a_rule_computing_on_the_host_fails_on_the_stand_in(standin):
    # A planted bug: a VJP rule that builds its constant with NumPy.  NumPy arrays pass
    # it; the stand-in catches it, as a GPU would.
    cube = fg.primitive(lambda x: x * x * x)
    fg.defvjp(cube, lambda g, ans, x: g * 3.0 * x * x * np.ones(x.shape))
    np.testing.assert_allclose(fg.grad(lambda v: fnp.sum(cube(v)))(np.ones(2)), [3.0, 3.0])
    with pytest.raises((TypeError, fg.DeviceMismatchError), match="NumPy array"):
        fg.grad(lambda v: fnp.sum(cube(v)))(standin.put([1.0, 1.0]))
