"""Where a tiny one-launch graph's call goes on the GPU: host µs a call (back-to-back calls, median of
5 runs) of eager, of torch.compile with the eager / inductor / mlir_sym backends, and of our layers
alone: the callable our backend returns to Dynamo (`direct_call`: the generated call of
runtime/fast_call.py; `general_path`: the layers it replaces), Dynamo's wrapper of it as its
frame calls it (`compiled_fn_global`), the artifact, its host program (`compute`), one kernel launch,
the two memref descriptors, the output's torch.empty and the size reads. Needs a GPU.

With `--case` (a case of bench_overhead.py at `--shape` / `--dtype`, e.g. rowsum 8192x4096 bfloat16,
where gpu_reference.py's wall time is bound by the host), the same layers down to the artifact, and
with `--profile N` the Python functions of N compiled calls by their own time (cProfile).

    python benchmarks/percall_breakdown.py [--case rowsum --shape 8192x4096 --dtype bfloat16] [--profile 2000]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
import types

import torch

os.environ.setdefault("MLIR_SYM_ARTIFACT_CACHE", "0")  # compile here: the direct callable is what we time
from mlir_sym import backend  # noqa: E402

DEV = "cuda"


def tiny(x):
    return (x * 2 + 1).relu()


def us(fn, n: int = 5000) -> float:
    """Median host µs a call of `fn` over 5 runs of `n` back-to-back calls (the device synchronized)."""
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return round(statistics.median(runs), 2)


def interleaved(fns: dict, rounds: int = 9, n: int = 3000) -> dict:
    """Median host µs a call of each of `fns`, their runs of `n` calls taken in turn (an A/B on a
    noisy host: drifts hit every side alike)."""
    for fn in fns.values():
        for _ in range(200):
            fn()
    runs: dict = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            torch.cuda.synchronize()
            runs[k].append((time.perf_counter() - t0) / n * 1e6)
    return {k: round(statistics.median(v), 2) for k, v in runs.items()}


def main() -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", default="tiny")
    p.add_argument("--shape", default="")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--profile", type=int, default=0, help="cProfile this many compiled calls")
    a = p.parse_args()
    if a.case == "tiny" and not a.shape:
        return tiny_breakdown(a.profile)
    return case_breakdown(a.case, tuple(int(v) for v in a.shape.split("x")), getattr(torch, a.dtype), a.profile)


def recorded_call(g: dict, fn, args) -> tuple:
    """The arguments Dynamo's frame passes to the compiled graph (`__compiled_fn_*` of the compiled
    function's globals `g`: the last one, ours) on a call of fn(*args), and that callable."""
    name = [k for k in g if k.startswith("__compiled_fn")][-1]
    orig, seen = g[name], []
    g[name] = lambda *a: (seen.append(a), orig(*a))[1]
    try:
        fn(*args)
    finally:
        g[name] = orig
    return seen[0], orig


def profile_calls(fn, n: int) -> None:
    """The Python functions of n calls of fn by their own time (C++ work shows in the caller's)."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        fn()
    prof.disable()
    torch.cuda.synchronize()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
    print(buf.getvalue())


def compile_each(fn0, args: tuple) -> tuple[dict, list]:
    """fn0 compiled by the eager, inductor and mlir_sym backends (a copy of it each: its own Dynamo
    cache), called once with args; and what our backend returned to Dynamo (its direct callables)."""
    returned = []
    direct = backend._direct

    def spy(*a):
        c = direct(*a)
        returned.append(c)
        return c

    backend._direct = spy
    torch._dynamo.reset()
    compiled = {}
    for be in ("eager", "inductor", "mlir_sym"):
        name = f"{fn0.__name__}_{be}"
        fn = types.FunctionType(fn0.__code__.replace(co_name=name), fn0.__globals__, name)
        compiled[be] = torch.compile(fn, backend=be, dynamic=True)
        compiled[be](*args)
    return compiled, returned


def case_breakdown(case: str, shape: tuple, dtype: torch.dtype, profile: int) -> dict:
    """The layers of a call of a bench_overhead.py case: eager, the compiled calls, our direct callable,
    its general path, Dynamo's wrapper of it, the artifact."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_overhead import CASES, inputs

    fn0 = CASES[case][0]
    args = inputs(case, shape, DEV, dtype)
    compiled, returned = compile_each(fn0, args)
    out = interleaved({"eager": lambda: fn0(*args), **{f"compiled_{be}": (lambda cf=cf: cf(*args))
                                                        for be, cf in compiled.items()}})
    call_args, wrapped = recorded_call(fn0.__globals__, compiled["mlir_sym"], args)
    out["compiled_fn_global"] = us(lambda: wrapped(*call_args))
    if returned:
        call = returned[-1]
        slow = getattr(call, "__globals__", {}).get("slow")
        fns = {"direct_call": lambda: call(*call_args)}
        if slow is not None:
            fns["general_path"] = lambda: slow(*call_args)
        out.update(interleaved(fns))
    art = list(backend._CACHE.values())[-1]
    out["artifact"] = us(lambda: art(list(call_args)))
    out["read_sources"] = us(lambda: art.read_sources(list(call_args)))
    print(f"{case} {'x'.join(map(str, shape))} {dtype}: {out}")
    if profile:
        cf = compiled["mlir_sym"]
        profile_calls(lambda: cf(*args), profile)
    return out


def tiny_breakdown(profile: int = 0) -> dict:
    x = torch.randn(64, device=DEV)
    compiled, returned = compile_each(tiny, (x,))
    out = interleaved({"eager": lambda: tiny(x), **{f"compiled_{be}": (lambda cf=cf: cf(x)) for be, cf in compiled.items()}})
    cf = compiled["mlir_sym"]
    with torch.no_grad():
        out["compiled_mlir_sym_nograd"] = us(lambda: cf(x))
    n = x.shape[0]
    if returned:
        call = returned[-1]
        slow = getattr(call, "__globals__", {}).get("slow")
        if slow is not None:  # the general path the generated call falls back to (runtime/fast_call.py)
            out.update(interleaved({"direct_call": lambda: call(n, x), "general_path": lambda: slow(n, x)}))
        else:
            out["direct_call"] = us(lambda: call(n, x))
    wrapped = [v for k, v in tiny.__globals__.items() if k.startswith("__compiled_fn")]  # the last: ours
    if wrapped:
        out["compiled_fn_global"] = us(lambda: wrapped[-1](n, x))
    art = list(backend._CACHE.values())[-1]
    out["artifact"] = us(lambda: art([n, x]))
    variant = art.variants[-1]
    o = torch.empty(n, device=DEV)
    out["compute"] = us(lambda: variant.compute([n, x, o]))
    rt = variant.compute.runtime
    kernel = variant.compute.fn.__globals__.get("K_main_kernel")
    if kernel is not None:
        args = (*rt.desc(x), *rt.desc(o))
        out["launch"] = us(lambda: rt.launch(kernel, 1, 1, 1, 256, 1, 1, 0, args))
        out["desc2"] = us(lambda: (*rt.desc(x), *rt.desc(o)))
    out["empty"] = us(lambda: torch.empty((n,), dtype=torch.float32, device=art.device))
    out["read_sources"] = us(lambda: art.read_sources([n, x]))
    print(out)
    if profile:
        profile_calls(lambda: cf(x), profile)
    return out


if __name__ == "__main__":
    main()
