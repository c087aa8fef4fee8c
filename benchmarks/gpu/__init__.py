"""One-run GPU check of funcgrad: the test suite with CuPy, the primitive table on the GPU
against the CPU, and MLP timings beside hand-written CuPy and PyTorch CUDA.

``bash benchmarks/gpu/check.sh`` on a machine with a GPU; ``python -m benchmarks.gpu.check
--cpu-dry-run`` walks the same code on the CPU, the test suite's strict stand-in device in
place of CuPy. See ``benchmarks/README.md``.
"""
