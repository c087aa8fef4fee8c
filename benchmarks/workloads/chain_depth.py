"""Workload 6, chain depth: a very long chain of scalar steps.

``y = sin(y) * h + y`` repeated ``S`` times on a (1,) float64 array, ``h = 1 / S`` (Euler
steps of ``dy/dt = sin y`` over ``[0, 1]``, so value and gradient stay O(1) at any depth),
``loss = sum(y)``. Measured:

- time of value_and_grad, per step (JAX eager at a tenth of ``S``: it traces every op);
- bytes held per step: the memory held by the graph after the forward pass and before the
  backward pass (``fg.vjp`` / ``autograd.make_vjp`` / a PyTorch output with its graph /
  ``jax.vjp``), divided by ``S``, in a fresh child process, by ``tracemalloc`` and by RSS
  (see ``benchmarks.memory``);
- for funcgrad, the time at 10 S over the time at S (linear = 10), in a child process.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np

from benchmarks import harness, memory
from benchmarks.harness import Case, Config, Section
from benchmarks.systems import LABELS, load

NAME = 'chain_depth'
TITLE = '6. Chain depth'
X0 = 0.7
_PY_GRAPH = ('numpy', 'funcgrad', 'replay', 'autograd')  # systems tracemalloc sees in full


def sizes(quick: bool) -> dict[str, int]:
    """Steps for most systems, for JAX eager, and the funcgrad scaling pair."""
    steps = 3_000 if quick else 100_000
    return {'steps': steps, 'jax_steps': steps // 10, 'big': steps * 10}


def reference(steps: int) -> tuple[float, float]:
    """Value and gradient with Python floats (forward-mode product of the step derivatives).

    >>> value, grad = reference(1)
    >>> abs(value - (math.sin(X0) + X0)) < 1e-15, abs(grad - (math.cos(X0) + 1)) < 1e-15
    (True, True)
    """
    h, y, g = 1.0 / steps, X0, 1.0
    for _ in range(steps):
        g *= math.cos(y) * h + 1.0
        y = math.sin(y) * h + y
    return y, g


def _chain(xp, x, steps: int):
    h = 1.0 / steps
    y = x
    for _ in range(steps):
        y = xp.sin(y) * h + y
    return xp.sum(y)


def numpy_forward(x: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Hand-written forward: the output and a tape of every step's input (8 bytes/step)."""
    h = 1.0 / steps
    tape = np.empty((steps,) + x.shape)
    y = x
    for k in range(steps):
        tape[k] = y
        y = np.sin(y) * h + y
    return y, tape


def numpy_backward(tape: np.ndarray) -> np.ndarray:
    h = 1.0 / len(tape)
    g = np.ones(tape.shape[1:])
    for k in reversed(range(len(tape))):
        g = g * (np.cos(tape[k]) * h + 1.0)
    return g


def _jax_loop(jx, steps: int):
    """The chain as ``lax.fori_loop`` for ``jax.jit``: a Python loop of 10^5 steps would be
    unrolled into a program too large to compile."""
    jax, jnp = jx.jax, jx.jnp
    h = 1.0 / steps

    def f(x):
        return jnp.sum(jax.lax.fori_loop(0, steps, lambda _, y: jnp.sin(y) * h + y, x))
    return f


def hold_graph(system: str, x: np.ndarray, steps: int):
    """Run the forward pass keeping what backward needs; returns ``(holder, backward)``
    where ``backward()`` returns the gradient w.r.t. ``x``."""
    if system == 'numpy':
        y, tape = numpy_forward(x, steps)
        return (y, tape), lambda: numpy_backward(tape)
    if system == 'funcgrad':
        fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
        out, vjp_fn = fg.vjp(lambda x: _chain(fnp, x, steps), x)
        return (out, vjp_fn), lambda: vjp_fn(np.ones_like(np.asarray(out)))[0]
    if system == 'autograd':
        ag = load('autograd')
        vjp_fn, out = ag.autograd.make_vjp(lambda x: _chain(ag.anp, x, steps))(x)
        return (out, vjp_fn), lambda: vjp_fn(np.ones_like(np.asarray(out)))
    if system == 'torch':
        torch = load('torch')
        xt = torch.tensor(x, requires_grad=True)
        out = _chain(torch, xt, steps)
        return out, lambda: torch.autograd.grad(out, (xt,))[0]
    if system in ('jax', 'jax.jit'):
        jx = load('jax')
        f = jx.jax.jit(_jax_loop(jx, steps)) if system == 'jax.jit' else (
            lambda x: _chain(jx.jnp, x, steps))
        out, vjp_fn = jx.jax.vjp(f, jx.jnp.asarray(x))
        jx.jax.block_until_ready(out)
        return (out, vjp_fn), lambda: vjp_fn(jx.jnp.ones_like(out))[0]
    raise KeyError(system)


