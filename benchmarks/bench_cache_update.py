"""A decode step's attention over a static KV cache (the cache written in place at one position,
`index_copy_`, as HuggingFace's StaticCache does, then attention over the whole cache), per call, side
by side in one process: eager, inductor (dynamic=True), mlir_sym (the cache written into the input,
mutations.py) and mlir_sym_copies (MLIR_SYM_INPLACE_MUTATIONS=0: a new cache computed, AOTAutograd
copies it back). Reports the median wall time of back-to-back calls and the median GPU time of one
call between CUDA events recorded around it, and the cache bytes: the in-place form reads the cache once (attention), the
copying one reads and writes it twice more. The event time spans the call from the GPU's side:
where the host takes longer to issue the call than the GPU to run it (small caches), it is the
host's time, not the kernels'.

    python benchmarks/bench_cache_update.py [--lengths 1024,4096,16384] [--heads 8] [--dim 128]
        [--dtype bfloat16] [--backends eager,inductor,mlir_sym,mlir_sym_copies] [--iters 50]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F


def step(k_cache, v_cache, pos, q, k, v):
    k_cache.index_copy_(2, pos, k)
    v_cache.index_copy_(2, pos, v)
    return F.scaled_dot_product_attention(q, k_cache, v_cache)


def compiled(backend: str):
    from mlir_sym import backend as mb

    torch._dynamo.reset()
    mb.config.inplace_mutations = backend != "mlir_sym_copies"
    if backend == "eager":
        return step
    name = "mlir_sym" if backend.startswith("mlir_sym") else backend
    return torch.compile(step, backend=name, dynamic=True)


def main() -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lengths", default="1024,4096,16384")
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--backends", default="eager,inductor,mlir_sym,mlir_sym_copies")
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--json", default="")
    a = p.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = getattr(torch, a.dtype)
    lengths = [int(x) for x in a.lengths.split(",")]
    rows = []
    for be in a.backends.split(","):
        fn = compiled(be)
        for S in lengths:
            g = torch.Generator().manual_seed(S)
            shape = (1, a.heads, S, a.dim)
            kc, vc = (torch.randn(shape, generator=g).to(dev, dtype) for _ in range(2))
            q, k, v = (torch.randn((1, a.heads, 1, a.dim), generator=g).to(dev, dtype) for _ in range(3))
            pos = torch.tensor([S // 2], device=dev)
            ref_k, ref_v = kc.clone(), vc.clone()
            want = step(ref_k, ref_v, pos, q, k, v)
            with torch.no_grad():
                got = fn(kc, vc, pos, q, k, v)
                err = (got.float() - want.float()).abs().max().item()
                cache_ok = torch.equal(kc, ref_k) and torch.equal(vc, ref_v)
                for _ in range(3):
                    fn(kc, vc, pos, q, k, v)
                if dev == "cuda":
                    torch.cuda.synchronize()
                walls, gpus = [], []
                for _ in range(a.iters):
                    t0 = time.perf_counter()
                    fn(kc, vc, pos, q, k, v)
                    if dev == "cuda":
                        torch.cuda.synchronize()
                    walls.append(time.perf_counter() - t0)
                if dev == "cuda":
                    for _ in range(a.iters):
                        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        e0.record()
                        fn(kc, vc, pos, q, k, v)
                        e1.record()
                        e1.synchronize()
                        gpus.append(e0.elapsed_time(e1) * 1e-3)
            row = {"backend": be, "length": S, "cache_mb": round(2 * kc.numel() * kc.element_size() / 2**20, 1),
                   "wall_us": round(statistics.median(walls) * 1e6, 1),
                   "event_us": round(statistics.median(gpus) * 1e6, 1) if gpus else None,
                   "max_err": err, "cache_equal": cache_ok}
            if be.startswith("mlir_sym"):
                from mlir_sym import backend as mb

                row["compiles"] = mb.stats.compiles
            rows.append(row)
            print(json.dumps(row), flush=True)
    from mlir_sym import backend as mb

    mb.config.inplace_mutations = True
    ind = {r["length"]: r for r in rows if r["backend"] == "inductor"}
    print(f"\nbackend          length  cache MB   wall us  event us  x inductor  cache equal  "
          f"({a.heads} heads x {a.dim}, {a.dtype}, {dev}, medians of {a.iters})")
    for r in rows:
        base = ind.get(r["length"], {}).get("event_us")
        ratio = f"{base / r['event_us']:.2f}x" if base and r["event_us"] else "-"
        print(f"{r['backend']:16} {r['length']:6} {r['cache_mb']:9} {r['wall_us']:9} {r['event_us'] or '-':>8} "
              f"{ratio:>15}  {r['cache_equal']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
