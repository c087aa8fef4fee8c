"""Rows of the primitive table: the complex parts ``real imag conj conjugate angle``.

In the table's real dtypes they are the identity (``real``, ``conj``) or
constants (``imag``, ``angle``) of a real input; ``test_complex.py`` and
``test_complex_jax.py`` run them, with the rest of the table, on complex inputs.
"""

from __future__ import annotations

import pathlib
import sys

# Loaded by path (importlib mode, benchmarks/gpu): make its sibling importable.
sys.path.insert(0, str(pathlib.Path(__file__).parent))
from table import Row, away_from_zero

import funcgrad.numpy as fnp

ROWS = [
    Row("real", fnp.real),
    Row("real", lambda x: fnp.real(x * x), id="of-square"),
    Row("imag", fnp.imag),
    Row("imag", lambda x: fnp.imag(x * x) + x, id="of-square"),
    Row("conj", fnp.conj),
    Row("conjugate", lambda x: fnp.conjugate(x) * x, id="times-x"),
    Row("angle", fnp.angle, domains=(away_from_zero,)),
    Row("angle", lambda x: fnp.angle(x, deg=True) + x, id="deg", domains=(away_from_zero,)),
]
