"""The walk and the reverse fold: Chainer's ``_backprop``, made pure (layer 5).

``backprop(outputs, inputs, seeds)`` walks the nodes between them by rank,
highest first (ties in creation order), asks each node's primitive for the
gradients of its arguments, and returns a persistent map from each requested
input to its gradient.  Nothing is mutated: the gradient table is a local dict,
and each gradient leaves it as soon as the node that owns it has been folded.
The checks at the fold's edges live in :mod:`funcgrad.backprop_utils`.

>>> import numpy, funcgrad as fg
>>> x = fg.require_grad(numpy.array([1.0, 2.0]))
>>> y = (x * x).sum()
>>> fg.backprop([y], [x])[x]
array([2., 4.])
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy
import pyrsistent

from .backend import NUMPY_TYPES
from .backprop_utils import (as_nodes, check_grad, describe, finite, gradient_map, owned,
                             scale, seed)
from .errors import BackpropError, FuncgradTypeError, FuncgradValueError
from .hooks import active_hooks, debugging_nans
from .node import (
    ACTIVE,
    DEFAULT_BACKPROP_ID,
    BackpropId,
    Node,
    check_id,
    collector_paused,
    raw_args,
    recording,
    user_code,
)
from .primitive import UNIT_IDS

# -- the walk: which nodes a fold visits, in which order ----------------------


def walk(outputs: list, bp: BackpropId | None = None, before: int = 0) -> tuple[list, list]:
    """The nodes ``outputs`` reach, by rank, and the leaves among them.

    The walk follows the arguments on graph ``bp`` (every Node argument when
    ``bp`` is None) and does not walk through a node older than the serial
    ``before``.  The nodes come in ascending rank, parents before children,
    ties newest first: reversed, the list is the reverse fold's order,
    ``(-rank, serial)``.  The leaves are the nodes it stopped at: no argument
    on ``bp``, or older than ``before``.  Only the serials seen are kept (no
    table of parents), and it is iterative: a graph a million nodes deep walks
    without recursion.

    >>> import numpy, funcgrad as fg
    >>> x = fg.require_grad(numpy.array(2.0))
    >>> order, leaves = walk([x * x + 1.0], DEFAULT_BACKPROP_ID)
    >>> [n.primitive.name for n in order[1:]], leaves[0] is x
    (['multiply', 'add'], True)
    """
    seen = {}  # the serials seen (a dict: a third of a set's memory)
    order = []
    leaves = []
    stack = list(outputs)
    while stack:
        node = stack.pop()
        serial = node.serial
        if serial in seen:
            continue
        seen[serial] = None
        order.append(node)
        leaf = True
        if serial >= before:
            for a in node.args:
                if type(a) is Node and (bp is None or bp in a.graphs):
                    leaf = False
                    if a.serial not in seen:
                        stack.append(a)
        if leaf:
            leaves.append(node)
    del seen  # before the sorts' keys: a smaller peak
    # Two C-keyed stable sorts: ascending rank, ties newest first.
    order.sort(key=_SERIAL, reverse=True)
    order.sort(key=_RANK)
    return order, leaves


_SERIAL = operator.attrgetter("serial")
_RANK = operator.attrgetter("rank")
# NumPy's floating scalar types (what ufuncs make of 0-d results): two of one such type
# have one dtype and shape (), which _add need not read.
_SCALARS = frozenset(t for t in NUMPY_TYPES if isinstance(t, type) and issubclass(t, numpy.inexact))


def parents_on(args: tuple, bp: BackpropId) -> list:
    """``(position, Node)`` for each argument on graph ``bp`` (unrolled for one or two)."""
    n = len(args)
    if n == 1:
        a = args[0]
        return [(0, a)] if type(a) is Node and bp in a.graphs else []
    if n == 2:
        a, b = args
        ps = [(0, a)] if type(a) is Node and bp in a.graphs else []
        if type(b) is Node and bp in b.graphs:
            ps.append((1, b))
        return ps
    return [(i, a) for i, a in enumerate(args) if type(a) is Node and bp in a.graphs]


def reaching(order: list, leaves: list, targets: Any, bp: BackpropId) -> dict | None:
    """The serials of the nodes of ``order`` that lead to a target (the keys of a dict),
    None when all do.

    All do when every leaf is a target (always so in the combinators' graphs):
    then nothing is pruned, and nothing is computed.
    """
    for n in leaves:
        if n.serial not in targets:
            break
    else:
        return None
    kept = dict.fromkeys(targets)  # (a dict: a third of a set's memory)
    for node in order:  # parents first: each node's parents are settled before it
        if any(p.serial in kept for _, p in parents_on(node.args, bp)):
            kept[node.serial] = None
    return kept


def between(outputs: list, targets: Any, bp: BackpropId) -> list[Node]:
    """The nodes on ``bp`` that ``outputs`` reach and that lead to a target, by rank."""
    order, leaves = walk(outputs, bp)
    kept = reaching(order, leaves, targets, bp)
    return order if kept is None else [n for n in order if n.serial in kept]


# -- the reverse fold -----------------------------------------------------------


def backprop(
    outputs: Sequence[Node],
    inputs: Sequence[Node],
    grad_outputs: Sequence[Any] | None = None,
    *,
    backprop_id: BackpropId | None = None,
    enable_double_backprop: bool = False,
    loss_scale: float | None = None,
    hooks: Sequence[Any] = (),
) -> pyrsistent.PMap:
    """Gradients of ``outputs`` with respect to ``inputs`` on graph ``backprop_id``.

    Returns a ``PMap`` from each input Node to its gradient (None where the
    outputs do not reach it).  ``grad_outputs`` seeds the outputs: when it is
    None, each output (of size 1) is seeded with ones; in a sequence, a None
    entry drops its output, as ``chainer.backward`` does, so that it
    contributes nothing (every entry None: every input maps to None).
    ``loss_scale`` multiplies the seeds.  With ``enable_double_backprop`` the
    gradients are Nodes on ``backprop_id``.

    >>> import numpy, funcgrad as fg
    >>> x = fg.require_grad(numpy.array([2.0]))
    >>> fg.backprop([x * x, x * 3.0], [x], [None, numpy.ones(1)])[x]
    array([3.])
    """
    bp = check_id(backprop_id)
    outputs = as_nodes(outputs, "outputs")
    inputs = as_nodes(inputs, "inputs")
    for what, seq in (("output", outputs), ("input", inputs)):
        for i, n in enumerate(seq):
            if bp not in n.graphs:
                raise BackpropError(f"{what} {i} is not on the graph {bp.name!r}")
    seeded, seeds = _seeds(outputs, grad_outputs, scale(loss_scale))
    if not seeded:
        return gradient_map(dict.fromkeys(inputs))
    found = gradients(seeded, seeds, inputs, bp, enable_double_backprop, active_hooks(hooks))
    caller = [n.value for n in inputs] + [n.value for n in outputs] + list(grad_outputs or ())
    return gradient_map(zip(inputs, owned(found, caller), strict=True))


def _seeds(outputs: list, grad_outputs: Any, scale_by: Any) -> tuple[list, list]:
    """The outputs that ``grad_outputs`` seeds, and their seeds times ``scale_by``."""
    ones = grad_outputs is None
    if ones:
        grad_outputs = [None] * len(outputs)
    elif not isinstance(grad_outputs, Sequence) or isinstance(grad_outputs, (str, bytes)):
        raise FuncgradTypeError(
            "grad_outputs must be None or a sequence (list, tuple) with one gradient per "
            f"output, got {describe(grad_outputs)}"
        )
    elif len(grad_outputs) != len(outputs):
        raise FuncgradValueError(
            f"grad_outputs has {len(grad_outputs)} entries for {len(outputs)} outputs"
        )
    seeded, seeds = [], []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs, strict=True)):
        if g is None and not ones:  # an explicit None: this output contributes nothing
            continue
        g = seed(out, g, i)
        seeded.append(out)
        seeds.append(g if scale_by is None else g * scale_by)
    return seeded, seeds


def gradients(outputs, seeds, inputs, bp, keep_graph=False, hook_list=None) -> list:
    """The reverse fold without the checks: one gradient (or None) per input.

    ``hook_list`` None means the hooks of the context.  The nodes that lead to
    no input are pruned (none are in the combinators' graphs, whose every leaf
    is an input).
    """
    if hook_list is None:
        hook_list = active_hooks()
    grads: dict[int, Any] = {}
    for out, g in zip(outputs, seeds, strict=True):
        prev = grads.get(out.serial)
        grads[out.serial] = g if prev is None else prev + g
    targets = {n.serial for n in inputs}
    with collector_paused():
        order, leaves = walk(outputs, bp)
        kept = reaching(order, leaves, targets, bp)
        found = fold(order, grads, targets, bp, keep_graph, hook_list, kept)
    return [found.get(n.serial) for n in inputs]


def fold(order, grads, targets, bp, keep_graph, hook_list, kept=None) -> dict:
    """Fold ``order`` (a :func:`walk`'s, parents first) backward; return the
    gradients of ``targets`` by serial.

    ``grads`` holds the seeds, by serial, and is consumed as it goes: each
    gradient is popped when its node is folded.  ``kept`` (from
    :func:`reaching`), when not None, holds the only nodes that get gradients.
    """
    found: dict[int, Any] = {}
    # Serials whose gradient is an array this fold made itself by summing, and
    # that nothing else references: further contributions are added in place.
    mine: set[int] = set()
    nan_check = debugging_nans()
    watch = any((hook_list, nan_check))
    pop = grads.pop
    with recording(bp, on=keep_graph):
        live = ACTIVE.get()  # the graphs the rules' arithmetic is recorded on
        for node in reversed(order):
            serial = node.serial
            if serial not in grads:
                continue
            if mine:
                mine.discard(serial)  # from now on it may be shared (rules may return it)
            if serial in targets:
                found[serial] = grads[serial]
            args = node.args
            n = len(args)
            if n == 1:  # parents_on, inline for one and two arguments: the common cases
                a = args[0]
                ps = [(0, a)] if type(a) is Node and bp in a.graphs else []
            elif n == 2:
                a, b = args
                ps = [(0, a)] if type(a) is Node and bp in a.graphs else []
                if type(b) is Node and bp in b.graphs:
                    ps.append((1, b))
            else:
                ps = parents_on(args, bp)
            if kept is not None:
                ps = [(i, p) for i, p in ps if p.serial in kept]
            if not ps:
                del grads[serial]
                continue
            prim = node.primitive
            if live.isdisjoint(node.graphs):  # nothing to record: the rules may run on
                ans, args = node.value, raw_args(args)  # raw arrays, fast
            else:
                ans = node
            # The gradient leaves ``grads`` as it is handed on: only the rules hold it, and
            # it is released before the sums (a smaller peak).
            if prim.plain and not watch:  # a library primitive, a rule per argument: most
                _step(grads, mine, prim, ps, pop(serial), ans, args, node.kwargs)
            else:
                _general(grads, mine, node, ps, pop(serial), ans, args, hook_list, nan_check)
    return found


def _general(grads: dict, mine: set, node: Node, ps: list, g: Any, ans: Any, args: tuple,
             hook_list: Any, nan_check: bool) -> None:
    """One step of the fold with hooks or NaN checks around it, a joint rule or a user's
    rules (user code: the cycle collector runs as the user left it)."""
    prim = node.primitive
    if id(g) in UNIT_IDS:  # grad's shared read-only seed: hooks and users' rules may write
        g = g.copy()  # to the gradient they are given, as they could before it was shared
    if hook_list or nan_check:
        gis = _watched(node, g, ans, args, ps, hook_list, nan_check)
    elif prim.library:
        gis = prim.vjp(g, ans, args, node.kwargs, ps)
    else:
        with user_code():
            gis = prim.vjp(g, ans, args, node.kwargs, ps)
    del g  # released before the sums: a smaller peak
    for (i, p), gi in zip(ps, gis, strict=True):
        _add(grads, mine, prim, i, p, gi)


def _step(grads: dict, mine: set, prim: Any, ps: list, g: Any, ans: Any, args: tuple,
          kwargs: dict | None) -> None:
    """One node's rules (a library primitive's, one per argument), each gradient added to
    its parent's total: ``prim.vjp`` inline for one and two parents (all steps but a few),
    with no list and no zip."""
    rules = prim.vjps
    if len(ps) == 1:
        i, p = ps[0]
        rule = rules[i] if i < len(rules) else None
        if rule is not None:
            gi = rule(g, ans, *args, **kwargs) if kwargs else rule(g, ans, *args)
            del g  # released before the sum: a smaller peak
            _add(grads, mine, prim, i, p, gi)
            return
    elif len(ps) == 2:
        (i, p), (j, q) = ps
        n = len(rules)
        rule, rule_j = rules[i] if i < n else None, rules[j] if j < n else None
        if rule is not None and rule_j is not None:
            if kwargs:
                gi, gj = rule(g, ans, *args, **kwargs), rule_j(g, ans, *args, **kwargs)
            else:
                gi, gj = rule(g, ans, *args), rule_j(g, ans, *args)
            del g  # released before the sums: a smaller peak
            _add(grads, mine, prim, i, p, gi)
            _add(grads, mine, prim, j, q, gj)
            return
    gis = prim.vjp(g, ans, args, kwargs, ps)  # (more parents, or a missing rule's error)
    del g
    for (i, p), gi in zip(ps, gis, strict=True):  # (more parents are rare: checked)
        _add(grads, mine, prim, i, p, gi)


def _add(grads: dict, mine: set, prim: Any, i: int, p: Node, gi: Any) -> None:
    """Add ``gi``, the gradient of argument ``i`` of a step, to its parent ``p``'s total."""
    pv = p.value
    gv = gi.value if type(gi) is Node else gi
    tg, tp = type(gv), type(pv)
    if tg is not tp or tg not in _SCALARS:  # (NumPy scalars of one type: one dtype, shape)
        try:  # the common case, inline; check_grad explains any mismatch
            gd, pd = gv.dtype, pv.dtype
            fits = (
                gv.shape == pv.shape
                and (gd is pd or gd == pd)
                and (tg is tp or (tg in NUMPY_TYPES and tp in NUMPY_TYPES))
            )
        except AttributeError:  # not an array at all
            fits = False
        if not fits:
            gi = check_grad(prim, i, p, gi)
    s = p.serial
    prev = grads.get(s)
    if prev is None:
        grads[s] = gi
    elif s in mine and type(gi) is not Node:
        prev += gi  # an array of our own: summed in place, no new allocation
        grads[s] = prev  # (NumPy scalars, immutable, come back as new objects)
    else:
        total = prev + gi
        grads[s] = total
        if type(total) is Node:  # a sum recorded on another graph
            mine.discard(s)
        else:
            mine.add(s)


def _watched(node, g, ans, args, ps, hook_list, nan_check) -> list:
    """One step's gradients with the hooks around it, checked (and NaN-checked)
    before the hooks see them."""
    prim = node.primitive
    in_values = raw_args(node.args)
    with user_code():
        for h in hook_list:
            h.backward_preprocess(node, in_values, (g,))
    if prim.library:
        gis = prim.vjp(g, ans, args, node.kwargs, ps)
    else:
        with user_code():
            gis = prim.vjp(g, ans, args, node.kwargs, ps)
    gis = [check_grad(prim, i, p, gi) for (i, p), gi in zip(ps, gis, strict=True)]
    if nan_check:
        gis = [finite(prim, gi) for gi in gis]
    if hook_list:
        in_grads = [None] * len(node.args)
        for (i, _), gi in zip(ps, gis, strict=True):
            in_grads[i] = gi
        with user_code():
            for h in hook_list:
                h.backward_postprocess(node, in_values, (g,), tuple(in_grads))
    return gis


__all__ = ["DEFAULT_BACKPROP_ID", "backprop", "fold", "walk"]
