"""Host cost of the statements generated host programs are made of, on this machine (CUDA only).

A GPU call of mlir_sym is a Python host program (codegen/host.py): allocations, views, copies,
launches, library calls. On a host-bound call (small sizes, data-dependent sizes) its time is the sum
of these statements; `MLIR_SYM_HOST_PROFILE=1` says which ones a program runs, this says what each
kind costs here (median of many back-to-back calls, microseconds), and compares the ways a
statement could be written (e.g. cumsum into an out= buffer against cumsum then copy_).

    python benchmarks/bench_host_primitives.py [--calls 3000] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ["MLIR_SYM_ARTIFACT_CACHE"] = "0"  # the artifact below is compiled here (backend._CACHE has it)
import torch  # noqa: E402


def per_call_us(fn, calls: int, repeats: int = 5) -> float:
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(runs)


def tiny_launch():
    """(runtime, kernel, args) of a compiled one-kernel graph: `rt.launch` as its host program calls it."""
    import mlir_sym.backend as mb

    torch._dynamo.reset()
    mb._CACHE.clear()
    x = torch.randn(64, device="cuda")
    f = torch.compile(lambda t: t * 2 + 1, backend="mlir_sym", dynamic=True)
    f(torch.randn(67, device="cuda"))
    f(x)
    art = list(mb._CACHE.values())[-1]
    host = art.generic.compute
    (kernel,) = host.module.kernels.values()
    seen: dict = {}
    read, fn = art.read_sources, host.fn
    art.read_sources = lambda flat: (seen.setdefault("flat", list(flat)), read(flat))[1]  # what Dynamo passes
    host.fn = lambda *v: (seen.setdefault("values", list(v)), fn(*v))[1]  # what the artifact passes
    f(x)
    art.read_sources, host.fn = read, fn
    out = torch.empty_like(x)
    from mlir_sym.runtime.cuda import Runtime

    args = (*Runtime.desc(x), *Runtime.desc(out))
    return host.runtime, kernel, args, seen, art


def library_cases(dev: str) -> dict:
    """Ways to run a small linear layer's product ([32, 256] @ [256, 768], GPT-2's qkv at length 32)
    as a host program's library call: float32, and bf16 operands with a float32 result."""
    from mlir_sym.runtime.cuda import Runtime

    a, w = torch.randn(32, 256, device=dev), torch.randn(256, 768, device=dev)
    c = torch.empty(32, 768, device=dev)
    a3, c3 = a.view(1, 32, 256), c.view(1, 32, 768)
    ah, wh = a.bfloat16(), w.bfloat16()
    ah3 = ah.view(1, 32, 256)
    chunk = torch.empty(1 << 20, dtype=torch.uint8, device=dev)
    fchunk = chunk.view(torch.float32)
    cases = {
        "torch.mm(a, w, out=c) fp32": lambda: torch.mm(a, w, out=c),
        "torch.matmul(a, w, out=c) fp32": lambda: torch.matmul(a, w, out=c),
        "torch.ops.aten.mm.out(a, w, out=c) fp32": lambda: torch.ops.aten.mm.out(a, w, out=c),
        "rt.library_einsum('abd,dc->abc') fp32": lambda: Runtime.library_einsum(True, "abd,dc->abc", a3, w, c3),
        "c.copy_(torch.mm(a, w, out_dtype=f32)) bf16": lambda: c.copy_(torch.mm(ah, wh, out_dtype=torch.float32)),
        "rt.library_einsum('abd,dc->abc') bf16 -> f32": lambda: Runtime.library_einsum(True, "abd,dc->abc", ah3, wh, c3),
        "fchunk.as_strided((32, 768), (768, 1), 64)": lambda: fchunk.as_strided((32, 768), (768, 1), 64),
        "chunk.view(f32).as_strided(...)": lambda: chunk.view(torch.float32).as_strided((32, 768), (768, 1), 64),
        "fchunk[64:64 + 32 * 768].view(32, 768)": lambda: fchunk[64:64 + 32 * 768].view(32, 768),
        "torch.empty((32, 768), f32)": lambda: torch.empty((32, 768), device=dev),
    }
    try:
        torch.mm(ah, wh, out_dtype=torch.float32, out=c)
        cases["torch.mm(a, w, out_dtype=f32, out=c) bf16"] = lambda: torch.mm(ah, wh, out_dtype=torch.float32, out=c)
    except (RuntimeError, TypeError) as e:
        print(f"torch.mm(out_dtype=, out=) not available: {e}")
    return cases


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=3000)
    p.add_argument("--json", default="")
    a = p.parse_args()
    dev = "cuda"
    n = 8192
    x = torch.randn(n, device=dev)
    m = x > 0
    mi = m.to(torch.int64)
    out = torch.empty(n, dtype=torch.int64, device=dev)
    small = torch.empty(n, device=dev)
    rt, kernel, kargs, seen, art = tiny_launch()
    import ctypes

    from mlir_sym.runtime import cuda as rtc

    lib = rtc._driver()
    raw = ctypes.CDLL("libcuda.so.1").cuLaunchKernel  # no argtypes: pointers passed as c_void_p
    raw.restype = ctypes.c_int
    stream_of = rtc._raw_stream_fn()
    idx = torch.cuda.current_device()
    vp = ctypes.c_void_p
    cases = {
        "torch.empty((8192,), int64)": lambda: torch.empty((n,), dtype=torch.int64, device=dev),
        "rt.empty((8192,), int64)": lambda: rt.empty((n,), torch.int64),
        "t.view((64, 128))": lambda: x.view((64, 128)),
        "rt.subview(t, [8], [100], [1])": lambda: rt.subview(x, [8], [100], [1], None),
        "t.as_strided([100], [1], 8)": lambda: x.as_strided([100], [1], 8),
        "dst.copy_(src) 8192 floats": lambda: small.copy_(x),
        "rt.desc(t)": lambda: rt.desc(x),
        "a subview as a descriptor (data_ptr, stride, arithmetic)": lambda: (
            lambda p, st: (p, p, 0, 100, st[0]))(x.data_ptr() + 4 * 8 * x.stride()[0], x.stride()),
        "rt.launch(1 kernel, 2 memrefs)": lambda: rt.launch(kernel, 1, 1, 1, 256, 1, 1, 0, kargs),
        "  kernel.struct.pack_into(buf, 0, *args)": lambda: kernel.struct.pack_into(kernel.buf, 0, *kargs),
        "  current raw stream": lambda: stream_of(idx),
        "  cuLaunchKernel via ctypes with argtypes": lambda: lib.cuLaunchKernel(
            kernel.handle, 1, 1, 1, 256, 1, 1, 0, stream_of(idx), kernel.argv_ptr, None),
        "  cuLaunchKernel via ctypes, no argtypes": lambda: raw(
            kernel.handle, 1, 1, 1, 256, 1, 1, 0, vp(stream_of(idx)), kernel.argv_ptr, None),
        "host program of t*2+1 (launch + desc)": lambda: art.generic.compute(seen["values"]),
        "artifact t*2+1 (sizes, memo, alloc, host program)": lambda: art(seen["flat"]),
        "out.copy_(cumsum(int64))": lambda: out.copy_(torch.cumsum(mi, 0)),
        "cumsum(int64, out=)": lambda: torch.cumsum(mi, 0, out=out),
        "cumsum(bool, dtype=int64, out=)": lambda: torch.cumsum(m, 0, dtype=torch.int64, out=out),
        "out.copy_(cumsum(bool, dtype=int64))": lambda: out.copy_(torch.cumsum(m, 0, dtype=torch.int64)),
        "cumsum(bool, dtype=int64)": lambda: torch.cumsum(m, 0, dtype=torch.int64),
        "m.to(int64) (a conversion kernel)": lambda: m.to(torch.int64),
        "t.item() (a synchronizing read)": lambda: mi[0].item(),
    }
    cases.update(library_cases(dev))
    rows = []
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}: host microseconds per call (median of 5 x {a.calls})")
    print(f"{'statement':58} {'us':>8}")
    for name, fn in cases.items():
        us = per_call_us(fn, a.calls)
        rows.append({"statement": name, "us": us})
        print(f"{name:58} {us:8.2f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
