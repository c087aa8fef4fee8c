"""Arguments a primitive meets besides NumPy data and Nodes (layer 2).

Two kinds, both handled by :func:`funcgrad.primitive.bind`, the one general
entry of a primitive call:

- *array-likes*: lists and tuples holding Nodes (at any depth), which become
  one Node, as NumPy makes nested lists arrays (the converter, ``fnp.array``,
  is registered a layer up by ``funcgrad.numpy``);
- *arrays that run primitives themselves*: a registered type whose runner is
  called instead of the primitive's function -- fg.replay's traced arrays and fg.vmap's
  batched values (asked first: their rules call the others).  Both are registered
  with their namespace, in one :func:`funcgrad.backend.register_namespace` call
  (``run=``, ``batched=``), and read here from its indexes ``RUNNERS`` and ``BATCHED``.

:func:`run_first` is what bind does for them before computing, :func:`mend`
what it does after a ``TypeError``; :func:`foreign` computes elsewhere than NumPy.

>>> import numpy, funcgrad as fg
>>> holds_node([1.0, [fg.require_grad(numpy.ones(2))]]), holds_node((1.0, 2.0))
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .backend import BATCHED, NUMPY_TYPES, RUNNERS
from .node import ACTIVE, Node

# -- arrays that run primitives themselves ---------------------------------------
# The NumPy fast path never looks here: only arguments of other namespaces do.  Their
# runners are the backend registry's (register_namespace's ``run=``); RUNNERS and BATCHED
# are its indexes by exact type.  vmap's batched values (BATCHED) hold (value, batch
# axis, level).  Levels and graphs share one order (creation): where a Node's graphs
# are all older than a batched argument's level, the batched value is unwrapped first
# and the Node is a constant of its batching rule; otherwise the Node is unwrapped first.


def batched_first(args: Any, graphs: Any) -> Callable | None:
    """The runner of the newest batched argument (also inside a list or tuple argument),
    when it is newer than every graph in ``graphs`` still recorded on; else None."""
    newest, run = -1, None
    for a in args:
        t = type(a)
        if t in BATCHED:
            if a.level.ordinal > newest:
                newest, run = a.level.ordinal, BATCHED[t]
        elif t is list or t is tuple:
            for b in a:
                if type(b) in BATCHED and b.level.ordinal > newest:
                    newest, run = b.level.ordinal, BATCHED[type(b)]
    if run is not None and graphs:  # a finished graph's Nodes are constants
        active = ACTIVE.get()
        live = [g.ordinal for g in graphs if g in active]
        if live and newest < max(live):
            return None
    return run


def foreign(prim: Any, args: Any, kwargs: dict) -> Any:
    """``prim`` on raw arguments that are not all NumPy data: by the runner of an
    argument's type when there is one, else by ``prim.impl`` in their namespace."""
    if BATCHED:
        run = batched_first(args, None)
        if run is not None:
            return run(prim, tuple(args), kwargs)
    if RUNNERS:
        for a in args:
            run = RUNNERS.get(type(a))
            if run is not None:
                return run(prim, tuple(args), kwargs)
    return prim.impl(*args, **kwargs)


UNRUN = object()  # "not computed here": bind goes on


def run_first(prim: Any, args: tuple, kwargs: dict, graphs: Any, sequences: bool,
              native: bool) -> Any:
    """What bind does before computing: the newest batched value, when newer than every
    graph, runs its rule; array-likes (``sequences`` says whether a list or tuple is
    given) become arrays unless only NumPy computes (``native``: NumPy refuses Nodes in
    lists, other namespaces may not).  ``UNRUN`` when neither applies."""
    if BATCHED:
        run = batched_first(args, graphs)
        if run is not None:
            return run(prim, args, kwargs)
    if sequences and (not native or prim.numpy_impl is prim.impl):
        converted = array_likes(args)
        if converted is not None:
            return prim(*converted, **kwargs)
    return UNRUN


def mend(prim: Any, args: tuple, kwargs: dict, graphs: Any) -> Any:
    """After a ``TypeError``: ``prim`` called again with its array-likes made arrays, or a
    batched value inside a tuple (an index) that raw code refused run by its rule;
    ``UNRUN`` when neither applies."""
    converted = array_likes(args)
    if converted is not None:
        return prim(*converted, **kwargs)
    run = batched_first(args, graphs) if BATCHED else None
    if run is not None:
        return run(prim, args, kwargs)
    return UNRUN


# -- array-likes: lists and tuples that hold Nodes --------------------------------

_to_array: list[Callable] = []
SEQUENCES = (list, tuple)
# id() without its audit event (which an audit hook, as fg.replay's, makes a Python call):
# the object's address, rotated -- one number per object while it lives, as id() is.
_address = object.__hash__


def register_array_like(convert: Callable) -> None:
    """Set the function that turns a (nested) list holding Nodes into one Node."""
    _to_array[:] = [convert]


def _any_inside(obj: Any, kinds: tuple, found: Callable[[Any], bool]) -> bool:
    """Whether some item of ``obj``, a list or tuple, at any depth inside lists and tuples
    of ``kinds``, is ``found``.  Without recursion: any depth, and lists holding themselves."""
    stack, seen = [obj], set()
    while stack:
        o = stack.pop()
        key = _address(o)
        if key in seen:
            continue
        seen.add(key)
        for item in o:
            if type(item) in kinds:
                stack.append(item)
            elif found(item):
                return True
    return False


def _is_node(x: Any) -> bool:
    return type(x) is Node


def holds_node(obj: Any) -> bool:
    """Whether ``obj`` is a Node, or a list or tuple holding one at any depth."""
    t = type(obj)
    if t is Node:
        return True
    return (t is list or t is tuple) and _any_inside(obj, SEQUENCES, _is_node)


def _is_device_array(x: Any) -> bool:
    return type(x) not in NUMPY_TYPES and hasattr(x, "shape")


def _is_array_like(a: Any) -> bool:
    # Tuples holding device arrays are left alone: they are indices (x[i, j]).
    t = type(a)
    return (t is list or t is tuple) and (
        holds_node(a) or t is list and _any_inside(a, (list,), _is_device_array))


def array_likes(args: tuple) -> tuple | None:
    """``args`` with each list or tuple holding a Node -- or each list holding device
    arrays, which NumPy cannot take -- made one array; None if there is none."""
    if not _to_array or not any(_is_array_like(a) for a in args):
        return None
    convert = _to_array[0]
    return tuple(convert(a) if _is_array_like(a) else a for a in args)
