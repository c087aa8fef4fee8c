"""``funcgrad.scipy.stats``: probability distributions, differentiable in every parameter.

Each distribution is a module of functions with SciPy's names and
signatures -- ``logpdf``/``pdf`` (``logpmf``/``pmf`` for discrete ones),
``cdf``, ``logcdf``, ``sf``, ``logsf``, ``ppf``, ``isf`` -- taking ``loc``
and ``scale`` where SciPy does.  They are compositions of ``funcgrad.numpy``
and :mod:`funcgrad.scipy.special`, so every order works in both modes; a
derivative that a special function refuses (a ``cdf`` in a shape parameter
computed by ``betainc``...) raises ``TypeError`` naming it.

>>> import numpy, funcgrad as fg
>>> from funcgrad.scipy import stats
>>> float(fg.grad(stats.norm.logpdf)(1.0))   # -(x - loc) / scale²
-1.0
"""

from . import (
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    lognorm,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    uniform,
)

__all__ = [
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
    "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "lognorm", "multinomial",
    "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t", "uniform",
]


def __dir__() -> list:
    return __all__ + [n for n in globals() if n.startswith("__") and n.endswith("__")]
