"""Implicit differentiation: custom_root and custom_linear_solve (layer 6).

A solver's steps are never differentiated.  Its solution ``x`` of ``f(x) =
0`` (a root) or ``A x = b`` (a linear system) becomes one node whose
derivatives come from the implicit function theorem: a tangent costs one
linear solve with the Jacobian ``∂f/∂x``, a cotangent one with its
transpose -- and those solves are ``custom_linear_solve`` calls again, so
higher orders never differentiate a solver either.

The parameters are the traced values ``f`` (or ``matvec``) closes over, as
in JAX.  funcgrad finds them by *closure conversion*, as ``checkpoint`` does:
``f`` runs once at the solution, recording as usual, and every Node its
result was computed from that existed before the call is a parameter.  Its
recorded steps are the program the rules replay on leaves of their own, to
differentiate with respect to ``x`` and the parameters.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> def sqrt(a):                      # the root of x^2 - a, by Newton's method
...     def newton(f, x):
...         for _ in range(30):
...             x = x - f(x) / (2 * x)
...         return x
...     return fg.custom_root(lambda x: x * x - a, numpy.array(1.0), newton,
...                           lambda g, y: y / g(1.0))
>>> fg.grad(sqrt)(numpy.array(4.0))   # 1 / (2 sqrt(a))
array(0.25)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from . import tree
from .backprop import gradients
from .backprop_utils import check_like
from .batching import NOT_MAPPED, loop_needed, per_example, refuse_under_outer_graph
from .combinators import stop_gradient
from .context import unrecorded
from .custom import _ITEM, Bundle, Program, closure_of, leaves_on
from .errors import FuncgradError, FuncgradTypeError, FuncgradValueError
from .forward import forward
from .node import (
    ACTIVE,
    BackpropId,
    Node,
    float_array,
    recording,
    require_grad,
    serial_mark,
    value_of,
)
from .numpy import negative, subtract, zeros_like
from .primitive import Primitive, bind


def _live(v: Any) -> bool:
    """Whether ``v`` is a Node on a graph that records here: something to differentiate."""
    return type(v) is Node and not v.graphs.isdisjoint(ACTIVE.get())


def _raw(v: Any, where: str) -> Any:
    """A leaf as a raw array (Python numbers as float64), cut from every graph."""
    v = stop_gradient(v)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float_array(v, where)
    if getattr(v, "dtype", None) is None:
        raise FuncgradTypeError(f"{where} must be an array or a number, got {type(v).__name__}")
    return v


def _solution(name: str, what: str, treedef: Any, like: list, sol: Any) -> list:
    """The leaves of ``sol``, a solver's answer, checked against ``like``'s structure."""
    try:
        leaves = tree.flatten_up_to(treedef, stop_gradient(sol))
    except ValueError as exc:
        raise FuncgradTypeError(
            f"{name}: the solution does not have the structure of {what}: {exc}"
        ) from None
    out = []
    for k, (x, b) in enumerate(zip(leaves, like, strict=True)):
        x = _raw(x, f"{name}: solution leaf {k}")
        if tuple(numpy.shape(x)) != tuple(numpy.shape(b)):
            raise FuncgradValueError(
                f"{name}: solution leaf {k} has shape {tuple(numpy.shape(x))}, but {what} "
                f"has shape {tuple(numpy.shape(b))}"
            )
        out.append(x)
    return out


def _solved(name: str, what: str, fun: Callable, fun_name: str, solve: Callable,
            treedef: Any, raw: list, has_aux: bool) -> tuple[list, Any, _Converted]:
    """``solve(fun, raw)`` run on no graph: the solution's leaves (checked against
    ``raw``, ``what``'s), its aux (cut from every graph) and ``fun`` closure-converted at
    the solution."""
    with unrecorded():
        sol = solve(fun, tree.unflatten(treedef, raw))
    aux = None
    if has_aux:
        sol, aux = sol
        aux = stop_gradient(aux)
    x = _solution(name, what, treedef, raw, sol)
    return x, aux, _Converted(fun, x, treedef, name, fun_name)


def _with_aux(out: Any, aux: Any, has_aux: bool) -> Any:
    return (out, aux) if has_aux else out


class _Converted:
    """``fun``, closure-converted at ``x``: its parameters and its replayable program.

    ``fun`` runs once on leaves standing for ``x``; ``params`` are the Nodes
    older than the call that its result was computed from (what it closes
    over), and ``run(xs, params)`` replays its steps on other Nodes standing
    for the same values.
    """

    def __init__(self, fun: Callable, x: list, treedef: Any, name: str, what: str):
        bp = BackpropId(name)
        with recording(bp):
            xs = [require_grad(v, bp) for v in x]
            mark = serial_mark()
            out = fun(tree.unflatten(treedef, xs))
        out_leaves, out_def = tree.flatten(out)
        if out_def != treedef:
            raise FuncgradTypeError(
                f"{name}: {what} must return the structure of its argument ({treedef}), "
                f"got {out_def}"
            )
        for k, (o, v) in enumerate(zip(out_leaves, x, strict=True)):
            if tuple(numpy.shape(value_of(o))) != tuple(numpy.shape(v)):
                raise FuncgradValueError(
                    f"{name}: {what} maps leaf {k} of shape {tuple(numpy.shape(v))} to shape "
                    f"{tuple(numpy.shape(value_of(o)))}: it must keep the shapes"
                )
        made = [k for k, o in enumerate(out_leaves) if type(o) is Node]
        nodes = [out_leaves[k] for k in made]
        own = {n.serial for n in xs}
        older, between = closure_of(nodes, mark)
        self.params = [n for n in older if n.serial not in own]
        self.program = Program(xs + self.params, nodes, between)
        self.made = made
        self.constants = [None if type(o) is Node else o for o in out_leaves]
        self.n = len(xs)

    def at(self, bp: BackpropId, xs: list, params: list, positions: list) -> tuple:
        """``(x leaves, params, outputs)``: leaves of ``bp`` for ``xs`` and for the
        ``params`` at ``positions``, and ``fun`` replayed on them."""
        with recording(bp):
            xl = [require_grad(v, bp) for v in xs]
            pl = leaves_on(bp, params, positions)
            return xl, pl, self.run(xl, pl)

    def run(self, xs: list, params: list) -> list:
        """The output leaves of ``fun`` replayed with ``xs`` and ``params`` as inputs."""
        out = list(self.constants)
        for k, v in zip(self.made, self.program.run(list(xs) + list(params)), strict=True):
            out[k] = v
        return out


def _record(name: str, inputs: list, values: list, vjp: Callable, jvp: Callable) -> list:
    """Nodes over ``inputs`` holding ``values``, whose rules also get the outputs.

    ``vjp(gs, xs, args, positions)`` and ``jvp(pairs, xs, args)`` receive
    ``xs``, the outputs (Nodes where they are on a live graph), so that the
    rules are differentiable through the solution too.
    """
    if len(values) == 1:
        value = values[0]
        prim = Primitive(lambda *_: value, name)
        prim.computed = True  # (batched already too, under fg.vmap)
        prim.vjp_joint = lambda g, ans, args, kwargs, positions: vjp([g], [ans], args, positions)
        prim.jvp_joint = lambda pairs, ans, args, kwargs: jvp(pairs, [ans], args)[0]
        return [bind(prim, tuple(inputs), {})]
    n = len(values)
    bundle = Bundle(values)

    def items(ans):
        return [_ITEM(ans, index=k) for k in range(n)] if type(ans) is Node else list(ans)

    prim = Primitive(lambda *_: bundle, name)
    prim.computed = True
    prim.vjp_joint = lambda g, ans, args, kwargs, positions: vjp(list(g), items(ans), args,
                                                                 positions)
    prim.jvp_joint = lambda pairs, ans, args, kwargs: Bundle(jvp(pairs, items(ans), args))
    node = bind(prim, tuple(inputs), {})
    return [_ITEM(node, index=k) for k in range(n)]


def _fill(found: list, like: list) -> list:
    """``found`` with each None (no dependence) made zeros shaped like ``like``."""
    return [zeros_like(value_of(v)) if f is None else f for f, v in zip(found, like, strict=True)]


def _like(vs: list, xs: list, what: str) -> list:
    """``vs``, vectors a solver hands to a linear map, checked and cast like ``xs``."""
    return [v if v is None or not hasattr(value_of(x), "shape")
            else check_like(v, x, f"{what} leaf {k}", f"x leaf {k}")
            for k, (v, x) in enumerate(zip(vs, xs, strict=True))]


def _vjp_leaves(outs: list, seeds: list, wrt: list, bp: BackpropId) -> list:
    """``Jᵀ s``: the cotangents of ``wrt`` for ``seeds`` on ``outs`` (None: zero)."""
    seeds = _like(seeds, outs, "the vector given to the transposed map")
    pairs = [(o, s) for o, s in zip(outs, seeds, strict=True)
             if s is not None and type(o) is Node and bp in o.graphs]
    if not pairs or not wrt:
        return [None] * len(wrt)
    return gradients([o for o, _ in pairs], [s for _, s in pairs], wrt, bp)


def _jvp_leaves(outs: list, wrt: list, tangents: list, bp: BackpropId) -> list:
    """``J t``: the tangents of ``outs`` for ``tangents`` of ``wrt`` (None: zero)."""
    tangents = _like(tangents, wrt, "the vector given to the linear map")
    live = [k for k, o in enumerate(outs) if type(o) is Node and bp in o.graphs]
    result = [None] * len(outs)
    if live and wrt:
        for k, t in zip(live, forward([outs[k] for k in live], wrt, tangents, bp), strict=True):
            result[k] = t
    return result


def _transposed(name: str, solve: Callable, transpose_solve: Callable | None,
                symmetric: bool) -> tuple[Callable, Callable]:
    """The solves of the transposed system and of the system again, for reverse mode."""
    if symmetric:
        return solve, solve
    if transpose_solve is None:
        raise FuncgradError(
            f"{name}: reverse mode needs transpose_solve (the solve of the transposed "
            "system), or symmetric=True when matvec is symmetric"
        )
    return transpose_solve, solve


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable,
                        transpose_solve: Callable | None = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """The solution ``x`` of ``matvec(x) = b``, by ``solve``, differentiated implicitly.

    As ``jax.lax.custom_linear_solve``: ``solve(matvec, b)`` returns ``x``
    (any method: its steps are not recorded), ``transpose_solve(vecmat, b)``
    solves the transposed system (``vecmat`` computes ``Aᵀ v``) and is needed
    for reverse mode unless ``symmetric=True`` says that ``A = Aᵀ``.  ``b``
    and ``x`` are pytrees of one structure; ``matvec`` is linear, maps that
    structure to itself, and may close over traced values (``A``'s entries):
    ``x`` is differentiable in them and in ``b``, to every order, in both
    modes -- a tangent costs one ``solve``, a cotangent one ``transpose_solve``.
    With ``has_aux``, ``solve`` and ``transpose_solve`` return ``(x, aux)``
    (diagnostics: an iteration count, a status) and so does this call; ``aux``
    is not differentiated, and that of the solves in derivatives is dropped.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> def x_of(a, b):
    ...     A = fnp.stack([fnp.stack([a, 1.0]), fnp.stack([1.0, 3.0])])
    ...     return fg.custom_linear_solve(lambda v: A @ v, b,
    ...                                   lambda mv, b: numpy.linalg.solve(fg.value_of(A), b),
    ...                                   symmetric=True)
    >>> b = numpy.array([1.0, 2.0])
    >>> x_of(2.0, b)                                  # [[2, 1], [1, 3]]⁻¹ b
    array([0.2, 0.6])
    >>> fg.jacobian(x_of)(2.0, b)                     # -A⁻¹ (∂A/∂a) x
    array([-0.12,  0.04])
    """
    name = "custom_linear_solve"
    looped = per_example(lambda b: custom_linear_solve(matvec, b, solve, transpose_solve,
                                                       symmetric, has_aux), b, name)
    if looped is not NOT_MAPPED:  # under fg.vmap: the solve sees one example at a time
        return looped
    refuse_under_outer_graph(name)
    b_leaves, b_def = tree.flatten(b)
    b_raw = [_raw(v, f"{name}: b leaf {k}") for k, v in enumerate(b_leaves)]
    b_leaves = [v if type(v) is Node else r for v, r in zip(b_leaves, b_raw, strict=True)]
    x, aux, conv = _solved(name, "b", matvec, "matvec", solve, b_def, b_raw, has_aux)
    for v in x:  # matvec closes over mapped values: fg.vmap maps this as a loop
        loop_needed(name, v)
    inputs = b_leaves + conv.params
    if not any(_live(v) for v in inputs):
        return _with_aux(tree.unflatten(b_def, x), aux, has_aux)
    nb = len(b_leaves)

    def vjp(gs, xs, args, positions):
        fwd_solve, back_solve = _transposed(name, solve, transpose_solve, symmetric)
        bp = BackpropId(name)
        wanted = [i - nb for i in positions if i >= nb]  # the parameters'
        xl, pl, outs = conv.at(bp, xs, args[nb:], wanted)
        params = list(args[nb:])
        gs = _fill(gs, xs)

        def vecmat(w):
            if symmetric:  # Aᵀ = A: matvec itself, replayed -- no fold per solver step
                return tree.unflatten(b_def, conv.run(tree.flatten_up_to(b_def, w), params))
            found = _vjp_leaves(outs, tree.flatten_up_to(b_def, w), xl, bp)
            return tree.unflatten(b_def, _fill(found, xs))

        lam = custom_linear_solve(vecmat, tree.unflatten(b_def, gs), fwd_solve, back_solve,
                                  symmetric, has_aux)
        lam = tree.flatten_up_to(b_def, lam[0] if has_aux else lam)
        dp = _fill(_vjp_leaves(outs, lam, [pl[j] for j in wanted], bp),
                   [pl[j] for j in wanted])
        by_param = dict(zip(wanted, dp, strict=True))
        return [lam[i] if i < nb else negative(by_param[i - nb]) for i in positions]

    def jvp(pairs, xs, args):
        bp = BackpropId(name)
        _, pl, outs = conv.at(bp, xs, args[nb:], [i - nb for i, _ in pairs if i >= nb])
        rhs = [None] * nb
        for i, t in pairs:
            if i < nb:
                rhs[i] = t if rhs[i] is None else rhs[i] + t
        wrt = [(pl[i - nb], t) for i, t in pairs if i >= nb]
        dax = _jvp_leaves(outs, [p for p, _ in wrt], [t for _, t in wrt], bp)
        rhs = [r if d is None else (negative(d) if r is None else subtract(r, d))
               for r, d in zip(rhs, dax, strict=True)]
        if all(r is None for r in rhs):
            return [None] * nb
        rhs = _fill(rhs, xs)
        dx = custom_linear_solve(matvec, tree.unflatten(b_def, rhs), solve, transpose_solve,
                                 symmetric, has_aux)
        return tree.flatten_up_to(b_def, dx[0] if has_aux else dx)

    return _with_aux(tree.unflatten(b_def, _record(name, inputs, x, vjp, jvp)), aux, has_aux)


def custom_root(f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False) -> Any:
    """A root ``x`` of ``f(x) = 0``, found by ``solve``, differentiated implicitly.

    As ``jax.lax.custom_root``: ``solve(f, initial_guess)`` returns the root
    (any method: its steps are not recorded); ``tangent_solve(g, y)`` solves
    ``g(x) = y`` for a linear ``g`` -- the Jacobian ``∂f/∂x`` at the root, or
    its transpose -- e.g. ``lambda g, y: y / g(1.0)`` for a scalar.  ``x`` is
    differentiable in the traced values ``f`` closes over (the parameters
    ``θ``): ``dx = -(∂f/∂x)⁻¹ (∂f/∂θ) dθ`` (the implicit function theorem), to
    every order, in both modes; not in ``initial_guess``.  ``x`` has the
    structure of ``initial_guess``, and so has ``f(x)``.  With ``has_aux``,
    ``solve`` returns ``(x, aux)`` and so does this call.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> def fixed_point(a):                            # x = cos(a x)
    ...     def iterate(f, x):
    ...         for _ in range(100):
    ...             x = numpy.cos(a * x)               # a is raw inside solve
    ...         return x
    ...     return fg.custom_root(lambda x: fnp.cos(a * x) - x, numpy.array(0.5),
    ...                           lambda f, x: iterate(f, x), lambda g, y: y / g(1.0))
    >>> x = fixed_point(0.5)
    >>> bool(numpy.isclose(x, numpy.cos(0.5 * x)))
    True
    >>> dx = fg.grad(fixed_point)(0.5)                 # -x sin(ax) / (1 + a sin(ax))
    >>> bool(numpy.isclose(dx, -x * numpy.sin(0.5 * x) / (1 + 0.5 * numpy.sin(0.5 * x))))
    True
    """
    name = "custom_root"
    looped = per_example(lambda g: custom_root(f, g, solve, tangent_solve, has_aux),
                         initial_guess, name)
    if looped is not NOT_MAPPED:
        return looped
    refuse_under_outer_graph(name)
    g_leaves, g_def = tree.flatten(initial_guess)
    guess = [_raw(v, f"{name}: initial_guess leaf {k}") for k, v in enumerate(g_leaves)]
    x, aux, conv = _solved(name, "initial_guess", f, "f", solve, g_def, guess, has_aux)
    for v in x:  # f closes over mapped values: fg.vmap maps this as a loop
        loop_needed(name, v)
    if not any(_live(v) for v in conv.params):
        return _with_aux(tree.unflatten(g_def, x), aux, has_aux)

    def vjp(gs, xs, args, positions):
        bp = BackpropId(name)
        xl, pl, outs = conv.at(bp, xs, args, positions)

        def vecmat(w):  # (∂f/∂x)ᵀ w
            return tree.unflatten(g_def, _fill(_vjp_leaves(outs, tree.flatten_up_to(g_def, w),
                                                           xl, bp), xs))

        lam = custom_linear_solve(vecmat, tree.unflatten(g_def, _fill(gs, xs)), tangent_solve,
                                  tangent_solve)
        wrt = [pl[i] for i in positions]
        found = _vjp_leaves(outs, tree.flatten_up_to(g_def, lam), wrt, bp)
        return [negative(d) for d in _fill(found, wrt)]

    def jvp(pairs, xs, args):
        bp = BackpropId(name)
        xl, pl, outs = conv.at(bp, xs, args, [i for i, _ in pairs])
        rhs = _jvp_leaves(outs, [pl[i] for i, _ in pairs], [t for _, t in pairs], bp)
        if all(r is None for r in rhs):
            return [None] * len(xs)
        rhs = [negative(r) for r in _fill(rhs, xs)]

        def matvec(v):  # (∂f/∂x) v
            return tree.unflatten(g_def, _fill(_jvp_leaves(outs, xl, tree.flatten_up_to(g_def, v),
                                                           bp), xs))

        dx = custom_linear_solve(matvec, tree.unflatten(g_def, rhs), tangent_solve,
                                 tangent_solve)
        return tree.flatten_up_to(g_def, dx)

    return _with_aux(tree.unflatten(g_def, _record(name, conv.params, x, vjp, jvp)), aux, has_aux)


__all__ = ["custom_linear_solve", "custom_root"]
