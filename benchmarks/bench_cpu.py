"""CPU benchmark: eager vs torch.compile(inductor, dynamic=True) vs torch.compile(mlir_sym, dynamic=True).

Cases are the end-to-end test cases marked with `bench_sizes` in test/python/cases.py (one source
of truth). For each case and backend, in one process: the first call (Dynamo + AOTAutograd +
backend compile + one run, on the first size), then the steady-state median time per call at each
size (after warm-up; later sizes must not recompile: the compile counts are printed). Prints a
markdown table with medians and ratios against eager and inductor, and the command that produced it.

    python benchmarks/bench_cpu.py [--quick] [--cases a,b] [--threads N] [--no-inductor]

Inductor needs a C++ compiler; if it fails on a case its cells read "n/a". Its FX graph cache is
disabled so that its first call is a real compilation, as mlir_sym's is (its artifact cache is
cleared per case).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field

import torch
import torch._dynamo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))

from cases import Case, bench_cases  # noqa: E402

from mlir_sym import backend as ms_backend  # noqa: E402  (only for its counters)

QUICK_CASES = ["pointwise_chain", "matmul_shared", "layernorm", "mlp"]


@dataclass
class Result:
    first_call_s: float | None = None
    medians_s: dict[int, float] = field(default_factory=dict)
    compiles: int | None = None  # graphs compiled over all sizes (Dynamo's count)
    error: str | None = None


def _time_calls(fn, args, *, min_time: float, max_iters: int, warmup: int) -> float:
    with torch.no_grad():
        for _ in range(warmup):
            fn(*args)
        times: list[float] = []
        t_end = time.perf_counter() + min_time
        while len(times) < max_iters and (len(times) < 5 or time.perf_counter() < t_end):
            t0 = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_mode(case: Case, mode: str, sizes: list[int], opts) -> Result:
    res = Result()
    fn = case.build()
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    ms_backend._CACHE.clear()
    ms_backend.stats.reset()
    if mode == "eager":
        target = fn
    else:
        target = torch.compile(fn, backend=mode, dynamic=True)
    try:
        inputs = {n: case.inputs(n) for n in sizes}
        t0 = time.perf_counter()
        with torch.no_grad():
            out = target(*inputs[sizes[0]])
        res.first_call_s = time.perf_counter() - t0
        with torch.no_grad():  # a compiled backend must agree with eager before it is timed
            if mode != "eager":
                for n in sizes:
                    torch.testing.assert_close(target(*inputs[n]), fn(*inputs[n]), atol=case.atol or 1e-4,
                                               rtol=case.rtol or 1e-4)
        del out
        for n in sizes:
            res.medians_s[n] = _time_calls(target, inputs[n], min_time=opts.min_time, max_iters=opts.iters,
                                           warmup=opts.warmup)
        if mode != "eager":
            res.compiles = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    except Exception as e:  # noqa: BLE001 - a backend that fails on a case is reported, not fatal
        res.error = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}"
        if opts.verbose:
            traceback.print_exc()
    return res


def _fmt_t(s: float | None) -> str:
    if s is None:
        return "n/a"
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "n/a"
    r = a / b
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.3f}x"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK_CASES)}, first size, fewer iterations")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: every bench case)")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch.set_num_threads; default 1: mlir_sym's CPU code is single-threaded, and on a shared "
                         "2-core box more threads make eager/inductor timings noisy (0: torch's default)")
    ap.add_argument("--no-inductor", action="store_true", help="skip inductor")
    ap.add_argument("--iters", type=int, default=200, help="most timed calls per size")
    ap.add_argument("--min-time", type=float, default=0.3, help="seconds of timed calls per size (at least 5 calls)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("-v", "--verbose", action="store_true", help="print tracebacks of failing backends")
    opts = ap.parse_args(argv)
    if opts.quick:
        opts.iters, opts.min_time, opts.warmup = min(opts.iters, 50), min(opts.min_time, 0.1), 2
    if opts.threads:
        torch.set_num_threads(opts.threads)
    try:
        import torch._inductor.config as inductor_config

        inductor_config.fx_graph_cache = False
    except Exception:  # noqa: BLE001
        pass

    cases = bench_cases()
    wanted = [c for c in opts.cases.split(",") if c] or (QUICK_CASES if opts.quick else [])
    if wanted:
        by_name = {c.name: c for c in cases}
        unknown = [w for w in wanted if w not in by_name]
        if unknown:
            ap.error(f"unknown bench case(s) {unknown}; bench cases: {sorted(by_name)}")
        cases = [by_name[w] for w in wanted]
    modes = ["eager"] + ([] if opts.no_inductor else ["inductor"]) + ["mlir_sym"]

    results: dict[tuple[str, str], Result] = {}
    for c in cases:
        sizes = list(c.bench_sizes)[:1] if opts.quick else list(c.bench_sizes)
        for mode in modes:
            r = run_mode(c, mode, sizes, opts)
            results[(c.name, mode)] = r
            status = r.error or ", ".join(f"n={n}: {_fmt_t(t)}" for n, t in r.medians_s.items())
            print(f"[{c.name}] {mode}: first call {_fmt_t(r.first_call_s)}; {status}", file=sys.stderr, flush=True)

    cmd = "python " + " ".join([os.path.relpath(__file__, ROOT)] + (argv if argv is not None else sys.argv[1:]))
    print(f"\nCommand: `{cmd}`  ")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs; "
          f"median time per call (steady state), first call = trace + compile + one run at the first size; "
          f"'graphs' = Dynamo graphs compiled for all sizes (1 = no recompile).\n")
    ind = "inductor" in modes
    head = ["case", "n", "eager"] + (["inductor"] if ind else []) + ["mlir_sym", "mlir_sym / eager"] + \
        (["mlir_sym / inductor"] if ind else []) + (["first call inductor"] if ind else []) + \
        ["first call mlir_sym", "graphs (ind / ms)" if ind else "graphs"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] * len(head)) + "|")
    for c in cases:
        e, i, m = (results.get((c.name, k)) for k in ("eager", "inductor", "mlir_sym"))
        for k, n in enumerate(e.medians_s or {s: None for s in c.bench_sizes}):
            te = e.medians_s.get(n)
            ti = i.medians_s.get(n) if i and not i.error else None
            tm = m.medians_s.get(n) if not m.error else None
            row = [c.name if k == 0 else "", str(n), _fmt_t(te)] + ([_fmt_t(ti)] if ind else []) + \
                [_fmt_t(tm) if not m.error else "n/a", _ratio(tm, te)] + ([_ratio(tm, ti)] if ind else [])
            if k == 0:
                first_i = _fmt_t(i.first_call_s) if i and not i.error else "n/a"
                graphs = f"{i.compiles if i and not i.error else 'n/a'} / {m.compiles if not m.error else 'n/a'}" if ind \
                    else f"{m.compiles}"
                row += ([first_i] if ind else []) + [_fmt_t(m.first_call_s) if not m.error else "n/a", graphs]
            else:
                row += ([""] if ind else []) + ["", ""]
            print("| " + " | ".join(row) + " |")
    errors = [(k, r.error) for k, r in results.items() if r.error]
    if errors:
        print("\nFailures (reported as n/a):")
        for (name, mode), err in errors:
            print(f"- {name} / {mode}: {err}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
