"""Masked and data-dependent model code: graph breaks, recompiles and CPU runtime, mlir_sym vs
inductor vs eager.

For each pattern of test/python/test_masks.py (masks that sym-mask-to-where turns into `where`) and of
test/python/test_datadep.py (data-dependent sizes that escape: nonzero, x[mask] returned, unique,
repeat_interleave, sizes from .item(); compiled in count/fill phases), one source of truth, in one run:
  * breaks(default): graph breaks under Dynamo's default settings (x[mask] has a data-dependent
    size: Dynamo breaks the graph there for every backend);
  * with `capture_dynamic_output_shape_ops=True, capture_scalar_outputs=True` (README, "Dynamo
    settings"), for mlir_sym and for inductor, both `dynamic=True`: graph breaks, compiled graphs
    and recompiles over several sizes with random, all-true and all-false masks, and whether every
    result matched eager;
  * runtime at a benchmark size (median of repeated calls, random mask) vs eager.

    python benchmarks/bench_masks.py                 # every pattern, mlir_sym and inductor
    python benchmarks/bench_masks.py --quick         # fewer repeats, no inductor
    python benchmarks/bench_masks.py -k masked_sum -k ragged_pack_zero
    python benchmarks/bench_masks.py --suite datadep  # only the data-dependent patterns
    python benchmarks/bench_masks.py --device cuda    # inputs on the GPU (checks and times there)
    python benchmarks/bench_masks.py --device cuda --profile -k heatmap_peaks  # where a call's host time goes
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
import warnings

import torch
import torch._dynamo
from torch._dynamo.eval_frame import _debug_get_cache_entry_list

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))

import test_datadep as D  # noqa: E402
import test_masks as T  # noqa: E402

from mlir_sym import backend as msb  # noqa: E402

BENCH_N = {"attention_padding_mask": 256, "top_k_filter": 2048, "label_smoothing_ignore_index": 4096,
           "image_token_merge": 1024, "ragged_pack_zero": 1024, "selected_tokens_mlp": 2048}
DEFAULT_N = 8192
SUITES = {"masks": T, "datadep": D}


def _suite(case):
    return D if isinstance(case, D.Case) else T


def _safe_call(case, fn, args):
    """Call `fn` as the case's suite does; exceptions are returned, not raised (eager raises on some
    masked patterns, e.g. an empty amax, and so must the compiled code)."""
    try:
        out = _suite(case)._call(fn, args)
    except Exception as e:  # noqa: BLE001
        return None, e
    return out if _suite(case) is T else (out, None)


def _reset() -> None:
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    msb.stats.reset()
    msb._CACHE.clear()


def _breaks() -> int:
    return sum(torch._dynamo.utils.counters["graph_break"].values())


def _graphs() -> int:
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


def default_breaks(case) -> int:
    """Graph breaks with Dynamo's default settings (backend-independent: measured with 'eager')."""
    _reset()
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=False, capture_scalar_outputs=False):
        f = torch.compile(case.fn, backend="eager", dynamic=True)
        for n in case.sizes:
            _safe_call(case, f, case.inputs(n, "random"))
    return _breaks()


def check(case, name: str) -> dict:
    """Compile with `name`, run every size and mask kind: breaks, graphs, recompiles, correctness."""
    _reset()
    out = {"ok": "ok", "error": ""}
    with torch._dynamo.config.patch(**T.DYNAMO_SETTINGS):
        f = torch.compile(case.fn, backend=name, dynamic=True)
        t0 = time.perf_counter()
        try:
            _suite(case).run_case(case, f)
        except Exception as e:  # noqa: BLE001 - reported in the table
            text = str(e).splitlines()[0] if str(e) else ""
            out["ok"] = ("exc" if isinstance(e, AssertionError) and "eager raised" in text else
                         "WRONG" if isinstance(e, AssertionError) and "compiled raised" not in text else "fail")
            out["error"] = f"{type(e).__name__}: {text[:160]}"
        out["compile_run_s"] = time.perf_counter() - t0
        out["breaks"] = _breaks()
        out["graphs"] = _graphs()
        # compilations of the pattern's own frame beyond the first (resume frames after a break aside)
        out["recompiles"] = max(0, len(_debug_get_cache_entry_list(case.fn.__code__)) - 1)
    return out


def on_device(case, device: str):
    """The case with its inputs made on `device` (same values: generated on the CPU, then moved)."""
    if device == "cpu":
        return case

    def inputs(n, kind, make=case.inputs):
        return tuple(a.to(device) if isinstance(a, torch.Tensor) else a for a in make(n, kind))

    return dataclasses.replace(case, inputs=inputs)


def _sync() -> None:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def timeit(fn, args, repeat: int) -> float:
    with torch.no_grad():
        for _ in range(3):
            fn(*args)
        ts = []
        for _ in range(repeat):
            _sync()
            t0 = time.perf_counter()
            fn(*args)
            _sync()
            ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def runtime(case, name: str | None, repeat: int) -> float | None:
    n = BENCH_N.get(case.name, DEFAULT_N)
    args = case.inputs(n, "random")
    if name is None:
        try:
            return timeit(case.fn, args, repeat)
        except Exception as e:  # noqa: BLE001 - e.g. a pattern that makes CPU tensors, given CUDA inputs
            print(f"  eager {case.name}: {type(e).__name__}: {str(e).splitlines()[0][:120]}", file=sys.stderr)
            return None
    _reset()
    with torch._dynamo.config.patch(**T.DYNAMO_SETTINGS):
        f = torch.compile(case.fn, backend=name, dynamic=True)
        try:
            _safe_call(case, f, case.inputs(case.sizes[0], "random"))  # compile on a small size: sizes are symbolic
            return timeit(f, args, repeat)
        except Exception:  # noqa: BLE001
            return None


