"""The forward fold: tangents pushed through a recorded graph (layer 5).

Forward mode reuses the rank-sorted node list of the reverse fold, walked the
other way: each node's tangent is the sum of its primitive's JVP rules applied
to its arguments' tangents.  A primitive with only VJP rules (a user primitive,
``custom_vjp``, ``checkpoint``) still works: its JVP is the transpose of its
VJP, found by differentiating the VJP -- linear in the cotangent -- once more.

>>> import numpy, funcgrad as fg
>>> fg.jvp(fg.numpy.sin, (numpy.array(0.0),), (numpy.array(2.0),))[1]
array(2.)
"""

from __future__ import annotations

from typing import Any

from .backprop import gradients, seed, walk
from .node import (
    ACTIVE,
    BackpropId,
    Node,
    collector_paused,
    raw_args,
    recording,
    require_grad,
    user_code,
)
from .numpy import zeros_like


def _derived_jvp(prim: Any, pairs: list, ans: Any, args: tuple, kwargs: Any) -> Any:
    """``J t`` from the VJP ``g -> Jᵀ g``: one more backward pass, over ``g``."""
    zeros = zeros_like(ans.value if type(ans) is Node else ans)
    with_g = BackpropId("transpose")
    with recording(with_g):
        g = require_grad(zeros, with_g)
        cts = prim.vjp(g, ans, args, kwargs, pairs)
    outs, seeds = [], []
    for k, (ct, (_, t)) in enumerate(zip(cts, pairs, strict=True)):
        if type(ct) is Node and with_g in ct.graphs:
            outs.append(ct)
            seeds.append(seed(ct, t, k))
    if not outs:
        return None
    return gradients(outs, seeds, [g], with_g, prune=False)[0]


def jvp_step(prim: Any, pairs: list, ans: Any, args: tuple, kwargs: Any) -> Any:
    """The output tangent of one node, from ``(position, tangent)`` pairs."""
    if prim.jvp_joint is not None:
        return prim.jvp_joint(pairs, ans, args, kwargs)
    rules = prim.jvps
    total = None
    missing = []
    for i, t in pairs:
        rule = rules[i] if i < len(rules) else None
        if rule is None:
            missing.append((i, t))
            continue
        r = rule(t, ans, *args, **kwargs)
        total = r if total is None else total + r
    if missing:
        r = _derived_jvp(prim, missing, ans, args, kwargs)
        if r is not None:
            total = r if total is None else total + r
    return total


def forward(outputs: list[Node], inputs: list[Node], tangents: list, bp: BackpropId) -> list:
    """Tangents of ``outputs`` (None where unreached), given those of ``inputs`` on ``bp``."""
    targets = {n.serial: n for n in inputs}
    with collector_paused():
        return _forward(outputs, inputs, tangents, bp, targets)


def _forward(outputs, inputs, tangents, bp, targets) -> list:
    order, parents = walk(outputs, targets, bp)
    tan: dict[int, Any] = {}
    for n, t in zip(inputs, tangents, strict=True):
        tan[n.serial] = t if n.serial not in tan else tan[n.serial] + t
    with recording(bp, on=False):
        live = ACTIVE.get()
        for node in order:
            ps = parents[node.serial]
            if node.serial in targets or not ps:
                continue
            if not node.graphs.isdisjoint(live):
                ans, args = node, node.args
            else:
                ans = node.value
                args = raw_args(node.args)
            pairs = [(i, tan[p.serial]) for i, p in ps if p.serial in tan]
            prim = node.primitive
            if prim.library:
                t = jvp_step(prim, pairs, ans, args, node.kwargs or {})
            else:  # user rules: the collector as the user left it
                with user_code():
                    t = jvp_step(prim, pairs, ans, args, node.kwargs or {})
            if t is not None:
                tan[node.serial] = t
    return [tan.get(o.serial) for o in outputs]
