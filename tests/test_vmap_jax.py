"""fg.vmap and the vectorized Jacobians against JAX, which we did not write.

Each row of the primitive table is run twice: as written (funcgrad) and with its
module's ``fnp`` and ``fg.nn`` replaced by ``jax.numpy`` and ``jax.nn`` (its
lambdas look those names up when called).  Rows whose JAX twin does not run
(a function JAX lacks or spells otherwise) are left out; at least half of the
table must take part.  ``jax.vmap`` with the same random ``in_axes`` and
``out_axes``, and ``jax.jacrev``/``jacfwd``/``hessian``, must agree with funcgrad.
Skipped when JAX is not installed (it is not a test dependency: importing it
costs seconds).
"""

from __future__ import annotations

import importlib.util
import pathlib
import types

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import tree

HERE = pathlib.Path(__file__).parent


def _drop_like(fun):
    def call(*args, like=None, **kwargs):
        return fun(*args, **kwargs)

    return call


class _Twin(types.SimpleNamespace):
    """``fnp`` spelled with ``jax.numpy``."""

    def __getattr__(self, name):
        return _drop_like(getattr(jnp, name))


def _nn_twin():
    nn = types.SimpleNamespace()
    for name in ("sigmoid", "relu", "softplus", "log_softmax", "softmax", "logsumexp", "silu",
                 "elu", "leaky_relu", "log_sigmoid", "one_hot"):
        setattr(nn, name, getattr(jax.nn, name))
    return nn


def _load(twin: bool) -> list:
    rows = []
    for path in sorted(HERE.glob("rows_*.py")):
        spec = importlib.util.spec_from_file_location(f"_jax_rows_{path.stem}_{twin}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if twin:
            module.fnp = _Twin(linalg=types.SimpleNamespace(
                **{n: getattr(jnp.linalg, n) for n in dir(jnp.linalg) if not n.startswith("_")}))
            module.fg = types.SimpleNamespace(nn=_nn_twin())
            if hasattr(module, "nn"):
                module.nn = module.fg.nn
        rows.extend(module.ROWS)
    return rows


ROWS = list(zip(_load(False), _load(True), strict=True))
B = 3
SAMPLE = 8  # every eighth row: JAX compiles each call, which costs (the oracle covers all)


def _case(row, k):
    shapes = next((s for s in row.shapes if not any(0 in x for x in s)), None)
    if shapes is None:
        return None
    rng = np.random.default_rng(100 + k)
    exs = [row.inputs(rng, "float64", shapes) for _ in range(B)]
    in_axes = tuple(None if len(exs[0]) > 1 and rng.random() < 0.3 else
                    int(rng.integers(-a.ndim - 1, a.ndim + 1)) for a in exs[0])
    if all(a is None for a in in_axes):
        in_axes = (0,) + in_axes[1:]
    args = [exs[0][i] if ax is None else np.stack([e[i] for e in exs], axis=ax)
            for i, ax in enumerate(in_axes)]
    return in_axes, args, rng


def _jax_runs(twin, args):
    try:
        out = jax.vmap(lambda *a: twin.fun(*a), in_axes=0)(*[np.stack([a] * 2) for a in args])
        return all(np.asarray(o).dtype.kind == "f" for o in tree.flatten(out)[0])
    except Exception:  # noqa: BLE001  (a function JAX lacks or spells otherwise)
        return False


def _usable():
    usable = []
    for k, (row, twin) in enumerate(ROWS):
        if k % SAMPLE:
            continue
        case = _case(row, k)
        if case is not None and _jax_runs(twin, [a[(slice(None),) * (ax % a.ndim) + (0,)]
                                                 if ax is not None else a
                                                 for a, ax in zip(case[1], case[0],
                                                                  strict=True)]):
            usable.append((k, row, twin))
    return usable


USABLE = _usable()


def test_most_of_the_table_has_a_jax_twin():
    assert len(USABLE) >= len(ROWS) // SAMPLE // 2, (len(USABLE), len(ROWS))


@pytest.mark.parametrize("k,row,twin", USABLE, ids=[r.name + r.id for _, r, _ in USABLE])
def test_vmap_agrees_with_jax_vmap(k, row, twin):
    in_axes, args, rng = _case(row, k)
    want = jax.vmap(twin.fun, in_axes=in_axes)(*args)
    leaves = tree.flatten(jax.tree_util.tree_leaves(want))[0]
    if len(leaves) == 1:
        out_axes = int(rng.integers(-np.ndim(leaves[0]), np.ndim(leaves[0])))
        want = jax.vmap(twin.fun, in_axes=in_axes, out_axes=out_axes)(*args)
    else:
        out_axes = 0
    got = fg.vmap(row.fun, in_axes=in_axes, out_axes=out_axes)(*args)
    for g, w in zip(tree.flatten(got)[0], jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-9, atol=1e-11)


JAC = [(k, r, t) for k, r, t in USABLE if r.order >= 2 and "rev" in r.modes][::3]


def _close(ours, theirs, **tol):
    """Equal where JAX's is finite (at singular points, 0/0, each picks its own value)."""
    theirs = np.asarray(theirs)
    finite = np.isfinite(theirs)
    np.testing.assert_allclose(np.asarray(ours)[finite], theirs[finite], **tol)


@pytest.mark.parametrize("k,row,twin", JAC, ids=[r.name + r.id for _, r, _ in JAC])
def test_jacobians_and_hessians_agree_with_jax(k, row, twin):
    rng = np.random.default_rng(k)
    shapes = next(s for s in row.shapes if not any(0 in x for x in s))
    args = row.inputs(rng, "float64", shapes)

    def first(f):
        return lambda x, *rest: tree.flatten(f(x, *rest))[0][0]

    def total(f, s):
        return lambda x, *rest: s.sum(first(f)(x, *rest))

    for ours, theirs in ((fg.jacobian, jax.jacrev), (fg.jacfwd, jax.jacfwd)):
        _close(ours(first(row.fun))(*args), theirs(first(twin.fun))(*args), rtol=1e-8,
               atol=1e-10)
    _close(fg.hessian(total(row.fun, fnp))(*args), jax.hessian(total(twin.fun, jnp))(*args),
           rtol=1e-7, atol=1e-9)


def test_per_example_gradients_agree_with_jax():
    rng = np.random.default_rng(1)
    w1, w2 = rng.standard_normal((6, 8)) * 0.4, rng.standard_normal((8, 3)) * 0.4
    xs, ys = rng.standard_normal((10, 6)), rng.integers(0, 3, 10)

    def loss(np_, nn, w1, w2, x, y):
        logits = np_.tanh(x @ w1) @ w2
        return -nn.log_softmax(logits)[y]

    ours = fg.vmap(fg.grad(lambda a, b, x, y: loss(fnp, fg.nn, a, b, x, y), argnums=(0, 1)),
                   in_axes=(None, None, 0, 0))(w1, w2, xs, ys)
    theirs = jax.vmap(jax.grad(lambda a, b, x, y: loss(jnp, jax.nn, a, b, x, y), argnums=(0, 1)),
                      in_axes=(None, None, 0, 0))(w1, w2, xs, ys)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10, atol=1e-12)
