"""Memory: gradients are released as the fold consumes them; checkpoint keeps less."""

from __future__ import annotations

import tracemalloc

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp

N = 400  # (400, 400) float64 arrays: 1.28 MB each, far above any bookkeeping
ARRAY = N * N * 8


def _peak_bytes(fun, *args):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = fun(*args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - base, result


def _block(x):
    for _ in range(5):
        x = fnp.sin(x) * 0.9
    return x


def _plain(x):
    for _ in range(4):
        x = _block(x)
    return fnp.sum(x)


_ckpt_block = fg.checkpoint(_block)


def _checkpointed(x):
    for _ in range(4):
        x = _ckpt_block(x)
    return fnp.sum(x)


def test_checkpoint_gives_the_same_gradient_with_fewer_live_bytes():
    x = np.random.default_rng(0).uniform(-1, 1, (N, N))
    peak_plain, (v1, g1) = _peak_bytes(fg.value_and_grad(_plain), x)
    peak_ckpt, (v2, g2) = _peak_bytes(fg.value_and_grad(_checkpointed), x)
    np.testing.assert_allclose(v1, v2)
    np.testing.assert_allclose(g1, g2, rtol=1e-12)
    # Plain keeps 40 intermediates (sin and the product, 20 ops each): ~40 arrays.
    # Checkpointed keeps the 4 block outputs plus one block's 10 while it recomputes.
    assert peak_plain > 35 * ARRAY
    assert peak_ckpt < 0.5 * peak_plain, (peak_ckpt / ARRAY, peak_plain / ARRAY)


def test_checkpoint_closing_over_a_weight_keeps_its_memory_benefit():
    # The layer form: each block closes over the weight w, a traced value.
    x = np.random.default_rng(2).uniform(-1, 1, (N, N))

    def model(w, ckpt):
        h = x * w
        for _ in range(4):
            block = lambda h: _block(h * w)
            h = fg.checkpoint(block)(h) if ckpt else block(h)
        return fnp.sum(h)

    w = np.array(0.8)
    peak_plain, (v1, g1) = _peak_bytes(fg.value_and_grad(model), w, False)
    peak_ckpt, (v2, g2) = _peak_bytes(fg.value_and_grad(model), w, True)
    np.testing.assert_allclose(v1, v2)
    np.testing.assert_allclose(g1, g2, rtol=1e-12)
    assert peak_plain > 35 * ARRAY
    assert peak_ckpt < 0.5 * peak_plain, (peak_ckpt / ARRAY, peak_plain / ARRAY)


def test_backward_peak_is_forward_graph_plus_a_few_arrays():
    x = np.random.default_rng(1).uniform(-1, 1, (N, N))

    def chain(x):
        for _ in range(10):
            x = fnp.sin(x)
        return fnp.sum(x)

    leaf = fg.require_grad(x)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        y = chain(leaf)
        forward = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.reset_peak()
        g = fg.backprop([y], [leaf])[leaf]
        during = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(g, fg.grad(chain)(x))
    assert forward >= 10 * ARRAY
    # At most three arrays beyond the graph: the running gradient, a rule's
    # temporary and its result (the seed of a sum is a scalar).
    assert during - forward <= 3 * ARRAY + 200_000, (during - forward) / ARRAY
