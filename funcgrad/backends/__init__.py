"""Array libraries that register themselves with :mod:`funcgrad.backend` (layer 1).

Each module here imports its library and calls
:func:`funcgrad.backend.register_namespace`; none is imported by ``import
funcgrad``.  :mod:`funcgrad.backends.dask` is imported by the backend the first
time a Dask array reaches funcgrad.
"""
