"""Collection for the whole repository (tests/ and funcgrad/'s doctests).

Dask is optional (``pip install funcgrad[dask]``): without it, the modules that
need it are not collected for doctests, and tests/test_dask*.py skip.
"""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("dask") is None:
    collect_ignore += ["funcgrad/backends/dask.py", "funcgrad/dask.py", "tests/lazy.py"]
