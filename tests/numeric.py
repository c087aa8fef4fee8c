"""Finite differences shared by the tests (plain NumPy, float64)."""

from __future__ import annotations

import numpy as np


def numgrad(f, x, eps=1e-6):
    """Central differences of scalar ``f`` at ``x`` (float64)."""
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
    return g


def numjac(f, x, eps=1e-6):
    """Central-difference Jacobian of ``f`` at ``x``: shape ``out.shape + x.shape``."""
    x = np.asarray(x, dtype=np.float64)
    out_shape = np.shape(f(x))
    jac = np.zeros(out_shape + x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        jac[(...,) + i] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
    return jac