def value_and_grad_thunk(system: str, x: np.ndarray, steps: int):
    """A zero-argument function computing ``(value, grad)`` the system's usual way."""
    if system == 'numpy':
        def run():
            y, tape = numpy_forward(x, steps)
            return np.sum(y), numpy_backward(tape)
        return run
    if system == 'funcgrad':
        fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
        vg = fg.value_and_grad(lambda x: _chain(fnp, x, steps))
        return lambda: vg(x)
    if system == 'replay':
        fg, fnp = load('replay').fg, load('replay').fnp
        vg = fg.replay(fg.value_and_grad(lambda x: _chain(fnp, x, steps)))
        return lambda: vg(x)
    if system == 'autograd':
        ag = load('autograd')
        vg = ag.autograd.value_and_grad(lambda x: _chain(ag.anp, x, steps))
        return lambda: vg(x)
    if system == 'torch':
        torch = load('torch')
        xt = torch.tensor(x, requires_grad=True)

        def run_torch():
            out = _chain(torch, xt, steps)
            return out.detach(), torch.autograd.grad(out, (xt,))[0]
        return run_torch
    if system in ('jax', 'jax.jit'):
        jx = load('jax')
        xj = jx.jnp.asarray(x)
        if system == 'jax.jit':
            vg = jx.jax.jit(jx.jax.value_and_grad(_jax_loop(jx, steps)))
        else:
            vg = jx.jax.value_and_grad(lambda x: _chain(jx.jnp, x, steps))
        return lambda: jx.jax.block_until_ready(vg(xj))
    raise KeyError(system)


def _check(steps: int):
    value, grad = reference(steps)
    return harness.checker((value, np.array([grad])), rtol=1e-9)


# ---------------------------------------------------------------------------- child probes


def memory_probe(system: str, meter: memory.Meter, params: dict) -> dict:
    """In a child: bytes held by the forward graph (task 'hold'), or the funcgrad scaling
    times (task 'scaling')."""
    x = np.array([X0])
    if params['task'] == 'first_call':
        return {'bytes': _first_call_peak(meter, x, params['kind'], params['steps'])}
    if params['task'] == 'scaling':
        times = {}
        for steps, reps in ((params['small'], params['reps']), (params['big'], 1)):
            thunk = value_and_grad_thunk(system, x, steps)
            samples = []
            for _ in range(reps):
                start = time.perf_counter()
                out = thunk()
                samples.append(time.perf_counter() - start)
            wrong = _check(steps)(out)
            if wrong:
                return {'error': f'WRONG: {wrong}', 'traceback': ''}
            times[str(steps)] = statistics.median(samples)
            del out, thunk
        return {'times': times}
    steps = params['steps']
    if system == 'replay':
        return _replay_probe(meter, x, steps)
    warm, backward = hold_graph(system, x, steps if system == 'jax.jit' else 100)
    backward()
    del warm, backward
    meter.start()
    before = meter.current()
    holder, backward = hold_graph(system, x, steps)
    held = meter.current() - before
    grad = backward()
    meter.stop()
    wrong = _check(steps)((np.asarray(harness.to_numpy(holder[0] if isinstance(holder, tuple)
                                                       else holder)), grad))
    if wrong:
        return {'error': f'WRONG: {wrong}', 'traceback': ''}
    return {'bytes': held, 'steps': steps}


