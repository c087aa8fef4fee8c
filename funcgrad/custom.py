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
import operator
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import numpy

from . import tree
from .backend import is_inexact_dtype
from .backprop import gradients, walk
from .batching import NOT_MAPPED, is_batched, per_example
from .errors import FuncgradError, FuncgradTypeError, FuncgradValueError
from .forward import forward
from .node import (
    ACTIVE,
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
from .pickling import by_reference, importable_name
from .primitive import Primitive, bind

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
        prim.computed = True  # (batched already too, under fg.vmap)
        prim.vjp_joint = lambda g, ans, args, kwargs, positions: vjp([g], args, positions)
        prim.jvp_joint = lambda pairs, ans, args, kwargs: jvp(pairs, args)[0]
        return [bind(prim, tuple(inputs), {})]
    bundle = Bundle(values)
    prim = Primitive(lambda *_: bundle, name)
    prim.computed = True
    prim.vjp_joint = lambda g, ans, args, kwargs, positions: vjp(list(g), args, positions)
    prim.jvp_joint = lambda pairs, ans, args, kwargs: Bundle(jvp(pairs, args))
    node = bind(prim, tuple(inputs), {})
    return [_ITEM(node, index=k) for k in range(len(values))]


def closure_of(outputs: list, mark: int) -> tuple[list[Node], list[Node]]:
    """What ``outputs`` were computed from: the Nodes older than ``mark`` -- the
    arguments and closed-over values of the call -- in creation order, and every
    Node between them and ``outputs``.

    One :func:`~funcgrad.backprop.walk` along every Node argument, on every
    graph, that stops at the Nodes older than the mark.
    """
    order, leaves = walk([o for o in outputs if type(o) is Node], None, mark)
    return sorted((n for n in leaves if n.serial < mark), key=_SERIAL), order


_SERIAL = operator.attrgetter("serial")


def _covers(inputs: list[Node], outputs: list[Node]) -> bool:
    """Whether every live graph of ``outputs`` is a graph of some input.

    Not so when the call made a leaf of an open graph itself (``require_grad``
    inside it): no node over the inputs could stand for its outputs there.
    """
    live = ACTIVE.get()
    graphs = frozenset().union(*(n.graphs for n in inputs)) & live
    return all(o.graphs & live <= graphs for o in outputs) and bool(graphs)


class Program:
    """The recorded steps of a call, Nodes replaced by slots: replayable on new inputs.

    ``between`` holds the Nodes between ``inputs`` and ``outputs`` (and may
    hold the inputs too: :func:`closure_of`'s).  Slots ``0..len(inputs)-1`` are the inputs; each
    step fills the next slot.  Only primitives, keyword arguments and constant
    arguments are kept, so the recorded intermediates can be freed.
    """

    __slots__ = ("outputs", "steps")

    def __init__(self, inputs: list[Node], outputs: list[Node], between: list[Node]):
        slot = {n.serial: i for i, n in enumerate(inputs)}
        steps = []
        made = sorted((n for n in between if n.serial not in slot), key=_SERIAL)
        for n in made:  # creation order: every step after the steps it uses
            args = list(n.args)
            refs = []
            for j, a in enumerate(args):
                if type(a) is Node:
                    refs.append((j, slot[a.serial]))
                    args[j] = None
            slot[n.serial] = len(slot)
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

    def replay(self, args: tuple, positions: list) -> tuple:
        """``(bp, leaves, outputs)``: the steps replayed on ``args``, those at
        ``positions`` made leaves of a new graph ``bp``."""
        bp = BackpropId("checkpoint")
        with recording(bp), collector_paused():
            leaves = leaves_on(bp, args, positions)
            return bp, leaves, self.run(leaves)


def _fold_over(bp: BackpropId, pairs: Any, wrt: list) -> list:
    """The gradients of ``wrt`` (None where unreached) from the ``(node, seed)``
    pairs whose node is on ``bp`` and whose seed is not None."""
    pairs = [(o, s) for o, s in pairs if s is not None and type(o) is Node and bp in o.graphs]
    if not pairs:
        return [None] * len(wrt)
    return gradients([o for o, _ in pairs], [s for _, s in pairs], wrt, bp)


def leaves_on(bp: BackpropId, args: tuple, positions: list) -> list:
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
        inputs, between = closure_of(made_nodes, mark)
        if not _covers(inputs, made_nodes):
            return tree.unflatten(out_def, out_leaves)  # recorded in full, as without checkpoint
        program = Program(inputs, made_nodes, between)
        values = [o.value for o in made_nodes]
        del made_nodes, between

        def vjp(gs, args, positions):
            bp, leaves, outs = program.replay(args, positions)
            wrt = [leaves[i] for i in positions]
            found = _fold_over(bp, zip(outs, gs, strict=True), wrt)
            return [zeros_like(value_of(a)) if f is None else f
                    for a, f in zip(wrt, found, strict=True)]

        def jvp(pairs, args):
            positions = [i for i, _ in pairs]
            bp, leaves, outs = program.replay(args, positions)
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


def _per_example(fun: Callable, args: tuple, kwargs: dict, name: str) -> Any:
    """A custom rule's function called on values a running vmap maps (a vmap inside a
    gradient) runs one example at a time, so that each call sees the gradient's Nodes
    and its own rule, not the function's body, is what gets differentiated; else
    :data:`NOT_MAPPED`."""
    if not any(_maps_a_node(v) for v in tree.flatten(args)[0]):
        return NOT_MAPPED  # no gradient under the map: the body runs batched
    return per_example(lambda a: fun(*a, **kwargs), args, name)


def _maps_a_node(v: Any) -> bool:
    """Whether ``v`` is a batched value holding a gradient's Node (at any depth)."""
    if not is_batched(v):
        return False
    while is_batched(v) or type(v) is Node:
        if type(v) is Node:
            return True
        v = v.value
    return False


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
        found = importable_name(self)
        if found is not None:
            return by_reference, found
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
        looped = _per_example(self, args, kwargs, f"custom_vjp {self._name}")
        if looped is not NOT_MAPPED:
            return looped
        leaves, treedef = tree.flatten(args)
        if not any(type(v) is Node for v in leaves):
            out = self.fun(*args, **kwargs)
            if not any(type(o) is Node for o in tree.flatten(out)[0]):
                return out
            # The function closes over a traced value: traced call below, so
            # that differentiating with respect to it raises.
        return _VJPCall(self, leaves, treedef).trace(args, kwargs, self)


def _custom_vjp(fun: Callable, fwd: Callable | None, bwd: Callable | None) -> custom_vjp:
    """A :class:`custom_vjp` rebuilt from its parts (what one pickled by value holds)."""
    made = custom_vjp(fun)
    if fwd is not None:
        made.defvjp(fwd, bwd)
    return made


# -- custom_jvp -------------------------------------------------------------------

# The custom_jvp functions whose jvp rule is running in this context.
_IN_JVP: ContextVar[frozenset] = ContextVar("funcgrad_custom_jvp_rule", default=frozenset())


def _zero_tangent(v: Any) -> Any:
    """The tangent a constant argument leaf gets: zeros for floats, None for data."""
    if isinstance(v, float):
        return 0.0  # a Python number: mixes with arrays of any device
    return zeros_like(v) if _float_leaf(v) else None


class custom_jvp:
    """A function with a user-given JVP (JAX-style); its VJP is the JVP transposed.

    ``jvp(primals, tangents)`` receives two tuples, one entry per positional
    argument (a tangent of zeros for an argument that is not traced, None for
    integer and boolean data), and returns ``(primal_out, tangent_out)``,
    ``tangent_out`` having the structure and shapes of ``primal_out`` and being
    *linear* in the tangents.

    - A call with no traced argument runs the function itself.
    - A traced call runs ``jvp`` once, recording how ``tangent_out`` is made
      from the tangents.  Forward mode pushes tangents through that record;
      reverse mode folds back over it: the transpose of a linear map is its
      VJP, so one backward costs one fold, and no extra call of ``jvp``.
      Written with ``fnp``, the rule is differentiated again for higher
      orders, in both modes.
    - Keyword arguments, and the positional arguments named in
      ``nondiff_argnums``, pass to the function and to ``jvp`` as data: no
      tangent.  As in JAX, ``jvp`` then takes them first:
      ``jvp(*nondiff_args, primals, tangents, **kwargs)``.
    - Inside ``jvp``, calling the function runs the function itself.
    - Asking for a derivative with respect to a traced value the function
      closes over raises :class:`~funcgrad.FuncgradError`: ``jvp`` gives no
      tangent for it; pass it as an argument.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> @fg.custom_jvp
    ... def log1pexp(x):
    ...     return fnp.log1p(fnp.exp(x))
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return log1pexp(x), t * fg.nn.sigmoid(x)      # stable for large x
    >>> fg.grad(log1pexp)(numpy.array(100.0))
    array(1.)
    >>> fg.jvp(log1pexp, (numpy.array(0.0),), (numpy.array(2.0),))[1]
    array(1.)
    """

    def __init__(self, fun: Callable, nondiff_argnums: tuple = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.jvp: Callable | None = None
        nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else tuple(nondiff_argnums)
        if any(not isinstance(i, int) or i < 0 for i in nums) or len(set(nums)) != len(nums):
            raise FuncgradTypeError(
                f"custom_jvp {self._name}: nondiff_argnums must be distinct non-negative ints, "
                f"got {nondiff_argnums!r}"
            )
        self.nondiff_argnums = tuple(sorted(nums))

    def __reduce__(self) -> tuple:
        found = importable_name(self)
        if found is not None:
            return by_reference, found
        return _custom_jvp, (self.fun, self.jvp, self.nondiff_argnums)

    @property
    def _name(self) -> str:
        return getattr(self.fun, "__name__", "custom_jvp")

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Set the rule ``jvp(primals, tangents) -> (primal_out, tangent_out)``.

        Returns ``jvp``, so that it can be used as a decorator.  JAX's
        ``symbolic_zeros=True`` is not supported: the rule gets arrays of zeros.
        """
        if symbolic_zeros:
            raise FuncgradValueError(
                f"custom_jvp {self._name}: symbolic_zeros=True is not supported; the rule "
                "receives arrays of zeros for arguments that have no tangent"
            )
        if not callable(jvp):
            raise FuncgradTypeError(
                f"custom_jvp {self._name}: jvp must be callable, got {type(jvp).__name__}"
            )
        self.jvp = jvp
        return jvp

    def defjvps(self, *rules: Callable | None) -> None:
        """One rule per positional argument, ``rule(t, primal_out, *primals)`` (None: zero).

        The tangent of the output is the sum of the rules' results.

        >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
        >>> f = fg.custom_jvp(lambda x, y: x * y)
        >>> f.defjvps(lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t)
        >>> fg.grad(f, argnums=(0, 1))(numpy.array(2.0), numpy.array(3.0))
        (array(3.), array(2.))
        """
        fun = self.fun

        def jvp(primals, tangents, **kwargs):
            out = fun(*primals, **kwargs)
            total = None
            for rule, t in zip(rules, tangents, strict=False):
                if rule is None or t is None:
                    continue
                r = rule(t, out, *primals)
                total = r if total is None else tree.tree_map(lambda a, b: a + b, total, r)
            return out, tree.tree_map(zeros_like, out) if total is None else total

        self.defjvp(jvp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None or self in _IN_JVP.get():
            return self.fun(*args, **kwargs)
        nondiff = self.nondiff_argnums
        if nondiff and nondiff[-1] >= len(args):
            raise FuncgradTypeError(
                f"custom_jvp {self._name}: nondiff_argnums {nondiff} but called with "
                f"{len(args)} positional arguments"
            )
        looped = _per_example(self, args, kwargs, f"custom_jvp {self._name}")
        if looped is not NOT_MAPPED:
            return looped
        diff = tuple(a for i, a in enumerate(args) if i not in nondiff)
        leaves, treedef = tree.flatten(diff)
        if not any(type(v) is Node for v in leaves):
            out = self.fun(*args, **kwargs)
            if not any(type(o) is Node for o in tree.flatten(out)[0]):
                return out
            # The function closes over a traced value: traced call below, so
            # that differentiating with respect to it raises.
        return _JVPCall(self, leaves, treedef).trace(args, kwargs, self)


def _custom_jvp(fun: Callable, jvp: Callable | None, nondiff_argnums: tuple) -> custom_jvp:
    """A :class:`custom_jvp` rebuilt from its parts (what one pickled by value holds)."""
    made = custom_jvp(fun, nondiff_argnums)
    if jvp is not None:
        made.defjvp(jvp)
    return made


# -- one traced call of either: the node it records --------------------------------


class _Call:
    """One traced call of a :class:`custom_vjp` or :class:`custom_jvp`, made one node.

    The user's rule (``fwd``, or ``jvp``) sees each traced argument through a
    pass-through node of its own, so that a value reached around them is one
    the function closes over, even when it is an argument too.  The node's
    inputs are the arguments and those closed-over values; a subclass runs
    the rule (``trace``) and gives the node's rules, ``vjp(gs, args,
    positions)`` and ``jvp(pairs, args)``.
    """

    kind = ""  # "custom_vjp" or "custom_jvp", for messages
    running: ContextVar  # the functions whose rule is running (each is itself in its rule)
    refusal = ""  # why an input that is no positional argument gets no derivative

    def __init__(self, owner: Any, leaves: list, treedef: Any):
        self.name, self.treedef, self.n_leaves = owner._name, treedef, len(leaves)
        self.leaves = leaves
        self.seen = [make_node(v.value, v.graphs, _ARGUMENT, (v,), None, v.rank + 1)
                     if type(v) is Node else v for v in leaves]
        self.mark = serial_mark()  # after the pass-through nodes: they stand for the arguments

    def _run(self, owner: Any, rule: Callable, what: str, *args, **kwargs) -> tuple:
        """``rule(*args, **kwargs)``, the pair it must return (``what`` says which), run
        with ``owner`` marked running."""
        token = self.running.set(self.running.get() | {owner})
        try:
            res = rule(*args, **kwargs)
        finally:
            self.running.reset(token)
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise FuncgradTypeError(
                f"{self.kind} {self.name}: {what}, got {type(res).__name__}"
            )
        return res

    def _recorded(self, out: Any, out_leaves: list, out_def: Any, made: list, reached: list) -> Any:
        """``out`` with its leaves ``made`` replaced by nodes over the call's inputs, the
        Nodes that ``reached`` come from; ``out`` itself when the rule saw nothing traced."""
        given = {v.serial for v in self.seen if type(v) is Node}
        del self.seen
        if not made:
            return out
        frees = [n for n in closure_of(reached, self.mark)[0] if n.serial not in given]
        if not given and not frees:
            return out
        self.free_graphs = [n.backprop_id.name for n in frees]
        self.values = [numpy.asarray(v) if isinstance(v, float) else v
                       for v in (value_of(out_leaves[k]) for k in made)]
        nodes = _record(self.name, self.leaves + frees, self.values, self.vjp, self.jvp)
        del self.leaves
        for k, node in zip(made, nodes, strict=True):
            out_leaves[k] = node
        return tree.unflatten(out_def, out_leaves)

    def refuse(self, positions: list) -> None:
        """Refuse a derivative with respect to an input that is no positional argument."""
        for i in positions:
            if i >= self.n_leaves:
                graph = self.free_graphs[i - self.n_leaves]
                raise FuncgradError(
                    f"{self.kind} {self.name} was differentiated with respect to a traced value "
                    f"it closes over or takes as {self.refusal.format(graph=graph)}: pass that "
                    "value as a positional argument"
                )


class _VJPCall(_Call):
    """A traced call of a :class:`custom_vjp`: ``fwd`` run once, its residuals kept."""

    kind, running = "custom_vjp", _IN_FWD
    refusal = "a keyword argument (a Node on graph {graph!r}); its bwd gives no gradient for it"

    def trace(self, args: tuple, kwargs: dict, owner: custom_vjp) -> Any:
        pair = "fwd must return a pair (out, residuals)"
        out, self.res = self._run(owner, owner.fwd, pair,
                                  *tree.unflatten(self.treedef, self.seen), **kwargs)
        self.bwd, self.n_args = owner.bwd, len(args)
        out_leaves, self.out_def = tree.flatten(out)
        self.made = [k for k, o in enumerate(out_leaves) if _float_leaf(value_of(o))]
        self.n_out = len(out_leaves)
        return self._recorded(out, out_leaves, self.out_def, self.made, out_leaves)

    def _bwd(self, gs: list) -> list:
        """``bwd`` on the cotangents ``gs`` of the outputs made: one gradient per leaf."""
        cts = [None] * self.n_out
        for k, g in zip(self.made, gs, strict=True):
            cts[k] = g
        grads = self.bwd(self.res, tree.unflatten(self.out_def, cts))
        if not isinstance(grads, (tuple, list)) or len(grads) != self.n_args:
            raise FuncgradTypeError(
                f"custom_vjp {self.name}: bwd must return a tuple of {self.n_args} gradients "
                f"(one per positional argument), got {type(grads).__name__}"
                + (f" of length {len(grads)}" if isinstance(grads, (tuple, list)) else "")
            )
        try:
            return tree.flatten_up_to(self.treedef, tuple(grads))
        except ValueError as exc:
            raise FuncgradTypeError(
                f"custom_vjp {self.name}: bwd's gradients do not match the arguments: {exc}"
            ) from None

    def vjp(self, gs: list, args: tuple, positions: list) -> list:
        self.refuse(positions)
        gs = [zeros_like(v) if g is None else g for g, v in zip(gs, self.values, strict=True)]
        flat = self._bwd(gs)
        return [zeros_like(value_of(args[i])) if flat[i] is None else flat[i]
                for i in positions]

    def jvp(self, pairs: list, args: tuple) -> list:
        # Forward mode: bwd is linear in g, so J t is the gradient of <bwd(g), t> in g.
        self.refuse([i for i, _ in pairs])
        bp = BackpropId("transpose")
        with recording(bp):
            gs = [require_grad(zeros_like(v), bp) for v in self.values]
            flat = self._bwd(gs)
        return _fold_over(bp, ((flat[i], t) for i, t in pairs), gs)


class _JVPCall(_Call):
    """A traced call of a :class:`custom_jvp`: its rule run once on tangent leaves of
    a graph of its own, so that the tangents out record the linear map.  Forward
    mode pushes tangents through the record; reverse mode folds back over it."""

    kind, running = "custom_jvp", _IN_JVP
    refusal = ("data (a keyword argument, or one in nondiff_argnums: a Node on graph "
               "{graph!r}); its jvp gives no tangent for it")

    def trace(self, args: tuple, kwargs: dict, owner: custom_jvp) -> Any:
        bp = self.bp = BackpropId("custom_jvp")  # the tangents' graph: the linear map's record
        with recording(bp):
            self.tans = [require_grad(zeros_like(v.value), bp)
                         if type(v) is Node and _float_leaf(v.value) else _zero_tangent(v)
                         for v in self.leaves]
            pair = "jvp must return a pair (primal_out, tangent_out)"
            out, tan_out = self._run(owner, owner.jvp, pair,
                                     *(args[i] for i in owner.nondiff_argnums),
                                     tree.unflatten(self.treedef, self.seen),
                                     tree.unflatten(self.treedef, self.tans), **kwargs)
        out_leaves, out_def = tree.flatten(out)
        try:
            tan_leaves = tree.flatten_up_to(out_def, tan_out)
        except ValueError as exc:
            raise FuncgradTypeError(
                f"custom_jvp {self.name}: jvp's tangent_out does not match primal_out's "
                f"structure: {exc}"
            ) from None
        made = [k for k, o in enumerate(out_leaves) if _float_leaf(value_of(o))]
        self.tangents = [self._tangent(k, tan_leaves[k], out_leaves[k]) for k in made]
        reached = [out_leaves[k] for k in made] + [t for t in self.tangents if t is not None]
        return self._recorded(out, out_leaves, out_def, made, reached)

    def _tangent(self, k: int, t: Any, o: Any) -> Any:
        """Output leaf ``k``'s tangent ``t``, checked: a Node on the tangents' graph, or None."""
        tv, pv = value_of(t), value_of(o)
        if tv is not None and not isinstance(tv, (int, float)) and not hasattr(tv, "shape"):
            raise FuncgradTypeError(
                f"custom_jvp {self.name}: jvp's tangent_out does not match primal_out's "
                f"structure: output leaf {k} is an array, its tangent a {type(tv).__name__}"
            )
        if tv is not None and numpy.shape(tv) != numpy.shape(pv):
            raise FuncgradValueError(
                f"custom_jvp {self.name}: jvp's tangent for output leaf {k} has shape "
                f"{numpy.shape(tv)}, but the output has shape {numpy.shape(pv)}"
            )
        return t if type(t) is Node and self.bp in t.graphs else None

    def vjp(self, gs: list, args: tuple, positions: list) -> list:
        # The transpose of the recorded linear map: its VJP, one fold over it.
        self.refuse(positions)
        found = _fold_over(self.bp, zip(self.tangents, gs, strict=True),
                           [self.tans[i] for i in positions])
        return [zeros_like(value_of(args[i])) if f is None else f
                for i, f in zip(positions, found, strict=True)]

    def jvp(self, pairs: list, args: tuple) -> list:
        self.refuse([i for i, _ in pairs])
        live = [k for k, t in enumerate(self.tangents) if t is not None]
        result = [None] * len(self.values)
        if live:
            ts = forward([self.tangents[k] for k in live], [self.tans[i] for i, _ in pairs],
                         [t for _, t in pairs], self.bp)
            for k, t in zip(live, ts, strict=True):
                result[k] = t
        return result
