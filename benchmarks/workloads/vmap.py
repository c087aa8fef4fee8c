"""Workload 9, vectorized maps: Hessians, a Jacobian and per-example gradients (issue 18).

- Hessian of ``f(x) = sum(tanh(W @ x))``, n = 64 and n = 256: ``fg.hessian`` (forward
  over reverse, each a vmap over the standard basis), ``torch.func.hessian``,
  ``jax.hessian`` under jit. Hand NumPy: ``W^T diag(-2 t (1 - t^2)) W``.
- Jacobian of ``tanh(W @ x)``, 256 x 256: ``fg.jacobian`` (a vmapped VJP),
  ``torch.func.jacrev``, ``jax.jacrev`` under jit. Hand NumPy: ``(1 - t^2)[:, None] * W``.
- Per-example gradients of an MLP 64-128-10 (tanh, softmax cross-entropy), batch 64:
  ``fg.vmap(fg.grad(loss))``, ``torch.func.vmap(torch.func.grad(loss))``,
  ``jax.vmap(jax.grad(loss))`` under jit. Hand NumPy: backprop with a batch axis kept.

Every system's result is checked against the hand-written NumPy first.
"""

from __future__ import annotations

import numpy as np

from benchmarks import harness
from benchmarks.harness import Case, Config, Section
from benchmarks.systems import LABELS, load

NAME = 'vmap'
TITLE = '9. vmap: Hessians, Jacobians, per-example gradients'
SYSTEMS = ('numpy', 'funcgrad', 'replay', 'torch', 'jax.jit')
TORCH_LABEL = 'torch.func (vmap)'


def _hessian_numpy(w, x):
    t = np.tanh(w @ x)
    return w.T @ ((-2.0 * t * (1.0 - t * t))[:, None] * w)


def _jacobian_numpy(w, x):
    t = np.tanh(w @ x)
    return (1.0 - t * t)[:, None] * w


def _mlp_numpy(p, xs, ys):
    """Per-example gradients by hand: backprop with the batch axis kept."""
    w1, b1, w2, b2 = p
    h = np.tanh(xs @ w1 + b1)
    z = h @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    sm = np.exp(z)
    sm /= sm.sum(axis=1, keepdims=True)
    dz = sm
    dz[np.arange(len(ys)), ys] -= 1.0
    dh = (dz @ w2.T) * (1.0 - h * h)
    return (xs[:, :, None] * dh[:, None, :], dh, h[:, :, None] * dz[:, None, :], dz)


def _mlp_loss(xp, nn_log_softmax, p, x, y, pick=None):
    w1, b1, w2, b2 = p
    logits = xp.tanh(x @ w1 + b1) @ w2 + b2
    logp = nn_log_softmax(logits)
    return -(logp[y] if pick is None else pick(logp, y))


def _builders_scalar(kind, w, x):
    """Hessian (``kind='hessian'``) or Jacobian (``'jacobian'``) builders per system."""
    def fg_fun(fnp):
        if kind == 'hessian':
            return lambda x: fnp.sum(fnp.tanh(w @ x))
        return lambda x: fnp.tanh(w @ x)

    def funcgrad():
        fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
        op = fg.hessian if kind == 'hessian' else fg.jacobian
        h = op(fg_fun(fnp))
        return lambda: h(x)

    def replay():
        fg, fnp = load('replay').fg, load('replay').fnp
        op = fg.hessian if kind == 'hessian' else fg.jacobian
        h = fg.replay(op(fg_fun(fnp)))
        return lambda: h(x)

    def torch():
        t = load('torch')
        wt, xt = t.from_numpy(w), t.from_numpy(x)
        if kind == 'hessian':
            h = t.func.hessian(lambda x: t.sum(t.tanh(wt @ x)))
        else:
            h = t.func.jacrev(lambda x: t.tanh(wt @ x))
        return lambda: h(xt)

    def jax_jit():
        jx = load('jax.jit')
        jax, jnp = jx.jax, jx.jnp
        wj, xj = jnp.asarray(w), jnp.asarray(x)
        if kind == 'hessian':
            h = jax.jit(jax.hessian(lambda x: jnp.sum(jnp.tanh(wj @ x))))
        else:
            h = jax.jit(jax.jacrev(lambda x: jnp.tanh(wj @ x)))
        return lambda: jax.block_until_ready(h(xj))

    ref = _hessian_numpy if kind == 'hessian' else _jacobian_numpy
    return {'numpy': lambda: (lambda: ref(w, x)), 'funcgrad': funcgrad, 'replay': replay,
            'torch': torch, 'jax.jit': jax_jit}


