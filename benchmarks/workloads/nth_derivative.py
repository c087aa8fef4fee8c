"""Workload 5, the 6th derivative of a scalar function by nesting ``grad`` six times.

``f(x) = sin(x) * exp(x)`` at ``x = 0.5``. Each level differentiates the graph built by
the level inside it, so the work grows quickly with the order: this measures the cost of
higher-order differentiation. The exact value is the closed form
``f^(n)(x) = 2^(n/2) e^x sin(x + n pi / 4)``, i.e. ``-8 e^x cos(x)`` for n = 6, which every
system's result is checked against (no finite differences). The NumPy row times that
closed form and is only a floor, not a comparable method.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks import harness
from benchmarks.harness import Config, Section
from benchmarks.systems import LABELS, load

NAME = 'nth_derivative'
TITLE = '5. 6th derivative by nested grad'
ORDER = 6
X0 = 0.5


def closed_form(x: float, order: int = ORDER) -> float:
    """The ``order``-th derivative of ``sin(x) exp(x)``.

    >>> round(closed_form(0.0, 1), 12)  # (sin exp)' = cos exp + sin exp = 1 at 0
    1.0
    """
    return 2.0 ** (order / 2) * math.exp(x) * math.sin(x + order * math.pi / 4)


def _nest(grad, fun, order: int):
    for _ in range(order):
        fun = grad(fun)
    return fun


def _builders():
    def build_numpy():
        return lambda: -8.0 * np.exp(X0) * np.cos(X0)

    def build_funcgrad():
        fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
        d6 = _nest(fg.grad, lambda x: fnp.sin(x) * fnp.exp(x), ORDER)
        return lambda: d6(X0)

    def build_replay():
        fg, fnp = load('replay').fg, load('replay').fnp
        d6 = fg.replay(_nest(fg.grad, lambda x: fnp.sin(x) * fnp.exp(x), ORDER))
        x = np.array(X0)  # an array: a Python float would be part of the signature
        return lambda: d6(x)

    def build_autograd():
        ag = load('autograd')
        d6 = _nest(ag.autograd.grad, lambda x: ag.anp.sin(x) * ag.anp.exp(x), ORDER)
        return lambda: d6(X0)

    def build_torch():
        torch = load('torch')
        xt = torch.tensor(X0, dtype=torch.float64, requires_grad=True)

        def run():
            y = torch.sin(xt) * torch.exp(xt)
            for level in range(ORDER):
                (y,) = torch.autograd.grad(y, (xt,), create_graph=level < ORDER - 1)
            return y
        return run

    def build_jax(jit: bool):
        jx = load('jax')
        d6 = _nest(jx.jax.grad, lambda x: jx.jnp.sin(x) * jx.jnp.exp(x), ORDER)
        d6 = jx.jax.jit(d6) if jit else d6
        x = jx.jnp.asarray(X0, dtype=jx.jnp.float64)
        return lambda: jx.jax.block_until_ready(d6(x))

    return {'numpy': build_numpy, 'funcgrad': build_funcgrad, 'replay': build_replay,
            'autograd': build_autograd,
            'torch': build_torch, 'jax': lambda: build_jax(False),
            'jax.jit': lambda: build_jax(True)}


def run(cfg: Config) -> Section:
    exact = closed_form(X0)

    def check(out) -> str | None:
        return harness.compare(harness.to_numpy(out).reshape(()), exact, rtol=1e-9)

    outcomes = harness.time_cases(harness.make_cases(cfg, _builders(), check), cfg, NAME)

    def ms(seconds: float) -> str:
        return f'{seconds * 1e3:.3g} ms'
    section = Section(
        NAME, TITLE,
        f'd^{ORDER}/dx^{ORDER} [sin(x) exp(x)] at x = {X0} by {ORDER} nested grads, float64; '
        f'checked against the closed form -8 e^x cos x = {exact:.15g} (rtol 1e-9).',
        ['system', 'ms per evaluation', 'ratio to autograd'])
    reference = outcomes.get('autograd')
    for key, outcome in outcomes.items():
        label = LABELS[key] + (' (closed form, floor)' if key == 'numpy' else '')
        rel = '-' if key == 'numpy' else harness.fmt_ratio(harness.ratio(outcome, reference))
        section.rows.append([label, harness.cell(outcome, ms), rel])
    section.notes.append('Ratios are to HIPS autograd here, since the NumPy row is a closed '
                         'form and not a nested derivative.')
    section.notes.append('funcgrad replay is given x as a 0-d array: a Python float is a '
                         'value of the signature, and a function of it alone would be '
                         'computed once and returned.')
    return section
