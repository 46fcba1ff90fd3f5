"""GPU bandwidth of fused graphs: eager, inductor (dynamic=True) and mlir_sym side by side, one process.

Graphs (fp32): pointwise exp(x + 1), row sum, softmax over the last dim; sizes large ([8192, 4096],
[32768, 4096]), mid ([4096, 1024]) and odd ([1000, 777]). Each backend compiles each graph ONCE with
dynamic=True and serves every size from that compilation (the table says how many compilations it
took). Time per call: median over 5 rounds of the mean of `iters` back-to-back calls, by CUDA events
(so launch overhead counts where the GPU outruns the host). GB/s counts the bytes a perfect kernel
moves (read every input once, write every output once); % is of the device's copy peak (y.copy_(x) on
1 GiB). Also: host time per call of a tiny graph.

    python benchmarks/bench_gpu.py [--backends eager,inductor,mlir_sym] [--json out.json] [--quick]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
import torch._dynamo

DEV = "cuda"


def bench_ms(fn, iters: int = 20, warm: int = 3, rounds: int = 5) -> float:
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(rounds):
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / iters)
    return statistics.median(times)


def copy_peak_gbps() -> float:
    x = torch.empty(1 << 28, dtype=torch.float32, device=DEV)
    y = torch.empty_like(x)
    return 2 * x.numel() * 4 / bench_ms(lambda: y.copy_(x), iters=10) / 1e6


def exp_add(x):
    return torch.exp(x + 1)


def rowsum(x):
    return x.sum(dim=-1)


def softmax(x):
    return torch.softmax(x, dim=-1)


# name -> (fn, bytes moved by an ideal kernel for an [m, n] fp32 input)
GRAPHS = {
    "exp(x+1)": (exp_add, lambda m, n: 2 * m * n * 4),
    "rowsum": (rowsum, lambda m, n: (m * n + m) * 4),
    "softmax": (softmax, lambda m, n: 2 * m * n * 4),
}
SIZES = [(8192, 4096), (32768, 4096), (4096, 1024), (1000, 777)]


def compiled_fn(backend: str, fn):
    if backend == "eager":
        return fn
    torch._dynamo.reset()
    return torch.compile(fn, backend=backend, dynamic=True)


def compile_count(backend: str) -> int | None:
    if backend == "mlir_sym":
        from mlir_sym import backend as be

        return be.stats.compiles
    return None


def table(backends: list[str], peak: float, sizes) -> list[dict]:
    rows = []
    for name, (fn, nbytes) in GRAPHS.items():
        compiled = {}
        counts0 = {}
        for be in backends:
            counts0[be] = compile_count(be)
            compiled[be] = compiled_fn(be, fn)
        for (m, n) in sizes:
            x = torch.randn(m, n, device=DEV)
            expect = fn(x)
            row = {"graph": name, "shape": [m, n]}
            for be, cf in compiled.items():
                t0 = time.perf_counter()
                got = cf(x)
                torch.cuda.synchronize()
                row[f"{be}_first_call_s"] = round(time.perf_counter() - t0, 3)
                row[f"{be}_ok"] = bool(torch.allclose(got, expect, atol=1e-4, rtol=1e-4))
                ms = bench_ms(lambda: cf(x))
                row[f"{be}_us"] = round(ms * 1e3, 1)
                row[f"{be}_GBps"] = round(nbytes(m, n) / ms / 1e6, 1)
                row[f"{be}_pct_peak"] = round(100 * nbytes(m, n) / ms / 1e6 / peak, 1)
            rows.append(row)
            print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        for be in backends:
            c = compile_count(be)
            if c is not None:
                print(f"  {be}: {c - counts0[be]} compilation(s) served every size of {name}", flush=True)
    return rows


def tiny_overhead(backends: list[str]) -> dict:
    x = torch.randn(64, device=DEV)

    def tiny(x):
        return (x * 2 + 1).relu()

    def host_us(fn, n=2000):
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        return round((time.perf_counter() - t0) / n * 1e6, 1)

    out = {}
    for be in backends:
        cf = compiled_fn(be, tiny)
        cf(x)
        out[f"{be}_us"] = host_us(lambda: cf(x))
    print("tiny graph, host time per call:", out, flush=True)
    return out


def print_table(rows: list[dict], backends: list[str], peak: float) -> None:
    print(f"\ncopy peak {peak:.0f} GB/s; GB/s (% of copy peak), median")
    head = f"{'graph':10s} {'shape':>12s} " + " ".join(f"{be:>20s}" for be in backends)
    print(head)
    for r in rows:
        cells = []
        for be in backends:
            ok = "" if r[f"{be}_ok"] else " WRONG"
            cells.append(f"{r[f'{be}_GBps']:8.0f} ({r[f'{be}_pct_peak']:5.1f}%){ok}".rjust(20))
        print(f"{r['graph']:10s} {str(tuple(r['shape'])):>12s} " + " ".join(cells))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backends", default="eager,inductor,mlir_sym")
    p.add_argument("--json", default="")
    p.add_argument("--quick", action="store_true", help="skip the largest size")
    args = p.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    if "mlir_sym" in backends:
        import mlir_sym.backend  # noqa: F401 - registers the backend (also through the entry point)
    sizes = [s for s in SIZES if not (args.quick and s[0] * s[1] > 8192 * 4096)]
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "backends": backends}
    res["copy_peak_GBps"] = peak = copy_peak_gbps()
    print(f"{res['device']}: copy peak {peak:.0f} GB/s", flush=True)
    res["rows"] = table(backends, peak, sizes)
    res["tiny"] = tiny_overhead(backends)
    print_table(res["rows"], backends, peak)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
