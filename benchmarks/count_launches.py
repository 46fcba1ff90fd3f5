"""Launch sites of the GPU host programs of GPT-2 / BERT / T5 (from configs, as bench_gpu_compile.py
makes them), counted on the CPU: code generation for the GPU runs without one. Per model and dtype:
kernel launch sites (`rt.launch(` statements of the host programs, all variants), library calls
(cuBLAS contractions and the like), `torch.empty` allocations and buffers carved from the call's arena.
A launch site inside a loop of the host program counts once; the GPU's kernels a call (cuBLAS's
included) are what benchmarks/profile_hf_calls.py reports on a device.

    python benchmarks/count_launches.py [--models gpt2:float32,bert:bfloat16,...] [--batch 1] [--length 16] [--dump DIR]

With --batch above 1 the batch is a symbol too (a dynamic batch). To compare with another version of
the compiler, run this file with that version first on PYTHONPATH.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

import torch
import torch._dynamo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_gpu_compile as b  # noqa: E402


def count(name: str, dtype: str, batch: int, length: int, dump: str = "") -> dict:
    sources: list[str] = []
    original = b.codegen_variant

    def record(*args, **kwargs):
        code = original(*args, **kwargs)
        sources.append(code.program.source)
        return code

    b.codegen_variant = record
    try:
        torch._dynamo.reset()
        model = b.make_model(name).eval().to(getattr(torch, dtype))
        compiled = torch.compile(model, backend=b.GpuCodegenBackend().backend(), dynamic=True)
        ids = torch.randint(0, 8000, (batch, length))
        kwargs = {"input_ids": ids}
        if name == "t5":
            kwargs["decoder_input_ids"] = ids[:, : max(1, length // 2)]
        with torch.no_grad():
            compiled(**kwargs)
    finally:
        b.codegen_variant = original
    for i, src in enumerate(sources if dump else []):
        with open(os.path.join(dump, f"{name}_{dtype}_b{batch}_{i}.py"), "w") as f:
            f.write(src)
    return {"model": name, "dtype": dtype, "batch": batch, "length": length, "variants": len(sources),
            "launch_sites": sum(s.count("rt.launch(") for s in sources),
            "library_calls": sum(s.count("rt.library_") for s in sources),
            "torch_empty": sum(s.count("rt.empty(") for s in sources),
            "arena_buffers": sum(s.count("_A.take(") for s in sources)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="gpt2:float32,gpt2:bfloat16,bert:float32,bert:bfloat16,t5:float32,t5:bfloat16")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--length", type=int, default=16)
    p.add_argument("--dump", default="", help="write each host program to DIR/<model>_<dtype>_b<batch>_<i>.py")
    a = p.parse_args(argv)
    os.environ.setdefault("MLIR_SYM_CACHE_DIR", tempfile.mkdtemp())  # no code cache from another version
    print(f"# python benchmarks/count_launches.py --models {a.models} --batch {a.batch} --length {a.length}")
    print("| model | dtype | launch sites | library calls | torch.empty | arena buffers |")
    print("| --- | --- | --- | --- | --- | --- |")
    for spec in a.models.split(","):
        name, dtype = spec.split(":")
        r = count(name, dtype, a.batch, a.length, a.dump)
        print(f"| {name} | {dtype} | {r['launch_sites']} | {r['library_calls']} | {r['torch_empty']} | {r['arena_buffers']} |",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
