"""cuBLASLt's bias-gradient epilogue (BGRADB, `Runtime.library_einsum_bgrad`) for a linear layer's
weight gradient dW = dY^T X with db = dY summed over the rows, bf16, at the shapes of
bench_training.py's model (rows = batch 8 x lengths 64 / 100 / 256; the qkv, out, fc and proj
layers): every algorithm cuBLASLt's heuristic offers (up to 16), timed one by one, against the first
(the one the runtime takes), the plain GEMM alone (`torch.mm`) and torch's GEMM plus `sum(0)`; the
kernels the first and the best run (torch.profiler). Times: median µs a call of 20 calls captured in
a CUDA graph, 15 replays. Needs a GPU.

    python benchmarks/bench_bgrad_algos.py
"""
from __future__ import annotations

import ctypes

import torch

from mlir_sym.runtime import cublas
from mlir_sym.runtime.cuda import Runtime


def _desc(t: torch.Tensor) -> tuple:
    p = t.data_ptr()
    return (p, p, 0, *t.shape, *t.stride())


def _us(fn) -> float:
    """Median µs a call: 20 calls captured in a CUDA graph, replayed 15 times."""
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        fn()
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        for _ in range(20):
            fn()
    e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
    ts = []
    for _ in range(15):
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1000 / 20)
    ts.sort()
    return ts[len(ts) // 2]


def _kernels(fn) -> list[str]:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as pr:
        fn()
        torch.cuda.synchronize()
    return [e.name[:50] for e in pr.events() if e.device_type.name == "CUDA"]


def main() -> None:
    rt = Runtime(torch.device("cuda"))
    dt = torch.bfloat16
    print(f"`python benchmarks/bench_bgrad_algos.py` on {torch.cuda.get_device_name()} (torch {torch.__version__})")
    for m in (512, 800, 2048):
        for out_, in_ in ((768, 256), (256, 256), (1024, 256), (256, 1024)):
            dy = torch.randn(m, out_, device="cuda", dtype=dt)
            x = torch.randn(m, in_, device="cuda", dtype=dt)
            dw = torch.empty(out_, in_, device="cuda", dtype=dt)
            db = torch.empty(out_, device="cuda", dtype=dt)
            args = ("ca,cb->ab", ("bfloat16",) * 4, _desc(dy), _desc(x), _desc(dw), _desc(db))
            rt.library_einsum_bgrad(*args)
            (entry,) = [e for k, e in rt._gemms.items() if k[0] == "lt" and k[6] == (m, out_, out_, 1)]
            gemm = entry[1]
            res, count = (cublas._Heuristic * 16)(), ctypes.c_int(0)
            a, b, c = gemm.layouts
            gemm.lib.cublasLtMatmulAlgoGetHeuristic(gemm.handle, gemm.desc, a, b, c, c, gemm.pref, 16, res,
                                                    ctypes.byref(count))
            first = gemm.result
            mm_sum = _us(lambda: (torch.mm(dy.t(), x, out=dw), torch.sum(dy, 0, out=db)))
            mm = _us(lambda: torch.mm(dy.t(), x, out=dw))
            ref = dy.float().sum(0)
            times = []
            for i in range(count.value):
                if res[i].state != 0:
                    continue
                gemm.result = res[i]
                t = _us(lambda: rt.library_einsum_bgrad(*args))
                times.append((round(t, 2), i, torch.allclose(db.float(), ref, atol=0.5, rtol=0.05)))
            best = min(t for t in times if t[2])
            gemm.result = res[best[1]]
            best_kernels = _kernels(lambda: rt.library_einsum_bgrad(*args))
            gemm.result = first
            print(f"rows {m}, dY [{m}, {out_}], X [{m}, {in_}]: mm + sum {mm_sum:.2f} µs, mm {mm:.2f} | BGRADB: "
                  f"first {times[0][0]:.2f}, best {best[0]:.2f} (algorithm {best[1]} of {count.value}), all "
                  f"correct: {all(t[2] for t in times)}")
            print(f"    kernels: first {_kernels(lambda: rt.library_einsum_bgrad(*args))}; best {best_kernels}")


if __name__ == "__main__":
    main()
