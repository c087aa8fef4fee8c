"""Workload 2, MLP: value and gradient of a 784-512-512-10 tanh network's loss.

Batch 128, float32, softmax cross-entropy through a stable log-sum-exp
(``lse = m + log(sum(exp(z - m)))`` with ``m`` the row max), mean over the batch; the
gradient is taken w.r.t. all weights and biases (a dict). The reference is hand-written
backprop in NumPy. Dense matmuls dominate, so ratios show how much each system adds on top
of BLAS.
"""

from __future__ import annotations

import itertools

import numpy as np

from benchmarks import harness
from benchmarks.harness import Config, Section
from benchmarks.systems import LABELS, load

NAME = 'mlp'
TITLE = '2. MLP 784-512-512-10'
_SIZES = (784, 512, 512, 10)


def make_data(batch: int, seed: int = 0) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Parameters (scaled normal init), inputs and one-hot labels, all float32."""
    rng = np.random.default_rng(seed)
    params = {}
    for layer, (fan_in, fan_out) in enumerate(itertools.pairwise(_SIZES), start=1):
        params[f'W{layer}'] = (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(
            np.float32)
        params[f'b{layer}'] = (0.1 * rng.standard_normal(fan_out)).astype(np.float32)
    x = rng.standard_normal((batch, _SIZES[0])).astype(np.float32)
    y = np.eye(_SIZES[-1], dtype=np.float32)[rng.integers(0, _SIZES[-1], batch)]
    return params, x, y


def _loss(xp, params, x, y):
    """The same loss for every system; ``xp`` is the system's NumPy-like namespace."""
    h = xp.tanh(xp.matmul(x, params['W1']) + params['b1'])
    h = xp.tanh(xp.matmul(h, params['W2']) + params['b2'])
    z = xp.matmul(h, params['W3']) + params['b3']
    m = xp.max(z, axis=1, keepdims=True)
    lse = m + xp.log(xp.sum(xp.exp(z - m), axis=1, keepdims=True))
    return (xp.sum(lse) - xp.sum(z * y)) / x.shape[0]


def _torch_loss(torch, params, x, y):
    # torch.max(dim=) returns (values, indices); amax is the plain reduction.
    h = torch.tanh(torch.matmul(x, params['W1']) + params['b1'])
    h = torch.tanh(torch.matmul(h, params['W2']) + params['b2'])
    z = torch.matmul(h, params['W3']) + params['b3']
    m = torch.amax(z, dim=1, keepdim=True)
    lse = m + torch.log(torch.sum(torch.exp(z - m), dim=1, keepdim=True))
    return (torch.sum(lse) - torch.sum(z * y)) / x.shape[0]


def numpy_value_and_grad(params, x, y):
    """Hand-written forward and backprop."""
    batch = x.shape[0]
    h1 = np.tanh(x @ params['W1'] + params['b1'])
    h2 = np.tanh(h1 @ params['W2'] + params['b2'])
    z = h2 @ params['W3'] + params['b3']
    m = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - m)
    s = np.sum(e, axis=1, keepdims=True)
    loss = (np.sum(m + np.log(s)) - np.sum(z * y)) / batch
    dz = (e / s - y) / batch
    grads = {'W3': h2.T @ dz, 'b3': dz.sum(axis=0)}
    da = (dz @ params['W3'].T) * (1.0 - h2 * h2)
    grads['W2'], grads['b2'] = h1.T @ da, da.sum(axis=0)
    da = (da @ params['W2'].T) * (1.0 - h1 * h1)
    grads['W1'], grads['b1'] = x.T @ da, da.sum(axis=0)
    return loss, grads


def _builders(params, x, y):
    def build_numpy():
        return lambda: numpy_value_and_grad(params, x, y)

    def build_funcgrad():
        fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
        vg = fg.value_and_grad(lambda p: _loss(fnp, p, x, y))
        return lambda: vg(params)

    def build_autograd():
        ag = load('autograd')
        vg = ag.autograd.value_and_grad(lambda p: _loss(ag.anp, p, x, y))
        return lambda: vg(params)

    def build_torch():
        torch = load('torch')
        pt = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
        xt, yt = torch.from_numpy(x), torch.from_numpy(y)
        keys = list(pt)

        def run():
            loss = _torch_loss(torch, pt, xt, yt)
            grads = torch.autograd.grad(loss, [pt[k] for k in keys])
            return loss.detach(), dict(zip(keys, grads, strict=True))
        return run

    def build_jax(jit: bool):
        jx = load('jax')
        pj = {k: jx.jnp.asarray(v) for k, v in params.items()}
        xj, yj = jx.jnp.asarray(x), jx.jnp.asarray(y)
        vg = jx.jax.value_and_grad(lambda p: _loss(jx.jnp, p, xj, yj))
        if jit:
            vg = jx.jax.jit(vg)
        return lambda: jx.jax.block_until_ready(vg(pj))

    return {'numpy': build_numpy, 'funcgrad': build_funcgrad, 'autograd': build_autograd,
            'torch': build_torch, 'jax': lambda: build_jax(False),
            'jax.jit': lambda: build_jax(True)}


def run(cfg: Config) -> Section:
    batch = 128
    params, x, y = make_data(batch)
    want = numpy_value_and_grad(params, x, y)
    # float32: sums over 128..784 terms differ in rounding between BLAS and XLA kernels.
    check = harness.checker(want, rtol=2e-3, atol_frac=2e-3)
    outcomes = harness.time_cases(harness.make_cases(cfg, _builders(params, x, y), check),
                                  cfg, NAME)
    section = Section(
        NAME, TITLE,
        f'784-512-512-10, tanh, batch {batch}, float32, stable log-sum-exp softmax '
        'cross-entropy (mean), value_and_grad w.r.t. all 6 weights and biases. '
        'Reference: hand-written NumPy backprop.',
        ['system', 'median per step', 'ratio to NumPy'])
    section.rows = harness.standard_rows(outcomes, LABELS)
    return section
