"""Pickling by reference: the name under which an object itself can be imported (layer 0).

A primitive, a ``custom_vjp`` or a ``checkpoint`` found under its module and
name pickles as that name, as functions do: the worker that unpickles it gets
that very object, rules included.  Others (made in a function, or in
``__main__``) pickle by value.

>>> import funcgrad.numpy as fnp
>>> module, qualname = importable_name(fnp.sin)
>>> by_reference(module, qualname) is fnp.sin
True
"""

from __future__ import annotations

import importlib
import sys
from typing import Any


def importable_name(obj: Any) -> tuple[str, str] | None:
    """``(module, qualname)`` under which ``obj`` itself can be imported, or None."""
    module = obj.__dict__.get("__module__")
    qualname = obj.__dict__.get("__qualname__")
    if not module or not qualname or module == "__main__" or "<locals>" in qualname:
        return None
    try:
        return (module, qualname) if by_reference(module, qualname) is obj else None
    except (ImportError, AttributeError):
        return None


def by_reference(module: str, qualname: str) -> Any:
    """The object named ``qualname`` in ``module`` (what a pickled reference names)."""
    obj = sys.modules.get(module) or importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj
