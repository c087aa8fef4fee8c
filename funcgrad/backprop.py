"""The reverse fold: Chainer's ``_backprop``, made pure (layer 5).

``backprop(outputs, inputs, seeds)`` walks the nodes between them by rank,
highest first (ties in creation order), asks each node's primitive for the
gradients of its arguments, and returns a persistent map from each requested
input to its gradient.  Nothing is mutated: the gradient table is a local dict,
and each gradient leaves it as soon as the node that owns it has been folded.

>>> import numpy, funcgrad as fg
>>> x = fg.require_grad(numpy.array([1.0, 2.0]))
>>> y = (x * x).sum()
>>> fg.backprop([y], [x])[x]
array([2., 4.])
"""

from __future__ import annotations

import heapq
import operator
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy
import pyrsistent

from . import backend
from .arrays import array_likes
from .backend import NUMPY_TYPES
from .batching import innermost_raw
from .errors import (
    BackpropError,
    DeviceMismatchError,
    FuncgradTypeError,
    FuncgradValueError,
    GradientTypeError,
)
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


def _nodes(seq: Any, what: str) -> list[Node]:
    if type(seq) is Node:
        return [seq]
    if not isinstance(seq, Sequence) or isinstance(seq, str):
        raise FuncgradTypeError(f"backprop {what} must be a sequence of Nodes, got {seq!r}")
    for i, n in enumerate(seq):
        if type(n) is not Node:
            raise FuncgradTypeError(
                f"backprop {what}[{i}] must be a Node, got {type(n).__name__}"
            )
    return list(seq)


# -- the walk: which nodes a fold visits, in which order ----------------------


def walk(outputs: list, targets: dict, bp: BackpropId) -> tuple[list[Node], dict]:
    """The nodes on ``bp`` between ``outputs`` and ``targets``, by rank.

    Returns the nodes in ascending rank (parents before children; ties newest
    first, so that the reversed list is the reverse fold's order) and, by
    serial, each node's ``(position, parent)`` pairs that lead to a target.
    Nothing that cannot carry a gradient to a target is kept, so the folds
    never visit it.  Iterative: a graph a million nodes deep walks without
    recursion.
    """
    parents: dict[int, list] = {}
    nodes: list[Node] = []
    stray_leaves = False  # a leaf that is not a target: some nodes may lead nowhere
    stack = list(outputs)
    while stack:
        node = stack.pop()
        serial = node.serial
        if serial in parents:
            continue
        ps = _parents_on(node.args, bp)
        parents[serial] = ps
        nodes.append(node)
        if not ps and serial not in targets:
            stray_leaves = True
        for _, p in ps:
            if p.serial not in parents:
                stack.append(p)
    # Two C-keyed stable sorts: ascending rank, ties newest first.
    nodes.sort(key=_SERIAL, reverse=True)
    nodes.sort(key=_RANK)
    if not stray_leaves:  # every path ends at a target (always so in the combinators)
        return nodes, parents
    kept: dict[int, list] = {}
    order = []
    for node in nodes:
        serial = node.serial
        ps = parents[serial]
        for _, p in ps:
            if p.serial not in kept:  # a parent that reaches no target
                ps = [(i, p) for i, p in ps if p.serial in kept]
                break
        if ps or serial in targets:
            kept[serial] = ps
            order.append(node)
    return order, kept


def rank_order(outputs: list, bp: BackpropId) -> Iterator[tuple[Node, list]]:
    """Yield ``(node, parents on bp)`` for every node on ``bp`` that ``outputs`` reach.

    Highest rank first, ties in creation order: the reverse fold's order, made
    lazily with a heap as Chainer does.  A node comes out only after every node
    of higher rank that reaches it, so its gradient is complete by then.  No
    pruning: for graphs whose every leaf is a target (the combinators' own).
    """
    heap = []
    seen = set()
    for o in outputs:
        if o.serial not in seen:
            seen.add(o.serial)
            heap.append((-o.rank, o.serial, o))
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        node = pop(heap)[2]
        ps = _parents_on(node.args, bp)
        for _, p in ps:
            s = p.serial
            if s not in seen:
                seen.add(s)
                push(heap, (-p.rank, s, p))
        yield node, ps


