"""Replay's first call in memory: ``python -m benchmarks.first_call_memory 100000``.

The tracemalloc peak per step of one call on ``chain_depth``'s chain of that many steps:
an eager ``fg.value_and_grad`` call, and replay's first call (the trace) in a fresh
process and in a warm one (see :func:`benchmarks.workloads.chain_depth.first_calls`).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ''):  # `python benchmarks/first_call_memory.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.workloads.chain_depth import first_calls


def main(argv: list[str]) -> int:
    steps = int(argv[0]) if argv else 100_000
    for kind, per_step in first_calls(sys.executable, steps).items():
        print(f'{kind}: {per_step:,.0f} B/step')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
