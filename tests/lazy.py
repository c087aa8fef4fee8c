"""Helpers of the Dask tests: a counting scheduler and chunked inputs.

A *counting scheduler* is a ``dask.config.set(scheduler=...)`` callable that
counts the graphs it is asked to compute before running them synchronously:
while funcgrad builds a gradient of Dask arrays, the count must stay 0.
"""

from __future__ import annotations

import contextlib

import dask
import dask.array as da
import numpy as np


class Counter:
    """A Dask scheduler that counts the graphs it is asked to compute."""

    def __init__(self):
        self.calls = 0

    def __call__(self, dsk, keys, **kwargs):
        self.calls += 1
        return dask.get(dsk, keys, **kwargs)


@contextlib.contextmanager
def counting():
    counter = Counter()
    with dask.config.set(scheduler=counter):
        yield counter


def chunked(a, chunks=2):
    return da.from_array(np.asarray(a), chunks=chunks)
