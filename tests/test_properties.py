"""Property tests: random compositions of primitives on random broadcast shapes.

Hypothesis draws an expression (a small tree of smooth primitives) over two
inputs whose shapes broadcast together, and checks (a) reverse mode against
finite differences, (b) ``<u, J v>`` by ``jvp`` equals ``<Jᵀ u, v>`` by ``vjp``,
(c) Hessians are symmetric and agree between ``hessian`` and ``hvp``.
Derandomized and bounded, so the suite stays fast and repeatable.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

UNARY = {
    "sin": fnp.sin,
    "cos": fnp.cos,
    "tanh": fnp.tanh,
    "soft_exp": lambda x: fnp.exp(0.3 * x),
    "smooth_sqrt": lambda x: fnp.sqrt(x * x + 1.0),
    "neg": fnp.negative,
    "log1p_sq": lambda x: fnp.log(x * x + 1.0),
    "square": lambda x: x * x,
}
BINARY = {
    "add": fnp.add,
    "sub": fnp.subtract,
    "mul": fnp.multiply,
    "safe_div": lambda x, y: x / (y * y + 1.0),
    "pow_pos": lambda x, y: fnp.power(x * x + 1.0, fnp.tanh(y)),
}

settings.register_profile("funcgrad", max_examples=25, deadline=None, derandomize=True,
                          print_blob=True)
settings.load_profile("funcgrad")


@st.composite
def broadcast_shapes(draw):
    """Two shapes that broadcast together (some dims 1, some missing)."""
    ndim = draw(st.integers(0, 3))
    full = draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim))
    shapes = []
    for _ in range(2):
        keep = draw(st.integers(0, ndim))
        dims = full[ndim - keep:]
        dims = [1 if draw(st.booleans()) else d for d in dims]
        shapes.append(tuple(dims))
    return shapes


@st.composite
def expressions(draw, depth=3):
    """A nested tuple: ('x',) | ('y',) | (unary, e) | (binary, e1, e2)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return (draw(st.sampled_from(["x", "y"])),)
    if draw(st.booleans()):
        return (draw(st.sampled_from(sorted(UNARY))), draw(expressions(depth=depth - 1)))
    return (
        draw(st.sampled_from(sorted(BINARY))),
        draw(expressions(depth=depth - 1)),
        draw(expressions(depth=depth - 1)),
    )


def evaluate(expr, x, y):
    head = expr[0]
    if head == "x":
        return x
    if head == "y":
        return y
    if head in UNARY:
        return UNARY[head](evaluate(expr[1], x, y))
    return BINARY[head](evaluate(expr[1], x, y), evaluate(expr[2], x, y))


def make_fun(expr):
    def fun(x, y):
        # Always involve both inputs so every gradient is exercised, at the
        # broadcast shape of both.
        return evaluate(expr, x, y) + 0.1 * x * y

    return fun


def draw_inputs(seed, shapes):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-1.5, 1.5, s) for s in shapes)


@given(expressions(), broadcast_shapes(), st.integers(0, 2**16))
def test_reverse_mode_matches_finite_differences(expr, shapes, seed):
    fg.check_grads(make_fun(expr), draw_inputs(seed, shapes), order=1, modes=("rev",))


@given(expressions(), broadcast_shapes(), st.integers(0, 2**16))
def test_jvp_and_vjp_are_transposes(expr, shapes, seed):
    fun = make_fun(expr)
    args = draw_inputs(seed, shapes)
    rng = np.random.default_rng(seed + 1)
    v = tuple(rng.standard_normal(a.shape) for a in args)
    out, jv = fg.jvp(fun, args, v)
    u = rng.standard_normal(np.shape(out))
    _, vjp_fn = fg.vjp(fun, *args)
    jtu = vjp_fn(u)
    lhs = float(np.sum(u * jv))
    rhs = float(sum(np.sum(g * t) for g, t in zip(jtu, v, strict=True)))
    assert np.isclose(lhs, rhs, rtol=1e-9, atol=1e-9), (lhs, rhs)


@given(expressions(depth=2), broadcast_shapes(), st.integers(0, 2**16))
def test_hessians_are_symmetric_and_match_hvp(expr, shapes, seed):
    fun = make_fun(expr)
    x, y = draw_inputs(seed, shapes)

    def scalar(x):
        return fnp.sum(fun(x, y))

    h = fg.hessian(scalar)(x)
    n = x.size
    flat = np.reshape(h, (n, n))
    np.testing.assert_allclose(flat, flat.T, rtol=1e-9, atol=1e-9)
    v = np.random.default_rng(seed + 2).standard_normal(x.shape)
    hv = fg.hvp(scalar, (x,), (v,))
    np.testing.assert_allclose(np.reshape(hv, -1), flat @ np.reshape(v, -1), rtol=1e-8,
                               atol=1e-9)
