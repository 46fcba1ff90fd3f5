"""Attention on the GPU: eager (PyTorch's fused SDPA kernels), inductor (dynamic=True) and mlir_sym
(dynamic=True: sym-gpu-attention's fused kernel at short sequences, PyTorch's attention past its
thresholds) side by side, one process; `mlir_sym_kernel` is mlir_sym with the fused kernel at every size
(library-above=-1).

The graph is a transformer's attention block without its projections: q, k, v split from one
[B, L, 3 * H * D] buffer into heads, `F.scaled_dot_product_attention` (causal, or with a bool padding
mask [B, 1, 1, L]), the output transposed back to [B, L, H * D]. Each backend compiles the graph once
and serves every size from it (the table says how many compilations mlir_sym took). Time per call:
median over 5 rounds of the mean of `iters` back-to-back calls, by CUDA events (at small sizes the
host's time per call shows; CUDA graphs are off for mlir_sym here). Also the ratio to inductor and
to eager (below 1 is faster).

    python benchmarks/bench_attention.py [--backends eager,inductor,mlir_sym,mlir_sym_kernel] [--dtype float32|bfloat16] [--json out.json]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

import torch
import torch._dynamo
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gpu import bench_ms, compile_count, compiled_fn  # noqa: E402

DEV = "cuda"
HEADS, DIM = 4, 64
# (batch, length)
SIZES = [(1, 32), (2, 128), (1, 512), (4, 512), (1, 2048), (8, 1024)]


def causal(qkv):
    b, s, _ = qkv.shape
    q, k, v = (t.view(b, s, HEADS, DIM).transpose(1, 2) for t in qkv.split(HEADS * DIM, dim=2))
    return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, HEADS * DIM)


def padded(qkv, keep):
    b, s, _ = qkv.shape
    q, k, v = (t.view(b, s, HEADS, DIM).transpose(1, 2) for t in qkv.split(HEADS * DIM, dim=2))
    mask = keep[:, None, None, :]
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(b, s, HEADS * DIM)


GRAPHS = {"causal": causal, "padding mask": padded}
KERNEL_ONLY = "mlir_sym_kernel"


@contextlib.contextmanager
def pipeline_for(backend: str):
    """mlir_sym_kernel: sym-gpu-attention without its library branch while this backend compiles and runs."""
    from mlir_sym import pipelines

    text = pipelines.PIPELINES["sym-lower-to-nvvm"]
    if backend == KERNEL_ONLY:
        pipelines.PIPELINES["sym-lower-to-nvvm"] = text.replace(
            " sym-gpu-attention,", " sym-gpu-attention{library-above=-1 library-above-half=-1},")
    try:
        yield
    finally:
        pipelines.PIPELINES["sym-lower-to-nvvm"] = text


def inputs(name: str, b: int, s: int, dtype: torch.dtype) -> tuple:
    qkv = torch.randn(b, s, 3 * HEADS * DIM, device=DEV, dtype=dtype)
    if name == "causal":
        return (qkv,)
    keep = torch.rand(b, s, device=DEV) > 0.2
    keep[:, 0] = True
    return qkv, keep


def measure(name: str, fn, be: str, dtype: torch.dtype, kernels: bool) -> list[dict]:
    """One backend's rows for graph `name` over SIZES (compiled once)."""
    rows = []
    mlir = be in ("mlir_sym", KERNEL_ONLY)
    cf = compiled_fn("mlir_sym" if mlir else be, fn)
    before = compile_count("mlir_sym" if mlir else be)
    for b, s in SIZES:
        x = inputs(name, b, s, dtype)
        with torch.no_grad():
            want = fn(*x)
            got = cf(*x)
            tol = 2e-2 if dtype == torch.bfloat16 else 2e-4
            ok = torch.allclose(got.float(), want.float(), rtol=tol, atol=tol)
            us = 1000 * bench_ms(lambda: cf(*x), iters=20 if s < 1024 else 5)
            gpu = n = None
            if kernels:
                from profile_hf_calls import gpu_profile

                gpu, n, _ = gpu_profile(lambda: cf(*x), 10)
        rows.append({"graph": name, "backend": be, "batch": b, "length": s, "dtype": str(dtype).split(".")[-1],
                     "us": round(us, 2), "matches_eager": ok, "gpu_us": gpu, "kernels": n})
    if mlir:
        rows.append({"graph": name, "backend": be, "compiles": compile_count("mlir_sym") - before})
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backends", default="eager,inductor,mlir_sym")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--json", default="")
    p.add_argument("--kernels", action="store_true", help="also GPU kernel time a call (torch.profiler)")
    args = p.parse_args()
    os.environ.setdefault("MLIR_SYM_CUDA_GRAPHS", "0")
    dtype = getattr(torch, args.dtype)
    backends = args.backends.split(",")
    rows = []
    for name, fn in GRAPHS.items():
        for be in backends:
            with pipeline_for(be):
                rows += measure(name, fn, be, dtype, args.kernels)
    print(f"# python benchmarks/bench_attention.py --backends {args.backends} --dtype {args.dtype}")
    print(f"# {torch.cuda.get_device_name()}, heads {HEADS}, head dim {DIM}; us per call (median), "
          "ratio = mlir_sym / other")
    print("| graph | batch | length | " + " | ".join(f"{b} us" for b in backends)
          + " | vs inductor | vs eager | matches |")
    print("| --- " * (len(backends) + 6) + "|")
    for name in GRAPHS:
        for b, s in SIZES:
            cell = {r["backend"]: r for r in rows if r.get("graph") == name and r.get("length") == s
                    and r.get("batch") == b}
            us = {k: v["us"] for k, v in cell.items()}
            ratio = (lambda o: f"{us['mlir_sym'] / us[o]:.2f}" if "mlir_sym" in us and o in us else "-")
            print(f"| {name} | {b} | {s} | " + " | ".join(f"{us.get(be, float('nan')):.1f}" for be in backends)
                  + f" | {ratio('inductor')} | {ratio('eager')} | {all(v['matches_eager'] for v in cell.values())} |")
    if args.kernels:
        print("\n| graph | batch | length | " + " | ".join(f"{b} GPU us (kernels)" for b in backends) + " |")
        print("| --- " * (len(backends) + 3) + "|")
        for name in GRAPHS:
            for b, s in SIZES:
                cell = {r["backend"]: r for r in rows if r.get("graph") == name and r.get("length") == s
                        and r.get("batch") == b}
                print(f"| {name} | {b} | {s} | " + " | ".join(
                    f"{cell[be]['gpu_us']:.1f} ({cell[be]['kernels']:.0f})" if be in cell else "-" for be in backends) + " |")
    for r in rows:
        if "compiles" in r:
            print(f"# {r['graph']}: {r['backend']} compiled {r['compiles']} time(s) for {len(SIZES)} sizes")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
