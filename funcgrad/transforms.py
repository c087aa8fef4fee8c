"""More transformations: linearize and elementwise_grad (layer 6).

``linearize`` is forward mode split in two: the primal and the coefficients
of the JVP are computed once, then the linear map alone is evaluated for each
tangent.  ``elementwise_grad`` is HIPS autograd's gradient of ``sum(fun(x))``.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> out, f_jvp = fg.linearize(fnp.sin, numpy.array(0.0))
>>> f_jvp(numpy.array(2.0))
array(2.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy

from . import tree
from .arguments import argnum_tuple, partial_at
from .backprop import check_like, owned
from .combinators import off_graph, trace_call, vjp, zeros_of
from .errors import FuncgradTypeError, FuncgradValueError
from .forward import forward
from .node import BackpropId, Node, PassThrough, recording, require_grad, value_of
from .numpy import ones_like, zeros_like


class _LinearProgram:
    """The steps that make the tangents of a forward fold from its input tangents.

    Recorded once on a graph of its own, whose only leaves are the input
    tangents: every step is a primitive applied to tangents and to
    coefficients (the primal's values and what the JVP rules computed from
    them), which stay in the steps as constants.  Replaying the steps on new
    tangents evaluates the linear map and nothing else.
    """

    __slots__ = ("outputs", "steps")

    def __init__(self, inputs: list[Node], outputs: list, bp: BackpropId):
        slot = {n.serial: i for i, n in enumerate(inputs)}
        made: dict[int, Node] = {}
        stack = [o for o in outputs if type(o) is Node and bp in o.graphs]
        while stack:
            n = stack.pop()
            if n.serial in made or n.serial in slot:
                continue
            made[n.serial] = n
            stack.extend(a for a in n.args if type(a) is Node and bp in a.graphs)
        steps = []
        for s in sorted(made):  # creation order: every step after the steps it uses
            n = made[s]
            args = list(n.args)
            refs = []
            for j, a in enumerate(args):
                if type(a) is Node and bp in a.graphs:
                    refs.append((j, slot[a.serial]))
                    args[j] = None
            slot[s] = len(slot)
            steps.append((n.primitive, tuple(args), tuple(refs), n.kwargs or {}))
        self.steps = tuple(steps)
        # An output is a slot, or a constant (None: zero).
        self.outputs = tuple(
            ("slot", slot[o.serial]) if type(o) is Node and bp in o.graphs else ("const", o)
            for o in outputs
        )

    def run(self, inputs: list) -> list:
        env = list(inputs)
        for prim, args, refs, kwargs in self.steps:
            args = list(args)
            for j, k in refs:
                args[j] = env[k]
            if isinstance(prim, PassThrough):
                env.append(args[0])
            else:
                env.append(prim(*args, **kwargs))
        return [env[v] if kind == "slot" else v for kind, v in self.outputs]


def linearize(fun: Callable, *primals: Any, has_aux: bool = False):
    """``(out, jvp_fn)``: the JVP of ``fun`` at ``primals``, to evaluate many times.

    ``jvp_fn(*tangents)`` (one tangent per primal, of its structure and
    shape) returns the tangent of the output, as ``fg.jvp(fun, primals,
    tangents)[1]`` would, but ``fun`` runs once, in this call, and so do the
    coefficients of the linear map (``cos(x)`` for ``sin``): each call of
    ``jvp_fn`` evaluates only the linear map.  With ``has_aux``, ``fun``
    returns ``(out, aux)`` and the result is ``(out, jvp_fn, aux)``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> out, f_jvp = fg.linearize(lambda x: fnp.sin(x) * x, numpy.array(0.5))
    >>> f_jvp(numpy.array(1.0))                    # cos(0.5) * 0.5 + sin(0.5)
    array(0.91821682)
    >>> f_jvp(numpy.array(2.0))
    array(1.83643365)
    """
    bp, nodes, treedef, out, aux = trace_call(fun, primals, "linearize", has_aux)
    out_leaves, out_def = tree.flatten(out)
    live = [o for o in out_leaves if type(o) is Node and bp in o.graphs]
    lin = BackpropId("linearize")
    with recording(lin):
        ts_in = [require_grad(zeros_like(n.value), lin) for n in nodes]
        ts_out = forward(live, nodes, ts_in, bp) if live else []
    by_serial = {o.serial: t for o, t in zip(live, ts_out, strict=True)}
    tan_leaves = [by_serial.get(o.serial) if type(o) is Node else None for o in out_leaves]
    program = _LinearProgram(ts_in, tan_leaves, lin)
    del ts_out, by_serial, tan_leaves
    n = len(primals)

    def jvp_fn(*tangents: Any) -> Any:
        if len(tangents) != n:
            raise FuncgradValueError(
                f"linearize: jvp_fn takes {n} tangents (one per primal), got {len(tangents)}"
            )
        t_leaves = tree.flatten_up_to(treedef, tuple(tangents))
        t_leaves = [check_like(t, p, f"linearize: tangent leaf {i}", f"primal leaf {i}")
                    for i, (p, t) in enumerate(zip(nodes, t_leaves, strict=True))]
        res = [zeros_of(value_of(o)) if t is None else t
               for o, t in zip(out_leaves, program.run(t_leaves), strict=True)]
        res = [numpy.asarray(t) if isinstance(t, numpy.generic) else t for t in res]
        caller = [value_of(p) for p in nodes] + list(t_leaves)  # no tangent may alias them
        return tree.unflatten(out_def, owned(res, caller))

    lowered = tree.unflatten(out_def, [off_graph(o, bp) for o in out_leaves])
    return (lowered, jvp_fn, aux) if has_aux else (lowered, jvp_fn)


def _ones(o: Any) -> Any:
    v = value_of(o)
    if isinstance(v, float):
        return numpy.ones(())
    dtype = getattr(v, "dtype", None)
    if dtype is None or numpy.dtype(dtype).kind not in "fc":
        return None  # data: no cotangent
    if numpy.dtype(dtype).kind == "c":
        raise FuncgradTypeError(
            "elementwise_grad only applies to real-valued functions: an output leaf has "
            f"dtype {dtype}"
        )
    return ones_like(v)


def elementwise_grad(fun: Callable, argnums: Any = 0, *, argnum: Any = None) -> Callable:
    """HIPS autograd's ``elementwise_grad``: the gradient of ``sum(fun(x))``.

    For ``fun`` acting elementwise, entry ``i`` of the result is the derivative
    of output ``i`` with respect to input ``i``: the diagonal of the Jacobian,
    in one reverse pass.  (For other functions it is still the gradient of the
    sum of the outputs: the vector-Jacobian product with ones.)  ``argnums``
    (or autograd's spelling, ``argnum``) is an int or a tuple of ints, as for
    :func:`grad`; a tuple gives a tuple of gradients.  Outputs may be pytrees:
    every leaf is summed.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fg.elementwise_grad(fnp.tanh)(numpy.array([0.0, 1.0]))    # 1 - tanh(x)^2
    array([1.        , 0.41997434])
    >>> fg.elementwise_grad(lambda x, y: x * y, argnum=(0, 1))(2.0, 3.0)
    (array(3.), array(2.))
    """
    if argnum is not None:
        argnums = argnum

    @functools.wraps(fun)
    def egrad(*args: Any, **kwargs: Any) -> Any:
        nums = argnum_tuple(argnums, len(args), "elementwise_grad")
        f = partial_at(functools.partial(fun, **kwargs) if kwargs else fun, args, nums)
        out, fn = vjp(f, *(args[i] for i in nums))
        g = fn(tree.tree_map(_ones, out))
        return g[0] if isinstance(argnums, int) else g

    return egrad


__all__ = ["elementwise_grad", "linearize"]
