"""Functions with derivatives of the user's choosing: custom_vjp and checkpoint (layer 6).

Both turn a whole function into primitives over the flat leaves of its
arguments, one primitive per output leaf.  The forward pass runs the function
on raw values, so nothing inside it is recorded; the backward pass calls a
joint VJP that either asks the user's ``bwd`` (``custom_vjp``) or traces the
function again (``checkpoint``).  Forward mode needs nothing more: it
transposes the joint VJP like any other rule.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> f = fg.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
>>> fg.grad(f)(numpy.array(0.0))
array(1.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import tree
from .combinators import vjp
from .errors import FuncgradTypeError
from .node import Node, value_of
from .numpy import zeros_like
from .primitive import Primitive


def _leafwise(fun: Callable, name: str, joint_for: Callable) -> Callable:
    """``fun`` as one primitive per output leaf over its flat argument leaves.

    ``joint_for(treedef, out_def, k)`` makes the joint VJP rule of output leaf ``k``.
    """

    @functools.wraps(fun)
    def wrapped(*args):
        leaves, treedef = tree.flatten(args)
        raw_out = fun(*tree.unflatten(treedef, [value_of(v) for v in leaves]))
        if not any(type(v) is Node for v in leaves):
            return raw_out
        out_leaves, out_def = tree.flatten(raw_out)
        results = []
        for k, value in enumerate(out_leaves):
            # The forward value is already computed: the primitive just returns it.
            prim = Primitive(lambda *_, _v=value: _v,
                             f"{name}[{k}]" if len(out_leaves) > 1 else name)
            prim.vjp_joint = joint_for(treedef, out_def, k)
            results.append(prim(*leaves))
        return tree.unflatten(out_def, results)

    return wrapped


def _one_hot_cotangent(out_def: Any, outs: Any, k: int, g: Any) -> Any:
    """The cotangent tree of ``outs`` with ``g`` at leaf ``k`` and zeros elsewhere."""
    leaves = tree.flatten(outs)[0]
    return tree.unflatten(
        out_def, [g if j == k else zeros_like(value_of(v)) for j, v in enumerate(leaves)]
    )


def checkpoint(fun: Callable) -> Callable:
    """``fun`` whose intermediates are recomputed in backward instead of kept.

    Forward keeps only the arguments and outputs of ``fun``; each backward step
    through it traces ``fun`` again.  Gradients are the same to every order.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> g = fg.grad(fg.checkpoint(lambda x: fnp.exp(2 * x)))
    >>> g(numpy.array(0.0))
    array(2.)
    """

    def joint_for(treedef, out_def, k):
        def joint(g, ans, args, kwargs, positions):
            out, fn = vjp(fun, *tree.unflatten(treedef, list(args)))
            grads = tree.flatten(fn(_one_hot_cotangent(out_def, out, k, g)))[0]
            return [grads[i] for i in positions]

        return joint

    return _leafwise(fun, "checkpoint", joint_for)


class custom_vjp:
    """A function with a user-given gradient (JAX-style).

    ``fwd(*args)`` returns ``(out, residuals)``; ``bwd(residuals, g)`` returns a
    tuple with one gradient per argument.  Written with ``fnp``, both are
    differentiated again for higher orders; forward mode transposes ``bwd``.
    ``fwd`` runs again in backward, with the arguments as Nodes, so that the
    residuals are differentiable too.

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
        self._wrapped: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """Set the forward ``fwd(*args) -> (out, res)`` and backward ``bwd(res, g) -> grads``."""
        self.fwd, self.bwd = fwd, bwd
        name = getattr(self.fun, "__name__", "custom_vjp")

        def joint_for(treedef, out_def, k):
            def joint(g, ans, args, kwargs, positions):
                primals = tree.unflatten(treedef, list(args))
                out, res = fwd(*primals)
                grads = bwd(res, _one_hot_cotangent(out_def, out, k, g))
                if not isinstance(grads, (tuple, list)) or len(grads) != len(primals):
                    raise FuncgradTypeError(
                        f"custom_vjp {name}: bwd must return a tuple of {len(primals)} "
                        f"gradients, got {type(grads).__name__}"
                    )
                flat = tree.flatten(tuple(grads))[0]
                if len(flat) != len(args):
                    raise FuncgradTypeError(
                        f"custom_vjp {name}: bwd returned {len(flat)} gradient leaves for "
                        f"{len(args)} argument leaves"
                    )
                return [flat[i] for i in positions]

            return joint

        self._wrapped = _leafwise(lambda *a: fwd(*a)[0], name, joint_for)

    def __call__(self, *args):
        if self._wrapped is None:
            return self.fun(*args)
        return self._wrapped(*args)
