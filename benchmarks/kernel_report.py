"""Per-kernel facts of our compiled cases on the GPU: registers, local (spill) bytes, static shared
memory, resident blocks per SM at the launch's block size (the driver's occupancy calculator), launch
sizes and GPU time per kernel (torch.profiler). What to look at first when a kernel is below the copy
peak: too few resident warps (registers) hides too little memory latency. Needs a GPU.

    python benchmarks/kernel_report.py [--cases softmax,layernorm] [--dtypes bfloat16]
        [--shapes 8192x4096] [--json out.json]
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

_ATTR = {"regs": 4, "local_bytes": 3, "shared_bytes": 1}  # CUfunction_attribute values


def _kernels() -> dict:
    from mlir_sym.runtime.cuda import CudaModule

    found = {}
    for o in gc.get_objects():
        try:
            if type(o) is CudaModule:
                found.update(o.kernels)
        except ReferenceError:  # a dead weak proxy
            continue
    return found


def report(cases: list[str], dtypes: list[str], shapes: list[tuple[int, int]], calls: int) -> list[dict]:
    import torch
    import torch._dynamo
    from torch.profiler import ProfilerActivity, profile

    from mlir_sym.runtime import cuda as rtc

    sys.path.insert(0, HERE)
    from bench_overhead import CASES, inputs

    lib = rtc._driver()
    launched: dict[str, tuple] = {}
    orig = rtc.Runtime.launch

    def spy(self, kernel, gx, gy, gz, bx, by, bz, *rest):
        launched[kernel.name] = (gx * gy * gz, bx * by * bz)
        return orig(self, kernel, gx, gy, gz, bx, by, bz, *rest)

    rtc.Runtime.launch = spy
    rows = []
    for case in cases:
        fn = CASES[case][0]
        for dt in dtypes:
            torch._dynamo.reset()
            cf = torch.compile(fn, backend="mlir_sym", dynamic=True)
            for m, n in shapes:
                args = inputs(case, (m, n), "cuda", getattr(torch, dt))
                launched.clear()
                cf(*args)
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(calls):
                        cf(*args)
                    torch.cuda.synchronize()
                times: dict[str, float] = {}
                for e in prof.events():
                    if e.device_type == torch.autograd.DeviceType.CUDA:
                        times[e.name] = times.get(e.name, 0.0) + (getattr(e, "device_time", None) or e.cuda_time) / calls
                kernels = _kernels()
                for name, (blocks, threads) in launched.items():
                    k = kernels.get(name)
                    row = {"case": case, "dtype": dt, "shape": [m, n], "kernel": name, "grid": blocks,
                           "block": threads, "gpu_us": round(times.get(name, 0.0), 2)}
                    if k is not None:
                        for key, attr in _ATTR.items():
                            v = ctypes.c_int()
                            lib.cuFuncGetAttribute(ctypes.byref(v), attr, k.handle)
                            row[key] = v.value
                        occ = ctypes.c_int()
                        fn_occ = lib.cuOccupancyMaxActiveBlocksPerMultiprocessor
                        fn_occ.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
                        fn_occ(ctypes.byref(occ), k.handle, threads, 0)
                        row["blocks_per_sm"] = occ.value
                        row["warps_per_sm"] = occ.value * ((threads + 31) // 32)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    rtc.Runtime.launch = orig
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", default="gelu_chain,softmax,layernorm,rowsum")
    p.add_argument("--dtypes", default="float32,bfloat16")
    p.add_argument("--shapes", default="8192x4096")
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--json", default="")
    a = p.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    rows = report(a.cases.split(","), a.dtypes.split(","), shapes, a.calls)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
