"""Per-call overhead of small graphs: where a call's time goes, for every backend in one process.

For a tiny graph (`(x * 2 + 1).relu()` on 64 floats, as ../shared/gpu/gpu_reference.py) and small
shapes of the kernel cases, it reports the wall time per call (N back-to-back calls, one
synchronization at the end: the host is the bottleneck at these sizes) of:
eager; Dynamo with backend `eager` (Dynamo's floor); `aot_eager` (Dynamo + AOTAutograd's runtime
wrappers, the floor of any AOTAutograd backend); inductor and mlir_sym (dynamic=True both). For
mlir_sym it also times the artifact alone (our guards, allocation, host program and launches, no
Dynamo) and, with --profile, a cProfile of each compiled call; with --host-profile, the host time of
each statement of the artifact's host program while it is timed alone. Backend `mlir_sym_graphs` is
mlir_sym with CUDA graphs per input size (`config.cuda_graphs`, runtime/cuda_graphs.py). With --kernels (CUDA), also the
kernels each call launches and their summed GPU time (torch.profiler's CUDA activity), for every
compiled backend: a call whose wall time is far above its GPU time is bound by the host.

    python benchmarks/bench_overhead.py [--device cuda] [--json out.json] [--profile] [--kernels]
                                        [--dtype bfloat16] [--shapes 8192x4096,4096x1024] [--cases softmax]
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("MLIR_SYM_ARTIFACT_CACHE", "0")  # the artifact timed alone is compiled here (backend._CACHE)
import cProfile
import io
import json
import pstats
import statistics
import time

import torch
import torch._dynamo
import torch.nn.functional as F


def tiny(x):
    return (x * 2 + 1).relu()


def gelu_chain(x, w, b):
    return F.gelu(x * w + b)


def rowsum(x):
    return x.sum(dim=-1)


def colsum(x):
    return x.sum(dim=0)


def colargmax(x):
    return x.argmax(dim=0)


def softmax(x):
    return torch.softmax(x, dim=-1)


def layernorm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def diff(x):
    """Neighbours' difference along the rows: two slices, one of them starting one element in (rows
    that start unaligned, the other ending one element early)."""
    return x[:, 1:] - x[:, :-1]


def slice_softmax(x):
    """Softmax over each row but its first element: rows that start unaligned."""
    return torch.softmax(x[:, 1:], dim=-1)


def mlp_block(x, g, beta, w1, b1, w2, b2):
    """A transformer MLP block at decode-like sizes: layer norm, linear, GELU, linear, residual (a
    handful of launches and two matmuls a call)."""
    h = F.layer_norm(x, (x.shape[-1],), g, beta)
    return x + F.linear(F.gelu(F.linear(h, w1, b1)), w2, b2)


def attention(qkv):
    """GPT-2's causal attention on a [B, L, 768] projection: 4 heads of 64 (sym-gpu-attention's kernel)."""
    b, s, _ = qkv.shape
    q, k, v = (t.view(b, s, 4, 64).transpose(1, 2) for t in qkv.split(256, dim=2))
    return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, 256)


def inputs(case: str, shape: tuple[int, ...], dev: str, dtype: torch.dtype = torch.float32) -> tuple:
    if case == "attention":  # shape (batch, length)
        return (torch.randn(*shape, 768, device=dev, dtype=dtype),)
    x = torch.randn(*shape, device=dev, dtype=dtype)
    if case == "mlp_block":
        d = shape[-1]
        r = lambda *s: torch.randn(*s, device=dev, dtype=dtype) * 0.05  # noqa: E731
        return x, r(d) + 1, r(d), r(4 * d, d), r(4 * d), r(d, 4 * d), r(d)
    if case in ("gelu_chain", "layernorm"):
        return x, torch.randn(shape[-1], device=dev, dtype=dtype), torch.randn(shape[-1], device=dev, dtype=dtype)
    return (x,)


def gpu_kernels(fn, calls: int = 20) -> tuple[float, float]:
    """(kernels per call, GPU time per call in us) from the CUDA activity of `calls` calls: the
    device's side of a call, whatever API launched its kernels (torch, cuBLAS or the driver directly)."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    busy = sum(getattr(e, "device_time", None) or e.cuda_time for e in kernels)
    return len(kernels) / calls, busy / calls


