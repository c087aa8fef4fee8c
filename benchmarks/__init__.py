"""Benchmark suite: funcgrad side by side with hand-written NumPy and its peers.

Run it from the repository root with ``python -m benchmarks.run`` (``--help`` for flags).
See ``benchmarks/README.md`` for what each workload measures.
"""
