"""MLP value_and_grad on the device: funcgrad beside hand-written backprop and PyTorch.

The loss and the hand-written backprop are the CPU benchmark's (``benchmarks/workloads/
mlp.py``), run in the device's namespace; PyTorch runs on its matching device. Timing goes
through the CPU benchmark's harness: interleaved samples in a shuffled order, each after a
warm-up call, ended by a device synchronisation inside the timed region; medians.

>>> from benchmarks.gpu.backend import numpy_backend
>>> result = run(numpy_backend(), {'tiny': ((8, 4, 3), 5)}, reps=3, min_sample_s=0.001)
>>> result['tiny']['systems']['hand']['status'], result['tiny']['systems']['funcgrad']['status']
('ok', 'ok')
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from benchmarks import harness
from benchmarks.gpu.backend import Backend
from benchmarks.harness import Case, Config
from benchmarks.systems import load
from benchmarks.workloads import mlp as cpu_mlp

# name -> (layer sizes, batch); float32 throughout.
GPU_SIZES = {
    'batch 128': ((784, 512, 512, 10), 128),             # overhead-bound
    'batch 8192': ((1024, 4096, 4096, 10), 8192),        # compute-bound
}
DRY_RUN_SIZES = {
    'batch 8': ((32, 16, 16, 4), 8),
    'batch 64': ((64, 64, 64, 10), 64),
}
# Issue 7's figures on an H200 (hand-written CuPy, PyTorch CUDA), and its targets for
# funcgrad over hand-written CuPy, by size.
REFERENCE_H200 = {'batch 128': (1.21e-3, 1.43e-3), 'batch 8192': (21.1e-3, 20.0e-3)}
TARGETS = {'batch 128': 1.3, 'batch 8192': 1.05}
SYSTEMS = ('hand', 'funcgrad', 'torch')
LABELS = {'hand': 'hand-written {xp}', 'funcgrad': 'funcgrad', 'torch': 'PyTorch ({device})'}


def label(system: str, backend: Backend) -> str:
    """The report's name for ``system`` on ``backend``."""
    device = 'CUDA' if backend.torch_device == 'cuda' else 'CPU'
    xp = {'cupy': 'CuPy', 'standin': 'stand-in'}.get(backend.name, 'NumPy')
    return LABELS[system].format(xp=xp, device=device)


def _builders(backend: Backend, params: dict, x: np.ndarray, y: np.ndarray) -> dict:
    xp = backend.xp

    def build_hand():
        p = {k: backend.to_device(v) for k, v in params.items()}
        xd, yd = backend.to_device(x), backend.to_device(y)
        return lambda: cpu_mlp.manual_value_and_grad(xp, p, xd, yd)

    def build_funcgrad():
        import funcgrad as fg
        import funcgrad.numpy as fnp

        p = {k: backend.to_device(v) for k, v in params.items()}
        xd, yd = backend.to_device(x), backend.to_device(y)
        step = fg.value_and_grad(lambda q: cpu_mlp.loss(fnp, q, xd, yd))
        return lambda: step(p)

    def build_torch():
        torch = load('torch')  # NotInstalled: a 'not installed' cell
        dev = backend.torch_device
        pt = {k: torch.tensor(v, device=dev, requires_grad=True) for k, v in params.items()}
        xt, yt = torch.tensor(x, device=dev), torch.tensor(y, device=dev)
        keys = list(pt)

        def step():
            value = cpu_mlp.torch_loss(torch, pt, xt, yt)
            grads = torch.autograd.grad(value, [pt[k] for k in keys])
            return value.detach(), dict(zip(keys, grads, strict=True))
        return step

    return {'hand': build_hand, 'funcgrad': build_funcgrad, 'torch': build_torch}


def _host(tree: Any, backend: Backend) -> Any:
    """A NumPy copy of a (value, grads) result from any of the systems."""
    value, grads = tree
    def conv(a):  # PyTorch tensors, device arrays, NumPy
        return harness.to_numpy(a) if hasattr(a, 'detach') else backend.to_host(a)

    return conv(value), {k: conv(v) for k, v in grads.items()}


def _checker(backend: Backend, want: Any, on_device: bool):
    def check(got: Any) -> str | None:
        if on_device:
            value, grads = got
            for name, leaf in [('value', value), *sorted(grads.items())]:
                if not backend.on_device(leaf):
                    return (f'{name} is a {type(leaf).__module__}.{type(leaf).__qualname__}, '
                            'not on the device')
        # float32: sums over up to 8192 terms, in another order than the reference's.
        return harness.compare(_host(got, backend), want, rtol=2e-3, atol_frac=2e-3)
    return check


def run(backend: Backend, sizes: dict | None = None, reps: int = 21,
        min_sample_s: float = 0.05, systems: tuple[str, ...] = SYSTEMS) -> dict:
    """Time every system at every size; a JSON-able dict by size, then by system.

    The reference result is hand-written backprop in NumPy on the CPU at sizes up to
    ~10^8 multiply-adds, and hand-written backprop on the device above that (the CPU would
    take longer than the whole check); the hand-written row itself is then checked only
    for agreement at the smaller sizes.
    """
    sizes = sizes if sizes is not None else (DRY_RUN_SIZES if backend.dry_run else GPU_SIZES)
    results = {}
    for name, (layers, batch) in sizes.items():
        params, x, y = cpu_mlp.make_data(batch, sizes=layers)
        flops = batch * sum(a * b for a, b in itertools.pairwise(layers))
        if flops <= 1e8:
            want, reference = cpu_mlp.numpy_value_and_grad(params, x, y), 'NumPy on the CPU'
        else:
            hand = _builders(backend, params, x, y)['hand']()
            want, reference = _host(hand(), backend), 'hand-written backprop on the device'
            del hand
        builders = _builders(backend, params, x, y)
        cases = [Case(system, system, builders[system],
                      _checker(backend, want, on_device=system != 'torch'), backend.sync)
                 for system in systems]
        cfg = Config(quick=False, reps=reps, min_sample_s=min_sample_s, systems=systems)
        outcomes = harness.time_cases(cases, cfg, f'gpu-mlp-{name}')
        hand = outcomes.get('hand')
        entry = {'layers': list(layers), 'batch': batch, 'dtype': 'float32',
                 'reference': reference, 'reps': reps, 'systems': {},
                 'failures': [{'system': label_, 'traceback': text}
                              for _, label_, text in cfg.failures]}
        for system, outcome in outcomes.items():
            entry['systems'][system] = {
                'label': label(system, backend), 'status': outcome.status,
                'median_s': outcome.seconds, 'samples_s': list(outcome.samples),
                'ratio_to_hand': harness.ratio(outcome, hand)}
        results[name] = entry
        backend.sync()
        _free(backend)
    return results


def _free(backend: Backend) -> None:
    """Hand the big size's buffers back between sizes (CuPy's and PyTorch's pools)."""
    if backend.dry_run:
        return
    import gc

    gc.collect()
    backend.xp.get_default_memory_pool().free_all_blocks()
    try:
        import torch

        torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001, S110 - no torch: nothing to free
        pass
