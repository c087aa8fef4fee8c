"""``funcgrad.scipy``: SciPy's functions, differentiable to any order (layer 7; imports SciPy).

Imported on first use (``import funcgrad.scipy`` or ``fg.scipy``): ``import
funcgrad`` never imports SciPy.

>>> import funcgrad as fg
>>> from funcgrad.scipy import special, stats
>>> float(fg.grad(special.gammaln)(1.0)) == float(special.digamma(1.0))
True
"""

from . import integrate, linalg, optimize, signal, sparse, special, stats
