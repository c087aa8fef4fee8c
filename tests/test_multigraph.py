"""API.md §4: several graphs at once (ChainerX's multiple graphs).

A value may sit on several graphs.  A backward pass on one graph is recorded
on every other graph its computation touches, so its gradients stay
differentiable there; on its own graph they are constants unless double
backprop is asked for.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (1,)-shaped outputs, no seeds
def test_the_api_example_verbatim():
    with fg.backprop_scope('bp_y') as bp_y, fg.backprop_scope('bp_x') as bp_x:
        x = fg.require_grad(fnp.full((1,), 2.0, 'float32'), bp_x)
        y = fg.require_grad(fnp.full((1,), 3.0, 'float32'), bp_y)
        z = x * (x + y)
        gx = fg.backprop([z], [x], backprop_id=bp_x)[x]        # 2x + y = 7
        assert not fg.is_grad_required(gx, bp_x)
        assert fg.is_grad_required(gx, bp_y)
        w = x * gx
        gy = fg.backprop([w], [y], backprop_id=bp_y)[y]        # x = 2

    np.testing.assert_array_equal(fg.value_of(gx), np.full((1,), 7.0, np.float32))
    np.testing.assert_array_equal(fg.value_of(gy), np.full((1,), 2.0, np.float32))
    assert fg.value_of(gx).dtype == fg.value_of(gy).dtype == np.float32


def _example(open_x_first: bool):
    """The API example with the scopes opened in either order; returns what it saw."""
    names = ("bp_x", "bp_y") if open_x_first else ("bp_y", "bp_x")
    seen = {}
    with fg.backprop_scope(names[0]) as first, fg.backprop_scope(names[1]) as second:
        bp_x, bp_y = (first, second) if open_x_first else (second, first)
        x = fg.require_grad(fnp.full((1,), 2.0, "float32"), bp_x)
        y = fg.require_grad(fnp.full((1,), 3.0, "float32"), bp_y)
        z = x * (x + y)
        seed = np.ones((1,), np.float32)
        gx = fg.backprop([z], [x], [seed], backprop_id=bp_x)[x]  # 2x + y
        seen["gx on bp_x"] = fg.is_grad_required(gx, bp_x)
        seen["gx on bp_y"] = fg.is_grad_required(gx, bp_y)
        seen["gx"] = fg.value_of(gx)
        w = x * gx
        gy = fg.backprop([w], [y], [seed], backprop_id=bp_y)[y]  # x
        seen["gy"] = fg.value_of(gy)
        # gy = x * d(gx)/dy = x still depends on x, on bp_x: d(gy)/dx = 1
        seen["gy on bp_x"] = fg.is_grad_required(gy, bp_x)
        seen["dgy/dx"] = fg.backprop([gy], [x], [seed], backprop_id=bp_x)[x]
    return seen


@pytest.mark.parametrize("open_x_first", [False, True], ids=["bp_y_then_bp_x", "bp_x_then_bp_y"])
def test_gradient_across_graphs_in_either_scope_order(open_x_first):
    seen = _example(open_x_first)
    assert seen["gx on bp_x"] is False
    assert seen["gx on bp_y"] is True  # either way
    np.testing.assert_array_equal(seen["gx"], [7.0])
    np.testing.assert_array_equal(seen["gy"], [2.0])
    assert seen["gy on bp_x"] is True
    np.testing.assert_array_equal(fg.value_of(seen["dgy/dx"]), [1.0])


def test_an_array_on_two_graphs():
    with fg.backprop_scope("bp1") as bp1, fg.backprop_scope("bp2") as bp2:
        x1 = fg.require_grad(np.array(1.5), bp1)
        x12 = fg.require_grad(x1, bp2)  # the same value, now on both graphs
        assert fg.is_grad_required(x12, bp1) and fg.is_grad_required(x12, bp2)
        assert fg.is_grad_required(x1, bp1) and not fg.is_grad_required(x1, bp2)
        assert np.array_equal(x12.value, x1.value)
        y = x12 * x12 * x12
        # on bp2, x12 is a leaf; the gradient 3x^2 is recorded on bp1
        g2 = fg.backprop([y], [x12], backprop_id=bp2)[x12]
        assert type(g2) is fg.Node and fg.is_grad_required(g2, bp1)
        assert not fg.is_grad_required(g2, bp2)
        np.testing.assert_allclose(g2.value, 3 * 1.5 ** 2)
        # on bp1, x12 is x1 passed through: d/dx1 of 3x^2 is 6x -- itself a
        # function of x12, the leaf of bp2, so a Node there
        g21 = fg.backprop([g2], [x1], backprop_id=bp1)[x1]
        assert fg.is_grad_required(g21, bp2) and not fg.is_grad_required(g21, bp1)
        np.testing.assert_allclose(fg.value_of(g21), 6 * 1.5)
        # y on bp1 directly, by x1 or by the intermediate x12
        g1 = fg.backprop([y], [x1, x12], backprop_id=bp1)
        np.testing.assert_allclose(fg.value_of(g1[x1]), 3 * 1.5 ** 2)
        np.testing.assert_allclose(fg.value_of(g1[x12]), 3 * 1.5 ** 2)
        with pytest.raises(fg.BackpropError, match="bp2"):
            fg.require_grad(x12, bp2)  # already there
        with pytest.raises(fg.BackpropError, match="bp2"):
            fg.backprop([y], [x1], backprop_id=bp2)  # x1 is not on bp2


def test_mixed_third_derivative_over_three_graphs():
    # f = x^2 y^2 z^2: d/dx = 2x y^2 z^2; d/dy of that = 4xy z^2; d/dz of that = 8xyz.
    with fg.backprop_scope("bx") as bx, fg.backprop_scope("by") as by, \
            fg.backprop_scope("bz") as bz:
        x = fg.require_grad(np.array(2.0), bx)
        y = fg.require_grad(np.array(3.0), by)
        z = fg.require_grad(np.array(5.0), bz)
        f = (x * y * z) ** 2
        fx = fg.backprop([f], [x], backprop_id=bx)[x]
        assert [fg.is_grad_required(fx, b) for b in (bx, by, bz)] == [False, True, True]
        fxy = fg.backprop([fx], [y], backprop_id=by)[y]
        assert [fg.is_grad_required(fxy, b) for b in (bx, by, bz)] == [True, False, True]
        fxyz = fg.backprop([fxy], [z], backprop_id=bz)[z]
        assert [fg.is_grad_required(fxyz, b) for b in (bx, by, bz)] == [True, True, False]
    np.testing.assert_allclose(fx.value, 2 * 2 * 9 * 25)
    np.testing.assert_allclose(fxy.value, 4 * 2 * 3 * 25)
    np.testing.assert_allclose(fg.value_of(fxyz), 8 * 2 * 3 * 5)


def test_backprop_on_a_graph_the_outputs_are_not_on():
    # ChainerX: test_backprop_multiple_graphs_non_existing
    with fg.backprop_scope("bp1") as bp1, fg.backprop_scope("bp2") as bp2:
        xs = (fg.require_grad(fnp.full((1,), 2.0, "float32"), bp1),
              fg.require_grad(fnp.full((1,), 5.0, "float32"), bp1))
        y = xs[0] * xs[1]
        with pytest.raises(fg.BackpropError, match="bp2"):
            fg.backprop([y], list(xs), [np.ones(1, np.float32)], backprop_id=bp2)


def test_sole_node_on_a_named_graph():
    with fg.backprop_scope("bp1") as bp1:
        x = fg.require_grad(np.array(2.0, np.float32), bp1)
        gx = fg.backprop([x], [x], backprop_id=bp1)[x]
    assert gx == 1.0 and gx.dtype == np.float32


def test_double_backprop_on_a_named_graph_stays_on_that_graph():
    with fg.backprop_scope("bp") as bp:
        x = fg.require_grad(np.array([0.5, 2.0]), bp)
        other = fg.require_grad(np.array(3.0))  # default graph
        y = (x * x * x * other).sum()
        gx = fg.backprop([y], [x], backprop_id=bp, enable_double_backprop=True)[x]
        assert fg.is_grad_required(gx, bp)
        assert fg.is_grad_required(gx)  # it touched `other` on the default graph
        ggx = fg.backprop([gx.sum()], [x], backprop_id=bp)[x]
        g_other = fg.backprop([gx.sum()], [other])[other]
    np.testing.assert_allclose(gx.value, 3 * 3.0 * np.array([0.25, 4.0]))
    np.testing.assert_allclose(fg.value_of(ggx), 6 * 3.0 * np.array([0.5, 2.0]))
    np.testing.assert_allclose(fg.value_of(g_other), 3 * (0.25 + 4.0))


def test_a_seed_on_another_graph_makes_the_gradient_differentiable_there():
    # backprop is linear in its seed: d/ds <vjp(s), v> = J v
    with fg.backprop_scope("bp_x") as bp_x, fg.backprop_scope("bp_s") as bp_s:
        x = fg.require_grad(np.array([0.3, -1.2]), bp_x)
        s = fg.require_grad(np.array([2.0, 5.0]), bp_s)
        y = fnp.sin(x) * x  # elementwise, J = diag(cos(x) x + sin(x))
        gx = fg.backprop([y], [x], [s], backprop_id=bp_x)[x]
        assert fg.is_grad_required(gx, bp_s)
        v = np.array([1.0, -3.0])
        gs = fg.backprop([(gx * v).sum()], [s], backprop_id=bp_s)[s]
    x0 = np.array([0.3, -1.2])
    jdiag = np.cos(x0) * x0 + np.sin(x0)
    np.testing.assert_allclose(fg.value_of(gx), jdiag * np.array([2.0, 5.0]))
    np.testing.assert_allclose(fg.value_of(gs), jdiag * v)


def test_a_combinator_inside_a_scope_returns_a_node_on_that_graph():
    with fg.backprop_scope("outer") as bp:
        a = fg.require_grad(np.array(2.0), bp)
        g = fg.grad(lambda x: a * x * x)(np.array(3.0))  # 2 a x = 12, depends on a
        assert type(g) is fg.Node and fg.is_grad_required(g, bp)
        np.testing.assert_allclose(g.value, 12.0)
        np.testing.assert_allclose(fg.backprop([g], [a], backprop_id=bp)[a], 6.0)  # 2x
        const = fg.grad(lambda x: x * x)(np.array(3.0))  # does not touch a
        assert type(const) is not fg.Node and const == 6.0


def test_default_graph_and_a_scope_are_independent():
    with fg.backprop_scope("bp") as bp:
        u = fg.require_grad(np.array(2.0))  # default graph
        v = fg.require_grad(np.array(3.0), bp)
        y = u * u * v
        gu = fg.backprop([y], [u])[u]  # 2uv on the default graph, a Node on bp
        gv = fg.backprop([y], [v], backprop_id=bp)[v]  # u^2, a Node on the default graph
        assert fg.is_grad_required(gu, bp) and not fg.is_grad_required(gu)
        assert fg.is_grad_required(gv) and not fg.is_grad_required(gv, bp)
        np.testing.assert_allclose(gu.value, 12.0)
        np.testing.assert_allclose(gv.value, 4.0)
        # mixed partials agree: d/dv (2uv) = d/du (u^2) = 2u
        np.testing.assert_allclose(fg.backprop([gu], [v], backprop_id=bp)[v], 4.0)
        np.testing.assert_allclose(fg.backprop([gv], [u])[u], 4.0)


def test_raw_and_recorded_contributions_to_one_gradient_add_up():
    # x gets three contributions on bp_x: two plain arrays (from x * x, whose
    # node is on bp_x only) summed first, then one recorded on bp_y (from x * y).
    with fg.backprop_scope("bp_y") as bp_y, fg.backprop_scope("bp_x") as bp_x:
        x = fg.require_grad(np.array([2.0, 3.0]), bp_x)
        y = fg.require_grad(np.array([5.0, 7.0]), bp_y)
        z = fnp.sum(x * x) + fnp.sum(x * y)
        gx = fg.backprop([z], [x], backprop_id=bp_x)[x]  # 2x + y
        np.testing.assert_allclose(fg.value_of(gx), 2 * x.value + y.value)
        assert fg.is_grad_required(gx, bp_y)
        gy = fg.backprop([fnp.sum(gx)], [y], backprop_id=bp_y)[y]
        np.testing.assert_allclose(gy, np.ones(2))