def kernel_times(fn, calls: int = 20) -> dict[str, float]:
    """GPU µs a call by kernel name (CUDA activity of `calls` calls, as gpu_kernels), longest first."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    by_name: dict[str, float] = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            by_name[e.name] = by_name.get(e.name, 0.0) + (getattr(e, "device_time", None) or e.cuda_time) / calls
    return dict(sorted(by_name.items(), key=lambda kv: -kv[1]))


CASES = {"tiny": (tiny, [(64,), (1000,)]), "gelu_chain": (gelu_chain, [(1000, 777), (4096, 1024)]),
         "softmax": (softmax, [(1000, 777), (4096, 1024)]), "layernorm": (layernorm, [(1000, 777), (4096, 1024)]),
         "rowsum": (rowsum, [(1000, 777), (4096, 1024)]), "colsum": (colsum, [(1000, 777), (4096, 1024)]),
         "colargmax": (colargmax, [(1000, 777), (4096, 1024)]),
         "diff": (diff, [(1000, 777), (4096, 1025)]), "slice_softmax": (slice_softmax, [(1000, 777), (4096, 1025)]),
         "mlp_block": (mlp_block, [(8, 256), (64, 256)]), "attention": (attention, [(1, 32), (8, 1024)])}


KEY = {"eager": "dynamo_eager"}  # backend -> column (the first column, "eager", is uncompiled eager)
# `mlir_sym_graphs`: mlir_sym with CUDA graphs per size (config.cuda_graphs, runtime/cuda_graphs.py)


def per_call_us(fn, dev: str, n: int = 2000, rounds: int = 5) -> float:
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    for _ in range(50):
        fn()
    sync()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--backends", default="eager,aot_eager,inductor,mlir_sym")
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--json", default="")
    p.add_argument("--cases", default="", help="comma-separated subset of: " + ", ".join(CASES))
    p.add_argument("--profile", action="store_true", help="cProfile of mlir_sym's tiny-graph call")
    p.add_argument("--host-profile", action="store_true",
                   help="host time of each statement of mlir_sym's host programs (MLIR_SYM_HOST_PROFILE=1)")
    p.add_argument("--kernels", action="store_true", help="also kernels per call and their GPU time (CUDA only)")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--shapes", default="", help="override every case's shapes, e.g. 8192x4096,4096x1024")
    a = p.parse_args()
    dev = a.device
    dtype = getattr(torch, a.dtype)
    if a.host_profile:
        os.environ["MLIR_SYM_HOST_PROFILE"] = "1"  # read when a host program is loaded (runtime/cuda.py)
    backends = a.backends.split(",")
    override = [tuple(int(v) for v in t.split("x")) for t in a.shapes.split(",") if t]
    rows = []
    for case, (fn, shapes) in CASES.items():
        if a.cases and case not in a.cases.split(","):
            continue
        for shape in override or shapes:
            if case == "tiny" and len(shape) != 1:
                continue
            args = inputs(case, shape, dev, dtype)
            row = {"case": case, "shape": list(shape), "dtype": a.dtype, "eager_us": per_call_us(lambda: fn(*args), dev, a.calls)}
            for be in backends:
                torch._dynamo.reset()
                if be.startswith("mlir_sym"):
                    import mlir_sym.backend as mb

                    mb._CACHE.clear()  # the artifact below is this compile's (an equal graph of an earlier shape is a hit)
                    mb.config.cuda_graphs = be == "mlir_sym_graphs"
                cf = torch.compile(fn, backend="mlir_sym" if be.startswith("mlir_sym") else be, dynamic=True)
                # warm with another size first, so the measured size is served by the dynamic graph
                other = inputs(case, tuple(s + 3 for s in shape), dev, dtype)
                cf(*other)
                cf(*args)
                row[KEY.get(be, be) + "_us"] = per_call_us(lambda: cf(*args), dev, a.calls)
                if a.kernels and dev == "cuda":
                    n, busy = gpu_kernels(lambda: cf(*args))
                    row[KEY.get(be, be) + "_kernels"] = n
                    row[KEY.get(be, be) + "_gpu_us"] = busy
                if be == "mlir_sym":
                    art = list(mb._CACHE.values())[-1]
                    seen: list = []
                    read = art.read_sources
                    art.read_sources = lambda flat: (seen.append(list(flat)), read(flat))[1]  # the args Dynamo passes
                    cf(*args)
                    art.read_sources = read
                    flat = seen[-1]
                    if a.host_profile:
                        profs = [v.compute.profile for v in art.variants if getattr(v.compute, "profile", None)]
                        for hp in profs:
                            hp.reset()
                    row["mlir_sym_artifact_us"] = per_call_us(lambda: art(flat), dev, a.calls)
                    if a.host_profile:
                        for hp in profs:
                            print(f"--- {case} {list(shape)}: {hp.report(20)}")
                    if a.profile:
                        pr = cProfile.Profile()
                        pr.enable()
                        for _ in range(500):
                            cf(*args)
                        pr.disable()
                        s = io.StringIO()
                        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(14)
                        print(f"--- cProfile of mlir_sym, {case} {list(shape)}, 500 calls")
                        print(s.getvalue())
            if "inductor_us" in row and "mlir_sym_us" in row:
                row["mlir_sym_over_inductor"] = row["mlir_sym_us"] / row["inductor_us"]
            if "inductor_us" in row and "mlir_sym_graphs_us" in row:
                row["mlir_sym_graphs_over_inductor"] = row["mlir_sym_graphs_us"] / row["inductor_us"]
            rows.append(row)
            print(json.dumps({k: (round(v, 2) if isinstance(v, float) else v) for k, v in row.items()}), flush=True)
    cols = ["eager"] + [KEY.get(b, b) for b in backends] + (["mlir_sym_artifact"] if "mlir_sym" in backends else [])
    print(f"\n{'case':12} {'shape':12} " + " ".join(f"{c:>17}" for c in cols) + "  (us/call)")
    for r in rows:
        print(f"{r['case']:12} {str(r['shape']):12} " + " ".join(f"{r.get(c + '_us') or float('nan'):17.1f}" for c in cols))
    if a.kernels and dev == "cuda":
        gcols = [KEY.get(b, b) for b in backends]
        print(f"\n{'case':12} {'shape':12} " + " ".join(f"{c + ' k/call, GPU us':>28}" for c in gcols))
        for r in rows:
            print(f"{r['case']:12} {str(r['shape']):12} " + " ".join(
                f"{r.get(c + '_kernels', float('nan')):13.1f} {r.get(c + '_gpu_us', float('nan')):14.1f}" for c in gcols))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name() if dev == "cuda" else "cpu", "torch": torch.__version__,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