_SERIAL = operator.attrgetter("serial")
_RANK = operator.attrgetter("rank")


def _parents_on(args: tuple, bp: BackpropId) -> list:
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


# -- the reverse fold -----------------------------------------------------------


def seed(out: Node, g: Any, i: int, what: str = "grad_outputs[{i}]") -> Any:
    """The seed of output ``i``: ones for a size-1 output when ``g`` is None, else ``g``
    checked against the output (see :func:`check_like`); ``what`` names it in errors."""
    if g is None:
        if out.size != 1:
            raise FuncgradValueError(
                f"output {i} has shape {out.shape}: a non-scalar output needs a gradient "
                "in grad_outputs"
            )
        if out.shape != ():
            warnings.warn(
                f"output {i} has shape {out.shape}; seeding a size-1 output that is not "
                "0-d with ones is deprecated, pass grad_outputs",
                DeprecationWarning,
                stacklevel=3,
            )
        xp = backend.namespace(out.value)
        return xp.ones(out.shape, out.dtype)
    return check_like(g, out, what.format(i=i), f"output {i}")


def _describe(g: Any) -> str:
    """``'a float32 ndarray of shape (3,)'``, ``'a dict'``: what a caller gave, for messages."""
    v = g.value if type(g) is Node else g
    dtype, shape = getattr(v, "dtype", None), getattr(v, "shape", None)
    text = (f"{type(g).__name__}" if dtype is None or shape is None
            else f"{dtype} {type(g).__name__} of shape {tuple(shape)}")
    return ("an " if text[0] in "aeiou" else "a ") + text


def check_like(g: Any, primal: Any, what: str, whose: str) -> Any:
    """``g``, a cotangent or tangent a caller gave for ``primal``, checked and cast.

    It must be an array (or array-like, or Python number) of ``primal``'s
    shape and dtype kind -- real floating for a real primal, complex for a
    complex one -- else ``TypeError`` (wrong kind: complex for a real primal,
    real for a complex one, integer, boolean, string, not an array) or
    ``ValueError`` (wrong shape), naming ``what`` and the shape and dtype
    expected.  Another precision of the same kind is cast to ``primal``'s
    dtype, and so is a Python int or float given for a complex primal.
    """
    pv = primal.value if type(primal) is Node else primal
    while type(pv) is Node:
        pv = pv.value
    shape, dtype = tuple(pv.shape), pv.dtype

    def expected() -> str:  # for messages only: not built on the way that raises nothing
        return f"a {dtype} array of shape {shape} (the shape and dtype of {whose})"

    t = type(g)
    if t is not Node:
        if t is bool or isinstance(g, (str, bytes, dict, set)) or (
            t not in (int, float, list, tuple) and getattr(g, "dtype", None) is None
        ):
            raise FuncgradTypeError(f"{what} must be {expected()}, got {_describe(g)}")
        if t is list or t is tuple:
            converted = array_likes((g,))  # a list holding Nodes: one Node
            g = converted[0] if converted is not None else g
        if type(g) is not Node and type(g) is not type(pv):
            try:  # one on another device than its primal is refused, as any mixing is
                xp = backend.namespace(pv, g)
            except DeviceMismatchError as exc:
                raise DeviceMismatchError(f"{what}: {exc}") from None
            try:
                if backend.is_lazy(xp):  # NumPy data split as the primal is: no large constant
                    g = xp.asarray(g, like=pv)
                else:
                    g = xp.asarray(g)
            except (ValueError, TypeError, OverflowError) as exc:
                raise FuncgradTypeError(
                    f"{what} must be {expected()}, got {_describe(g)} that is no array ({exc})"
                ) from None
    v = g.value if type(g) is Node else g
    while type(v) is Node:
        v = v.value
    kind = v.dtype.kind
    if kind != dtype.kind and not (dtype.kind == "c" and kind == "f" and t in (int, float)):
        if kind == "c":
            why = (f"{whose} is real ({dtype}): pass the real part, or make the function "
                   "complex")
        elif dtype.kind == "c" and kind == "f":
            why = (f"{whose} is complex ({dtype}): a complex value needs a complex "
                   f"{'tangent' if 'tangent' in what else 'cotangent'} (cast it to {dtype})")
        else:
            why = "only floating dtypes (real or complex) carry gradients"
        raise FuncgradTypeError(f"{what} must be {expected()}, got {_describe(g)}: {why}")
    if not backend.same_shape(tuple(v.shape), shape):
        raise FuncgradValueError(
            f"{what} has shape {tuple(v.shape)} but {whose} has shape {shape}: "
            f"expected {expected()}"
        )
    if v.dtype != dtype:
        g = g.astype(dtype)
    return g