def _first_call_peak(meter: memory.Meter, x: np.ndarray, kind: str, steps: int) -> int:
    """The peak of one call of ``steps`` steps above what was held (see
    :func:`first_calls`): ``eager``, or replay's first call, ``fresh`` or ``warm``."""
    fg, fnp = load('funcgrad').fg, load('funcgrad').fnp

    def value_and_grad(n):
        return fg.value_and_grad(lambda x: _chain(fnp, x, n))

    value_and_grad(10)(x)  # every code path warm, in every kind
    fg.replay(value_and_grad(10))(x)
    if kind == 'warm':
        fg.replay(value_and_grad(steps))(x)
    meter.start()
    fun = value_and_grad(steps) if kind == 'eager' else fg.replay(value_and_grad(steps))
    before = meter.current()
    meter.reset_peak()
    fun(x)
    return meter.peak() - before


def first_calls(python: str, steps: int, timeout_s: float = 600.0) -> dict[str, float]:
    """Peak bytes per step (tracemalloc) of one call on this workload's chain of ``steps``
    steps: ``eager`` (``fg.value_and_grad``), and replay's first call (the trace) in a
    ``fresh`` process and in a ``warm`` one, which has traced as long a chain before (what
    a process keeps between traces would show as a difference). Each in a child of its
    own::

        python -m benchmarks.first_call_memory 100000
    """
    out = {}
    for kind in ('eager', 'fresh', 'warm'):
        result = memory.run_child(python, NAME, 'funcgrad', 'tracemalloc',
                                  {'task': 'first_call', 'kind': kind, 'steps': steps},
                                  timeout_s)
        if 'error' in result:
            raise RuntimeError(f"{kind}: {result['error']}\n{result['traceback']}")
        out[kind] = result['bytes'] / steps
    return out


def _replay_probe(meter: memory.Meter, x: np.ndarray, steps: int) -> dict:
    """A replayed call has no pause between forward and backward to look at: what it holds
    at its peak, above what was held before the call (the plan stays cached between calls and
    is counted apart, as ``plan``)."""
    meter.start()
    before = meter.current()
    thunk = value_and_grad_thunk('replay', x, steps)
    thunk()  # traces
    thunk()  # builds the plan
    after = meter.current()
    meter.reset_peak()
    out = thunk()
    held = meter.peak() - after
    meter.stop()
    wrong = _check(steps)(out)
    if wrong:
        return {'error': f'WRONG: {wrong}', 'traceback': ''}
    return {'bytes': held, 'steps': steps, 'plan': after - before}


# ---------------------------------------------------------------------------- parent


