"""funcgrad.scipy: SciPy's functions, differentiable (layer 7; imports SciPy).

``import funcgrad`` does not import SciPy; ``import funcgrad.scipy`` does.
"""

from . import optimize, sparse