def scale(loss_scale: Any) -> float | None:
    """``loss_scale`` as a Python float (None stays None): a Python or 0-d real number."""
    if loss_scale is None:
        return None
    if type(loss_scale) is Node:  # a traced scale: the gradients depend on it
        if loss_scale.shape != () or loss_scale.dtype.kind != "f":
            raise FuncgradValueError(
                f"loss_scale must be a Python or 0-d number, got {_describe(loss_scale)}"
            )
        return loss_scale
    v = loss_scale
    t = type(v)
    kind = getattr(getattr(v, "dtype", None), "kind", "")
    if t is not bool and (t is int or t is float or (getattr(v, "shape", None) == ()
                                                    and kind and kind in "iuf")):
        try:
            return float(v)
        except OverflowError:
            raise FuncgradValueError(f"loss_scale {loss_scale!r} overflows a float") from None
    shape = getattr(v, "shape", None)
    if shape is not None and kind and kind in "iuf":
        raise FuncgradValueError(
            f"loss_scale must be a Python or 0-d number, got an array of shape {tuple(shape)}"
        )
    raise FuncgradTypeError(f"loss_scale must be a Python or 0-d real number, got {_describe(v)}")


def _check_grad(prim: Any, i: int, parent: Node, g: Any) -> Any:
    """Check one gradient a rule returned against its argument; cast within a dtype kind."""
    pv = parent.value
    gv = g.value if type(g) is Node else g
    gshape = getattr(gv, "shape", None)
    if gshape is None or not backend.same_shape(gshape, pv.shape):
        raise GradientTypeError(
            f"VJP rule of primitive {prim.name!r} for argument {i}: expected a gradient of "
            f"shape {pv.shape}, got {'a ' + type(gv).__name__ if gshape is None else gshape}"
        )
    gdtype = gv.dtype
    if gdtype is not pv.dtype and gdtype != pv.dtype:
        if gdtype.kind == "c" and pv.dtype.kind == "f":
            # A real argument of a complex operation: its cotangent is the real part
            # (the transpose of the real-to-complex inclusion; see CONTRIBUTING.md).
            from .numpy import real

            g = real(g)
            gdtype = (g.value if type(g) is Node else g).dtype
        if gdtype.kind != pv.dtype.kind:
            raise GradientTypeError(
                f"VJP rule of primitive {prim.name!r} for argument {i}: expected dtype "
                f"{pv.dtype}, got {gdtype}"
            )
        if gdtype != pv.dtype:
            g = g.astype(pv.dtype)
    if type(gv) is not type(pv) and backend.device_of(gv) != backend.device_of(pv):
        raise GradientTypeError(
            f"VJP rule of primitive {prim.name!r} for argument {i}: expected a gradient on "
            f"{backend.device_of(pv)}, got one on {backend.device_of(gv)}"
        )
    return g