def _builders_mlp(p, xs, ys):
    def funcgrad():
        fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
        g = fg.vmap(fg.grad(lambda p, x, y: _mlp_loss(fnp, fg.nn.log_softmax, p, x, y)),
                    in_axes=(None, 0, 0))
        return lambda: g(p, xs, ys)

    def replay():
        fg, fnp = load('replay').fg, load('replay').fnp
        g = fg.replay(fg.vmap(fg.grad(lambda p, x, y: _mlp_loss(fnp, fg.nn.log_softmax, p, x,
                                                                  y)), in_axes=(None, 0, 0)))
        return lambda: g(p, xs, ys)

    def torch():
        t = load('torch')
        pt = tuple(t.from_numpy(a) for a in p)
        xt, yt = t.from_numpy(xs), t.from_numpy(ys)
        def pick(logp, y):  # indexing by a mapped 0-d tensor reads it (.item()) in torch.func
            return t.gather(logp, -1, y.unsqueeze(-1)).squeeze(-1)

        g = t.func.vmap(t.func.grad(
            lambda p, x, y: _mlp_loss(t, lambda z: t.log_softmax(z, -1), p, x, y, pick)),
            in_dims=(None, 0, 0))
        return lambda: g(pt, xt, yt)

    def jax_jit():
        jx = load('jax.jit')
        jax, jnp = jx.jax, jx.jnp
        pj = tuple(jnp.asarray(a) for a in p)
        xj, yj = jnp.asarray(xs), jnp.asarray(ys)
        g = jax.jit(jax.vmap(jax.grad(
            lambda p, x, y: _mlp_loss(jnp, jax.nn.log_softmax, p, x, y)), in_axes=(None, 0, 0)))
        return lambda: jax.block_until_ready(g(pj, xj, yj))

    return {'numpy': lambda: (lambda: _mlp_numpy(p, xs, ys)), 'funcgrad': funcgrad,
            'replay': replay, 'torch': torch, 'jax.jit': jax_jit}


def _cases(cfg: Config) -> tuple[list[Case], list[str]]:
    rng = np.random.default_rng(9)
    cases, rows = [], []
    for kind, n in (('hessian', 64), ('hessian', 256), ('jacobian', 256)):
        w = rng.standard_normal((n, n)) / np.sqrt(n)
        x = rng.standard_normal(n)
        want = _hessian_numpy(w, x) if kind == 'hessian' else _jacobian_numpy(w, x)
        check = harness.checker(want, rtol=1e-8, atol_frac=1e-10)
        row = f'{kind} n={n}'
        rows.append(row)
        for key, build in _builders_scalar(kind, w, x).items():
            if key in cfg.systems:
                cases.append(Case(f'{row}/{key}', key, build, check))
    p = (rng.standard_normal((64, 128)) * 0.1, np.zeros(128),
         rng.standard_normal((128, 10)) * 0.1, np.zeros(10))
    xs, ys = rng.standard_normal((64, 64)), rng.integers(0, 10, 64)
    check = harness.checker(_mlp_numpy(p, xs, ys), rtol=1e-8, atol_frac=1e-10)
    row = 'per-example MLP'
    rows.append(row)
    for key, build in _builders_mlp(p, xs, ys).items():
        if key in cfg.systems:
            cases.append(Case(f'{row}/{key}', key, build, check))
    return cases, rows


ROW_TITLES = {
    'hessian n=64': 'Hessian of sum(tanh(W x)), n = 64',
    'hessian n=256': 'Hessian, n = 256',
    'jacobian n=256': 'Jacobian of tanh(W x), 256 x 256',
    'per-example MLP': 'per-example gradients, MLP 64-128-10, batch 64',
}


def run(cfg: Config) -> Section:
    cases, rows = _cases(cfg)
    outcomes = harness.time_cases(cases, cfg, NAME)
    systems = [k for k in SYSTEMS if k in cfg.systems]
    labels = [TORCH_LABEL if k == 'torch' else LABELS[k] for k in systems]
    section = Section(
        NAME, TITLE,
        'float64. Cells: median per call, and the ratio to hand-written NumPy (the closed '
        'form: the floor). funcgrad\'s Jacobians and Hessians are vmaps over the standard '
        'basis; per-example gradients are `fg.vmap(fg.grad(loss))`.',
        ['workload'] + labels)
    for row in rows:
        ref = outcomes.get(f'{row}/numpy')
        cells = []
        for key in systems:
            out = outcomes.get(f'{row}/{key}')
            if out is None:
                cells.append('')
                continue
            r = harness.ratio(out, ref)
            cells.append(harness.cell(out) + ('' if r is None else f' ({harness.fmt_ratio(r)})'))
        section.rows.append([ROW_TITLES[row]] + cells)
    section.notes.append('torch.func: `hessian`, `jacrev`, `vmap(grad)`; JAX: `hessian`, '
                         '`jacrev`, `vmap(grad)`, each under `jax.jit`.')
    return section
