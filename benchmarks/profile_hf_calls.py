"""Where a small HuggingFace model's call goes on the GPU: per backend, wall µs a call (back-to-back
calls), GPU kernel time and kernel count a call (torch.profiler's CUDA activity), the top kernels;
for our backends also the Python functions with the most own time (cProfile). What to read before
working on per-call time: host-bound (wall >> GPU time) or GPU-bound (fewer, faster kernels).

    python benchmarks/profile_hf_calls.py [--models bert,gpt2] [--length 8] [--batch 1] [--calls 50]
        [--backends inductor,mlir_sym,mlir_sym_graphs]   (CUDA only; needs transformers)
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from collections import defaultdict

os.environ.setdefault("MLIR_SYM_ARTIFACT_CACHE", "0")
import torch  # noqa: E402
import torch._dynamo  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def gpu_profile(fn, calls: int) -> tuple[float, float, list[tuple[str, float, int]]]:
    """(GPU µs a call, kernels a call, [(kernel, µs a call, launches a call)] by time)."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    per: dict[str, list[float]] = defaultdict(list)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name].append(e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total)
    total = sum(sum(v) for v in per.values()) / calls
    count = sum(len(v) for v in per.values()) / calls
    top = sorted(((k, sum(v) / calls, len(v) // calls) for k, v in per.items()), key=lambda r: -r[1])
    return total, count, top


def wall_us(fn, calls: int) -> float:
    fn()
    torch.cuda.synchronize()
    best = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        best.append((time.perf_counter() - t0) / calls * 1e6)
    return sorted(best)[1]


_KINDS = (("launch", "rt.launch("), ("library call", "rt.library_"), ("allocation", "rt.empty("),
          ("arena buffer", "_A.take("), ("tensor view", ".view("), ("descriptor view", "rt.d"),
          ("device read", "rt.read("))


def host_report(call, calls: int, wall: float) -> str:
    """Host µs a call of the host programs' statements, by kind (first match in _KINDS, else
    "scalar arithmetic"), and what is left of the wall time (Dynamo's frame, guards, the artifact)."""
    from mlir_sym.runtime import cuda

    for prof in cuda.PROFILES:
        prof.reset()
    for _ in range(calls):
        call()
    torch.cuda.synchronize()
    kinds: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for prof in cuda.PROFILES:
        for line, ns, hits in zip(prof.lines, prof.ns, prof.hits):
            if not hits:
                continue
            kind = next((k for k, pat in _KINDS if pat in line), "scalar arithmetic")
            kinds[kind][0] += ns / calls / 1e3
            kinds[kind][1] += hits // calls
    total = sum(v[0] for v in kinds.values())
    out = [f"   host programs: {total:.1f} us a call of statements; the rest of the wall time {wall - total:.1f} us"]
    for k, (us, n) in sorted(kinds.items(), key=lambda kv: -kv[1][0]):
        out.append(f"   {us:8.1f} us  {n:4d} x {k}  ({us / max(n, 1):.2f} us each)")
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="bert,gpt2")
    p.add_argument("--length", type=int, default=8)
    p.add_argument("--batch", type=int, default=1, help="rows of input ids (above 1: a dynamic batch)")
    p.add_argument("--calls", type=int, default=50)
    p.add_argument("--backends", default="inductor,mlir_sym,mlir_sym_graphs")
    p.add_argument("--top", type=int, default=12)
    p.add_argument("--host-profile", action="store_true",
                   help="mlir_sym (graphs off): host time a call by kind of statement (MLIR_SYM_HOST_PROFILE=1)")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    a = p.parse_args()
    if a.host_profile:
        os.environ["MLIR_SYM_HOST_PROFILE"] = "1"  # read when a host program is loaded (runtime/cuda.py)
    from bench_gpu_compile import make_model

    import mlir_sym.backend as mb

    for name in a.models.split(","):
        torch.manual_seed(0)
        model = make_model(name).to("cuda", getattr(torch, a.dtype)).eval()
        ids = torch.randint(0, 8000, (a.batch, a.length), device="cuda")
        for be in a.backends.split(","):
            torch._dynamo.reset()
            mb._CACHE.clear()
            mb.config.cuda_graphs = be == "mlir_sym_graphs"
            f = model if be == "eager" else torch.compile(
                model, backend="mlir_sym" if be.startswith("mlir_sym") else be, dynamic=True)
            with torch.no_grad():
                call = lambda: f(input_ids=ids)  # noqa: E731
                for _ in range(3):
                    call()
                wall = wall_us(call, a.calls)
                gpu, n, top = gpu_profile(call, a.calls)
                print(f"\n== {name} B={a.batch} L={a.length} {be}: wall {wall:.1f} us/call, GPU {gpu:.1f} us/call, "
                      f"{n:.1f} kernels/call", flush=True)
                for k, us, c in top[:a.top]:
                    print(f"   {us:8.1f} us  x{c:<3d} {k[:110]}")
                if a.host_profile and be == "mlir_sym":
                    print(host_report(call, a.calls, wall), flush=True)
                if be.startswith("mlir_sym"):
                    pr = cProfile.Profile()
                    pr.enable()
                    for _ in range(a.calls):
                        call()
                    torch.cuda.synchronize()
                    pr.disable()
                    s = io.StringIO()
                    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(18)
                    print("\n".join(s.getvalue().splitlines()[:40]), flush=True)
        mb.config.cuda_graphs = False


if __name__ == "__main__":
    main()