def _checked(prim: Any, parents: list, grads: list, nan_check: bool) -> list:
    """The gradients of one step, checked (and NaN-checked) before hooks see them."""
    grads = [_check_grad(prim, i, p, g) for (i, p), g in zip(parents, grads, strict=True)]
    if nan_check:
        grads = [_finite(prim, g) for g in grads]
    return grads


def _finite(prim: Any, g: Any) -> Any:
    """``g``, checked for NaN and Inf: now, or, in a lazy namespace, when it is computed."""
    v = g.value if type(g) is Node else g
    if isinstance(v, tuple):  # the cotangents of a multi-output node: each in turn
        each = type(v)(None if e is None else _finite(prim, e) for e in v)
        return g if type(g) is Node else each
    v = innermost_raw(v)  # under fg.vmap: every example's values at once
    xp = backend.namespace(v)
    error = FloatingPointError(
        f"NaN or Inf in a gradient computed by the VJP rule of primitive {prim.name!r}"
    )
    if backend.is_lazy(xp):
        # Reading the data now would compute the graph: the check runs with it instead.
        # (A gradient recorded for double backprop keeps its value unchecked.)
        return g if type(g) is Node else xp.checked(v, _all_finite, error)
    if not xp.isfinite(v).all():
        raise error
    return g


