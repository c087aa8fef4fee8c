"""Pytrees: nested containers of arrays, flattened and rebuilt (layer 1).

A thin layer over ``optree`` with funcgrad's namespace, so that tuples, lists,
dicts, ``None``, namedtuples and pyrsistent ``PMap``/``PVector`` all work as
arguments and results of the combinators.

>>> leaves, treedef = flatten({'a': 1.0, 'b': (2.0, None)})
>>> leaves
[1.0, 2.0]
>>> unflatten(treedef, [3.0, 4.0])
{'a': 3.0, 'b': (4.0, None)}
"""

from __future__ import annotations

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
