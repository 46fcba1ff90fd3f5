"""Batched kernel launches: a host program's consecutive launches go to the driver in one native call.

One `cuLaunchKernel` through ctypes costs 4-5.5 us of host time on the H100 host, the driver's own
work about 2 (`benchmarks/bench_host_primitives.py`); a small model's call launches 50-80 kernels.
`Runtime.launch` therefore only packs a launch (its parameters into a slot of one parameter buffer,
and a 48-byte record: function, grid, block, shared memory, parameter array) and the records go to
the driver together, in order, when the host program does something else that touches the stream or
the device: a library call (cuBLAS, torch), a read of a device value, a torch op of its own, its
return (`Runtime.flush`). The loop that calls `cuLaunchKernel` for each record is a function JIT-
compiled once per process with llvmlite (the x86 host, from the LLVM IR below), called through
ctypes: about 1 us a launch on the host instead of 5. A launch the driver refuses stops the loop:
the exception names that kernel and its sizes; the launches after it are not made.

Record layout (little-endian): u64 function, u32 grid x/y/z, u32 block x/y/z, u32 shared memory
bytes, u32 padding, u64 kernel parameter array (void**).
"""
from __future__ import annotations

import ctypes
import struct
import threading

RECORD = struct.Struct("<QIIIIIIIxxxxQ")
assert RECORD.size == 48

_IR = r"""
define i32 @mlir_sym_launch_all(ptr %launch, i64 %n, ptr %recs, ptr %stream, ptr %failed) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %ok ]
  %done = icmp eq i64 %i, %n
  br i1 %done, label %exit, label %body
body:
  %off = mul i64 %i, 48
  %rec = getelementptr inbounds i8, ptr %recs, i64 %off
  %f = load ptr, ptr %rec, align 8
  %pgx = getelementptr inbounds i8, ptr %rec, i64 8
  %gx = load i32, ptr %pgx, align 4
  %pgy = getelementptr inbounds i8, ptr %rec, i64 12
  %gy = load i32, ptr %pgy, align 4
  %pgz = getelementptr inbounds i8, ptr %rec, i64 16
  %gz = load i32, ptr %pgz, align 4
  %pbx = getelementptr inbounds i8, ptr %rec, i64 20
  %bx = load i32, ptr %pbx, align 4
  %pby = getelementptr inbounds i8, ptr %rec, i64 24
  %by = load i32, ptr %pby, align 4
  %pbz = getelementptr inbounds i8, ptr %rec, i64 28
  %bz = load i32, ptr %pbz, align 4
  %pshm = getelementptr inbounds i8, ptr %rec, i64 32
  %shm = load i32, ptr %pshm, align 4
  %pparams = getelementptr inbounds i8, ptr %rec, i64 40
  %params = load ptr, ptr %pparams, align 8
  %rc = call i32 %launch(ptr %f, i32 %gx, i32 %gy, i32 %gz, i32 %bx, i32 %by, i32 %bz, i32 %shm, ptr %stream, ptr %params, ptr null)
  %bad = icmp ne i32 %rc, 0
  br i1 %bad, label %fail, label %ok
ok:
  %next = add i64 %i, 1
  br label %loop
fail:
  store i64 %i, ptr %failed, align 8
  ret i32 %rc
exit:
  ret i32 0
}
"""

LAUNCH_ALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_void_p)
_lock = threading.Lock()
_compiled: list = []  # [the ctypes function, the engine that owns its code]


def launch_all() -> "ctypes._CFuncPtr":
    """The JIT-compiled `mlir_sym_launch_all(launch, n, records, stream, failed*) -> CUresult`."""
    with _lock:
        if not _compiled:
            import llvmlite.binding as llvm

            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            module = llvm.parse_assembly(_IR)
            module.verify()
            tm = llvm.Target.from_default_triple().create_target_machine(opt=2)
            engine = llvm.create_mcjit_compiler(module, tm)
            engine.finalize_object()
            fn = LAUNCH_ALL(engine.get_function_address("mlir_sym_launch_all"))
            _compiled.extend([fn, engine])
        return _compiled[0]


class Batch:
    """Launches packed and not yet given to the driver (one per Runtime): parameter slots (8 bytes
    each; `argv` points at every slot, so a launch's parameter array is `argv` at its first slot)
    and records."""

    SLOTS = 1 << 14
    RECORDS = 512

    def __init__(self) -> None:
        self.params = (ctypes.c_uint64 * self.SLOTS)()
        self.argv = (ctypes.c_void_p * self.SLOTS)()
        base = ctypes.addressof(self.params)
        for i in range(self.SLOTS):
            self.argv[i] = base + 8 * i
        self.argv_base = ctypes.addressof(self.argv)
        self.records = (ctypes.c_uint8 * (RECORD.size * self.RECORDS))()
        self.records_ptr = ctypes.c_void_p(ctypes.addressof(self.records))
        self.n = 0
        self.slot = 0
        self.kernels: list = []  # the Kernel of each record (for error messages)
        self.failed = ctypes.c_int64(-1)
        self.failed_ref = ctypes.byref(self.failed)

    def full(self, nslots: int) -> bool:
        return self.n == self.RECORDS or self.slot + nslots > self.SLOTS

    def clear(self) -> None:
        self.n = self.slot = 0
        self.kernels.clear()

    def record(self, i: int) -> tuple:
        """(grid, block, shared memory) of record `i`."""
        _, gx, gy, gz, bx, by, bz, shm, _ = RECORD.unpack_from(self.records, i * RECORD.size)
        return (gx, gy, gz), (bx, by, bz), shm
