"""The primitive table: one row per public differentiable function.

Each ``rows_*.py`` module defines ``ROWS``, a list of :class:`Row`.
``test_primitives.py`` checks every row at order 2 in both modes over its
shapes and dtypes, and fails when a public name has no row.
"""

from __future__ import annotations

import importlib.util
import pathlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

# Shapes for one-argument functions: 0-d, vector, matrix, size zero.
UNARY = [((),), ((3,),), ((2, 3),), ((0,),)]
# Shapes for two-argument broadcasting functions.
BINARY = [
    ((), ()),
    ((3,), ()),
    ((), (3,)),
    ((2, 3), (3,)),
    ((1, 3, 1), (2, 1, 4)),
    ((0,), (0,)),
    ((2, 0), (1,)),
]


def real(x):
    """Any real number (the identity)."""
    return x


def positive(x):
    """(0.5, ~3): away from 0."""
    return 0.5 + np.abs(x)


def unit(x):
    """(-0.8, 0.8): inside (-1, 1)."""
    return 0.8 * np.tanh(x)


def above_one(x):
    """(1.5, ~4)."""
    return 1.5 + np.abs(x)


def away_from_zero(x):
    """|x| >= 0.5, either sign (for abs, sign-sensitive functions)."""
    return np.where(x >= 0, 0.5 + x, x - 0.5)


@dataclass
class Row:
    """One public function under test.

    ``name`` is its public name: ``'sin'`` (in ``funcgrad.numpy``),
    ``'linalg.inv'`` or ``'nn.softmax'``.  ``fun`` takes float arrays only
    (close over keyword arguments and integer data).  ``shapes`` lists the
    argument shape tuples to try; ``domains`` maps a standard normal sample to
    a valid input, one per argument (or one for all).  ``make`` overrides the
    input generator entirely: ``make(rng, dtype, shapes) -> tuple of arrays``.
    """

    name: str
    fun: Callable
    shapes: list = field(default_factory=lambda: UNARY)
    domains: tuple = (real,)
    dtypes: tuple = ("float64", "float32")
    order: int = 2
    modes: tuple = ("rev", "fwd")
    make: Callable | None = None
    rtol: float | None = None
    atol: float | None = None
    id: str = ""

    def inputs(self, rng, dtype, shapes):
        if self.make is not None:
            return tuple(np.asarray(a, dtype=dtype) for a in self.make(rng, dtype, shapes))
        doms = self.domains * len(shapes) if len(self.domains) == 1 else self.domains
        return tuple(
            np.asarray(d(rng.standard_normal(s)), dtype=dtype)
            for d, s in zip(doms, shapes, strict=True)
        )


def load_rows() -> list:
    """Every row of every ``rows_*.py`` beside this file, in file order."""
    rows = []
    for path in sorted(pathlib.Path(__file__).parent.glob("rows_*.py")):
        spec = importlib.util.spec_from_file_location(f"_rows_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rows.extend(module.ROWS)
    return rows


# Rows of issue 19 (rows_fft.py, rows_numpy19.py) that the complex tables
# (tests/complex_table.py, tests/test_complex_jax.py, on the complex branch) must
# leave out, with the reason: complex_table.REAL_ONLY should include REAL_ONLY, and
# test_complex_jax should skip the JAX_DIFFERS rows.
REAL_ONLY = {
    # NumPy raises for complex input
    "fft.rfft", "fft.rfft2", "fft.rfftn", "remainder", "mod", "fmod", "hypot", "cbrt",
    "logaddexp2", "deg2rad", "rad2deg", "radians", "degrees", "fabs", "atan2", "trunc", "fix",
    "floor_divide", "rint",
    # they order or compare their input (lexicographic for complex: no derivative)
    "median", "quantile", "percentile", "partition", "ptp", "nanmax", "nanmin", "fmax", "fmin",
    "interp", "select", "nansum", "nanmean", "nancumsum", "nanprod",
    # fg.nn's functions are of real numbers (as the existing nn rows)
    "nn.gelu", "nn.silu", "nn.elu", "nn.leaky_relu", "nn.log_sigmoid",
}
JAX_DIFFERS = {
    "real_if_close": "jax.numpy has no real_if_close",
    "row_stack": "jax.numpy has no row_stack",
    "linalg.eigvalsh": "complex inputs are not Hermitian: NumPy reads one triangle, JAX "
                       "symmetrizes (as for eigh)",
    "linalg.eig": "JAX refuses eigenvector derivatives of non-symmetric matrices",
    "linalg.eigvals": "NumPy's and JAX's LAPACK calls may order complex eigenvalues "
                      "differently",
}
