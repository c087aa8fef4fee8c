"""The one graph walk (``funcgrad.backprop.walk``) under the folds, checkpoint and the
custom rules: its order, its leaves, the pruning built on it, and its memory."""

from __future__ import annotations

import gc
import importlib
import tracemalloc

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

bpm = importlib.import_module("funcgrad.backprop")  # fg.backprop is the function


def leaf(v, bp=None):
    return fg.require_grad(np.asarray(v, dtype=float), bp)


def test_the_walk_is_parents_first_and_reversed_is_minus_rank_then_serial():
    x = leaf(0.5)
    a = fnp.sin(x)  # rank 1
    b = fnp.cos(x)  # rank 1, made after a
    c = a * b  # rank 2
    y = c + a  # rank 3
    order, leaves = bpm.walk([y], fg.DEFAULT_BACKPROP_ID)
    assert [n.serial for n in order] == [x.serial, b.serial, a.serial, c.serial, y.serial]
    backward = [(-n.rank, n.serial) for n in reversed(order)]
    assert backward == sorted(backward)  # the fold's order: highest rank first, ties oldest
    assert len(leaves) == 1 and leaves[0] is x


def test_the_walk_follows_one_graph_or_every_graph():
    w = leaf(2.0)  # on the default graph
    with fg.backprop_scope("inner") as inner:
        x = leaf(3.0, inner)
        y = x * w  # on both graphs
    on_inner, inner_leaves = bpm.walk([y], inner)
    assert {n.serial for n in on_inner} == {x.serial, y.serial}
    assert inner_leaves[0] is x
    everywhere, leaves = bpm.walk([y], None)
    assert {n.serial for n in everywhere} == {x.serial, w.serial, y.serial}
    assert {n.serial for n in leaves} == {x.serial, w.serial}


def test_the_walk_stops_at_nodes_older_than_before():
    x = leaf(1.0)
    h = fnp.exp(x)
    mark = h.serial + 1  # h is older than the mark: the walk stops there
    y = fnp.sin(h) * h
    order, leaves = bpm.walk([y], None, mark)
    assert x.serial not in {n.serial for n in order}
    assert [n.serial for n in leaves] == [h.serial]


class _Visits(fg.BackwardHook):
    def __init__(self):
        self.names = []

    def backward_preprocess(self, node, in_values, out_grads):
        self.names.append(node.primitive.name)


def test_what_cannot_reach_an_input_is_never_folded():
    x, z = leaf(0.3), leaf(1.7)  # z is a leaf nobody asks for
    stray = fnp.tanh(fnp.exp(z))  # leads only to z
    y = fnp.sin(x) * stray + fnp.cos(x)
    visits = _Visits()
    gx = fg.backprop([y], [x], hooks=[visits])[x]
    expected = np.cos(0.3) * np.tanh(np.exp(1.7)) - np.sin(0.3)
    np.testing.assert_allclose(gx, expected, rtol=1e-12)
    assert "tanh" not in visits.names and "exp" not in visits.names
    assert sorted(visits.names) == sorted(["add", "multiply", "sin", "cos"])
    # and at second order, through the recorded gradient
    g2 = fg.grad(lambda v: fg.grad(lambda u: fnp.sin(u) * fnp.tanh(fnp.exp(z.value)))(v))(0.3)
    np.testing.assert_allclose(g2, -np.sin(0.3) * np.tanh(np.exp(1.7)), rtol=1e-12)


def test_between_keeps_the_nodes_that_lead_to_an_input():
    x, z = leaf(0.3), leaf(1.7)
    y = fnp.sin(x) * fnp.exp(z)
    kept = bpm.between([y], {x.serial}, fg.DEFAULT_BACKPROP_ID)
    assert [n.primitive and n.primitive.name for n in kept] == [None, "sin", "multiply"]


@pytest.mark.parametrize("stray", [False, True])
def test_the_fold_keeps_no_table_of_parents(stray):
    # The walk keeps the serials it has seen and one list; the fold asks each node for
    # its parents when it folds it.  A table of parent lists cost ~170 bytes a node.
    steps = 20_000
    x = leaf(np.ones(1))
    z = leaf(np.ones(1))
    y = x * z if stray else x
    for _ in range(steps):
        y = y * 1.0000001
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        gx = fg.backprop([y], [x], [np.ones(1)])[x]
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(gx, 1.0000001 ** steps, rtol=1e-9)
    assert peak / steps < 100, f"{peak / steps:.0f} bytes a node"
