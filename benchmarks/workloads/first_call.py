"""Workload 8, replay's first calls: what tracing and building a plan cost.

``fg.replay`` traces on the first call with a signature (an eager call on recording arrays)
and builds its plan on the second (liveness, registers, one function per step). For the
functions of workloads 1-5, each sample here makes a fresh ``fg.replay`` and calls it once
(first call) or twice (first two calls), against one eager call of the same function.
"""

from __future__ import annotations

import numpy as np

from benchmarks import harness
from benchmarks.harness import Case, Config, Section
from benchmarks.systems import load
from benchmarks.workloads import fanin, hvp, mlp, nth_derivative, overhead

NAME = 'first_call'
TITLE = '8. Replay: the first calls'


def _functions(quick: bool) -> dict[str, tuple]:
    """``{label: (make_function, args)}``: ``make_function()`` returns the funcgrad function
    that workload times (eager), ``args`` what it is called with."""
    fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
    params, x, y = mlp.make_data(32 if quick else 128)
    a = np.random.default_rng(4).standard_normal((1000, 1000)) / np.sqrt(1000)
    xv, v = np.random.default_rng(5).standard_normal((2, 1000))

    def f_hvp(x):
        return hvp._f(fnp, a, x)

    def d6():
        def f(x):
            return fnp.sin(x) * fnp.exp(x)

        for _ in range(nth_derivative.ORDER):
            f = fg.grad(f)
        return f

    return {
        '1. overhead (200 primitives)': (
            lambda: fg.value_and_grad(lambda x: overhead._chain(fnp, x, overhead._C, 200)),
            (overhead._X,)),
        '2. MLP': (lambda: fg.value_and_grad(lambda p: mlp.loss(fnp, p, x, y)), (params,)),
        '3. fan-in': (lambda: fg.value_and_grad(lambda x: fanin._loss(fnp, x, 1000)),
                      (np.random.default_rng(3).standard_normal(1000),)),
        '4. HVP': (lambda: (lambda x, v: fg.hvp(f_hvp, (x,), (v,))), (xv, v)),
        '5. 6th derivative': (d6, (np.array(nth_derivative.X0),)),
    }


def run(cfg: Config) -> Section:
    if 'replay' not in cfg.systems:
        section = Section(NAME, TITLE, __doc__.split('\n\n')[1].replace('\n', ' '),
                          ['function'])
        section.notes.append('skipped: replay is not among the systems of this run')
        return section
    fg = load('funcgrad').fg
    cases = []
    for label, (make, args) in _functions(cfg.quick).items():
        want = make()(*args)
        check = harness.checker(want, rtol=0.0)  # replay is bit-identical to eager
        eager = make()
        cases.append(Case(f'{label}/eager', 'funcgrad', lambda e=eager, a=args: lambda: e(*a),
                          check))

        def first(make=make, args=args):
            def thunk():
                return fg.replay(make())(*args)
            return thunk

        def second(make=make, args=args):
            def thunk():
                f = fg.replay(make())
                f(*args)
                return f(*args)
            return thunk

        cases.append(Case(f'{label}/first', 'funcgrad', first, check))
        cases.append(Case(f'{label}/second', 'funcgrad', second, check))
    outcomes = harness.time_cases(cases, cfg, NAME)
    section = Section(
        NAME, TITLE, __doc__.split('\n\n')[1].replace('\n', ' '),
        ['function', 'eager call', 'first call (traces)', 'first / eager',
         'second call (builds the plan)', 'second / eager'])
    for label in _functions(cfg.quick):
        eager, first, both = (outcomes[f'{label}/{k}'] for k in ('eager', 'first', 'second'))
        second_s = (both.seconds - first.seconds) if both.ok and first.ok else None
        second = harness.Outcome('ok', second_s) if second_s is not None else both
        section.rows.append([
            label, harness.cell(eager), harness.cell(first),
            harness.fmt_ratio(harness.ratio(first, eager)), harness.cell(second),
            harness.fmt_ratio(harness.ratio(second, eager))])
    section.notes.append('The second call is the median of two calls minus that of one. '
                         'Plans compile into one function after 32 replays (not counted '
                         'here). Replayed calls are timed in workloads 1-5.')
    return section