def profile(case, calls: int = 10, top: int = 25) -> None:
    """Where a compiled mlir_sym call's host time goes: cProfile of `calls` calls at the bench size
    (the top functions by own time, then by cumulative time) and the CUDA activity of one call
    (kernels, copies, synchronizations) from torch.profiler."""
    import cProfile
    import io
    import pstats

    n = BENCH_N.get(case.name, DEFAULT_N)
    args = case.inputs(n, "random")
    _reset()
    with torch._dynamo.config.patch(**T.DYNAMO_SETTINGS), torch.no_grad():
        f = torch.compile(case.fn, backend="mlir_sym", dynamic=True)
        _safe_call(case, f, case.inputs(case.sizes[0], "random"))
        for _ in range(3):
            f(*args)
        _sync()
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(calls):
            f(*args)
        _sync()
        pr.disable()
        text = io.StringIO()
        st = pstats.Stats(pr, stream=text)
        st.sort_stats("tottime").print_stats(top)
        st.sort_stats("cumulative").print_stats(top)
        print(f"== {case.name} (n={n}): cProfile of {calls} calls\n{text.getvalue()}")
        if torch.cuda.is_available() and args and any(isinstance(a, torch.Tensor) and a.is_cuda for a in args):
            from torch.profiler import ProfilerActivity
            from torch.profiler import profile as tprofile

            with tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                f(*args)
                _sync()
            print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=30))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-k", action="append", default=[], help="only patterns whose name contains this")
    ap.add_argument("--quick", action="store_true", help="fewer repeats, no inductor")
    ap.add_argument("--no-inductor", action="store_true")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--suite", choices=sorted(SUITES), action="append", help="only these suites (default: both)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where the inputs live")
    ap.add_argument("--profile", action="store_true", help="only profile mlir_sym's calls of the chosen patterns")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    repeat = a.repeat or (5 if a.quick else 20)
    backends = ["mlir_sym"] + ([] if a.quick or a.no_inductor else ["inductor"])
    suites = [SUITES[s] for s in (a.suite or ["masks", "datadep"])]
    cases = [on_device(c, a.device) for m in suites for c in m.CASES if not a.k or any(k in c.name for k in a.k)]
    torch.set_num_threads(1)  # comparable single-thread timings on a shared machine
    if a.profile:
        for c in cases:
            profile(c)
        return

    rows = []
    for c in cases:
        row = {"name": c.name, "n": BENCH_N.get(c.name, DEFAULT_N), "default": default_breaks(c),
               "suite": "datadep" if _suite(c) is D else "masks"}
        t = runtime(c, None, repeat)
        row["eager_ms"] = None if t is None else t * 1e3
        for b in backends:
            row[b] = check(c, b)
            t = runtime(c, b, repeat)
            row[b]["ms"] = None if t is None else t * 1e3
        rows.append(row)
        print(f"  done {c.name}", file=sys.stderr, flush=True)

    def cells(r: dict, b: str) -> str:
        d = r[b]
        ms = ("fail" if d["ms"] is None else f"{d['ms']:.3f} (n/a)" if r["eager_ms"] is None
              else f"{d['ms']:.3f} ({r['eager_ms'] / d['ms']:.2f}x)")
        return f"{d['breaks']:>6d} {d['recompiles']:>6d} {d['ok']:>5s} {ms:>17s}"

    print()
    print("command: python " + " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]))
    where = torch.cuda.get_device_name() if a.device == "cuda" else "CPU"
    print(f"torch {torch.__version__}, {where}, 1 CPU thread, median of {repeat} calls at size n (random mask). "
          f"'default breaks': graph breaks under Dynamo's default settings (any backend). Per backend, with "
          f"capture_dynamic_output_shape_ops=True and dynamic=True, over sizes {T.CASES[0].sizes} x "
          f"random/all-true/all-false masks (datadep: also full/empty lengths and labels): graph breaks, recompiles, results vs eager (ok; exc: an error of "
          f"another type than eager's; WRONG: values differ; fail: compile or run failed), time (speedup vs eager).")
    top = f"{'':30s} {'':>7s} {'':>5s} {'default':>7s} {'eager':>9s} " + " ".join(f"| {b:^37s}" for b in backends)
    head = f"{'pattern':30s} {'suite':>7s} {'n':>5s} {'breaks':>7s} {'ms':>9s} " + " ".join(
        f"| {'breaks':>6s} {'recomp':>6s} {'vs':>5s} {'ms (speedup)':>17s}" for _ in backends)
    print(top)
    print(head)
    print("-" * len(head))
    for r in rows:
        eager = "fail" if r["eager_ms"] is None else f"{r['eager_ms']:9.3f}"
        print(f"{r['name']:30s} {r['suite']:>7s} {r['n']:5d} {r['default']:7d} {eager:>9s} "
              + " ".join(f"| {cells(r, b)}" for b in backends))
    for r in rows:
        for b in backends:
            if r[b]["error"]:
                print(f"  {r['name']} [{b}]: {r[b]['error']}")


if __name__ == "__main__":
    main()
