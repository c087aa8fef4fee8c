"""API.md §6: backward hooks, timing, printing and NaN checks.

Hooks run around each backward step, once per node, highest rank first (ties
in creation order); the context's hooks before the call's; only in the
context (thread) that installed them.
"""

from __future__ import annotations

import io
import threading

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


class Recorder(fg.BackwardHook):
    def __init__(self, tag="", log=None):
        self.tag = tag
        self.log = [] if log is None else log

    def backward_preprocess(self, node, in_values, out_grads):
        self.log.append(("pre", self.tag, node, in_values, out_grads))

    def backward_postprocess(self, node, in_values, out_grads, in_grads):
        self.log.append(("post", self.tag, node, in_values, out_grads, in_grads))


def _diamond():
    """x -> sin, cos (both rank 1, sin first) -> add (2) -> multiply by w (3) -> sum (4)."""
    x = fg.require_grad(np.array([0.1, 0.2, 0.3]))
    w = fg.require_grad(np.array([1.0, 2.0, 3.0]))
    a = fnp.sin(x)
    b = fnp.cos(x)
    c = a + b
    d = c * w
    s = d.sum()
    return x, w, (a, b, c, d, s)


def test_hooks_are_called_once_per_node_highest_rank_first():
    x, w, (a, b, c, d, s) = _diamond()
    rec = Recorder()
    fg.backprop([s], [x, w], hooks=[rec])
    pre = [e[2] for e in rec.log if e[0] == "pre"]
    post = [e[2] for e in rec.log if e[0] == "post"]
    assert pre == [s, d, c, a, b]  # ranks 4, 3, 2, 1, 1: ties in creation order
    assert post == pre
    ranks = [n.rank for n in pre]
    assert ranks == sorted(ranks, reverse=True)
    # pre and post of one node bracket its step
    kinds = [(e[0], e[2]) for e in rec.log]
    assert kinds == [(k, n) for n in pre for k in ("pre", "post")]


def test_hooks_see_in_values_out_grads_and_in_grads():
    x, w, (a, _, c, d, s) = _diamond()
    rec = Recorder()
    grads = fg.backprop([s], [x, w], hooks=[rec])
    posts = {e[2]: e for e in rec.log if e[0] == "post"}
    _, _, node, in_values, out_grads, in_grads = posts[d]  # d = c * w
    assert node is d
    np.testing.assert_array_equal(in_values[0], c.value)
    np.testing.assert_array_equal(in_values[1], w.value)
    assert len(out_grads) == 1
    np.testing.assert_array_equal(out_grads[0], np.ones(3))
    assert len(in_grads) == 2
    np.testing.assert_array_equal(in_grads[0], w.value)  # d(c*w)/dc
    np.testing.assert_array_equal(in_grads[1], c.value)  # d(c*w)/dw
    np.testing.assert_array_equal(grads[w], c.value)
    _, _, _, in_values, out_grads, in_grads = posts[a]
    np.testing.assert_allclose(in_grads[0], w.value * np.cos(x.value))


def test_a_constant_argument_gets_no_gradient_in_the_hook():
    x = fg.require_grad(np.array([1.0, 2.0]))
    rec = Recorder()
    fg.backprop([(x * np.array([3.0, 4.0])).sum()], [x], hooks=[rec])
    _, _, node, _, _, in_grads = [e for e in rec.log if e[0] == "post"][-1]
    assert node.primitive.name == "multiply"
    np.testing.assert_array_equal(in_grads[0], [3.0, 4.0])
    assert in_grads[1] is None


def test_pruned_nodes_do_not_reach_the_hooks():
    x = fg.require_grad(np.array(0.5))
    unrelated = fg.require_grad(np.array(2.0))
    y = fnp.exp(x) + fnp.sin(unrelated * 3.0)
    rec = Recorder()
    fg.backprop([y], [x], hooks=[rec])
    names = [e[2].primitive.name for e in rec.log if e[0] == "pre"]
    assert names == ["add", "exp"]


def test_global_hooks_run_before_local_ones():
    x, _, (*_, s) = _diamond()
    log = []
    g1, g2, local = Recorder("global1", log), Recorder("global2", log), Recorder("local", log)
    with fg.hooks(g1, g2):
        fg.backprop([s], [x], hooks=[local])
    per_node = {}
    for e in log:
        per_node.setdefault((e[0], e[2]), []).append(e[1])
    assert per_node
    for order in per_node.values():
        assert order == ["global1", "global2", "local"]


def test_hooks_apply_only_inside_the_block_and_nest():
    outer, inner = Recorder("outer"), Recorder("inner")
    f = lambda v: (fnp.sin(v) * v).sum()  # sum, multiply, sin
    with fg.hooks(outer):
        fg.grad(f)(np.ones(2))
        n_outer = len(outer.log)
        with fg.hooks(inner):
            fg.grad(f)(np.ones(2))
        fg.grad(f)(np.ones(2))
    fg.grad(f)(np.ones(2))
    assert n_outer == 2 * 3  # pre and post for each of three nodes
    assert len(outer.log) == 3 * n_outer
    assert len(inner.log) == n_outer


def test_hooks_reject_non_hooks():
    with pytest.raises(TypeError), fg.hooks(print):
        pass
    x = fg.require_grad(np.array(1.0))
    with pytest.raises(TypeError):
        fg.backprop([x * x], [x], hooks=[object()])


