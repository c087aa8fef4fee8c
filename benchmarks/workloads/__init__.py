"""The workloads, in report order. Each module has ``NAME``, ``TITLE`` and
``run(cfg) -> Section``; those measured in child processes also have ``memory_probe``."""

from __future__ import annotations

from types import ModuleType

from benchmarks.workloads import (
    backward_memory,
    chain_depth,
    fanin,
    first_call,
    hvp,
    mlp,
    nth_derivative,
    overhead,
    vmap,
)

WORKLOADS: dict[str, ModuleType] = {
    module.NAME: module
    for module in (overhead, mlp, fanin, hvp, nth_derivative, chain_depth, backward_memory,
                   first_call, vmap)
}
