"""Workload 2, MLP: value and gradient of a 784-512-512-10 tanh network's loss.

Batch 128, float32, softmax cross-entropy through a stable log-sum-exp
(``lse = m + log(sum(exp(z - m)))`` with ``m`` the row max), mean over the batch; the
gradient is taken w.r.t. all weights and biases (a dict). The reference is hand-written
backprop in NumPy. Dense matmuls dominate, so ratios show how much each system adds on top
of BLAS.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from benchmarks import harness
from benchmarks.harness import Config, Section
from benchmarks.systems import LABELS, load

NAME = 'mlp'
TITLE = '2. MLP 784-512-512-10'
_SIZES = (784, 512, 512, 10)


def make_data(batch: int, seed: int = 0, sizes: tuple[int, ...] = _SIZES,
              dtype: str = 'float32') -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Parameters (scaled normal init), inputs and one-hot labels, all of ``dtype``.

    >>> params, x, y = make_data(4, sizes=(3, 5, 2))
    >>> sorted(params), x.shape, y.shape, y.sum()
    (['W1', 'W2', 'b1', 'b2'], (4, 3), (4, 2), 4.0)
    """
    rng = np.random.default_rng(seed)
    params = {}
    for layer, (fan_in, fan_out) in enumerate(itertools.pairwise(sizes), start=1):
        params[f'W{layer}'] = (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(
            dtype)
        params[f'b{layer}'] = (0.1 * rng.standard_normal(fan_out)).astype(dtype)
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    y = np.eye(sizes[-1], dtype=dtype)[rng.integers(0, sizes[-1], batch)]
    return params, x, y


def _layers(params) -> int:
    return len(params) // 2


def loss(xp, params, x, y):
    """The same loss for every system; ``xp`` is the system's NumPy-like namespace
    (``funcgrad.numpy``, ``autograd.numpy``, ``jax.numpy``; NumPy or CuPy for the value)."""
    h = x
    for layer in range(1, _layers(params)):
        h = xp.tanh(xp.matmul(h, params[f'W{layer}']) + params[f'b{layer}'])
    last = _layers(params)
    z = xp.matmul(h, params[f'W{last}']) + params[f'b{last}']
    m = xp.max(z, axis=1, keepdims=True)
    lse = m + xp.log(xp.sum(xp.exp(z - m), axis=1, keepdims=True))
    return (xp.sum(lse) - xp.sum(z * y)) / x.shape[0]


def torch_loss(torch, params, x, y):
    """``loss`` in PyTorch (``torch.max(dim=)`` returns indices too; ``amax`` does not)."""
    h = x
    for layer in range(1, _layers(params)):
        h = torch.tanh(torch.matmul(h, params[f'W{layer}']) + params[f'b{layer}'])
    last = _layers(params)
    z = torch.matmul(h, params[f'W{last}']) + params[f'b{last}']
    m = torch.amax(z, dim=1, keepdim=True)
    lse = m + torch.log(torch.sum(torch.exp(z - m), dim=1, keepdim=True))
    return (torch.sum(lse) - torch.sum(z * y)) / x.shape[0]


def manual_value_and_grad(xp, params, x, y):
    """Hand-written forward and backprop in the array namespace ``xp`` (NumPy or CuPy)."""
    batch = x.shape[0]
    last = _layers(params)
    hs = [x]
    for layer in range(1, last):
        hs.append(xp.tanh(hs[-1] @ params[f'W{layer}'] + params[f'b{layer}']))
    z = hs[-1] @ params[f'W{last}'] + params[f'b{last}']
    m = xp.max(z, axis=1, keepdims=True)
    e = xp.exp(z - m)
    s = xp.sum(e, axis=1, keepdims=True)
    value = (xp.sum(m + xp.log(s)) - xp.sum(z * y)) / batch
    da = (e / s - y) / batch
    grads = {}
    for layer in range(last, 0, -1):
        h = hs[layer - 1]
        grads[f'W{layer}'], grads[f'b{layer}'] = h.T @ da, da.sum(axis=0)
        if layer > 1:
            da = (da @ params[f'W{layer}'].T) * (1.0 - h * h)
    return value, grads


def numpy_value_and_grad(params, x, y):
    """Hand-written forward and backprop in NumPy: the reference."""
    return manual_value_and_grad(np, params, x, y)


def _builders(params, x, y):
    def build_numpy():
        return lambda: numpy_value_and_grad(params, x, y)

    def build_funcgrad():
        fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
        vg = fg.value_and_grad(lambda p: loss(fnp, p, x, y))
        return lambda: vg(params)

    def build_replay():
        fg, fnp = load('replay').fg, load('replay').fnp
        vg = fg.replay(fg.value_and_grad(lambda p: loss(fnp, p, x, y)))
        return lambda: vg(params)

    def build_autograd():
        ag = load('autograd')
        vg = ag.autograd.value_and_grad(lambda p: loss(ag.anp, p, x, y))
        return lambda: vg(params)

    def build_torch():
        torch = load('torch')
        pt = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
        xt, yt = torch.from_numpy(x), torch.from_numpy(y)
        keys = list(pt)

        def run():
            loss = torch_loss(torch, pt, xt, yt)
            grads = torch.autograd.grad(loss, [pt[k] for k in keys])
            return loss.detach(), dict(zip(keys, grads, strict=True))
        return run

    def build_jax(jit: bool):
        jx = load('jax')
        pj = {k: jx.jnp.asarray(v) for k, v in params.items()}
        xj, yj = jx.jnp.asarray(x), jx.jnp.asarray(y)
        vg = jx.jax.value_and_grad(lambda p: loss(jx.jnp, p, xj, yj))
        if jit:
            vg = jx.jax.jit(vg)
        return lambda: jx.jax.block_until_ready(vg(pj))

    return {'numpy': build_numpy, 'funcgrad': build_funcgrad, 'replay': build_replay,
            'autograd': build_autograd,
            'torch': build_torch, 'jax': lambda: build_jax(False),
            'jax.jit': lambda: build_jax(True)}


def measure(cfg: Config, batch: int = 128, sizes: tuple[int, ...] = _SIZES,
            extra: Sequence[harness.Case] = ()) -> dict[str, harness.Outcome]:
    """Outcomes (by label) of the timed value_and_grad on data of these sizes; ``extra``
    cases are timed in the same rounds (the harness's test adds a noisy neighbour)."""
    params, x, y = make_data(batch, sizes=sizes)
    want = numpy_value_and_grad(params, x, y)
    # float32: sums over 128..784 terms differ in rounding between BLAS and XLA kernels.
    check = harness.checker(want, rtol=2e-3, atol_frac=2e-3)
    cases = [*harness.make_cases(cfg, _builders(params, x, y), check), *extra]
    return harness.time_cases(cases, cfg, NAME)


def run(cfg: Config) -> Section:
    batch = 128
    outcomes = measure(cfg, batch)
    section = Section(
        NAME, TITLE,
        f'784-512-512-10, tanh, batch {batch}, float32, stable log-sum-exp softmax '
        'cross-entropy (mean), value_and_grad w.r.t. all 6 weights and biases. '
        'Reference: hand-written NumPy backprop.',
        ['system', 'median per step', 'ratio to NumPy'])
    section.rows = harness.standard_rows(outcomes, LABELS)
    return section
