"""Workload 4, Hessian-vector product versus one gradient.

``f(x) = sum(tanh(A @ x))`` with ``A`` (n, n) float64, n = 1000. Each system computes the
gradient and the Hessian-vector product ``H v`` the way its users would: funcgrad
``fg.hvp``, autograd ``hessian_vector_product``, PyTorch double backward
(``grad(grad(f) . v)``), JAX forward-over-reverse ``jvp(grad(f))``. Reported: the time of
one HVP over the time of one gradient (theory: a small constant), and the HVP over the
hand-written NumPy HVP ``A^T (-2 t (1 - t^2) * (A v))`` with ``t = tanh(A x)``.
"""

from __future__ import annotations

import numpy as np

from benchmarks import harness
from benchmarks.harness import Case, Config, Section
from benchmarks.systems import LABELS, load

NAME = 'hvp'
TITLE = '4. Hessian-vector product / gradient'


def _f(xp, a, x):
    return xp.sum(xp.tanh(xp.matmul(a, x)))


def numpy_grad(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    t = np.tanh(a @ x)
    return a.T @ (1.0 - t * t)


def numpy_hvp(a: np.ndarray, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    t = np.tanh(a @ x)
    return a.T @ (-2.0 * t * (1.0 - t * t) * (a @ v))


def _unwrap(result):
    """Systems return the HVP alone or in a 1-tuple (one per primal); unwrap to the array.
    A 2-tuple is read JAX-style as ``(gradient, hvp)``."""
    while isinstance(result, (tuple, list)) and len(result) == 1:
        result = result[0]
    if isinstance(result, (tuple, list)) and len(result) == 2:
        result = result[1]
    return result


def _builders(a, x, v):
    """``{system: (build_grad, build_hvp)}``."""
    def numpy_pair():
        return (lambda: (lambda: numpy_grad(a, x)), lambda: (lambda: numpy_hvp(a, x, v)))

    def funcgrad_pair():
        def build_grad():
            fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
            g = fg.grad(lambda x: _f(fnp, a, x))
            return lambda: g(x)

        def build_hvp():
            fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
            def f(x):
                return _f(fnp, a, x)
            return lambda: _unwrap(fg.hvp(f, (x,), (v,)))
        return build_grad, build_hvp

    def replay_pair():
        def build_grad():
            fg, fnp = load('replay').fg, load('replay').fnp
            g = fg.replay(fg.grad(lambda x: _f(fnp, a, x)))
            return lambda: g(x)

        def build_hvp():
            fg, fnp = load('replay').fg, load('replay').fnp

            def f(x):
                return _f(fnp, a, x)
            hvp = fg.replay(lambda x, v: fg.hvp(f, (x,), (v,)))
            return lambda: _unwrap(hvp(x, v))
        return build_grad, build_hvp

    def autograd_pair():
        def build_grad():
            ag = load('autograd')
            g = ag.autograd.grad(lambda x: _f(ag.anp, a, x))
            return lambda: g(x)

        def build_hvp():
            ag = load('autograd')
            hvp = ag.autograd.hessian_vector_product(lambda x: _f(ag.anp, a, x))
            return lambda: hvp(x, v)
        return build_grad, build_hvp

    def torch_pair():
        def tensors():
            torch = load('torch')
            return torch, torch.from_numpy(a), torch.tensor(x, requires_grad=True), \
                torch.from_numpy(v)

        def build_grad():
            torch, at, xt, _ = tensors()

            def run():
                (g,) = torch.autograd.grad(_f(torch, at, xt), (xt,))
                return g
            return run

        def build_hvp():
            torch, at, xt, vt = tensors()

            def run():
                (g,) = torch.autograd.grad(_f(torch, at, xt), (xt,), create_graph=True)
                (hv,) = torch.autograd.grad(torch.dot(g, vt), (xt,))
                return hv
            return run
        return build_grad, build_hvp

    def jax_pair(jit: bool):
        def prepared():
            jx = load('jax')
            return jx.jax, jx.jnp, jx.jnp.asarray(a), jx.jnp.asarray(x), jx.jnp.asarray(v)

        def build_grad():
            jax, jnp, aj, xj, _ = prepared()
            g = jax.grad(lambda x: _f(jnp, aj, x))
            g = jax.jit(g) if jit else g
            return lambda: jax.block_until_ready(g(xj))

        def build_hvp():
            jax, jnp, aj, xj, vj = prepared()
            grad_f = jax.grad(lambda x: _f(jnp, aj, x))
            def hvp(x, v):
                return jax.jvp(grad_f, (x,), (v,))[1]
            hvp = jax.jit(hvp) if jit else hvp
            return lambda: jax.block_until_ready(hvp(xj, vj))
        return build_grad, build_hvp

    return {'numpy': numpy_pair(), 'funcgrad': funcgrad_pair(), 'replay': replay_pair(),
            'autograd': autograd_pair(),
            'torch': torch_pair(), 'jax': jax_pair(False), 'jax.jit': jax_pair(True)}


def run(cfg: Config) -> Section:
    n = 1000
    rng = np.random.default_rng(4)
    a = rng.standard_normal((n, n)) / np.sqrt(n)
    x, v = rng.standard_normal(n), rng.standard_normal(n)
    check_grad = harness.checker(numpy_grad(a, x), rtol=1e-8, atol_frac=1e-10)
    check_hvp = harness.checker(numpy_hvp(a, x, v), rtol=1e-8, atol_frac=1e-10)
    cases = []
    for key, (build_grad, build_hvp) in _builders(a, x, v).items():
        if key in cfg.systems:
            cases.append(Case(f'{key}/grad', key, build_grad, check_grad))
            cases.append(Case(f'{key}/hvp', key, build_hvp, check_hvp))
    outcomes = harness.time_cases(cases, cfg, NAME)
    section = Section(
        NAME, TITLE,
        f'f(x) = sum(tanh(A @ x)), A ({n}, {n}) float64. HVP without forming the Hessian. '
        '"hvp / grad" is the cost of one HVP in gradients of the same system.',
        ['system', 'grad', 'hvp', 'hvp / grad', 'hvp ratio to NumPy HVP'])
    reference = outcomes.get('numpy/hvp')
    for key in (k for k in LABELS if f'{k}/grad' in outcomes):
        grad, hvp = outcomes[f'{key}/grad'], outcomes[f'{key}/hvp']
        section.rows.append([LABELS[key], harness.cell(grad), harness.cell(hvp),
                             harness.fmt_ratio(harness.ratio(hvp, grad)),
                             harness.fmt_ratio(harness.ratio(hvp, reference))])
    section.notes.append('PyTorch: double backward, `grad(dot(grad(f, create_graph=True), v))`; '
                         'JAX: forward-over-reverse `jvp(grad(f), (x,), (v,))`.')
    return section
