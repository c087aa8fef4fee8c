"""API.md §3: functions that close over traced values (issue 8, part 1).

``checkpoint`` differentiates through what its function closes over, at every
order, in both modes, on every graph; ``custom_vjp`` refuses a gradient with
respect to a closed-over traced value; ``stop_gradient`` cuts every level;
repeated ``argnums`` are refused.  Each derivative is checked against a
closed form, the same function without ``checkpoint``, or finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import numgrad, numjac

import funcgrad as fg
import funcgrad.numpy as fnp

RNG = np.random.default_rng(8)
XC = np.array([0.5, -1.0, 2.0])


# --- the issue's example: h computed from w, and w closed over ------------------------

def issue_plain(w):
    h = (XC * w).sum()
    return fnp.tanh(h * w)


def issue_ckpt(w):
    h = (XC * w).sum()
    return fg.checkpoint(lambda h: fnp.tanh(h * w))(h)


def test_checkpoint_closure_first_order_matches_the_closed_form():
    # f(w) = tanh(s w^2), s = sum(XC): f' = 2 s w (1 - tanh^2)
    w = np.array(0.7)
    s = XC.sum()
    expected = 2 * s * w * (1 - np.tanh(s * w * w) ** 2)
    assert abs(expected - 1.2767586) < 1e-6  # the issue's figure
    np.testing.assert_allclose(fg.grad(issue_ckpt)(w), expected, rtol=1e-13)
    np.testing.assert_allclose(fg.jvp(issue_ckpt, (w,), (np.array(1.0),))[1], expected,
                               rtol=1e-13)
    value, g = fg.value_and_grad(issue_ckpt)(w)
    assert type(value) is np.ndarray and type(g) is np.ndarray
    np.testing.assert_allclose(value, np.tanh(s * w * w), rtol=1e-15)


def test_checkpoint_closure_second_and_third_order_both_modes():
    s = XC.sum()
    w = np.array(0.7)

    def d2(w):  # d/dw [2 s w sech^2(s w^2)]
        t = np.tanh(s * w * w)
        return 2 * s * (1 - t * t) - 8 * s * s * w * w * t * (1 - t * t)

    rev2 = fg.grad(fg.grad(issue_ckpt))(w)
    fwd2 = fg.jacfwd(fg.jacfwd(issue_ckpt))(w)
    mixed = fg.jacfwd(fg.grad(issue_ckpt))(w)
    for got in (rev2, fwd2, mixed, fg.hessian(issue_ckpt)(w)):
        np.testing.assert_allclose(got, d2(w), rtol=1e-12)
    np.testing.assert_allclose(fg.hvp(issue_ckpt, (w,), (np.array(2.0),)), 2 * d2(w), rtol=1e-12)
    third = fg.grad(fg.grad(fg.grad(issue_ckpt)))(w)
    np.testing.assert_allclose(third, fg.grad(fg.grad(fg.grad(issue_plain)))(w), rtol=1e-11)
    np.testing.assert_allclose(third, numgrad(fg.grad(fg.grad(issue_plain)), w), rtol=1e-6)
    fg.check_grads(issue_ckpt, (w,), order=2)


def layer_plain(w, x):
    return fnp.tanh(fnp.tanh(x @ w) @ w).sum()


def layer_ckpt(w, x):
    return fg.checkpoint(lambda h: fnp.tanh(h @ w))(fnp.tanh(x @ w)).sum()


def test_checkpoint_layer_form_closing_over_the_weights():
    w = RNG.standard_normal((3, 3)) * 0.5
    x = RNG.standard_normal((2, 3))
    g = fg.grad(layer_ckpt)(w, x)
    np.testing.assert_allclose(g, fg.grad(layer_plain)(w, x), rtol=1e-13)
    np.testing.assert_allclose(g, numgrad(lambda v: layer_plain(v, x), w), rtol=1e-7, atol=1e-9)
    gx = fg.grad(layer_ckpt, argnums=1)(w, x)
    np.testing.assert_allclose(gx, fg.grad(layer_plain, argnums=1)(w, x), rtol=1e-13)
    t = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(fg.jvp(lambda v: layer_ckpt(v, x), (w,), (t,))[1],
                               fg.jvp(lambda v: layer_plain(v, x), (w,), (t,))[1], rtol=1e-13)
    h = fg.hessian(layer_ckpt)(w, x)
    np.testing.assert_allclose(h, fg.hessian(layer_plain)(w, x), rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(h, numjac(lambda v: fg.grad(layer_plain)(v, x), w),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fg.hvp(lambda v: layer_ckpt(v, x), (w,), (t,)),
                               fg.hvp(lambda v: layer_plain(v, x), (w,), (t,)), rtol=1e-12)


def test_checkpoint_with_several_outputs_and_a_closure():
    w = np.array([0.3, -0.8])

    def body(w, ckpt):
        def fun(h):
            return {"a": fnp.sin(h * w), "b": (h * h * w, h)}
        f = fg.checkpoint(fun) if ckpt else fun
        out = f(fnp.exp(w))
        return (out["a"] * out["b"][0]).sum() + (out["b"][1] ** 2).sum()

    plain = lambda w: body(w, False)
    ckpt = lambda w: body(w, True)
    np.testing.assert_allclose(ckpt(w), plain(w), rtol=1e-15)
    np.testing.assert_allclose(fg.grad(ckpt)(w), numgrad(plain, w), rtol=1e-7)
    np.testing.assert_allclose(fg.grad(ckpt)(w), fg.grad(plain)(w), rtol=1e-13)
    np.testing.assert_allclose(fg.hessian(ckpt)(w), fg.hessian(plain)(w), rtol=1e-12)
    np.testing.assert_allclose(fg.jacobian(fg.grad(ckpt))(w), fg.hessian(plain)(w), rtol=1e-12)
    np.testing.assert_allclose(fg.hessian(ckpt)(w), numjac(fg.grad(plain), w), rtol=1e-6)


def test_checkpoint_closing_over_an_outer_level_only():
    # d/dx [x cos(x^2)] with the inner derivative taken through a checkpoint
    # that closes over the outer x: cos(x^2) - 2 x^2 sin(x^2)
    def f(x):
        inner = fg.grad(lambda y: fg.checkpoint(lambda h: fnp.sin(h * x))(y))
        return inner(x)

    x = np.array(0.9)
    expected = np.cos(x * x) - 2 * x * x * np.sin(x * x)
    np.testing.assert_allclose(fg.grad(f)(x), expected, rtol=1e-13)
    np.testing.assert_allclose(fg.jvp(f, (x,), (np.array(1.0),))[1], expected, rtol=1e-13)
    np.testing.assert_allclose(fg.grad(fg.grad(f))(x), numgrad(fg.grad(f), x), rtol=1e-6)


def test_checkpoint_nested_closures_and_a_gradient_inside():
    w = np.array([0.4, 1.1])

    def body(w, ck):
        ck = fg.checkpoint if ck else (lambda f: f)

        def outer(h):
            inner = ck(lambda u: fnp.cos(u * w) * h)  # closes over w and outer's h
            g = fg.grad(lambda v: (fnp.sin(v) * w).sum())(h)  # a gradient inside
            return inner(h * 2.0) + g

        return (ck(outer)(w * w) ** 2).sum()

    plain, ckpt = (lambda w: body(w, False)), (lambda w: body(w, True))
    np.testing.assert_allclose(ckpt(w), plain(w), rtol=1e-15)
    np.testing.assert_allclose(fg.grad(ckpt)(w), fg.grad(plain)(w), rtol=1e-12)
    np.testing.assert_allclose(fg.grad(ckpt)(w), numgrad(plain, w), rtol=1e-7)
    np.testing.assert_allclose(fg.hessian(ckpt)(w), fg.hessian(plain)(w), rtol=1e-11)
    np.testing.assert_allclose(fg.hessian(ckpt)(w), numjac(fg.grad(plain), w), rtol=1e-6)


def test_checkpoint_closure_under_backprop_with_double_backprop():
    # y = x * sin(x) computed as a checkpoint closing over x: y' = sin x + x cos x
    x = fg.require_grad(np.array(0.6))
    y = fg.checkpoint(lambda h: h * fnp.sin(x))(x)
    gx = fg.backprop([y], [x], enable_double_backprop=True)[x]
    np.testing.assert_allclose(fg.value_of(gx), np.sin(0.6) + 0.6 * np.cos(0.6), rtol=1e-15)
    g2 = fg.backprop([gx], [x])[x]
    np.testing.assert_allclose(g2, 2 * np.cos(0.6) - 0.6 * np.sin(0.6), rtol=1e-14)


def test_checkpoint_closure_on_another_graph():
    # The closed-over value is on a graph of its own: the gradient there goes through.
    with fg.backprop_scope("weights") as bp:
        w = fg.require_grad(np.array(1.5), bp)
        x = fg.require_grad(np.array(0.5))
        y = fg.checkpoint(lambda h: fnp.exp(h * w))(x)
        gw = fg.backprop([y], [w], backprop_id=bp)[w]
        assert fg.is_grad_required(gw)  # x's graph is still open: the gradient stays on it
        np.testing.assert_allclose(fg.value_of(gw), 0.5 * np.exp(0.75), rtol=1e-15)
        gx = fg.backprop([y], [x])[x]
        np.testing.assert_allclose(fg.value_of(gx), 1.5 * np.exp(0.75), rtol=1e-15)
        # and the mixed second derivative, across the two graphs: (1 + x w) exp(x w)
        gxw = fg.backprop([gx], [w], backprop_id=bp)[w]
        np.testing.assert_allclose(gxw, (1 + 0.75) * np.exp(0.75), rtol=1e-15)


def test_checkpoint_without_traced_inputs_returns_plain_values():
    out = fg.checkpoint(lambda a: {"s": fnp.sin(a), "n": 3})(np.array([0.5]))
    assert type(out["s"]) is np.ndarray and out["n"] == 3


def test_checkpoint_replays_its_primitives_in_backward():
    calls = []
    counted = fg.primitive(lambda x: (calls.append(1), np.sin(x))[1])
    fg.defvjp(counted, lambda g, ans, x: g * fnp.cos(x))
    w = np.array([0.5, 1.0])

    def f(w):
        y = fg.checkpoint(lambda h: counted(h * w))(w)
        assert y.rank == 1  # one node over the leaf w: no intermediate kept
        return y.sum()

    g = fg.grad(f)(w)
    np.testing.assert_allclose(g, 2 * w * np.cos(w * w), rtol=1e-15)
    assert len(calls) == 2  # once forward, once replayed in backward


# --- stop_gradient and argnums ---------------------------------------------------------

def test_stop_gradient_of_a_checkpoint_output_cuts_every_level():
    w = np.array(0.7)
    f = lambda w: fg.stop_gradient(fg.checkpoint(lambda h: h * w)(w)) * 2.0 + w * 0.0
    assert float(fg.grad(f)(w)) == 0.0
    assert float(fg.jvp(f, (w,), (np.array(1.0),))[1]) == 0.0
    nested = lambda x: fg.grad(lambda y: fg.stop_gradient(x * y) * y)(x)  # = x * x, cut
    assert float(fg.grad(nested)(np.array(3.0))) == 0.0


def test_stop_gradient_of_a_node_holding_a_node():
    # A user primitive closing over a traced value computes a Node: still cut.
    x0 = np.array(2.0)

    def f(x):
        leak = fg.primitive(lambda v: v * x)
        fg.defvjp(leak, lambda g, ans, v: g * x)
        return fg.stop_gradient(leak(x)) + x * 0.0

    assert float(fg.grad(f)(x0)) == 0.0


@pytest.mark.parametrize("combinator", [fg.grad, fg.value_and_grad, fg.jacobian, fg.jacfwd,
                                        fg.hessian])
def test_repeated_argnums_are_refused(combinator):
    f = lambda a, b: (a * b).sum()
    with pytest.raises(ValueError, match="twice") as info:
        combinator(f, argnums=(0, 0))(np.array(2.0), np.array(3.0))
    assert isinstance(info.value, fg.FuncgradError)
    with pytest.raises(ValueError, match="twice"):
        combinator(f, argnums=(1, -1))(np.array(2.0), np.array(3.0))


# --- custom_vjp refuses closed-over traced values ----------------------------------------

def _closing(w):
    @fg.custom_vjp
    def f(x):
        return fnp.sin(x * w)

    f.defvjp(lambda x: (fnp.sin(x * w), x), lambda x, g: (g * fnp.cos(x * w) * w,))
    return f


def test_custom_vjp_refuses_a_gradient_through_a_closed_over_value():
    x = np.array(0.3)
    with pytest.raises(fg.FuncgradError, match="positional argument"):
        fg.grad(lambda w: _closing(w)(x))(np.array(2.0))
    with pytest.raises(fg.FuncgradError, match="positional argument"):
        fg.jvp(lambda w: _closing(w)(x), (np.array(2.0),), (np.array(1.0),))
    with pytest.raises(fg.FuncgradError, match="closes over"):  # w both argument and closure
        fg.grad(lambda w: _closing(w)(w))(np.array(2.0))
    with pytest.raises(fg.FuncgradError, match="positional argument"):
        fg.grad(lambda w: _closing(w)(w * 1.0), argnums=0)(np.array(2.0))


def test_custom_vjp_closure_on_a_graph_not_differentiated_is_fine():
    with fg.backprop_scope("other") as bp:
        w = fg.require_grad(np.array(2.0), bp)
        f = _closing(w)
        x = np.array(0.3)
        # Differentiating in x alone uses the custom rule, with w's value.
        g = fg.grad(lambda x: f(x))(x)
        np.testing.assert_allclose(fg.value_of(g), np.cos(0.6) * 2.0, rtol=1e-15)
        y = f(fg.require_grad(x))
        with pytest.raises(fg.FuncgradError, match="'other'.*positional argument"):
            fg.backprop([y], [w], backprop_id=bp)


def test_custom_vjp_keyword_argument_holding_a_traced_value_is_refused():
    @fg.custom_vjp
    def scaled(x, scale=1.0):
        return x * scale

    scaled.defvjp(lambda x, scale=1.0: (x * scale, scale), lambda s, g: (g * s,))
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(fg.grad(lambda x: scaled(x, scale=3.0).sum())(x), [3.0, 3.0])
    with pytest.raises(fg.FuncgradError, match="keyword argument"):
        fg.grad(lambda s: scaled(x, scale=s).sum())(np.array(3.0))


# --- checkpoint edge cases ---------------------------------------------------------------

def test_checkpoint_outputs_passed_through_or_repeated():
    # sum(x) + sum(2x) + 2 sum(sin x): gradient 1 + 2 + 2 cos x
    def f(x):
        outs = fg.checkpoint(lambda x: (x, x * 2.0, fnp.sin(x), fnp.sin(x) * 1.0))(x)
        return sum(fnp.sum(o) for o in outs)

    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(fg.grad(f)(x), 3.0 + 2 * np.cos(x), rtol=1e-15)
    np.testing.assert_allclose(fg.hessian(f)(x), np.diag(-2 * np.sin(x)), rtol=1e-14)
    np.testing.assert_allclose(fg.jacfwd(fg.jacfwd(f))(x), np.diag(-2 * np.sin(x)), rtol=1e-14)


def test_custom_vjp_inside_a_checkpoint_closing_over_the_weight():
    @fg.custom_vjp
    def square(x):
        return x * x

    square.defvjp(lambda x: (x * x, x), lambda x, g: (2.0 * g * x,))
    c = np.array([1.0, 2.0])

    def body(w, ckpt):
        f = lambda h: square(h * w) + w  # the custom function's argument uses w
        f = fg.checkpoint(f) if ckpt else f
        return fnp.sum(f(fnp.exp(w) * c))

    # sum(c^2 w^2 e^{2w} + w): closed forms of the first two derivatives
    s = np.sum(c * c)
    d1 = lambda w: s * (2 * w + 2 * w * w) * np.exp(2 * w) + 2.0
    d2 = lambda w: s * (2 + 8 * w + 4 * w * w) * np.exp(2 * w)
    w = np.array(0.4)
    ckpt = lambda w: body(w, True)
    np.testing.assert_allclose(fg.grad(ckpt)(w), d1(w), rtol=1e-14)
    np.testing.assert_allclose(fg.jvp(ckpt, (w,), (np.array(1.0),))[1], d1(w), rtol=1e-14)
    for second in (fg.grad(fg.grad(ckpt)), fg.jacfwd(fg.jacfwd(ckpt)), fg.hessian(ckpt)):
        np.testing.assert_allclose(second(w), d2(w), rtol=1e-13)


def test_checkpoint_making_a_leaf_of_an_open_graph_is_recorded_in_full():
    # A leaf made inside the call has no input the node could stand on: the
    # call is recorded as it would be without checkpoint, and both graphs see it.
    with fg.backprop_scope("inside") as bp:
        x = fg.require_grad(np.array(2.0))

        def fun(h):
            c = fg.require_grad(np.array(3.0), bp)
            return h * c, c

        y, c = fg.checkpoint(fun)(x)
        assert float(fg.value_of(fg.backprop([y], [c], backprop_id=bp)[c])) == 2.0
        assert float(fg.value_of(fg.backprop([y], [x])[x])) == 3.0


def test_checkpoint_and_custom_vjp_on_a_strict_device(standin):
    # Replays, bundles and transposed bwd run in the arrays' namespace: the
    # stand-in refuses any NumPy array or Node leaking into raw code.
    w0, c = standin.put(np.array([0.4, 1.1])), standin.put(np.array([1.0, 2.0]))

    def body(w, ck):
        ck = fg.checkpoint if ck else (lambda f: f)
        a, b = ck(lambda h: (fnp.sin(h * w), h * w))(fnp.exp(w) * c)
        return fnp.sum(a * b)

    second = lambda f: fg.grad(lambda w: fnp.sum(fg.grad(f)(w)))
    for d in (fg.grad, second):
        got = d(lambda w: body(w, True))(w0)
        assert type(got) is standin.StrictArray
        np.testing.assert_allclose(got.get(), d(lambda w: body(w, False))(w0).get(), rtol=1e-13)
    t = standin.put(np.array([1.0, -1.0]))
    np.testing.assert_allclose(fg.jvp(lambda w: body(w, True), (w0,), (t,))[1].get(),
                               fg.jvp(lambda w: body(w, False), (w0,), (t,))[1].get(), rtol=1e-14)

    @fg.custom_vjp
    def f(x):
        return fnp.sin(x), fnp.cos(x)

    f.defvjp(lambda x: (f.fun(x), x),
             lambda x, g: (g[0] * fnp.cos(x) - g[1] * fnp.sin(x),))
    loss = lambda x: fnp.sum(f(x)[0] * f(x)[1])  # sum(sin 2x / 2)
    np.testing.assert_allclose(fg.grad(loss)(w0).get(), np.cos(2 * w0.get()), rtol=1e-15)
    np.testing.assert_allclose(fg.hessian(loss)(w0).get(), np.diag(-2 * np.sin(2 * w0.get())),
                               rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(fg.jvp(loss, (w0,), (t,))[1].get(),
                               np.sum(np.cos(2 * w0.get()) * t.get()), rtol=1e-14)


def test_a_trace_copies_a_large_closed_over_array_once_and_still_sees_it_change():
    from funcgrad.reads import snapshot

    big = np.arange(40_000, dtype=np.float64)  # 320 KB: watched by a copy of its bytes

    def f(x):
        return fnp.sum(x * big)

    first = snapshot([f])
    again = snapshot([f], first)
    assert again.arrays[0][3] is first.arrays[0][3]  # unchanged bytes: the copy is shared
    big[7] = -1.0
    changed = snapshot([f], first)
    assert changed.arrays[0][3] is not first.arrays[0][3]
    assert not first.holds() and changed.holds()

    r = fg.replay(f)
    x = np.ones(40_000)
    assert r(x) == np.sum(big)
    big[8] = 1e6  # after the trace: the plan must not replay the old bytes
    assert r(x) == np.sum(big)
    assert r.stats.traces == 2


def test_a_large_closed_over_array_changed_while_traced_is_refused_and_checked_once():
    from funcgrad import reads

    big = np.ones(40_000)  # watched by a byte copy, compared with memcmp

    def bump(x):
        big[3] += 1.0  # eagerly: a new value at each call
        return fnp.sum(x * big)

    with pytest.raises(fg.ReplayError, match="changed 'big'"):
        fg.replay(bump)(np.ones(40_000))

    def read(x):
        return fnp.sum(x * big)

    before = reads.snapshot([read])
    after = reads.snapshot([read], before)
    assert before.changed(strict=True, later=after) is None
    big[5] = 7.0  # changed since: found however the rows are shared
    assert before.changed(strict=True) == "'big' (closed over by " + read.__qualname__ + ")"
    r = fg.replay(read)
    assert r(np.ones(40_000)) == np.sum(big) and r(np.ones(40_000)) == np.sum(big)
    assert r.stats.hits == 1


class _Config:
    def __init__(self):
        self.scale = np.ones(2)


_CONFIG = _Config()
_GLOBAL_SCALE = np.ones(2)


def _places():
    """``{kind: (function, change, description)}``: a function reading one kind of place,
    a change of that place, and how a refusal names it."""
    cell = np.ones(2)
    in_list, in_dict, in_tuple = [np.ones(2)], {"w": np.ones(2)}, (np.ones(2),)
    holder = _Config()
    method = holder.__init__  # a bound method: its __self__ is walked
    import functools

    part = functools.partial(lambda x, a, *, k: x * a * k, np.ones(2), k=np.ones(2))

    def by_cell(x):
        return x * cell

    def by_default(x, d=np.ones(2)):  # noqa: B008  (the place watched)
        return x * d

    def by_kwdefault(x, *, d=np.ones(2)):  # noqa: B008
        return x * d

    def by_global(x):
        return x * _GLOBAL_SCALE

    def by_attribute(x):
        return x * _CONFIG.scale

    def by_list(x):
        return x * in_list[0]

    def by_dict(x):
        return x * in_dict["w"]

    def by_tuple(x):
        return x * in_tuple[0]

    def by_method(x):
        return x * method.__self__.scale

    def by_partial(x):
        return part(x)

    def bump(a):
        a[0] += 1.0

    q = "_places.<locals>."
    return {
        "cell": (by_cell, lambda: bump(cell), f"'cell' (closed over by {q}by_cell)"),
        "default": (by_default, lambda: bump(by_default.__defaults__[0]),
                    f"default 0 of {q}by_default"),
        "kwdefault": (by_kwdefault, lambda: bump(by_kwdefault.__kwdefaults__["d"]),
                      f"default 'd' of {q}by_kwdefault"),
        "global": (by_global, lambda: bump(_GLOBAL_SCALE),
                   f"global '_GLOBAL_SCALE' (read by {q}by_global)"),
        "attribute": (by_attribute, lambda: bump(_CONFIG.scale), "attribute 'scale' of a _Config"),
        "list": (by_list, lambda: bump(in_list[0]), f"'in_list' (closed over by {q}by_list)[0]"),
        "dict": (by_dict, lambda: bump(in_dict["w"]),
                 f"'in_dict' (closed over by {q}by_dict)['w']"),
        "tuple": (by_tuple, lambda: bump(in_tuple[0]),
                  f"'in_tuple' (closed over by {q}by_tuple)[0]"),
        "method": (by_method, lambda: bump(holder.scale), "attribute 'scale' of a _Config"),
        "partial argument": (by_partial, lambda: bump(part.args[0]),
                             f"'part' (closed over by {q}by_partial) argument 0"),
        "partial keyword": (by_partial, lambda: bump(part.keywords["k"]),
                            f"'part' (closed over by {q}by_partial) keyword k"),
    }


@pytest.mark.parametrize("kind", sorted(_places()))
def test_a_changed_place_is_named_as_it_was_found(kind):
    from funcgrad import reads

    fun, change, description = _places()[kind]
    world = reads.snapshot([fun])
    assert world.holds() and world.changed() is None
    change()
    assert not world.holds()
    assert world.changed() == description
