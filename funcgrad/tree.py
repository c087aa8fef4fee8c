"""Pytrees: nested containers of arrays, flattened and rebuilt (layer 1).

A thin layer over ``optree`` with funcgrad's namespace, so that tuples, lists,
dicts, ``None``, namedtuples and pyrsistent ``PMap``/``PVector`` all work as
arguments and results of the combinators, and so do the user's classes
registered with :func:`register_dataclass` or :func:`register_node`.

>>> leaves, treedef = flatten({'a': 1.0, 'b': (2.0, None)})
>>> leaves
[1.0, 2.0]
>>> unflatten(treedef, [3.0, 4.0])
{'a': 3.0, 'b': (4.0, None)}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import optree
import pyrsistent

from .errors import FuncgradValueError, describe

NAMESPACE = "funcgrad"

optree.register_pytree_node(
    pyrsistent.PMap,
    lambda m: (tuple(m[k] for k in sorted(m)), tuple(sorted(m)), tuple(sorted(m))),
    lambda keys, values: pyrsistent.pmap(dict(zip(keys, values, strict=True))),
    namespace=NAMESPACE,
)
# PVector is an abstract name: register each concrete class (C and Python).
for _pvector_type in {type(pyrsistent.pvector()), pyrsistent._pvector.PythonPVector}:
    optree.register_pytree_node(
        _pvector_type,
        lambda v: (tuple(v), None, None),
        lambda _, values: pyrsistent.pvector(values),
        namespace=NAMESPACE,
    )


def register_node(cls: type, flatten: Callable, unflatten: Callable) -> type:
    """Make instances of ``cls`` pytree nodes in every combinator (and ``fg.replay``).

    ``flatten(obj)`` returns ``(children, aux)``: an iterable of the children
    (arrays, numbers or further pytrees) and hashable data that is not a leaf
    (names, sizes, flags: part of the structure, compared between calls).
    ``unflatten(aux, children)`` builds a new instance from them.  Returns
    ``cls``, so it works as a decorator's body.  Registering a class twice
    raises ``ValueError``.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> class Affine:
    ...     def __init__(self, w, b, name='layer'):
    ...         self.w, self.b, self.name = w, b, name
    >>> _ = fg.tree.register_node(
    ...     Affine, lambda a: ((a.w, a.b), a.name), lambda name, wb: Affine(*wb, name))
    >>> g = fg.grad(lambda p: fnp.sum(p.w * 3.0 + p.b))(Affine(numpy.ones(2), 1.0))
    >>> type(g).__name__, g.w, g.b, g.name
    ('Affine', array([3., 3.]), array(2.), 'layer')
    """
    if not isinstance(cls, type):
        raise FuncgradValueError(f"register_node needs a class, got {describe(cls)}")

    def flat(obj: Any) -> tuple:
        children, aux = flatten(obj)
        return tuple(children), aux

    def unflat(aux: Any, children: Iterable) -> Any:
        return unflatten(aux, tuple(children))

    try:
        optree.register_pytree_node(cls, flat, unflat, namespace=NAMESPACE)
    except ValueError as exc:
        raise FuncgradValueError(f"register_node: {cls.__qualname__} is registered already: "
                                 f"{exc}") from None
    return cls


def register_dataclass(cls: type, data_fields: Iterable[str] | None = None,
                       meta_fields: Iterable[str] = ()) -> type:
    """Make the dataclass ``cls`` a pytree node: its fields are its children.

    By default every field (of ``__init__``) is a child, in declaration order.
    ``meta_fields`` names fields that are not leaves (strings, sizes, flags): part
    of the structure, hashable, compared between calls; ``data_fields`` lists
    the children explicitly.  Rebuilding calls ``cls(**fields)``, so a result is
    always a fresh instance.  Works as a decorator; returns ``cls``.

    >>> import dataclasses, numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> @fg.tree.register_dataclass
    ... @dataclasses.dataclass
    ... class Params:
    ...     w: numpy.ndarray
    ...     b: float
    >>> fg.grad(lambda p: fnp.sum(p.w ** 2) + p.b)(Params(numpy.array([1.0, 2.0]), 0.5))
    Params(w=array([2., 4.]), b=array(1.))
    """
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise FuncgradValueError(
            f"register_dataclass needs a dataclass (decorate it with @dataclasses.dataclass "
            f"first), got {describe(cls)}")
    init = [f.name for f in dataclasses.fields(cls) if f.init]
    meta = tuple(meta_fields)
    data = tuple(data_fields) if data_fields is not None else tuple(
        n for n in init if n not in meta)
    unknown = sorted((set(data) | set(meta)) - set(init))
    missing = sorted(set(init) - set(data) - set(meta))
    if unknown or missing or set(data) & set(meta):
        raise FuncgradValueError(
            f"register_dataclass({cls.__qualname__}): data_fields and meta_fields must split "
            f"the fields {init} (unknown {unknown}, missing {missing})")

    def flat(obj: Any) -> tuple:
        return (tuple(getattr(obj, n) for n in data),
                tuple(getattr(obj, n) for n in meta), data)

    def unflat(aux: Any, children: Iterable) -> Any:
        return cls(**dict(zip(data, children, strict=True)), **dict(zip(meta, aux, strict=True)))

    try:
        optree.register_pytree_node(cls, flat, unflat, namespace=NAMESPACE)
    except ValueError as exc:
        raise FuncgradValueError(f"register_dataclass: {cls.__qualname__} is registered "
                                 f"already: {exc}") from None
    return cls


def flatten(tree: Any) -> tuple[list, optree.PyTreeSpec]:
    """Leaves of ``tree`` (left to right) and its structure.

    Anything optree does not know as a container is a leaf: arrays, numbers,
    and Nodes (their ``__getitem__`` makes them no container).  ``None`` is an
    empty subtree, not a leaf.

    >>> import funcgrad as fg
    >>> leaves, treedef = fg.tree.flatten({'b': [1.0, 2.0], 'a': (3.0, None)})
    >>> leaves                      # dict entries in sorted-key order
    [3.0, 1.0, 2.0]
    """
    try:
        return optree.tree_flatten(tree, namespace=NAMESPACE)
    except RecursionError as exc:
        raise _too_deep(tree) from exc


def unflatten(treedef: optree.PyTreeSpec, leaves: Any) -> Any:
    """Rebuild a tree of structure ``treedef`` from ``leaves``.

    >>> import funcgrad as fg
    >>> _, treedef = fg.tree.flatten({'w': 1.0, 'b': (2.0, 3.0)})
    >>> fg.tree.unflatten(treedef, [10.0, 20.0, 30.0])      # leaves in sorted-key order
    {'w': 30.0, 'b': (10.0, 20.0)}
    """
    return optree.tree_unflatten(treedef, leaves)


def flatten_up_to(treedef: optree.PyTreeSpec, tree: Any) -> list:
    """Leaves of ``tree``, which must have the structure ``treedef``.

    Raises ``ValueError`` naming both structures when they differ.

    >>> import funcgrad as fg
    >>> _, treedef = fg.tree.flatten((1.0, [2.0]))
    >>> fg.tree.flatten_up_to(treedef, ('a', ['b']))
    ['a', 'b']
    """
    try:
        return treedef.flatten_up_to(tree)
    except (ValueError, TypeError, RecursionError) as exc:
        other = flatten(tree)[1]
        raise FuncgradValueError(
            f"tree structure mismatch: expected {treedef}, got {other}"
        ) from exc


def tree_map(fun, tree: Any, *rest: Any) -> Any:
    """Apply ``fun`` leafwise to ``tree`` (and trees of the same structure).

    With several trees, ``fun`` gets one leaf of each: the way to write an
    optimiser step over a dict of parameters and a dict of gradients.

    >>> import numpy, funcgrad as fg
    >>> params = {'w': numpy.array([1.0, 2.0]), 'b': numpy.array([0.5])}
    >>> grads = {'w': numpy.array([0.5, -0.5]), 'b': numpy.array([1.0])}
    >>> fg.tree.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    {'w': array([0.95, 2.05]), 'b': array([0.4])}
    """
    try:
        return optree.tree_map(fun, tree, *rest, namespace=NAMESPACE)
    except RecursionError as exc:
        if "flattening" not in str(exc):  # raised by fun: not ours to explain
            raise
        raise _too_deep(tree) from exc


def _too_deep(tree: Any) -> FuncgradValueError:
    return FuncgradValueError(
        f"a pytree nested too deeply, or holding itself ({describe(tree)}): containers "
        "(tuples, lists, dicts) may nest as deep as Python's recursion limit"
    )
