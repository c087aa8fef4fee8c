"""Workload 7, memory during backward for a chain of large arrays.

``y = sin(y) * 0.5 + y`` for 20 steps on a (1000, 1000) float64 array (8 MB), ``loss =
sum(y)``. Two numbers per system, in units of one such array, each in a fresh process:

- graph after forward: memory held between forward and backward (``vjp`` and the like);
- peak during value_and_grad: the highest memory during one whole value_and_grad call.

Both relative to the memory before the call (input included there). funcgrad, HIPS
autograd, PyTorch and JAX also run with checkpointing: segments of 5 steps are wrapped in
``fg.checkpoint`` / ``autograd.checkpoint`` / ``torch.utils.checkpoint`` /
``jax.checkpoint``, so only segment boundaries are kept and each segment's insides are
recomputed during backward.
"""

from __future__ import annotations

import numpy as np

from benchmarks import harness, memory
from benchmarks.harness import Config, Section
from benchmarks.systems import LABELS, installed, load

NAME = 'backward_memory'
TITLE = '7. Memory during backward'
H = 0.5

#: Row key -> (system, checkpointed).
VARIANTS: dict[str, tuple[str, bool]] = {
    'numpy': ('numpy', False),
    'funcgrad': ('funcgrad', False),
    'funcgrad+checkpoint': ('funcgrad', True),
    'replay': ('replay', False),
    'replay+checkpoint': ('replay', True),
    'autograd': ('autograd', False),
    'autograd+checkpoint': ('autograd', True),
    'torch': ('torch', False),
    'torch+checkpoint': ('torch', True),
    'jax': ('jax', False),
    'jax+checkpoint': ('jax', True),
    'jax.jit': ('jax.jit', False),
}
_PY_GRAPH = ('numpy', 'funcgrad', 'replay', 'autograd')


def sizes(quick: bool) -> dict[str, int]:
    return {'n': 500 if quick else 1000, 'steps': 10 if quick else 20, 'segment': 5}


def _segment(xp, steps: int):
    def run(y):
        for _ in range(steps):
            y = xp.sin(y) * H + y
        return y
    return run


