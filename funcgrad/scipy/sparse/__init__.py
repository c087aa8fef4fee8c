"""funcgrad.scipy.sparse: iterative solvers of ``scipy.sparse.linalg``, differentiable.

>>> import funcgrad.scipy.sparse.linalg
"""

from . import linalg
