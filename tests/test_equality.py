"""Issue 28, items 1 and 6: ``==``/``!=`` are elementwise, as in NumPy; integer and
boolean outputs are not differentiable.

References: NumPy for values, JAX for the gradients of the issue's example,
finite differences (``fg.check_grads``) at first and second order; the maps the
fold returns are checked by identity with thousands of equal-valued Nodes.
"""

from __future__ import annotations

import numpy as np
import pyrsistent
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

X = np.array([0.0, 1.0, 2.0, 3.0])


def masked(x):
    return fnp.sum(fnp.where(x == 1.0, 0.0, x) * fnp.where(x != 2.0, x, 3.0))


def masked_numpy_grad(x):
    # d/dx of sum(where(x == 1, 0, x) * where(x != 2, x, 3)), by hand
    return np.where(x == 1.0, 0.0, np.where(x != 2.0, 2 * x, 3.0))


def test_the_issue_s_example_masks_as_numpy_and_jax_do():
    g = fg.grad(lambda x: fnp.sum(fnp.where(x == 1.0, 0.0, x)))(np.array([0.0, 1.0, 2.0]))
    np.testing.assert_array_equal(g, [1.0, 0.0, 1.0])
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    want = jax.grad(lambda x: jnp.sum(jnp.where(x == 1.0, 0.0, x)))(jnp.array([0.0, 1.0, 2.0]))
    np.testing.assert_allclose(g, np.asarray(want))


def test_masks_from_eq_and_ne_under_every_transform():
    np.testing.assert_allclose(fg.grad(masked)(X), masked_numpy_grad(X))
    np.testing.assert_allclose(fg.hessian(masked)(X), np.diag(np.where(X == 0.0, 2.0, np.where(
        X == 3.0, 2.0, 0.0))))  # 2 where the product is x * x, else 0
    fg.check_grads(masked, (X + 0.25,), order=2)  # away from the kinks
    xs = np.stack([X, X + 1.0, X - 1.0])
    np.testing.assert_allclose(fg.vmap(fg.grad(masked))(xs), [masked_numpy_grad(x) for x in xs])
    replayed = fg.replay(fg.grad(masked))
    for x in xs:
        np.testing.assert_allclose(replayed(x), masked_numpy_grad(x))
    _, tangent = fg.jvp(masked, (X,), (np.ones(4),))
    np.testing.assert_allclose(tangent, masked_numpy_grad(X).sum())


def test_values_match_numpy_on_both_sides_and_with_broadcasting():
    a = fg.require_grad(np.array([[1.0, 2.0], [3.0, 2.0]]))
    raw = fg.value_of(a)
    for other in (2.0, np.array([2.0, 3.0]), [1.0, 2.0], np.float32(3.0), 2):
        np.testing.assert_array_equal(a == other, raw == other)
        np.testing.assert_array_equal(a != other, raw != other)
        np.testing.assert_array_equal(other == a, other == raw)
        np.testing.assert_array_equal(other != a, other != raw)
    b = fg.require_grad(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(a == b, raw == fg.value_of(b))
    assert (a == a).dtype == bool and (a == a).all()  # noqa: PLR0124
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a == b)  # as a NumPy array's


def test_objects_numpy_would_not_compare_are_unequal_and_never_raise():
    a = fg.require_grad(np.ones(3))
    assert (a == None) is False and (a != None) is True  # noqa: E711
    assert (a == "ones") is False and (a != "ones") is True
    assert (a == object()) is False