def _loss(xp, steps: int, segment: int, wrap=None):
    """The chain; with ``wrap`` (a checkpoint combinator) each segment is wrapped by it."""
    inner = _segment(xp, segment)
    block = wrap(inner) if wrap is not None else inner

    def loss(x):
        y = x
        for _ in range(steps // segment):
            y = block(y)
        return xp.sum(_segment(xp, steps % segment)(y))
    return loss


def numpy_forward(x: np.ndarray, steps: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Hand-written forward: the output and each step's input, which backward needs."""
    tape, y = [], x
    for _ in range(steps):
        tape.append(y)
        y = np.sin(y) * H + y
    return y, tape


def numpy_backward(tape: list[np.ndarray]) -> np.ndarray:
    g = np.ones_like(tape[0])
    for y in reversed(tape):
        g *= np.cos(y) * H + 1.0
    return g


def _programs(variant: str, x: np.ndarray, size: dict[str, int]):
    """``(hold, value_and_grad)`` for a variant: ``hold()`` runs forward and returns
    ``(holder, backward)``; ``value_and_grad()`` returns ``(value, grad)``."""
    system, checkpointed = VARIANTS[variant]
    steps, segment = size['steps'], size['segment'] if checkpointed else size['steps']
    if system == 'numpy':
        def hold_numpy():
            y, tape = numpy_forward(x, steps)
            return (y, tape), lambda: numpy_backward(tape)

        def vg_numpy():
            y, tape = numpy_forward(x, steps)
            return np.sum(y), numpy_backward(tape)
        return hold_numpy, vg_numpy
    if system == 'funcgrad':
        fg, fnp = load('funcgrad').fg, load('funcgrad').fnp
        f = _loss(fnp, steps, segment, fg.checkpoint if checkpointed else None)

        def hold_funcgrad():
            out, vjp_fn = fg.vjp(f, x)
            return (out, vjp_fn), lambda: vjp_fn(np.ones_like(np.asarray(out)))[0]
        vg = fg.value_and_grad(f)
        return hold_funcgrad, lambda: vg(x)
    if system == 'replay':
        fg, fnp = load('replay').fg, load('replay').fnp
        f = _loss(fnp, steps, segment, fg.checkpoint if checkpointed else None)
        vg = fg.replay(fg.value_and_grad(f))
        return None, lambda: vg(x)  # no pause between forward and backward to hold
    if system == 'autograd':
        ag = load('autograd')
        f = _loss(ag.anp, steps, segment, ag.autograd.checkpoint if checkpointed else None)

        def hold_autograd():
            vjp_fn, out = ag.autograd.make_vjp(f)(x)
            return (out, vjp_fn), lambda: vjp_fn(np.ones_like(np.asarray(out)))
        vg = ag.autograd.value_and_grad(f)
        return hold_autograd, lambda: vg(x)
    if system == 'torch':
        torch = load('torch')
        import torch.utils.checkpoint as torch_checkpoint

        wrap = None
        if checkpointed:
            def wrap(block):
                return lambda y: torch_checkpoint.checkpoint(block, y, use_reentrant=False)
        f = _loss(torch, steps, segment, wrap)
        xt = torch.tensor(x, requires_grad=True)

        def hold_torch():
            out = f(xt)
            return out, lambda: torch.autograd.grad(out, (xt,))[0]

        def vg_torch():
            out = f(xt)
            return out.detach(), torch.autograd.grad(out, (xt,))[0]
        return hold_torch, vg_torch
    if system in ('jax', 'jax.jit'):
        jax, jnp = load('jax').jax, load('jax').jnp
        f = _loss(jnp, steps, segment, jax.checkpoint if checkpointed else None)
        f_run = jax.jit(f) if system == 'jax.jit' else f
        vg = jax.value_and_grad(f)
        vg = jax.jit(vg) if system == 'jax.jit' else vg
        xj = jnp.asarray(x)

        def hold_jax():
            out, vjp_fn = jax.vjp(f_run, xj)
            jax.block_until_ready(out)
            return (out, vjp_fn), lambda: vjp_fn(jnp.ones_like(out))[0]
        return hold_jax, lambda: jax.block_until_ready(vg(xj))
    raise KeyError(variant)


def memory_probe(variant: str, meter: memory.Meter, params: dict) -> dict:
    """In a child: graph bytes after forward and peak bytes during value_and_grad."""
    size = params['size']
    x = np.random.default_rng(7).standard_normal((size['n'], size['n']))
    y, tape = numpy_forward(x, size['steps'])
    want = (np.sum(y), numpy_backward(tape))
    del y, tape
    hold, value_and_grad = _programs(variant, x, size)
    graph = None
    if hold is None:  # replay: trace, build the plan; then only the peak of a call
        value_and_grad()
        value_and_grad()
        meter.start()
    else:
        holder, backward = hold()  # warm-up: compiles, fills op caches at this shape
        backward()
        value_and_grad()
        del holder, backward

        meter.start()
        before = meter.current()
        holder, backward = hold()
        graph = meter.current() - before
        del holder, backward
    meter.reset_peak()
    before = meter.current()
    got = value_and_grad()
    peak = meter.peak() - before
    meter.stop()
    wrong = harness.compare(got, want, rtol=1e-9, atol_frac=1e-12)
    if wrong:
        return {'error': f'WRONG: {wrong}', 'traceback': ''}
    array_bytes = x.nbytes
    return {'graph': None if graph is None else graph / array_bytes, 'peak': peak / array_bytes}


def run(cfg: Config) -> Section:
    size = sizes(cfg.quick)
    # --quick keeps funcgrad's own checkpoint row and skips the peers' (each is a process).
    variants = [v for v, (system, checkpointed) in VARIANTS.items() if system in cfg.systems
                and not (cfg.quick and checkpointed and system != 'funcgrad')]
    jobs, slots = [], []
    for variant in (v for v in variants if installed(VARIANTS[v][0])):
        system = VARIANTS[variant][0]
        for mode in memory.modes_for(system in _PY_GRAPH, cfg.quick):
            jobs.append((NAME, variant, mode, {'size': size}))
            slots.append((variant, mode))
    cells: dict[tuple[str, str], tuple[str, str]] = {}
    for variant in variants:
        if not installed(VARIANTS[variant][0]):  # no process needed to say so
            cells[(variant, 'tracemalloc')] = cells[(variant, 'rss')] = ('not installed',) * 2
    for slot, result in zip(slots, memory.run_children(cfg.python, jobs, cfg.child_timeout_s),
                            strict=True):
        if 'error' in result:
            if result['error'].startswith('error') and result.get('traceback'):
                cfg.failures.append((NAME, f'{slot[0]} ({slot[1]} child)', result['traceback']))
            cells[slot] = (result['error'], result['error'])
        else:
            graph = '-' if result['graph'] is None else f'{result["graph"]:.1f}'
            cells[slot] = (graph, f'{result["peak"]:.1f}')

    n, steps = size['n'], size['steps']
    section = Section(
        NAME, TITLE,
        f'`y = sin(y) * {H} + y`, {steps} steps on a ({n}, {n}) float64 array, '
        f'value_and_grad of sum(y). Unit: one ({n}, {n}) array = {n * n * 8 / 1e6:g} MB. '
        f'"+checkpoint": segments of {size["segment"]} steps recomputed in backward.',
        ['system', 'graph after forward (tracemalloc)', 'peak in value_and_grad (tracemalloc)',
         'graph after forward (RSS)', 'peak in value_and_grad (RSS)'])
    for variant in variants:
        system, checkpointed = VARIANTS[variant]
        label = LABELS[system] + (' + checkpoint' if checkpointed else '')
        traced = cells.get((variant, 'tracemalloc'), ('-', '-'))
        rss = cells.get((variant, 'rss'), ('-', '-'))
        section.rows.append([label, *traced, *rss])
    section.notes.append('Each number comes from a fresh process after a warm-up call; '
                         'tracemalloc sees Python objects and NumPy buffers only, so it is '
                         'shown for NumPy-based systems; RSS (VmRSS, and VmHWM reset through '
                         '/proc/self/clear_refs) sees everything.')
    if 'replay' in cfg.systems:
        section.notes.append('funcgrad replay runs forward and backward as one plan: there is '
                             'no graph between them to measure ("-"); its peak is that of a '
                             'replayed call, the plan built and cached beforehand.')
    section.notes.append('Ideal without checkpointing: the graph keeps each step\'s input '
                         f'({steps} arrays); backward adds a few temporaries.')
    if 'autograd+checkpoint' in variants:
        section.notes.append('HIPS autograd builds a VJP when a primitive runs forward, and '
                             '`autograd.checkpoint`\'s VJP re-runs the segment with a graph, '
                             'so its checkpointing keeps the segment graph from the forward '
                             'pass on and saves nothing.')
    if cfg.quick:
        section.notes.append('--quick: NumPy-based systems are measured by tracemalloc only; '
                             'the peers\' checkpoint rows are skipped.')
    return section
