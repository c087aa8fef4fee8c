"""Workload 3, fan-in: one (1000,) float64 input used K times.

``s = 0; for i in range(K): s = s + x * float(i); loss = sum(s)``, value and gradient.
The input's gradient is the sum of K contributions, so this measures how a system
accumulates many gradients into one node (and how it schedules a wide, shallow graph).
"""

from __future__ import annotations

import numpy as np

from benchmarks import harness
from benchmarks.harness import Config, Section
from benchmarks.systems import LABELS, load

NAME = 'fanin'
TITLE = '3. Fan-in'


def _loss(xp, x, uses: int):
    s = 0
    for i in range(uses):
        s = s + x * float(i)
    return xp.sum(s)


def numpy_value_and_grad(x: np.ndarray, uses: int) -> tuple[float, np.ndarray]:
    """Hand-written: the same forward loop, then one backward step per use."""
    s = 0
    for i in range(uses):
        s = s + x * float(i)
    value = np.sum(s)
    g_s = np.ones_like(x)
    g_x = np.zeros_like(x)
    for i in reversed(range(uses)):
        g_x = g_x + g_s * float(i)
    return value, g_x


def _builders(x: np.ndarray, uses: int):
    def build_numpy():
        return lambda: numpy_value_and_grad(x, uses)

    def build_funcgrad():
        fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
        vg = fg.value_and_grad(lambda x: _loss(fnp, x, uses))
        return lambda: vg(x)

    def build_replay():
        fg, fnp = load('replay').fg, load('replay').fnp
        vg = fg.replay(fg.value_and_grad(lambda x: _loss(fnp, x, uses)))
        return lambda: vg(x)

    def build_autograd():
        ag = load('autograd')
        vg = ag.autograd.value_and_grad(lambda x: _loss(ag.anp, x, uses))
        return lambda: vg(x)

    def build_torch():
        torch = load('torch')
        xt = torch.tensor(x, requires_grad=True)

        def run():
            loss = _loss(torch, xt, uses)
            (g,) = torch.autograd.grad(loss, (xt,))
            return loss.detach(), g
        return run

    def build_jax(jit: bool):
        jx = load('jax')
        xj = jx.jnp.asarray(x)
        vg = jx.jax.value_and_grad(lambda x: _loss(jx.jnp, x, uses))
        if jit:
            vg = jx.jax.jit(vg)
        return lambda: jx.jax.block_until_ready(vg(xj))

    return {'numpy': build_numpy, 'funcgrad': build_funcgrad, 'replay': build_replay,
            'autograd': build_autograd,
            'torch': build_torch, 'jax': lambda: build_jax(False),
            'jax.jit': lambda: build_jax(True)}


def run(cfg: Config) -> Section:
    size, uses = 1000, (300 if cfg.quick else 1000)
    x = np.random.default_rng(3).standard_normal(size)
    want = numpy_value_and_grad(x, uses)
    cases = harness.make_cases(cfg, _builders(x, uses), harness.checker(want, rtol=1e-10))
    outcomes = harness.time_cases(cases, cfg, NAME)
    section = Section(
        NAME, TITLE,
        f'One ({size},) float64 array used {uses} times: '
        f'`s = s + x * float(i)` for i < {uses}, `loss = sum(s)`, value_and_grad.',
        ['system', 'median per call', 'ratio to NumPy'])
    section.rows = harness.standard_rows(outcomes, LABELS)
    return section
