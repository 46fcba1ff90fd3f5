"""Wall time of back-to-back calls against their host time and their GPU time, per backend.

`gpu_reference.py` times `iters` calls back to back by CUDA events (wall time). A call whose host
time is below its kernels' time should then cost its GPU time: the host enqueues the next call while
the GPU runs this one. This script says, per case, whether that happens:
  wall_us  : CUDA events around `iters` back-to-back calls, as gpu_reference.py (median of rounds);
  host_us  : the host's time to enqueue `iters` calls without waiting (perf_counter; median of rounds);
  gpu_us   : the kernels' time per call (torch.profiler's CUDA activity);
  waits    : host-side waits per call seen by the profiler (stream / device / event synchronizations,
             blocking copies): each one makes the host wait for the GPU;
  overlap  : (host_us + gpu_us - wall_us) / min(host_us, gpu_us): 1 when host and GPU overlap fully,
             0 when the calls run one after the other.
Eager, inductor (dynamic=True) and mlir_sym (dynamic=True) in one process. Needs a GPU.

    python benchmarks/bench_wall_host.py [--cases rowsum,softmax] [--dtypes bfloat16]
        [--shapes 8192x4096] [--backends eager,inductor,mlir_sym] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch._dynamo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_overhead import CASES, gpu_kernels, inputs  # noqa: E402

WAIT_NAMES = ("Synchronize", "cudaMemcpy", "cuMemcpyDtoH", "cuMemcpyHtoD", "cuMemcpy ")  # host waits


def wall_and_host_us(fn, iters: int, rounds: int = 7) -> tuple[float, float]:
    """(wall, host) us per call: CUDA events around `iters` calls, and the host's time to issue them."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    walls, hosts = [], []
    for _ in range(rounds):
        start.record()
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        t1 = time.perf_counter()
        end.record()
        torch.cuda.synchronize()
        walls.append(start.elapsed_time(end) * 1e3 / iters)
        hosts.append((t1 - t0) * 1e6 / iters)
    return statistics.median(walls), statistics.median(hosts)


def waits_per_call(fn, calls: int) -> tuple[float, list[str]]:
    """Host-side waits (synchronizations, blocking copies) the profiler saw per call, and their names."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
    torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type != torch.autograd.DeviceType.CUDA
             and any(w in e.name for w in WAIT_NAMES) and "Async" not in e.name]
    return len(names) / calls, sorted(set(names))


def measure(backends: list[str], cases: list[str], dtypes: list[str], shapes: list[tuple[int, int]],
            iters: int) -> list[dict]:
    rows = []
    for case in cases:
        fn = CASES[case][0]
        for dt in dtypes:
            dtype = getattr(torch, dt)
            compiled = {}
            for be in backends:
                torch._dynamo.reset()
                compiled[be] = fn if be == "eager" else torch.compile(fn, backend=be, dynamic=True)
                for m, n in shapes:
                    args = inputs(case, (m, n), "cuda", dtype)
                    cf = compiled[be]
                    cf(*args)  # compile (and the size's first call) outside the timings
                    wall, host = wall_and_host_us(lambda: cf(*args), iters)
                    _, gpu = gpu_kernels(lambda: cf(*args), iters)
                    waits, wait_names = waits_per_call(lambda: cf(*args), iters)
                    overlap = (host + gpu - wall) / max(min(host, gpu), 1e-9)
                    rows.append({"backend": be, "case": case, "dtype": dt, "shape": [m, n], "wall_us": round(wall, 1),
                                 "host_us": round(host, 1), "gpu_us": round(gpu, 1), "waits": waits,
                                 "wait_names": wait_names, "overlap": round(overlap, 2)})
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backends", default="eager,inductor,mlir_sym")
    p.add_argument("--cases", default="gelu_chain,softmax,layernorm,rowsum")
    p.add_argument("--dtypes", default="float32,bfloat16")
    p.add_argument("--shapes", default="8192x4096")
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--json", default="")
    a = p.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    rows = measure(a.backends.split(","), a.cases.split(","), a.dtypes.split(","), shapes, a.iters)
    print(f"`python benchmarks/bench_wall_host.py {' '.join(sys.argv[1:])}` on {torch.cuda.get_device_name()} "
          f"(torch {torch.__version__}); us per call\n")
    head = ["case", "dtype", "shape", "backend", "wall", "host", "gpu", "waits / call", "overlap"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print(f"| {r['case']} | {r['dtype']} | {'x'.join(map(str, r['shape']))} | {r['backend']} | {r['wall_us']} | "
              f"{r['host_us']} | {r['gpu_us']} | {r['waits']:g} {','.join(r['wait_names'])} | {r['overlap']} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
