"""PTX generation time by the LLVM IR pipeline's speed level, and whether the PTX differs.

codegen/ptx_worker.py runs LLVM's optimization pipeline on the kernels' LLVM IR (libdevice linked
in) before NVPTX's code generator. This captures the LLVM IR our GPU code generation makes for
GPT-2 / BERT / T5 from configs (bench_gpu_compile.py's models, on the CPU: no GPU needed) and
compiles each model's kernels at each middle-end speed level with the code generator at opt 3, in
this process: seconds (median of `--repeat`), PTX lines, and whether the PTX text equals level 3's.

    python benchmarks/bench_ptx_opt.py [--models gpt2,bert,t5] [--levels 3,2,1] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gpu_compile import GpuCodegenBackend, make_model, run_once  # noqa: E402

from mlir_sym.codegen import ptx, ptx_worker  # noqa: E402
import mlir_sym.gpu_compile as gpu_compile  # noqa: E402


def captured_llvm_ir(name: str) -> list[list[str]]:
    """The LLVM IR texts of every PTX compilation of model `name`'s first call (disk caches empty)."""
    saved: list[list[str]] = []
    orig = gpu_compile.ptx_codegen.compile_ptx_parts

    def hook(llvm_ir, **kw):
        saved.append(list(llvm_ir))
        return orig(llvm_ir, **kw)

    gpu_compile.ptx_codegen.compile_ptx_parts = hook
    try:
        with tempfile.TemporaryDirectory() as cache:
            os.environ["MLIR_SYM_CACHE_DIR"] = cache
            run_once(make_model(name).eval(), name, GpuCodegenBackend().backend())
    finally:
        gpu_compile.ptx_codegen.compile_ptx_parts = orig
    return saved


def compile_all(groups: list[list[str]], level: int) -> tuple[float, list[str]]:
    saved = ptx_worker.MIDDLE_END_SPEED
    ptx_worker.MIDDLE_END_SPEED = level
    try:
        t0 = time.perf_counter()
        out = [ptx_worker.compile_llvm(g, ptx.DEFAULT_ARCH, ptx.DEFAULT_FEATURES, 3, ptx._libdevice_for(g))
               for g in groups]
        return time.perf_counter() - t0, out
    finally:
        ptx_worker.MIDDLE_END_SPEED = saved


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="gpt2,bert,t5")
    p.add_argument("--levels", default="3,2,1")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    levels = [int(v) for v in a.levels.split(",")]
    print(f"`python benchmarks/bench_ptx_opt.py {' '.join(sys.argv[1:])}` (CPU: {os.cpu_count()} cores; "
          f"one process, kernels compiled one group after another)\n")
    print("| model | kernels | level | PTX s (median) | PTX lines | same PTX as level 3 |")
    print("|---|---|---|---|---|---|")
    for name in a.models.split(","):
        groups = [[t for part in captured_llvm_ir(name) for t in part]]
        ref = None
        for level in levels:
            times, out = [], None
            for _ in range(a.repeat):
                dt, out = compile_all(groups, level)
                times.append(dt)
            if level == 3:
                ref = out
            same = "" if ref is None else str(out == ref)
            print(f"| {name} | {len(groups[0])} | {level} | {statistics.median(times):.2f} | "
                  f"{sum(o.count(chr(10)) for o in out)} | {same} |", flush=True)


if __name__ == "__main__":
    main()
