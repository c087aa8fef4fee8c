"""Workload 1, overhead: microseconds per primitive, forward plus backward, on tiny arrays.

A chain of ``N`` cheap elementwise ops on a (4,) float64 array, cycling through
``y * c``, ``sin``, ``y + c``, ``tanh``; ``loss = sum(y)``; value and gradient w.r.t. ``x``.
With 4 elements the arithmetic is free, so the time is what each system spends per op on
bookkeeping (graph nodes, dispatch, tracing). Reported: total time / N.
"""

from __future__ import annotations

import numpy as np

from benchmarks import harness
from benchmarks.harness import Config, Section
from benchmarks.systems import LABELS, load

NAME = 'overhead'
TITLE = '1. Overhead per primitive'
_C = np.array([0.9, 1.1, 0.8, 1.2])
_X = np.array([0.3, -0.2, 0.5, 0.1])


def _chain(xp, x, c, n: int):
    """The same op sequence for every system; ``xp`` is the system's NumPy namespace."""
    y = x
    for i in range(n):
        step = i % 4
        if step == 0:
            y = y * c
        elif step == 1:
            y = xp.sin(y)
        elif step == 2:
            y = y + c
        else:
            y = xp.tanh(y)
    return xp.sum(y)


def numpy_value_and_grad(x: np.ndarray, c: np.ndarray, n: int) -> tuple[float, np.ndarray]:
    """Hand-written reverse mode: keep what each op's derivative needs, then sweep back."""
    tape = []
    y = x
    for i in range(n):
        step = i % 4
        if step == 1:
            tape.append(np.cos(y))
            y = np.sin(y)
        elif step == 3:
            y = np.tanh(y)
            tape.append(y)
        elif step == 0:
            y = y * c
        else:
            y = y + c
    value = np.sum(y)
    g = np.ones_like(y)
    for i in reversed(range(n)):
        step = i % 4
        if step == 0:
            g = g * c
        elif step == 1:
            g = g * tape.pop()
        elif step == 3:
            t = tape.pop()
            g = g * (1.0 - t * t)
    return value, g


def _builders(n: int):
    x, c = _X, _C

    def build_numpy():
        return lambda: numpy_value_and_grad(x, c, n)

    def build_funcgrad():
        fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
        vg = fg.value_and_grad(lambda x: _chain(fnp, x, c, n))
        return lambda: vg(x)

    def build_replay():
        fg, fnp = load('replay').fg, load('replay').fnp
        vg = fg.replay(fg.value_and_grad(lambda x: _chain(fnp, x, c, n)))
        return lambda: vg(x)

    def build_autograd():
        ag = load('autograd')
        vg = ag.autograd.value_and_grad(lambda x: _chain(ag.anp, x, c, n))
        return lambda: vg(x)

    def build_torch():
        torch = load('torch')
        xt = torch.tensor(x, requires_grad=True)
        ct = torch.tensor(c)

        def run():
            loss = _chain(torch, xt, ct, n)
            (g,) = torch.autograd.grad(loss, (xt,))
            return loss.detach(), g
        return run

    def build_jax(jit: bool):
        jx = load('jax')
        xj, cj = jx.jnp.asarray(x), jx.jnp.asarray(c)
        vg = jx.jax.value_and_grad(lambda x: _chain(jx.jnp, x, cj, n))
        if jit:
            vg = jx.jax.jit(vg)
        return lambda: jx.jax.block_until_ready(vg(xj))

    return {'numpy': build_numpy, 'funcgrad': build_funcgrad, 'replay': build_replay,
            'autograd': build_autograd,
            'torch': build_torch, 'jax': lambda: build_jax(False),
            'jax.jit': lambda: build_jax(True)}


def run(cfg: Config) -> Section:
    n = 200
    want = numpy_value_and_grad(_X, _C, n)
    cases = harness.make_cases(cfg, _builders(n), harness.checker(want, rtol=1e-9))
    outcomes = harness.time_cases(cases, cfg, NAME)

    def per_op(seconds: float) -> str:
        return f'{seconds / n * 1e6:.2f} µs'
    section = Section(
        NAME, TITLE,
        f'Chain of N={n} elementwise ops (mul, sin, add, tanh) on a (4,) float64 array, '
        'value_and_grad. Cell: median total time / N (forward + backward per primitive).',
        ['system', 'µs per primitive', 'total per call', 'ratio to NumPy'])
    reference = outcomes.get('numpy')
    for key, outcome in outcomes.items():
        section.rows.append([LABELS[key], harness.cell(outcome, per_op), harness.cell(outcome),
                             harness.fmt_ratio(harness.ratio(outcome, reference))])
    return section
