"""CPU runtime: JIT an LLVM-dialect module with MLIR's ExecutionEngine and call it without copies.

Calls go through the packed interface (`_mlir_<name>(void** args)`), with the argument array and the
memref descriptors built once per artifact; a call only writes data pointers and sizes into them.
Tensors pass as memref descriptors over torch's storage (identity layout: contiguous tensors pass
as they are; others are made contiguous first).
"""
from __future__ import annotations

import ctypes
import os
from typing import Sequence

import torch
from torch_mlir import ir
from torch_mlir.execution_engine import ExecutionEngine

_PACKED = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

TORCH_TO_MLIR = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "ui8",
    torch.bool: "i1",
}

_DESC_TYPES: dict[int, type] = {}


def descriptor_type(rank: int) -> type:
    """The C struct of a ranked memref descriptor (allocated, aligned, offset, sizes[r], strides[r])."""
    if rank not in _DESC_TYPES:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESC_TYPES[rank] = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    return _DESC_TYPES[rank]


class JitModule:
    """One ExecutionEngine over a lowered (LLVM dialect) module."""

    def __init__(self, module: ir.Module, opt_level: int | None = None) -> None:
        # O2: measured on the demo's transformer block, O3 tripled JIT time (2.5 s -> 7.9 s) for no
        # measurable gain in the loop code we emit; MLIR_SYM_OPT_LEVEL overrides.
        if opt_level is None:
            opt_level = int(os.environ.get("MLIR_SYM_OPT_LEVEL", "2"))
        self.engine = ExecutionEngine(module, opt_level=opt_level)
        self.engine.initialize()

    def packed(self, name: str) -> ctypes._CFuncPtr:
        addr = self.engine.raw_lookup(name)
        if not addr:
            raise RuntimeError(f"function '{name}' not found in the JIT module")
        return _PACKED(addr)


class ScalarCall:
    """Calls `name(i64 x n) -> i32` through the packed interface; the argument cells are reused."""

    def __init__(self, jit: JitModule, name: str, nargs: int) -> None:
        self.fn = jit.packed(name)
        self._jit = jit  # the code lives in the engine: keep it alive as long as this call
        self.cells = (ctypes.c_int64 * max(nargs, 1))()
        self.result = ctypes.c_int32(0)
        self.argv = (ctypes.c_void_p * (nargs + 1))()
        base = ctypes.addressof(self.cells)
        for i in range(nargs):
            self.argv[i] = base + 8 * i
        self.argv[nargs] = ctypes.addressof(self.result)
        self.nargs = nargs
        self._argv_ptr = ctypes.cast(self.argv, ctypes.c_void_p)

    def __call__(self, values: Sequence[int]) -> int:
        self.cells[: self.nargs] = values
        self.fn(self._argv_ptr)
        return self.result.value


class ComputeCall:
    """Calls a destination-passing compute function `_mlir_ciface_<name>(args..., outs...) -> i32`.

    `arg_kinds` per argument: ("tensor", rank) | ("i64",) | ("f64",) | ("i1",)."""

    def __init__(self, jit: JitModule, name: str, arg_kinds: Sequence[tuple]) -> None:
        self.fn = jit.packed(f"_mlir_ciface_{name}")
        self._jit = jit
        n = len(arg_kinds)
        self.kinds = list(arg_kinds)
        self.result = ctypes.c_int32(0)
        self.argv = (ctypes.c_void_p * (n + 1))()
        self._keep: list = []
        ns: dict = {"fn": self.fn, "argv": ctypes.cast(self.argv, ctypes.c_void_p), "result": self.result}
        body: list[str] = []
        for i, kind in enumerate(arg_kinds):
            if kind[0] == "tensor":
                # A descriptor is {ptr, ptr, i64 offset, i64 sizes[r], i64 strides[r]}: 3 + 2r words.
                rank = kind[1]
                desc = (ctypes.c_int64 * (3 + 2 * rank))()
                ptr = ctypes.c_void_p(ctypes.addressof(desc))  # the argument is a pointer to the descriptor
                self._keep += [desc, ptr]
                self.argv[i] = ctypes.addressof(ptr)
                ns[f"d{i}"] = desc
                body.append(f"    t = values[{i}]; p = t.data_ptr()")
                if rank:
                    sizes = [f"s{i}_{d}" for d in range(rank)]
                    body.append(f"    {', '.join(sizes)}{',' if rank == 1 else ''} = t.shape")
                    strides, acc = [], "1"
                    for d in range(rank - 1, -1, -1):  # contiguous strides (identity layout)
                        strides.insert(0, acc)
                        acc = f"{acc}*{sizes[d]}" if acc != "1" else sizes[d]
                    body.append(f"    d{i}[:] = (p, p, 0, {', '.join(sizes)}, {', '.join(strides)})")
                else:
                    body.append(f"    d{i}[:] = (p, p, 0)")
            else:
                cell = {"i64": ctypes.c_int64, "f64": ctypes.c_double, "i1": ctypes.c_bool}[kind[0]]()
                self._keep.append(cell)
                self.argv[i] = ctypes.addressof(cell)
                ns[f"c{i}"] = cell
                body.append(f"    c{i}.value = values[{i}]")
        self.argv[n] = ctypes.addressof(self.result)
        src = "def call(values):\n" + "\n".join(body + ["    fn(argv)", "    return result.value"]) + "\n"
        exec(compile(src, f"<mlir_sym call {name}>", "exec"), ns)  # noqa: S102 - generated from arg kinds
        self.source = src
        self._call = ns["call"]

    def __call__(self, values: Sequence[object]) -> int:
        return self._call(values)