def test_gradient_maps_look_nodes_up_by_identity_among_thousands():
    # Equal values in every node: a map comparing keys with == inside a bucket
    # would find a neighbour's gradient (or raise) instead of the node's own.
    leaves = [fg.require_grad(np.array(1.0)) for _ in range(3000)]
    total = leaves[0] * 0.0
    for i, n in enumerate(leaves):
        total = total + float(i) * n
    grads = fg.backprop([total], leaves)
    assert isinstance(grads, pyrsistent.PMap) and len(grads) == 3000
    assert [float(grads[n]) for n in leaves] == [float(i) for i in range(3000)]
    assert all(n in grads for n in leaves) and fg.require_grad(np.array(1.0)) not in grads
    stranger = fg.require_grad(np.array(1.0))
    assert grads.get(stranger) is None
    grown = grads.set(stranger, 7.0).discard(leaves[5])
    assert grown[stranger] == 7.0 and leaves[5] not in grown and len(grown) == 3000
    assert float(grown[leaves[6]]) == 6.0 and len(grads) == 3000  # the original is untouched
    assert {id(k) for k in grads} == {id(n) for n in leaves}
    assert {id(k) for k, _ in grads.items()} == {id(n) for n in leaves}
    mapped = fg.tree.tree_map(lambda g: 2 * g, grads)  # a pytree: rebuilt by identity too
    assert float(mapped[leaves[7]]) == 14.0


def test_graph_membership_is_identity():
    g = fg.trace(lambda x, y: x * 2.0 + y, np.ones(2), np.ones(2))
    x, y = g.inputs
    assert x in g and y in g.nodes and g.inputs.index(y) == 1 and g.nodes.count(x) == 1
    assert fg.require_grad(np.ones(2)) not in g  # equal values, another node
    with pytest.raises(ValueError, match="not one of these nodes"):
        g.inputs.index(fg.require_grad(np.ones(2)))


@pytest.mark.parametrize("combinator", [fg.grad, fg.value_and_grad, fg.jacobian, fg.hessian])
@pytest.mark.parametrize("fun, dtype", [
    (lambda x: x > 0, "bool"),
    (lambda x: fnp.argmax(x), "int64"),
    (lambda x: (fnp.sum(x) > 0).astype(np.int32), "int32"),
])
def test_a_boolean_or_integer_output_is_refused_as_jax_refuses_it(combinator, fun, dtype):
    with pytest.raises(TypeError, match=f"dtype {dtype}.*not differentiable"):
        combinator(fun)(np.array([1.0, -2.0]))


def test_vjp_of_a_boolean_output_still_gives_zero_cotangents():
    out, pull = fg.vjp(lambda x: x > 0, np.array([1.0, -2.0]))
    np.testing.assert_array_equal(out, [True, False])
    (ct,) = pull(np.ones(2))
    np.testing.assert_array_equal(ct, np.zeros(2))
    assert ct.dtype == np.float64


def test_discrete_logpmf_with_a_traced_k_or_loc_matches_scipy():
    # The library's own ``k == floor(k)`` crashed on a traced k while == was identity.
    scipy_stats = pytest.importorskip("scipy.stats")
    from funcgrad.scipy import stats

    cases = [
        (lambda k: stats.poisson.logpmf(k, 2.0), 3.0, scipy_stats.poisson.logpmf(3, 2.0)),
        (lambda k: stats.poisson.logpmf(k, 2.0), 2.5, scipy_stats.poisson.logpmf(2.5, 2.0)),
        (lambda loc: stats.poisson.logpmf(3.0, 2.0, loc=loc), 1.0,
         scipy_stats.poisson.logpmf(3, 2.0, loc=1)),
        (lambda k: stats.binom.logpmf(k, 5, 0.3), 2.0, scipy_stats.binom.logpmf(2, 5, 0.3)),
        (lambda loc: stats.binom.logpmf(4.0, 5, 0.3, loc=loc), 2.0,
         scipy_stats.binom.logpmf(4, 5, 0.3, loc=2)),
    ]
    for fun, at, want in cases:
        out, pull = fg.vjp(fun, at)
        np.testing.assert_allclose(out, want)
        assert np.isfinite(pull(np.ones(()))[0]) or not np.isfinite(want)
    mu = 2.0  # and the rate's gradient alongside, against d/dmu (k log mu - mu) = k/mu - 1
    np.testing.assert_allclose(fg.grad(lambda m: stats.poisson.logpmf(3.0, m))(mu), 3 / mu - 1)