def test_hooks_are_context_local_across_threads():
    barrier = threading.Barrier(2, timeout=30)
    seen = []  # (thread name, primitive name) from the hook
    results = {}
    errors = []

    class Seen(fg.BackwardHook):
        def backward_preprocess(self, node, in_values, out_grads):
            seen.append((threading.current_thread().name, node.primitive.name))

    def with_hook():
        try:
            with fg.hooks(Seen()):
                barrier.wait()  # both threads are now running, this one inside the block
                barrier.wait()  # the other thread has finished its backward
                results["with"] = fg.grad(lambda v: fnp.exp(v).sum())(np.zeros(2))
        except Exception as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    def without_hook():
        try:
            barrier.wait()
            results["without"] = fg.grad(lambda v: (fnp.sin(v) * v).sum())(np.zeros(2))
            barrier.wait()
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=with_hook, name="hooked"),
               threading.Thread(target=without_hook, name="plain")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    np.testing.assert_array_equal(results["with"], [1.0, 1.0])
    np.testing.assert_array_equal(results["without"], [0.0, 0.0])
    assert seen == [("hooked", "sum"), ("hooked", "exp")]


def test_hooks_of_the_main_thread_do_not_leak_into_a_new_thread():
    rec = Recorder()
    out = {}
    with fg.hooks(rec):
        t = threading.Thread(target=lambda: out.update(g=fg.grad(fnp.sin)(np.array(0.0))))
        t.start()
        t.join(30)
    assert float(out["g"]) == 1.0
    assert rec.log == []


# --- TimerHook, PrintHook ------------------------------------------------------------------

def test_timer_hook_summary_lists_the_primitives():
    timer = fg.TimerHook()
    f = lambda v: (fnp.exp(fnp.sin(v)) * v * v).sum()
    with fg.hooks(timer):
        fg.grad(f)(np.linspace(0, 1, 5))
    summary = timer.summary()
    assert isinstance(summary, str)
    for name in ("sum", "multiply", "exp", "sin"):
        assert name in summary, summary
    assert "add" not in summary
    calls = {name: n for name, n, _ in timer.rows()}
    assert calls == {"sum": 1, "multiply": 2, "exp": 1, "sin": 1}
    assert all(t >= 0.0 for _, _, t in timer.rows())
    assert timer.total_time() >= 0.0


def test_print_hook_prints_each_step(capsys):
    with fg.hooks(fg.PrintHook()):
        fg.grad(lambda v: (fnp.sin(v) * 2.0).sum())(np.ones((2, 3)))
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3
    for line, name in zip(lines, ["sum", "multiply", "sin"], strict=True):
        assert name in line
    assert "(2, 3)" in lines[-1]


def test_print_hook_to_a_file():
    buf = io.StringIO()
    x = fg.require_grad(np.ones(4))
    fg.backprop([fnp.exp(x).sum()], [x], hooks=[fg.PrintHook(file=buf)])
    text = buf.getvalue()
    assert "exp" in text and "sum" in text and "(4,)" in text


# --- debug_nans ------------------------------------------------------------------------------

NANS = [  # f, point, the primitive whose backward step makes the NaN or Inf
    ("sqrt_at_0_inf", fnp.sqrt, np.array([0.0, 1.0]), "sqrt"),
    ("sqrt_negative_nan", fnp.sqrt, np.array([-1.0, 1.0]), "sqrt"),
    ("log_at_0_inf", fnp.log, np.array([0.0, 1.0]), "log"),
    ("log_negative_nan_downstream", lambda v: fnp.log(v) * fnp.log(v), np.array([-1.0, 2.0]),
     "multiply"),
    ("divide_by_0", lambda v: 1.0 / v, np.array([0.0, 2.0]), "divide"),
]


@pytest.mark.parametrize(("name", "f", "x", "culprit"), NANS, ids=[n[0] for n in NANS])
def test_debug_nans_raises_naming_the_primitive(name, f, x, culprit):
    loss = lambda v: f(v).sum()
    with np.errstate(all="ignore"):
        with pytest.raises(FloatingPointError, match=culprit), fg.debug_nans():
            fg.grad(loss)(x)
        # nothing raised outside the block: the NaN or Inf comes back
        g = fg.grad(loss)(x)
    assert not np.all(np.isfinite(g))


def test_debug_nans_is_quiet_for_finite_gradients_and_can_be_switched_off():
    with fg.debug_nans():
        np.testing.assert_allclose(fg.grad(lambda v: fnp.sqrt(v).sum())(np.array([4.0])), [0.25])
        with np.errstate(all="ignore"), fg.debug_nans(False):
            assert np.isinf(fg.grad(lambda v: fnp.sqrt(v).sum())(np.array([0.0])))[0]
        with np.errstate(all="ignore"), pytest.raises(FloatingPointError):
            fg.grad(lambda v: fnp.sqrt(v).sum())(np.array([0.0]))


def test_debug_nans_applies_to_fg_backprop():
    x = fg.require_grad(np.array([0.0, 1.0]))
    y = fnp.sqrt(x).sum()
    with np.errstate(all="ignore"):
        with fg.debug_nans(), pytest.raises(FloatingPointError, match="sqrt"):
            fg.backprop([y], [x])
        assert np.isinf(fg.backprop([y], [x])[x][0])
