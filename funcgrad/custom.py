"""Functions with derivatives of the user's choosing: checkpoint and custom_vjp (layer 6).

Both make one node of a whole call.  Its inputs are found by *closure
conversion*, as JAX finds a traced function's constants: the function runs once
on the arguments as given, recording as usual, and every Node its results were
computed from that existed before the call -- an argument, or a value the
function closes over -- becomes an input of the node.  So a gradient reaches a
closed-over weight as surely as an argument, at every order and on every graph.

- ``checkpoint`` keeps, of what the call recorded, only a *program*: each
  step's primitive and its constant arguments, with the Nodes replaced by slot
  numbers.  The recorded intermediates are dropped; backward replays the
  program on fresh leaves standing for the inputs and folds over the replay.
- ``custom_vjp`` runs ``fwd`` once and keeps its residuals; backward calls
  ``bwd`` once.  A gradient asked for a closed-over input raises
  :class:`~funcgrad.FuncgradError`, as JAX refuses it: ``bwd`` cannot give it.

A call with several outputs is one node holding a :class:`Bundle` of them, and
one ``item`` node per output: the rules run once per backward, whatever the
number of outputs.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> f = fg.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
>>> fg.grad(f)(numpy.array(0.0))
array(1.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import numpy

from . import tree
from .backend import is_inexact_dtype
from .backprop import gradients
from .errors import FuncgradError, FuncgradTypeError
from .forward import forward
from .node import (
    _ACTIVE,
    BackpropId,
    Node,
    PassThrough,
    collector_paused,
    make_node,
    recording,
    require_grad,
    serial_mark,
    value_of,
)
from .numpy import zeros_like
from .primitive import Primitive, _by_reference, _named, bind

# The custom_vjp functions whose fwd is running in this context.
_IN_FWD: ContextVar[frozenset] = ContextVar("funcgrad_custom_vjp_fwd", default=frozenset())


class Bundle(tuple):
    """The values of a node with several outputs, or their cotangents or tangents.

    One entry per output; in cotangents and tangents None stands for zero.
    Sums are entrywise, so the reverse fold adds the cotangents of the outputs
    that are used as it adds arrays.  It has the attributes the fold reads of
    an array (``shape`` ``()``, ``dtype`` object), never a user's concern: the
    outputs themselves are ``item`` nodes over the bundle.

    >>> Bundle((1.0, None)) + Bundle((None, 2.0))
    Bundle((1.0, 2.0))
    """

    __slots__ = ()
    shape = ()
    ndim = 0
    size = 1
    dtype = numpy.dtype(object)

    def __add__(self, other: Any) -> Bundle:
        return Bundle(
            a if b is None else b if a is None else a + b
            for a, b in zip(self, other, strict=True)
        )

    def __repr__(self) -> str:
        return f"Bundle({tuple(self)!r})"


def _item(bundle: Bundle, index: int) -> Any:
    return bundle[index]


_ITEM = Primitive(_item, "item")  # output ``index`` of a multi-output node
_ITEM.__module__, _ITEM.__qualname__ = __name__, "_ITEM"  # pickles by reference


def _item_vjp(g, ans, args, kwargs, positions):
    n = len(value_of(args[0]))
    k = kwargs["index"]
    return [Bundle((None,) * k + (g,) + (None,) * (n - k - 1))]


_ITEM.vjp_joint = _item_vjp
_ITEM.jvp_joint = lambda pairs, ans, args, kwargs: pairs[0][1][kwargs["index"]]


def _record(name: str, inputs: list, values: list, vjp: Callable, jvp: Callable) -> list:
    """Nodes over ``inputs`` holding ``values``: one node, or a bundle and its items.

    ``vjp(gs, args, positions)`` gets one cotangent per value (None: zero) and
    returns one gradient per position; ``jvp(pairs, args)`` returns one tangent
    per value (None: zero).
    """
    if len(values) == 1:
        value = values[0]
        prim = Primitive(lambda *_: value, name)  # computed already: the call returns it
        prim.vjp_joint = lambda g, ans, args, kwargs, positions: vjp([g], args, positions)
        prim.jvp_joint = lambda pairs, ans, args, kwargs: jvp(pairs, args)[0]
        return [bind(prim, tuple(inputs), {})]
    bundle = Bundle(values)
    prim = Primitive(lambda *_: bundle, name)
    prim.vjp_joint = lambda g, ans, args, kwargs, positions: vjp(list(g), args, positions)
    prim.jvp_joint = lambda pairs, ans, args, kwargs: Bundle(jvp(pairs, args))
    node = bind(prim, tuple(inputs), {})
    return [_ITEM(node, index=k) for k in range(len(values))]


def _boundary(outputs: list, mark: int, stop: frozenset = frozenset()) -> list[Node]:
    """The Nodes older than ``mark`` that ``outputs`` were computed from, oldest first.

    Walks back from ``outputs`` through the Nodes made since ``mark`` and stops
    at older ones: the arguments and closed-over values of the call.  Nodes
    whose serial is in ``stop`` are neither walked through nor reported.
    """
    seen: set[int] = set(stop)
    found: dict[int, Node] = {}
    stack = [o for o in outputs if type(o) is Node]
    while stack:
        n = stack.pop()
        s = n.serial
        if s in seen:
            continue
        seen.add(s)
        if s < mark:
            found[s] = n
            continue
        stack.extend(a for a in n.args if type(a) is Node)
    return [found[s] for s in sorted(found)]


def _covers(inputs: list[Node], outputs: list[Node]) -> bool:
    """Whether every live graph of ``outputs`` is a graph of some input.

    Not so when the call made a leaf of an open graph itself (``require_grad``
    inside it): no node over the inputs could stand for its outputs there.
    """
    live = _ACTIVE.get()
    graphs = frozenset().union(*(n.graphs for n in inputs)) & live
    return all(o.graphs & live <= graphs for o in outputs) and bool(graphs)


class _Program:
    """The recorded steps of a call, Nodes replaced by slots: replayable on new inputs.

    Slots ``0..len(inputs)-1`` are the inputs; each step fills the next slot.
    Only primitives, keyword arguments and constant arguments are kept, so the
    recorded intermediates can be freed.
    """

    __slots__ = ("outputs", "steps")

    def __init__(self, inputs: list[Node], outputs: list[Node]):
        slot = {n.serial: i for i, n in enumerate(inputs)}
        made: dict[int, Node] = {}
        stack = list(outputs)
        while stack:
            n = stack.pop()
            if n.serial in made or n.serial in slot:
                continue
            made[n.serial] = n
            stack.extend(a for a in n.args if type(a) is Node)
        steps = []
        for s in sorted(made):  # creation order: every step after the steps it uses
            n = made[s]
            args = list(n.args)
            refs = []
            for j, a in enumerate(args):
                if type(a) is Node:
                    refs.append((j, slot[a.serial]))
                    args[j] = None
            slot[s] = len(slot)
            steps.append((n.primitive, tuple(args), tuple(refs), n.kwargs or {}))
        self.steps = tuple(steps)
        self.outputs = tuple(slot[o.serial] for o in outputs)

    def run(self, inputs: list) -> list:
        """The outputs of the steps replayed on ``inputs`` (Nodes or raw values)."""
        env = list(inputs)
        for prim, args, refs, kwargs in self.steps:
            if refs:
                args = list(args)
                for j, k in refs:
                    args[j] = env[k]
            if isinstance(prim, PassThrough):  # a graph joined or left: the value itself
                env.append(args[0])
            else:
                env.append(prim(*args, **kwargs))
        return [env[k] for k in self.outputs]


def _leaves_on(bp: BackpropId, args: tuple, positions: list) -> list:
    """``args``, with those at ``positions`` made leaves of ``bp``."""
    wanted = set(positions)
    return [require_grad(a, bp) if i in wanted else a for i, a in enumerate(args)]


def checkpoint(fun: Callable) -> Callable:
    """``fun`` whose intermediates are recomputed in backward instead of kept.

    Forward keeps only the inputs, the outputs, and the program of the call:
    backward replays it.  Values ``fun`` closes over are inputs like its
    arguments.  Gradients are the same to every order, in both modes.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> g = fg.grad(fg.checkpoint(lambda x: fnp.exp(2 * x)))
    >>> g(numpy.array(0.0))
    array(2.)
    >>> w = numpy.array(3.0)
    >>> fg.grad(lambda w: fg.checkpoint(lambda h: h * w)(w))(w)  # d(w*w)/dw
    array(6.)
    """

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        mark = serial_mark()
        out = fun(*args, **kwargs)  # user code: the collector as the user left it
        out_leaves, out_def = tree.flatten(out)
        del out
        # Outputs made by the call; others (constants, Nodes passed through) stand.
        made = [k for k, o in enumerate(out_leaves) if type(o) is Node and o.serial > mark]
        if not made:
            return tree.unflatten(out_def, out_leaves)
        made_nodes = [out_leaves[k] for k in made]
        inputs = _boundary(made_nodes, mark)
        if not _covers(inputs, made_nodes):
            return tree.unflatten(out_def, out_leaves)  # recorded in full, as without checkpoint
        program = _Program(inputs, made_nodes)
        values = [o.value for o in made_nodes]
        del made_nodes

        def vjp(gs, args, positions):
            bp = BackpropId("checkpoint")
            with recording(bp), collector_paused():
                leaves = _leaves_on(bp, args, positions)
                outs = program.run(leaves)
            pairs = [
                (o, g) for o, g in zip(outs, gs, strict=True)
                if g is not None and type(o) is Node and bp in o.graphs
            ]
            wrt = [leaves[i] for i in positions]
            found = (
                gradients([o for o, _ in pairs], [g for _, g in pairs], wrt, bp, prune=False)
                if pairs else [None] * len(wrt)
            )
            return [zeros_like(value_of(a)) if f is None else f
                    for a, f in zip(wrt, found, strict=True)]

        def jvp(pairs, args):
            bp = BackpropId("checkpoint")
            positions = [i for i, _ in pairs]
            with recording(bp), collector_paused():
                leaves = _leaves_on(bp, args, positions)
                outs = program.run(leaves)
            live = [o for o in outs if type(o) is Node and bp in o.graphs]
            ts = forward(live, [leaves[i] for i in positions], [t for _, t in pairs], bp)
            by_serial = {o.serial: t for o, t in zip(live, ts, strict=True)}
            return [by_serial.get(o.serial) if type(o) is Node else None for o in outs]

        for k, node in zip(made, _record("checkpoint", inputs, values, vjp, jvp), strict=True):
            out_leaves[k] = node
        return tree.unflatten(out_def, out_leaves)

    return checkpointed


_ARGUMENT = PassThrough("argument")


def _float_leaf(v: Any) -> bool:
    dtype = getattr(v, "dtype", None)
    return isinstance(v, (float, complex)) or (dtype is not None and is_inexact_dtype(dtype))


class custom_vjp:
    """A function with a user-given gradient (JAX-style).

    ``fwd(*args, **kwargs)`` returns ``(out, residuals)``; ``bwd(residuals, g)``
    returns a tuple with one gradient per positional argument (None for zero),
    ``g`` having the structure of ``out``.

    - A call with no traced argument runs the function itself.
    - A traced call runs ``fwd`` once; one backward runs ``bwd`` once, whatever
      the number of outputs.  Written with ``fnp``, ``fwd`` and ``bwd`` are
      differentiated again for higher orders (the residuals are recorded);
      forward mode transposes ``bwd``.
    - Keyword arguments pass to the function and ``fwd`` as data: no gradient.
    - Asking for a gradient with respect to a traced value the function closes
      over (or takes as a keyword argument) raises :class:`~funcgrad.FuncgradError`:
      pass it as a positional argument.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> @fg.custom_vjp
    ... def f(x):
    ...     return fnp.sin(x)
    >>> f.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), lambda res, g: (g * res,))
    >>> fg.grad(f)(numpy.array(0.0))
    array(1.)
    """

    def __init__(self, fun: Callable):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def __reduce__(self) -> tuple:
        # By reference where it is found under its module and name, as a function
        # would be; otherwise (made in a function, in __main__) by value, for cloudpickle.
        found = _named(self)
        if found is not None:
            return _by_reference, found
        return _custom_vjp, (self.fun, self.fwd, self.bwd)

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """Set the forward ``fwd(*args) -> (out, res)`` and backward ``bwd(res, g) -> grads``."""
        for what, f in (("fwd", fwd), ("bwd", bwd)):
            if not callable(f):
                raise FuncgradTypeError(
                    f"custom_vjp {self._name}: {what} must be callable, got {type(f).__name__}"
                )
        self.fwd, self.bwd = fwd, bwd

    @property
    def _name(self) -> str:
        return getattr(self.fun, "__name__", "custom_vjp")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None or self in _IN_FWD.get():
            # Inside its own fwd (``return f(x), res``, as JAX's docs write it) the
            # function is just itself: fwd's result is what gets differentiated.
            return self.fun(*args, **kwargs)
        leaves, treedef = tree.flatten(args)
        if not any(type(v) is Node for v in leaves):
            out = self.fun(*args, **kwargs)
            if not any(type(o) is Node for o in tree.flatten(out)[0]):
                return out
            # The function closes over a traced value: traced call below, so
            # that differentiating with respect to it raises.
        return self._traced(args, kwargs, leaves, treedef)

    def _traced(self, args: tuple, kwargs: dict, leaves: list, treedef: Any) -> Any:
        name, bwd = self._name, self.bwd
        mark = serial_mark()
        # fwd sees each traced argument through a pass-through node of its own, so
        # that a value reached around them is one the function closes over, even
        # when it is an argument too.
        seen = [make_node(v.value, v.graphs, _ARGUMENT, (v,), None, v.rank + 1)
                if type(v) is Node else v for v in leaves]
        token = _IN_FWD.set(_IN_FWD.get() | {self})
        try:
            res = self.fwd(*tree.unflatten(treedef, seen), **kwargs)
        finally:
            _IN_FWD.reset(token)
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise FuncgradTypeError(
                f"custom_vjp {name}: fwd must return a pair (out, residuals), "
                f"got {type(res).__name__}"
            )
        out, res = res
        out_leaves, out_def = tree.flatten(out)
        made = [k for k, o in enumerate(out_leaves) if _float_leaf(value_of(o))]
        if not made:
            return out
        given = frozenset(v.serial for v in seen if type(v) is Node)
        frees = _boundary(out_leaves, mark, given)
        if not given and not frees:  # fwd saw nothing traced
            return out
        free_graphs = [n.backprop_id.name for n in frees]
        values = [numpy.asarray(v) if isinstance(v, float) else v
                  for v in (value_of(out_leaves[k]) for k in made)]
        n_args, n_leaves = len(args), len(leaves)

        def refuse(positions):
            for i in positions:
                if i >= n_leaves:
                    raise FuncgradError(
                        f"custom_vjp {name} was differentiated with respect to a traced value "
                        f"it closes over or takes as a keyword argument (a Node on graph "
                        f"{free_graphs[i - n_leaves]!r}); its bwd gives no gradient for it: "
                        "pass that value as a positional argument"
                    )

        def cotangent_tree(gs):
            cts = [None] * len(out_leaves)
            for k, g in zip(made, gs, strict=True):
                cts[k] = g
            return tree.unflatten(out_def, cts)

        def run_bwd(gs):
            grads = bwd(res, cotangent_tree(gs))
            if not isinstance(grads, (tuple, list)) or len(grads) != n_args:
                raise FuncgradTypeError(
                    f"custom_vjp {name}: bwd must return a tuple of {n_args} gradients "
                    f"(one per positional argument), got {type(grads).__name__}"
                    + (f" of length {len(grads)}" if isinstance(grads, (tuple, list)) else "")
                )
            try:
                return tree.flatten_up_to(treedef, tuple(grads))
            except ValueError as exc:
                raise FuncgradTypeError(
                    f"custom_vjp {name}: bwd's gradients do not match the arguments: {exc}"
                ) from None

        def vjp(gs, args, positions):
            refuse(positions)
            gs = [zeros_like(v) if g is None else g for g, v in zip(gs, values, strict=True)]
            flat = run_bwd(gs)
            return [zeros_like(value_of(args[i])) if flat[i] is None else flat[i]
                    for i in positions]

        def jvp(pairs, args):
            # Forward mode: bwd is linear in g, so J t is the gradient of <bwd(g), t> in g.
            refuse([i for i, _ in pairs])
            bp = BackpropId("transpose")
            with recording(bp):
                gs = [require_grad(zeros_like(v), bp) for v in values]
                flat = run_bwd(gs)
            outs, seeds = [], []
            for i, t in pairs:
                c = flat[i]
                if type(c) is Node and bp in c.graphs:
                    outs.append(c)
                    seeds.append(t)
            if not outs:
                return [None] * len(values)
            return gradients(outs, seeds, gs, bp, prune=False)

        for k, node in zip(made, _record(name, leaves + frees, values, vjp, jvp), strict=True):
            out_leaves[k] = node
        return tree.unflatten(out_def, out_leaves)


def _custom_vjp(fun: Callable, fwd: Callable | None, bwd: Callable | None) -> custom_vjp:
    """A :class:`custom_vjp` rebuilt from its parts (what one pickled by value holds)."""
    made = custom_vjp(fun)
    if fwd is not None:
        made.defvjp(fwd, bwd)
    return made
