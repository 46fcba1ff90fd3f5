"""GPU time of our kernels under several settings of the GPU mapping, with inductor's on the same host.

Each setting is a value of MLIR_SYM_GPU_MAP_OPTIONS (options of sym-gpu-map-parallel, e.g.
"reduction-vectors=1 max-reduction-block=128"; "" is the default mapping) or, written
"pass{options} ...", of MLIR_SYM_GPU_PASS_OPTIONS (any pass of the GPU pipeline, e.g.
"sym-gpu-occupancy{elementwise-blocks=6}"), run in a process of its own
(the pipeline is read at import). Per case, dtype and shape: the kernels' GPU time per call from
torch.profiler's CUDA activity (not wall time: the host does not enter it), as GB/s (the bytes a
perfect kernel moves: every input read once, every output written once) and % of the copy peak
(y.copy_(x) on 1 GiB, measured in the same process). Inductor (dynamic=True) runs in the first process
as the baseline. Needs a GPU.

    python benchmarks/bench_gpu_variants.py [--settings ";reduction-vectors=1;max-reduction-block=128"]
        [--cases gelu_chain,softmax,layernorm,rowsum] [--dtypes float32,bfloat16]
        [--shapes 8192x4096,32768x4096] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _bytes(case: str, m: int, n: int, itemsize: int) -> int:
    """Bytes a perfect kernel moves: the [m, n] input read, the output written ([m] for a row sum,
    [n] for a column sum, [n] int64 positions for a column argmax, [m, n - 1] for the slices' cases)."""
    out = {"rowsum": m, "colsum": n, "colargmax": n, "diff": m * (n - 1), "slice_softmax": m * (n - 1)}.get(case, m * n)
    return m * n * itemsize + out * (8 if case == "colargmax" else itemsize)


def measure(backends: list[str], cases: list[str], dtypes: list[str], shapes: list[tuple[int, int]], calls: int) -> dict:
    """In this process: copy peak, then GPU us per call of each backend, case, dtype, shape."""
    import torch
    import torch._dynamo

    sys.path.insert(0, HERE)
    from bench_overhead import CASES, gpu_kernels, inputs

    x = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    us = gpu_kernels(lambda: y.copy_(x), 10)[1]
    peak = 2 * x.numel() * 4 / us / 1e3  # GB/s
    del x, y
    rows = []
    for case in cases:
        fn = CASES[case][0]
        for dt in dtypes:
            dtype = getattr(torch, dt)
            for be in backends:
                torch._dynamo.reset()
                cf = torch.compile(fn, backend=be, dynamic=True)
                for m, n in shapes:
                    args = inputs(case, (m, n), "cuda", dtype)
                    want = fn(*args).float()
                    ok = bool(torch.allclose(cf(*args).float(), want, atol=2e-2, rtol=2e-2))
                    k, t = gpu_kernels(lambda: cf(*args), calls)
                    gbps = _bytes(case, m, n, dtype.itemsize) / t / 1e3
                    rows.append({"backend": be, "case": case, "dtype": dt, "shape": [m, n], "kernels": k,
                                 "gpu_us": round(t, 2), "GBps": round(gbps), "pct_peak": round(100 * gbps / peak, 1), "ok": ok})
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return {"peak_GBps": round(peak), "device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--settings", default=";reduction-vectors=1", help="';'-separated values of MLIR_SYM_GPU_MAP_OPTIONS")
    p.add_argument("--cases", default="gelu_chain,softmax,layernorm,rowsum")
    p.add_argument("--dtypes", default="float32,bfloat16")
    p.add_argument("--shapes", default="8192x4096,32768x4096")
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--no-inductor", action="store_true")
    p.add_argument("--json", default="")
    p.add_argument("--child", default="", help=argparse.SUPPRESS)  # backends to measure in this process
    a = p.parse_args()
    cases, dtypes = a.cases.split(","), a.dtypes.split(",")
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    if a.child:
        print(json.dumps(measure(a.child.split(","), cases, dtypes, shapes, a.calls)))
        return
    settings = a.settings.split(";")
    results = {}
    for k, setting in enumerate(settings):
        backends = (["inductor"] if k == 0 and not a.no_inductor else []) + ["mlir_sym"]
        # "opts": options of sym-gpu-map-parallel; "pass{opts} ...": options of any pass of the GPU pipeline
        env = dict(os.environ, **({"MLIR_SYM_GPU_PASS_OPTIONS": setting} if "{" in setting
                                  else {"MLIR_SYM_GPU_MAP_OPTIONS": setting}))
        cmd = [sys.executable, __file__, "--child", ",".join(backends), "--cases", a.cases, "--dtypes", a.dtypes,
               "--shapes", a.shapes, "--calls", str(a.calls)]
        out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
        results[setting] = json.loads(out.strip().splitlines()[-1])
    first = results[settings[0]]
    base = {(r["case"], r["dtype"], tuple(r["shape"])): r for r in first["rows"] if r["backend"] == "inductor"}
    print(f"`python benchmarks/bench_gpu_variants.py --settings {a.settings!r} --shapes {a.shapes}` on {first['device']} "
          f"(torch {first['torch']}), copy peak {first['peak_GBps']} GB/s; GPU time per call (torch.profiler)\n")
    head = ["case", "dtype", "shape"] + (["inductor"] if base else []) + [f"mlir_sym [{s or 'default'}]" for s in settings]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for (case, dt, shape), _ in sorted({(r["case"], r["dtype"], tuple(r["shape"])): 0 for r in first["rows"]}.items()):
        cells = [case, dt, "x".join(map(str, shape))]
        if base:
            b = base[(case, dt, shape)]
            cells.append(f"{b['gpu_us']:.1f} us, {b['pct_peak']:.0f} %")
        for s in settings:
            r = next(r for r in results[s]["rows"] if r["backend"] == "mlir_sym" and r["case"] == case
                     and r["dtype"] == dt and tuple(r["shape"]) == shape)
            ratio = f", x{b['gpu_us'] / r['gpu_us']:.2f}" if base else ""
            cells.append(f"{r['gpu_us']:.1f} us, {r['pct_peak']:.0f} %{ratio}{'' if r['ok'] else ' WRONG'}")
        print("| " + " | ".join(cells) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
