"""``fnp.at(x)[index]``: JAX's functional updates for any array, not only Nodes (layer 4).

Inside a differentiated function, values are Nodes and ``x.at[index].set(v)``
works on them directly.  A NumPy array cannot grow an ``.at`` attribute, so
the JAX idiom ``fnp.zeros(3).at[i].add(v)`` fails on it with NumPy's
``AttributeError``; ``fnp.at(x)`` is the spelling that works for both.
"""

from __future__ import annotations

from typing import Any

from ._methods import _At
from .shape import as_arrays


def at(x: Any) -> Any:
    """``x.at`` for any array or Node: ``fnp.at(x)[index].set(v)``, ``.add(v)``, ``.get()``.

    Each returns a new array (``x`` is never changed) and is differentiable in
    ``x`` and ``v``, exactly as ``x.at[index]`` on a Node (see
    :func:`index_update`): ``set`` keeps the last of repeated indices,
    ``add`` accumulates them.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> fnp.at(fnp.zeros(3))[numpy.array([0, 2, 0])].add(1.0)
    array([2., 0., 1.])
    >>> fg.grad(lambda v: fnp.sum(fnp.at(fnp.zeros(3))[1].set(v) ** 2))(3.0)
    array(6.)
    """
    (x,) = as_arrays(x)
    return _At(x)


__all__ = ["at"]
