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
    and Nodes (their ``__getitem__`` makes them no container).
    """
    return optree.tree_flatten(tree, namespace=NAMESPACE)


def unflatten(treedef: optree.PyTreeSpec, leaves: Any) -> Any:
    """Rebuild a tree of structure ``treedef`` from ``leaves``."""
    return optree.tree_unflatten(treedef, leaves)


def flatten_up_to(treedef: optree.PyTreeSpec, tree: Any) -> list:
    """Leaves of ``tree``, which must have the structure ``treedef``.

    Raises ``ValueError`` naming both structures when they differ.
    """
    try:
        return treedef.flatten_up_to(tree)
    except (ValueError, TypeError) as exc:
        other = optree.tree_structure(tree, namespace=NAMESPACE)
        raise ValueError(
            f"tree structure mismatch: expected {treedef}, got {other}"
        ) from exc


def tree_map(fun, tree: Any, *rest: Any) -> Any:
    """Apply ``fun`` leafwise to ``tree`` (and trees of the same structure)."""
    return optree.tree_map(fun, tree, *rest, namespace=NAMESPACE)