def run(cfg: Config) -> Section:
    size = sizes(cfg.quick)
    x = np.array([X0])
    steps_of = {key: size['jax_steps'] if key == 'jax' else size['steps'] for key in LABELS}
    cases = [Case(key, key, (lambda key=key: value_and_grad_thunk(key, x, steps_of[key])),
                  _check(steps_of[key]))
             for key in LABELS if key in cfg.systems]
    # Calls take seconds here: few samples, one call each.
    timing_cfg = Config(quick=cfg.quick, reps=min(cfg.reps, 1 if cfg.quick else 3),
                        min_sample_s=0.0, systems=cfg.systems, failures=cfg.failures,
                        verbose=cfg.verbose)
    outcomes = harness.time_cases(cases, timing_cfg, NAME)

    jobs, slots = [], []
    for key in (k for k in LABELS if k in cfg.systems and outcomes[k].status != 'not installed'):
        for mode in memory.modes_for(key in _PY_GRAPH, cfg.quick):
            jobs.append((NAME, key, mode, {'task': 'hold', 'steps': steps_of[key]}))
            slots.append((key, mode))
    held = {}
    plan_bytes = {}
    for slot, result in zip(slots, memory.run_children(cfg.python, jobs, cfg.child_timeout_s),
                            strict=True):
        held[slot] = _memory_cell(cfg, slot, result)
        if 'plan' in result:
            plan_bytes[slot[1]] = result['plan'] / result['steps']

    section = Section(
        NAME, TITLE,
        f'`y = sin(y) * h + y`, h = 1/S, on a (1,) float64 array, S = {size["steps"]:,} steps '
        f'(JAX eager: {size["jax_steps"]:,}), value_and_grad. Bytes held per step: memory held '
        'by the graph between forward and backward, divided by S, measured in a fresh process.',
        ['system', 'steps', 'value_and_grad', 'µs per step', 'ratio to NumPy (per step)',
         'bytes/step (tracemalloc)', 'bytes/step (RSS)'])
    reference_outcome = outcomes.get('numpy')
    per_step = {key: (o.seconds / steps_of[key] if o.ok and o.seconds else None)
                for key, o in outcomes.items()}
    for key, outcome in outcomes.items():
        rel = None
        if per_step.get(key) and reference_outcome is not None and per_step.get('numpy'):
            rel = per_step[key] / per_step['numpy']
        missing = outcome.status if outcome.status == 'not installed' else '-'
        section.rows.append([
            LABELS[key], f'{steps_of[key]:,}', harness.cell(outcome),
            f'{per_step[key] * 1e6:.2f}' if per_step[key] else outcome.status,
            harness.fmt_ratio(rel),
            held.get((key, 'tracemalloc'), missing), held.get((key, 'rss'), missing)])
    section.notes.append('tracemalloc counts Python objects and NumPy buffers only (exact for '
                         'NumPy, funcgrad, autograd; blind to PyTorch/XLA C++ memory). RSS '
                         'counts everything, to a page; PyTorch and JAX are read by RSS.')
    section.notes.append('JAX jit runs the chain as `lax.fori_loop` (a Python loop would unroll '
                         'into a program too large to compile); its graph is the saved '
                         'residuals of the loop.')
    if 'replay' in cfg.systems:
        plan = ', '.join(f'{b:,.0f} ({mode})' for mode, b in plan_bytes.items())
        section.notes.append(
            'funcgrad replay runs forward and backward as one plan, with no pause between '
            'them: its bytes/step are the peak of a replayed call above what was held before '
            'it, divided by S -- the residuals the backward rules read (one (1,) array per '
            'step: 8 bytes of data and NumPy\'s array object) and the gradients in flight. '
            f'The plan itself, cached between calls, holds {plan or "-"} bytes per step.')
    if cfg.quick:
        section.notes.append('--quick: NumPy-based systems are measured by tracemalloc only.')
    if 'funcgrad' in cfg.systems and outcomes.get('funcgrad') and outcomes['funcgrad'].ok:
        section.notes.append(_scaling_note(cfg, size))
    elif 'funcgrad' in cfg.systems:
        section.notes.append('funcgrad scaling: skipped, the S-step run did not succeed '
                             f'({outcomes["funcgrad"].status}).')
    return section


def _memory_cell(cfg: Config, slot: tuple[str, str], result: dict) -> str:
    if 'error' in result:
        if result['error'].startswith('error') and result.get('traceback'):
            cfg.failures.append((NAME, f'{slot[0]} ({slot[1]} child)', result['traceback']))
        return result['error']
    return f'{result["bytes"] / result["steps"]:,.0f}'


def _scaling_note(cfg: Config, size: dict[str, int]) -> str:
    small, big = size['steps'], size['big']
    params = {'task': 'scaling', 'small': small, 'big': big, 'reps': 1 if cfg.quick else 2}
    result = memory.run_child(cfg.python, NAME, 'funcgrad', 'none', params, cfg.child_timeout_s)
    if 'error' in result:
        if result['error'].startswith('error') and result.get('traceback'):
            cfg.failures.append((NAME, 'funcgrad (scaling child)', result['traceback']))
        return f'funcgrad scaling {big:,} vs {small:,} steps: {result["error"]}'
    t_small, t_big = result['times'][str(small)], result['times'][str(big)]
    return (f'funcgrad scaling (fresh process): {big:,} steps {harness.fmt_time(t_big)}, '
            f'{small:,} steps {harness.fmt_time(t_small)}: ratio **{t_big / t_small:.2f}** '
            f'(linear = {big // small}).')