def _all_finite(chunk: Any) -> bool:
    """Whether a computed chunk holds no NaN or Inf (run by a lazy namespace's tasks)."""
    return bool(backend.namespace(chunk).isfinite(chunk).all())


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
    outputs = _nodes(outputs, "outputs")
    inputs = _nodes(inputs, "inputs")
    for what, seq in (("output", outputs), ("input", inputs)):
        for i, n in enumerate(seq):
            if bp not in n.graphs:
                raise BackpropError(f"{what} {i} is not on the graph {bp.name!r}")
    ones = grad_outputs is None
    scale_by = scale(loss_scale)
    if ones:
        grad_outputs = [None] * len(outputs)
    elif not isinstance(grad_outputs, Sequence) or isinstance(grad_outputs, (str, bytes)):
        raise FuncgradTypeError(
            "grad_outputs must be None or a sequence (list, tuple) with one gradient per "
            f"output, got {_describe(grad_outputs)}"
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
    if not seeded:
        return pyrsistent.pmap(dict.fromkeys(inputs))
    found = gradients(seeded, seeds, inputs, bp, enable_double_backprop, active_hooks(hooks))
    caller = [n.value for n in inputs] + [n.value for n in outputs] + list(grad_outputs)
    return pyrsistent.pmap(dict(zip(inputs, owned(found, caller), strict=True)))


def owned(values: list, caller: Sequence) -> list:
    """``values`` (gradients or tangents) as arrays their caller owns.

    The fold hands on what rules return, which may be a view (``reshape``,
    ``broadcast_to``), read-only, one of the caller's own arrays (a seed passed
    through ``x + 1``), or one array handed out twice (both gradients of
    ``x + y``): each of those is copied; a fresh array is returned as it is.
    Nodes (results inside a traced function) are immutable and stay.
    """
    taken = {id(a) for a in caller}
    out = []
    for v in values:
        if v is not None and type(v) is not Node:
            if isinstance(v, numpy.generic):  # what ufuncs make of 0-d arrays
                v = numpy.asarray(v)
            elif id(v) in taken or backend.borrowed(v):
                v = v.copy()
            taken.add(id(v))
        out.append(v)
    return out


def gradients(outputs, seeds, inputs, bp, keep_graph=False, hook_list=None, prune=True) -> list:
    """The reverse fold without the checks: one gradient (or None) per input.

    ``hook_list`` None means the hooks of the context.  ``prune=False`` skips
    the walk that drops nodes leading to no input: for graphs whose every leaf
    is an input, as in the combinators, where it would find nothing to drop.
    """
    if hook_list is None:
        hook_list = active_hooks()
    grads: dict[int, Any] = {}
    for out, g in zip(outputs, seeds, strict=True):
        prev = grads.get(out.serial)
        grads[out.serial] = g if prev is None else prev + g
    targets = {n.serial: n for n in inputs}
    with collector_paused():
        if prune:
            order, parents = walk(outputs, targets, bp)
            # highest rank first, ties in creation order
            steps = ((n, parents[n.serial]) for n in reversed(order))
        else:
            steps = rank_order(outputs, bp)
        found = fold(steps, grads, targets, bp, keep_graph, hook_list)
    return [found.get(n.serial) for n in inputs]


def fold(steps, grads, targets, bp, keep_graph, hook_list) -> dict:
    """Run the backward steps; return the gradients of ``targets`` by serial.

    ``steps`` yields ``(node, parents)`` in rank order, ``parents`` being the
    node's ``(position, parent)`` pairs to fold into; ``grads`` holds the seeds
    and is consumed as it goes.
    """
    found: dict[int, Any] = {}
    # Serials whose gradient is an array this fold made itself by summing, and
    # that nothing else references: further contributions are added in place.
    owned: set[int] = set()
    nan_check = debugging_nans()
    with recording(bp, on=keep_graph):
        live = ACTIVE.get()  # the graphs the rules' arithmetic is recorded on
        for node, ps in steps:
            serial = node.serial
            g = grads.pop(serial, None)
            if g is None:
                continue
            if owned:
                owned.discard(serial)  # from now on it may be shared (rules may return it)
            if serial in targets:
                found[serial] = g
            if not ps:
                continue
            prim = node.primitive
            if not node.graphs.isdisjoint(live):
                ans, args = node, node.args
            else:  # nothing to record: the rules may run on raw arrays, fast
                ans = node.value
                args = raw_args(node.args)
            if hook_list:
                in_values = raw_args(node.args)
                with user_code():
                    for h in hook_list:
                        h.backward_preprocess(node, in_values, (g,))
            if prim.library:
                gis = prim.vjp(g, ans, args, node.kwargs, ps)
            else:
                with user_code():
                    gis = prim.vjp(g, ans, args, node.kwargs, ps)
            if hook_list or nan_check:
                gis = _checked(prim, ps, gis, nan_check)
                if hook_list:
                    in_grads = [None] * len(node.args)
                    for (i, _), gi in zip(ps, gis, strict=True):
                        in_grads[i] = gi
                    with user_code():
                        for h in hook_list:
                            h.backward_postprocess(node, in_values, (g,), tuple(in_grads))
            del g  # released before the sums below: a smaller peak
            for (i, p), gi in zip(ps, gis, strict=True):
                pv = p.value
                gv = gi.value if type(gi) is Node else gi
                try:  # the common case, inline; _check_grad explains any mismatch
                    tg = type(gv)
                    fits = (
                        gv.shape == pv.shape
                        and gv.dtype == pv.dtype
                        and (tg is type(pv) or (tg in NUMPY_TYPES and type(pv) in NUMPY_TYPES))
                    )
                except AttributeError:  # not an array at all
                    fits = False
                if not fits:
                    gi = _check_grad(prim, i, p, gi)
                s = p.serial
                prev = grads.get(s)
                if prev is None:
                    grads[s] = gi
                elif s in owned and type(gi) is not Node:
                    prev += gi  # an array of our own: summed in place, no new allocation
                    grads[s] = prev  # (NumPy scalars, immutable, come back as new objects)
                else:
                    total = prev + gi
                    grads[s] = total
                    if type(total) is Node:  # a sum recorded on another graph
                        owned.discard(s)
                    else:
                        owned.add(s)
            del gis
    return found


__all__ = ["DEFAULT_BACKPROP_ID", "backprop", "fold"]
