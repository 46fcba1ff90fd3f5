"""Runtimes: CPU (LLVM JIT) and CUDA."""
