"""User classes as pytrees (fg.tree.register_dataclass, fg.tree.register_node) in every
combinator, checked against finite differences and JAX at first and second order."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from tests.numeric import numgrad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


@fg.tree.register_dataclass
@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    name: str = "dense"


fg.tree.register_dataclass(Layer, meta_fields=["name"])




class Affine:
    def __init__(self, w, b, act="tanh"):
        self.w, self.b, self.act = w, b, act


fg.tree.register_node(Affine, lambda a: ((a.w, a.b), a.act),
                      lambda act, wb: Affine(wb[0], wb[1], act))


@dataclasses.dataclass
class _JaxParams:  # the same structure for JAX, registered there
    w: object
    b: object


jax.tree_util.register_dataclass(_JaxParams, data_fields=["w", "b"], meta_fields=[])


def loss(p, xp=fnp):
    return xp.sum(xp.sin(p.w) * p.b) + xp.sum(p.b ** 2) * xp.sum(p.w)


P = Params(np.array([0.3, -0.7, 1.1]), np.array([0.5, 2.0, -1.0]))
JP = _JaxParams(jnp.asarray(P.w), jnp.asarray(P.b))


def _flat(p):
    return np.concatenate([np.ravel(p.w), np.ravel(p.b)])


def test_grad_value_and_grad_and_replay_against_jax_and_finite_differences():
    g = fg.grad(loss)(P)
    assert type(g) is Params
    want = jax.grad(lambda p: loss(p, jnp))(JP)
    np.testing.assert_allclose(_flat(g), _flat(want), rtol=1e-12)
    flat = lambda v: loss(Params(v[:3], v[3:]))
    np.testing.assert_allclose(_flat(g), numgrad(flat, _flat(P)), rtol=1e-6)
    value, g2 = fg.value_and_grad(loss)(P)
    np.testing.assert_allclose(value, loss(P, np))
    np.testing.assert_array_equal(_flat(g2), _flat(g))
    r = fg.replay(fg.grad(loss))
    for scale in (1.0, 2.0):
        p = Params(P.w * scale, P.b)
        assert np.array_equal(_flat(r(p)), _flat(fg.grad(loss)(p)))
    assert r.stats.hits == 1


def test_vjp_jvp_and_jacobian_keep_the_structure():
    f = lambda p: Params(p.w * p.b, fnp.sin(p.b))
    out, vjp = fg.vjp(f, P)
    assert type(out) is Params
    (ct,) = vjp(Params(np.ones(3), np.ones(3)))
    _, jvjp = jax.vjp(lambda p: _JaxParams(p.w * p.b, jnp.sin(p.b)), JP)
    (jct,) = jvjp(_JaxParams(jnp.ones(3), jnp.ones(3)))
    np.testing.assert_allclose(_flat(ct), _flat(jct), rtol=1e-12)
    tangent = Params(np.array([1.0, 0.0, 2.0]), np.array([0.5, 1.0, 0.0]))
    _, tout = fg.jvp(loss, (P,), (tangent,))
    _, jtout = jax.jvp(lambda p: loss(p, jnp), (JP,), (_JaxParams(*map(jnp.asarray, (
        tangent.w, tangent.b))),))
    np.testing.assert_allclose(tout, jtout, rtol=1e-12)
    jac = fg.jacobian(lambda p: p.w * p.b)(P)
    assert type(jac) is Params and jac.w.shape == (3, 3)
    np.testing.assert_allclose(jac.w, np.diag(P.b))
    np.testing.assert_allclose(jac.b, np.diag(P.w))


def test_hessian_second_order_against_jax():
    h = fg.hessian(loss)(P)
    jh = jax.hessian(lambda p: loss(p, jnp))(JP)
    for a, b in (("w", "w"), ("w", "b"), ("b", "w"), ("b", "b")):
        np.testing.assert_allclose(getattr(getattr(h, a), b), getattr(getattr(jh, a), b),
                                   rtol=1e-12, atol=1e-14)


def test_checkpoint_and_custom_vjp_take_registered_classes():
    g = fg.grad(fg.checkpoint(loss))(P)
    np.testing.assert_array_equal(_flat(g), _flat(fg.grad(loss)(P)))

    @fg.custom_vjp
    def scaled(p):
        return fnp.sum(p.w) * fnp.sum(p.b)

    scaled.defvjp(lambda p: (scaled(p), p),
                  lambda p, g: (Params(g * fnp.sum(p.b) * fnp.ones(3),
                                       g * fnp.sum(p.w) * fnp.ones(3)),))
    got = fg.grad(scaled)(P)
    assert type(got) is Params
    np.testing.assert_allclose(got.w, np.full(3, P.b.sum()))
    np.testing.assert_allclose(got.b, np.full(3, P.w.sum()))


def test_register_node_with_aux_data_and_nested_classes():
    a = Affine(np.array([1.0, 2.0]), np.array(0.5), act="sin")
    f = lambda a: fnp.sum(getattr(fnp, a.act)(a.w) * a.b)
    g = fg.grad(f)(a)
    assert type(g) is Affine and g.act == "sin"
    np.testing.assert_allclose(g.w, np.cos(a.w) * 0.5)
    nested = {"layer": Layer(np.ones(2), "out"), "p": P}
    gn = fg.grad(lambda t: fnp.sum(t["layer"].w * 3.0) + loss(t["p"]))(nested)
    assert gn["layer"].name == "out" and np.array_equal(gn["layer"].w, 3 * np.ones(2))
    r = fg.replay(fg.grad(f))
    assert np.array_equal(r(a).w, g.w)
    assert r(Affine(a.w, a.b, act="cos")).act == "cos"  # aux data is in the signature
    assert r.stats.traces == 2


def test_registration_errors_are_clear():
    with pytest.raises(ValueError, match="needs a dataclass"):
        fg.tree.register_dataclass(Affine)
    with pytest.raises(ValueError, match="registered already"):
        fg.tree.register_dataclass(Params)

    @dataclasses.dataclass
    class Two:
        a: int
        b: int

    with pytest.raises(ValueError, match="unknown"):
        fg.tree.register_dataclass(Two, data_fields=["a", "c"])
    fg.tree.register_dataclass(Two, data_fields=["a"], meta_fields=["b"])
    leaves, treedef = fg.tree.flatten(Two(1, 2))
    assert leaves == [1] and fg.tree.unflatten(treedef, [5]) == Two(5, 2)
