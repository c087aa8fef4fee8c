"""Array libraries that register themselves with :mod:`funcgrad.backend` (layer 1).

Each module here imports its library and calls
:func:`funcgrad.backend.register_namespace`; none is imported by ``import
funcgrad``.  This package only names them as providers
(:func:`funcgrad.backend.register_provider`): :mod:`funcgrad.backends.dask` is
imported the first time a Dask array reaches funcgrad.
"""

from .. import backend


def _dask() -> None:
    from . import dask  # noqa: F401  (registers Dask's namespace when imported)


backend.register_provider("dask", _dask)
