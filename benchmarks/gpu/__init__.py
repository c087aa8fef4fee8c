"""One-run GPU check of funcgrad: the test suite with CuPy, the primitive table on the GPU
against the CPU, and MLP timings beside hand-written CuPy and PyTorch CUDA.

``bash benchmarks/gpu/check.sh`` on a machine with a GPU; ``python -m benchmarks.gpu.check
--cpu-dry-run`` walks the same code on the CPU, NumPy standing in for CuPy. See
``benchmarks/README.md``.
"""
