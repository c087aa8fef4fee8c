"""HIPS autograd's sdist (its tests, examples and the ``autograd`` package itself),
downloaded at test time with ``pip download`` into a temporary directory, once per
process: never copied into this repository.  Used by ``test_autograd_suite.py`` and
``test_autograd_examples.py``."""

from __future__ import annotations

import functools
import pathlib
import subprocess
import sys
import tarfile
import tempfile

VERSION = "1.9.1"


def fetch(where: pathlib.Path) -> pathlib.Path:
    """The root of autograd's sdist (``tests/``, ``examples/``, ``autograd/``), downloaded
    and unpacked into ``where``."""
    subprocess.run([sys.executable, "-m", "pip", "download", f"autograd=={VERSION}",
                    "--no-binary", ":all:", "--no-deps", "-q", "-d", str(where)],
                   check=True, capture_output=True, timeout=300)
    (sdist,) = where.glob("autograd-*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(where, filter="data")
    return where / f"autograd-{VERSION}"


@functools.cache
def root() -> pathlib.Path:
    """:func:`fetch` into a fresh temporary directory, the first time it is asked for."""
    return fetch(pathlib.Path(tempfile.mkdtemp(prefix="autograd-sdist-")))
