"""What one kernel launch costs on this host, and what a native launch loop would save: our runtime's
`rt.launch` (a ctypes call of cuLaunchKernel per launch, its parameters packed first) against a loop
over cuLaunchKernel compiled with MLIR's ExecutionEngine (one ctypes call for 1 or 8 launches of
records packed in Python), on a tiny graph's kernel. Host µs per call, runs interleaved, median of 9.
An experiment for a native launch path (not used by the runtime): the loop's time per launch is the
driver's own cost. Needs a GPU.

    python benchmarks/bench_launch_batching.py
"""
from __future__ import annotations

import ctypes
import os
import struct

import torch
from torch_mlir import ir
from torch_mlir.execution_engine import ExecutionEngine

os.environ.setdefault("MLIR_SYM_ARTIFACT_CACHE", "0")  # compile here: the kernel object is what we launch
from percall_breakdown import interleaved  # noqa: E402 - runs of the sides taken in turn

# launch_many(fn, records, n): cuLaunchKernel (fn) over n records of 10 words (function, grid x y z,
# block x y z, shared bytes, stream, parameter array); 0, or (index + 1) << 32 | status of a failure
_I32_FIELDS = ("gx", "gy", "gz", "bx", "by", "bz", "shm")  # record words 1-7
_LOADS = "\n".join(
    f"    %p{i} = llvm.getelementptr %p0[{i}] : (!llvm.ptr) -> !llvm.ptr, i64\n"
    f"    %w{i} = llvm.load %p{i} : !llvm.ptr -> i64\n"
    f"    %{name} = llvm.trunc %w{i} : i64 to i32" for i, name in enumerate(_I32_FIELDS, 1))
IR = """
module {
  llvm.func @mlir_sym_launch_many(%fn: !llvm.ptr, %recs: !llvm.ptr, %n: i64) -> i64 {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    llvm.br ^loop(%c0 : i64)
  ^loop(%i: i64):
    %done = llvm.icmp "sge" %i, %n : i64
    llvm.cond_br %done, ^exit, ^body
  ^body:
    %c10 = llvm.mlir.constant(10 : i64) : i64
    %base = llvm.mul %i, %c10 : i64
    %p0 = llvm.getelementptr %recs[%base] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %h = llvm.load %p0 : !llvm.ptr -> !llvm.ptr
""" + _LOADS + """
    %p8 = llvm.getelementptr %p0[8] : (!llvm.ptr) -> !llvm.ptr, i64
    %st = llvm.load %p8 : !llvm.ptr -> !llvm.ptr
    %p9 = llvm.getelementptr %p0[9] : (!llvm.ptr) -> !llvm.ptr, i64
    %av = llvm.load %p9 : !llvm.ptr -> !llvm.ptr
    %null = llvm.mlir.zero : !llvm.ptr
    %rc = llvm.call %fn(%h, %gx, %gy, %gz, %bx, %by, %bz, %shm, %st, %av, %null) : !llvm.ptr, (!llvm.ptr, i32, i32, i32, i32, i32, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
    %z = llvm.mlir.constant(0 : i32) : i32
    %ok = llvm.icmp "eq" %rc, %z : i32
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %next = llvm.add %i, %c1 : i64
    llvm.cond_br %ok, ^loop(%next : i64), ^fail(%next, %rc : i64, i32)
  ^fail(%k: i64, %r: i32):
    %c32 = llvm.mlir.constant(32 : i64) : i64
    %hi = llvm.shl %k, %c32 : i64
    %lo = llvm.zext %r : i32 to i64
    %v = llvm.or %hi, %lo : i64
    llvm.return %v : i64
  ^exit:
    llvm.return %c0 : i64
  }
}
"""
_CTX = ir.Context()


def build_loop() -> tuple[int, object]:
    """The loop's packed-interface address (`_mlir_` wrapper: one void** argument) and what keeps it alive."""
    with _CTX, ir.Location.unknown():
        module = ir.Module.parse(IR)
        engine = ExecutionEngine(module, opt_level=2)
        engine.initialize()
        return engine.raw_lookup("mlir_sym_launch_many"), (module, engine)


def main() -> dict:
    from mlir_sym import backend
    from mlir_sym.runtime import cuda

    addr, keep = build_loop()
    x = torch.randn(64, device="cuda")
    cf = torch.compile(lambda t: (t * 2 + 1).relu(), backend="mlir_sym", dynamic=True)
    cf(x)
    variant = list(backend._CACHE.values())[-1].variants[-1]
    rt = variant.compute.runtime
    k = variant.compute.fn.__globals__["K_main_kernel"]
    o = torch.empty(64, device="cuda")
    args = (*rt.desc(x), *rt.desc(o))
    VP = ctypes.c_void_p
    launch_fn = VP(ctypes.cast(ctypes.CDLL(cuda._LIB._name).cuLaunchKernel, VP).value)
    records = (ctypes.c_int64 * 80)()
    records_ptr = VP(ctypes.addressof(records))
    count, status = ctypes.c_int64(1), ctypes.c_int64(-1)
    argv = (VP * 4)(ctypes.addressof(launch_fn), ctypes.addressof(records_ptr), ctypes.addressof(count),
                    ctypes.addressof(status))
    argv_ptr = VP(ctypes.addressof(argv))
    packed = ctypes.CFUNCTYPE(None, VP)(addr)
    record = struct.Struct("<" + "q" * 10)
    stream = torch._C._cuda_getCurrentRawStream

    def fill(n: int) -> None:
        s = stream(rt.index)
        for i in range(n):
            k.struct.pack_into(k.buf, 0, *args)
            record.pack_into(records, 80 * i, k.handle.value, 1, 1, 1, 256, 1, 1, 0, s, k.argv_ptr.value)

    def loop(n: int) -> None:
        count.value = n
        packed(argv_ptr)
        if status.value:
            raise RuntimeError(f"launch failed: {status.value:#x}")

    def rt_launches(n: int) -> None:
        for _ in range(n):
            rt.launch(k, 1, 1, 1, 256, 1, 1, 0, args)

    def loop_filled(n: int) -> None:
        fill(n)
        loop(n)

    fill(8)
    out = interleaved({
        "rt.launch x1": lambda: rt_launches(1), "rt.launch x8": lambda: rt_launches(8),
        "loop x1 (records ready)": lambda: loop(1), "loop x8 (records ready)": lambda: loop(8),
        "loop x1 (pack + records)": lambda: loop_filled(1), "loop x8 (pack + records)": lambda: loop_filled(8),
    })
    torch.cuda.synchronize()
    torch.testing.assert_close(o, (x * 2 + 1).relu())  # the loop's launches ran the kernel
    del keep
    print(f"# {torch.cuda.get_device_name()}, host µs per call")
    print(out)
    return out


if __name__ == "__main__":
    main()
