"""The host side of a GPU compute function, as Python: one generated function per artifact.

After `sym-lower-to-nvvm` the compute function holds only host work around its `gpu.launch_func`s:
index arithmetic on sizes, `memref.dim`, `memref.alloc` (intermediate buffers), views, `memref.copy`,
library calls (`@__sym_einsum*` / `@__sym_matmul*`: cuBLAS on descriptors, sorts and scans through torch), status branches and the return. Instead of
lowering that to LLVM and calling back into Python for every launch, it is translated once into Python
source (`HostCodegen.build`), where SSA values are locals, memrefs are torch tensors (views are
`as_strided`/`view`), allocations come from torch's caching allocator, and a launch is one call of the
runtime's kernel object with grid/block sizes computed from the symbol values of this call.

The generated function takes the compute function's arguments (tensors, scalars, then the output
tensors) and returns its i32 status. The runtime object it calls (`rt`) provides `launch(k, ...)`,
`empty(shape, dtype)`, `matmul(...)`, `read(t, idx)` (a device value the host needs, e.g. a count an
assert checks: a synchronizing read); see runtime/cuda.py.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from torch_mlir import ir

from mlir_sym.passes.results_to_out_params import OUT_PARAMS_ATTR


def _resource_blob(module: ir.Operation, name: str) -> bytes:
    """The bytes of the builtin dialect resource `name` (a `dense_resource<name>` attribute's data),
    read from the module's printed resource section: the Python bindings have no accessor. The hex
    string starts with the blob's 4-byte alignment."""
    import re

    m = re.search(r'\b' + re.escape(name) + r'\s*:\s*"0x([0-9A-Fa-f]*)"', module.get_asm(large_elements_limit=None))
    if m is None:
        raise HostCodegenError(f"dense_resource<{name}> has no data in the module")
    return bytes.fromhex(m.group(1))[4:]


class HostCodegenError(RuntimeError):
    """The host function holds an op the GPU runtime cannot run on the host."""


# memref element type -> torch dtype name (as written into the generated source).
ELEMENT_DTYPES = {
    "f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16", "i64": "int64",
    "i32": "int32", "i16": "int16", "i8": "int8", "ui8": "uint8", "i1": "bool",
}

_INT_BIN = {
    "arith.addi": "({a} + {b})", "arith.subi": "({a} - {b})", "arith.muli": "({a} * {b})",
    "arith.divui": "({a} // {b})", "arith.remui": "({a} % {b})",
    "arith.floordivsi": "({a} // {b})", "arith.ceildivui": "(-((-{a}) // {b}))",
    "arith.ceildivsi": "(-((-{a}) // {b}))", "arith.maxsi": "max({a}, {b})", "arith.minsi": "min({a}, {b})",
    "arith.maxui": "max({a}, {b})", "arith.minui": "min({a}, {b})", "arith.andi": "({a} & {b})",
    "arith.ori": "({a} | {b})", "arith.xori": "({a} ^ {b})", "arith.shli": "({a} << {b})",
    "arith.shrsi": "({a} >> {b})", "arith.shrui": "({a} >> {b})",
    "arith.addf": "({a} + {b})", "arith.subf": "({a} - {b})", "arith.mulf": "({a} * {b})",
    "arith.divf": "rt.fdiv({a}, {b})", "arith.maximumf": "max({a}, {b})", "arith.minimumf": "min({a}, {b})",
    "arith.maxnumf": "max({a}, {b})", "arith.minnumf": "min({a}, {b})",
}
_CAST = {"arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci",
         "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui", "arith.extf", "arith.truncf",
         "memref.cast", "arith.bitcast"}
_CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}
# arith.cmpf predicates: 0 false, 1 oeq, 2 ogt, 3 oge, 4 olt, 5 ole, 6 one, 7 ord, 8 ueq, 9 ugt, 10 uge,
# 11 ult, 12 ule, 13 une, 14 uno, 15 true (NaN handling is approximate on the host; sizes never need it).
_CMPF = {1: "==", 2: ">", 3: ">=", 4: "<", 5: "<=", 6: "!=", 8: "==", 9: ">", 10: ">=", 11: "<", 12: "<=", 13: "!="}


_MATH = {
    "math.ceil": "float(math.ceil({0}))", "math.floor": "float(math.floor({0}))", "math.sqrt": "math.sqrt({0})",
    "math.rsqrt": "(1.0 / math.sqrt({0}))", "math.exp": "math.exp({0})", "math.log": "math.log({0})",
    "math.absf": "abs({0})", "math.absi": "abs({0})", "math.tanh": "math.tanh({0})",
    "math.powf": "math.pow({0}, {1})", "math.round": "float(rt.round_half_away({0}))",
    "math.roundeven": "float(round({0}))", "math.trunc": "float(math.trunc({0}))",
    "math.copysign": "math.copysign({0}, {1})", "math.log2": "math.log2({0})", "math.exp2": "(2.0 ** {0})",
}
HOST_BUFFER_ATTR = "sym.host_buffer"


def _defined_by_host_buffer(v: ir.Value) -> bool:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return False
    op = owner.operation if hasattr(owner, "operation") else owner
    return op.name in ("memref.alloc", "memref.alloca") and HOST_BUFFER_ATTR in op.attributes


@dataclass
class KernelParam:
    kind: str  # "memref" | "index" | "i64" | "i32" | "i16" | "i8" | "i1" | "f32" | "f64" | "f16" | "bf16"
    rank: int = 0


@dataclass
class LaunchSite:
    kernel: str  # symbol name of the kernel function (its PTX .entry name)
    params: list[KernelParam] = field(default_factory=list)


@dataclass
class HostProgram:
    source: str
    kernels: dict[str, list[KernelParam]]  # kernel name -> parameter plan (one per launch operand)
    launches: int  # static number of launch sites
    library_calls: int
    # constant buffers (memref.global) the program reads, as `C_<name>`: name -> {"dtype", "shape",
    # "values" (flat list)}; the runtime puts each on the device once
    constants: dict[str, dict] = field(default_factory=dict)


def _type_kind(t: ir.Type) -> KernelParam:
    if isinstance(t, ir.MemRefType):
        return KernelParam("memref", ir.MemRefType(t).rank)
    s = str(t)
    if s == "index":
        return KernelParam("index")
    if s in ("i64", "i32", "i16", "i8", "i1", "f32", "f64", "f16", "bf16"):
        return KernelParam(s)
    raise HostCodegenError(f"kernel argument of type {s} is not supported by the GPU runtime")


def _dtype_of(t: ir.Type) -> str:
    et = str(ir.ShapedType(t).element_type)
    if et not in ELEMENT_DTYPES:
        raise HostCodegenError(f"buffers of element type {et} are not supported by the GPU runtime")
    return ELEMENT_DTYPES[et]


class HostCodegen:
    """Translate one host function (func.func after sym-lower-to-nvvm) to Python source."""

    def __init__(self, fn: ir.Operation) -> None:
        self.fn = fn.operation
        self.names: dict[Any, str] = {}
        self.lines: list[str] = []
        self.kernels: dict[str, list[KernelParam]] = {}
        self.launches = 0
        self.library_calls = 0
        self.constants: dict[str, dict] = {}
        self.descs: set = set()  # views only kernels read: memref descriptors (tuples), not tensors
        self.arena = False  # some buffer is carved from the call's arena
        self._globals: dict[str, ir.Operation] | None = None
        self._n = 0

    # -- values ------------------------------------------------------------------------------
    def _new(self, v: ir.Value) -> str:
        name = f"v{self._n}"
        self._n += 1
        self.names[_key(v)] = name
        return name

    def _ref(self, v: ir.Value) -> str:
        k = _key(v)
        if k not in self.names:
            raise HostCodegenError(f"value {v.get_name()} is used before the host defines it")
        return self.names[k]

    # -- entry -------------------------------------------------------------------------------
    def build(self, fname: str = "host") -> HostProgram:
        region = self.fn.regions[0]
        blocks = list(region.blocks)
        entry = blocks[0]
        args = [self._new(a) for a in entry.arguments]
        n_out = ir.IntegerAttr(self.fn.attributes[OUT_PARAMS_ATTR]).value if OUT_PARAMS_ATTR in self.fn.attributes else 0
        self.out_params = set(list(entry.arguments)[len(entry.arguments) - n_out:]) if n_out else set()
        # block arguments of other blocks: variables assigned by the branches into them
        for b in blocks[1:]:
            for a in b.arguments:
                self._new(a)
        self.block_ids = {_bkey(b): i for i, b in enumerate(blocks)}
        # MLIR_SYM_HOST_DESCRIPTORS=0: every view a tensor (for bisecting; not in the code cache's key)
        self.descs = _descriptor_views(blocks) if os.environ.get("MLIR_SYM_HOST_DESCRIPTORS", "1") == "1" else set()
        out = [f"def {fname}({', '.join(args)}):"]
        if len(blocks) == 1:
            self.lines = []
            self._block(entry, indent="    ")
            out += self.lines
        else:
            out.append("    _b = 0")
            out.append("    while True:")
            for i, b in enumerate(blocks):
                self.lines = []
                self._block(b, indent="            ")
                out.append(f"        {'if' if i == 0 else 'elif'} _b == {i}:")
                out += self.lines
            out.append("        else:")
            out.append("            raise RuntimeError('bad block')")
        if self.arena:  # buffers only kernels use: one allocation a call (Runtime.Arena)
            out.insert(1, "    _A = rt.Arena(rt)")
        src = "\n".join(out) + "\n"
        return HostProgram(src, self.kernels, self.launches, self.library_calls, self.constants)

    def _constant(self, op: ir.Operation) -> str:
        """Record the value of the memref.global that `op` reads; its name."""
        gname = ir.FlatSymbolRefAttr(op.attributes["name"]).value
        if gname in self.constants:
            return gname
        glob = self._global(gname)
        if glob is None or "initial_value" not in glob.attributes or "constant" not in glob.attributes:
            raise HostCodegenError(f"memref.global @{gname} is not a constant with a value")
        t = ir.MemRefType(ir.TypeAttr(glob.attributes["type"]).value)
        attr = glob.attributes["initial_value"]
        et = str(t.element_type)
        if et not in ELEMENT_DTYPES:
            raise HostCodegenError(f"constant @{gname} of element type {et} is not supported by the GPU runtime")
        n = 1
        for d in t.shape:
            n *= d
        if str(attr).startswith("dense_resource<"):  # torch-mlir's literals of more than one element
            import torch

            raw = _resource_blob(self._module(), str(attr)[len("dense_resource<"):].split(">")[0])
            values = torch.frombuffer(bytearray(raw), dtype=getattr(torch, ELEMENT_DTYPES[et])).tolist()
            if len(values) != n:
                raise HostCodegenError(f"constant @{gname}: {len(values)} values for {n} elements")
            self.constants[gname] = {"dtype": ELEMENT_DTYPES[et], "shape": list(t.shape), "values": values}
            return gname
        dense = ir.DenseElementsAttr(attr)
        if dense.is_splat:
            v = dense.get_splat_value()
            one = ir.FloatAttr(v).value if isinstance(v, ir.FloatAttr) or et.startswith(("f", "bf")) else ir.IntegerAttr(v).value
            values = [one] * n
        else:
            import numpy as np

            cls = ir.DenseFPElementsAttr if et.startswith(("f", "bf")) else ir.DenseIntElementsAttr
            values = np.array(cls(attr)).reshape(-1).tolist()
        if et == "i1":
            values = [bool(x) for x in values]
        self.constants[gname] = {"dtype": ELEMENT_DTYPES[et], "shape": list(t.shape), "values": values}
        return gname

    def _module(self) -> ir.Operation:
        module = self.fn.parent
        return module.operation if hasattr(module, "operation") else module

    def _global(self, gname: str) -> ir.Operation | None:
        if self._globals is None:  # the module's memref.globals by name, listed once
            self._globals = {ir.StringAttr(o.operation.attributes["sym_name"]).value: o.operation
                             for o in self._module().regions[0].blocks[0].operations
                             if o.operation.name == "memref.global"}
        return self._globals.get(gname)

    def _copy(self, op: ir.Operation, ind: str) -> None:
        """memref.copy: a fill from a splat constant, an output made the library result it copies
        (`_adoptable`), or a copy."""
        dst, value = self._ref(op.operands[1]), self._splat_source(op)
        if value is not None:  # the constant itself is never named (memref.get_global)
            self._emit(ind, f"{dst}.fill_({value})")
        elif self._adoptable(op):
            self._emit(ind, f"rt.adopt({dst}, {self._ref(op.operands[0])})")
        else:
            self._emit(ind, f"{dst}.copy_({self._ref(op.operands[0])})")

    def _splat_source(self, copy: ir.Operation) -> str | None:
        """The value (a Python literal) of a copy's source when it is a constant global of one value
        repeated (bufferization's copy of a splat tensor constant into a buffer that is then written,
        e.g. the zeros an embedding's gradient is scattered into): the copy is a fill of the
        destination, which writes it and reads nothing."""
        src = copy.operands[0]
        if not isinstance(src, ir.OpResult) or src.owner.operation.name != "memref.get_global":
            return None
        glob = self._global(ir.FlatSymbolRefAttr(src.owner.operation.attributes["name"]).value)
        if glob is None or "constant" not in glob.attributes or "initial_value" not in glob.attributes:
            return None
        attr = glob.attributes["initial_value"]
        if not isinstance(attr, ir.DenseElementsAttr) or not ir.DenseElementsAttr(attr).is_splat:
            return None
        v = ir.DenseElementsAttr(attr).get_splat_value()
        if isinstance(v, ir.BoolAttr):
            return "True" if ir.BoolAttr(v).value else "False"
        if isinstance(v, ir.FloatAttr):
            return _float_literal(ir.FloatAttr(v).value)
        if isinstance(v, ir.IntegerAttr):
            return str(ir.IntegerAttr(v).value)
        return None

    def _emit(self, indent: str, line: str) -> None:
        self.lines.append(indent + line)

    def _block(self, block: ir.Block, indent: str) -> None:
        for child in block.operations:
            self._op(child.operation, indent)

    def _branch_body(self, block: ir.Block, indent: str) -> None:
        n = len(self.lines)
        self._block(block, indent)
        if len(self.lines) == n:
            self._emit(indent, "pass")

    def _branch(self, indent: str, dest: ir.Block, operands: list[ir.Value]) -> None:
        for a, v in zip(dest.arguments, operands):
            self._emit(indent, f"{self.names[_key(a)]} = {self._ref(v)}")
        self._emit(indent, f"_b = {self.block_ids[_bkey(dest)]}")
        self._emit(indent, "continue")

    # -- ops ---------------------------------------------------------------------------------
    def _op(self, op: ir.Operation, ind: str) -> None:  # noqa: C901 - one dispatch table
        name = op.name
        ops = list(op.operands)
        r = lambda i: self._ref(ops[i])  # noqa: E731
        if name == "arith.constant":
            self._emit(ind, f"{self._new(op.result)} = {_const_literal(op)}")
        elif name in _INT_BIN:
            self._emit(ind, f"{self._new(op.result)} = " + _INT_BIN[name].format(a=r(0), b=r(1)))
        elif name in ("arith.divsi", "arith.remsi"):
            fn = "rt.divsi" if name == "arith.divsi" else "rt.remsi"
            self._emit(ind, f"{self._new(op.result)} = {fn}({r(0)}, {r(1)})")
        elif name == "memref.cast" and _key(op.result) in self.descs:  # sym-gpu-dynamic-offsets' casts
            self._emit(ind, f"{self._new(op.result)} = rt.as_desc({r(0)})")
        elif name in _CAST:
            self._emit(ind, f"{self._new(op.result)} = {_cast_expr(op, r(0))}")
        elif name == "arith.negf":
            self._emit(ind, f"{self._new(op.result)} = -{r(0)}")
        elif name == "arith.cmpi":
            pred = ir.IntegerAttr(op.attributes["predicate"]).value
            self._emit(ind, f"{self._new(op.result)} = ({r(0)} {_CMPI[pred]} {r(1)})")
        elif name == "arith.cmpf":
            pred = ir.IntegerAttr(op.attributes["predicate"]).value
            expr = "False" if pred == 0 else "True" if pred == 15 else f"({r(0)} {_CMPF[pred]} {r(1)})"
            self._emit(ind, f"{self._new(op.result)} = {expr}")
        elif name == "arith.select":
            self._emit(ind, f"{self._new(op.result)} = ({r(1)} if {r(0)} else {r(2)})")
        elif name == "ub.poison":
            self._emit(ind, f"{self._new(op.result)} = 0")
        elif name == "memref.dim" and _key(ops[0]) in self.descs:
            self._emit(ind, f"{self._new(op.result)} = {r(0)}[3 + {r(1)}]")
        elif name == "memref.dim":
            self._emit(ind, f"{self._new(op.result)} = {r(0)}.shape[{r(1)}]")
        elif name in ("memref.alloc", "memref.alloca") and HOST_BUFFER_ATTR in op.attributes:
            n = ir.MemRefType(op.result.type).shape[0]
            self._emit(ind, f"{self._new(op.result)} = [0] * {n}")
        elif name in ("memref.alloc", "memref.alloca"):
            self._alloc(op, ind)
        elif name == "memref.store" and _defined_by_host_buffer(ops[1]):
            self._emit(ind, f"{r(1)}[{r(2)}] = {r(0)}")
        elif name == "memref.load" and _defined_by_host_buffer(ops[0]):
            self._emit(ind, f"{self._new(op.result)} = {r(0)}[{r(1)}]")
        elif name == "memref.load":  # a device result the host needs (sym-gpu-map-parallel): read back
            idx = ", ".join(self._ref(v) for v in ops[1:])
            self._emit(ind, f"{self._new(op.result)} = rt.read({r(0)}, ({idx}{',' if len(ops) == 2 else ''}))")
        elif name == "memref.reshape":
            self._emit(ind, f"{self._new(op.result)} = {r(0)}.view(tuple({r(1)}))")
        elif name in _MATH:
            self._emit(ind, f"{self._new(op.result)} = " + _MATH[name].format(*[self._ref(v) for v in ops]))
        elif name == "memref.dealloc":
            pass  # torch's allocator frees the buffer when the last reference goes
        elif name == "memref.copy":
            self._copy(op, ind)
        elif name == "memref.subview":
            self._subview(op, ind)
        elif name == "memref.expand_shape" and _key(op.result) in self.descs:
            shape = self._result_shape(op, [self._ref(v) for v in ops[1:]], src=r(0), collapse=False)
            self._emit(ind, f"{self._new(op.result)} = rt.dexpand({r(0)}, {_groups(op)!r}, {shape})")
        elif name == "memref.collapse_shape" and _key(op.result) in self.descs:
            self._emit(ind, f"{self._new(op.result)} = rt.dcollapse({r(0)}, {_groups(op)!r})")
        elif name in ("memref.expand_shape", "memref.collapse_shape"):
            shape = self._result_shape(op, [self._ref(v) for v in ops[1:]] if name == "memref.expand_shape" else None,
                                       src=r(0), collapse=name == "memref.collapse_shape")
            self._emit(ind, f"{self._new(op.result)} = {r(0)}.view({shape})")
        elif name == "memref.get_global" and all(u.owner.name == "memref.copy" and u.operand_number == 0
                                                 and self._splat_source(u.owner) is not None for u in op.result.uses):
            pass  # only filled from (`_splat_source`): the constant never goes to the device
        elif name == "memref.get_global":
            self._emit(ind, f"{self._new(op.result)} = C_{_ident(self._constant(op))}")
        elif name == "memref.transpose":
            perm = [ir.AffineDimExpr(e).position for e in ir.AffineMapAttr(op.attributes["permutation"]).value.results]
            if _key(op.result) in self.descs:
                self._emit(ind, f"{self._new(op.result)} = rt.dtranspose({r(0)}, {perm})")
            else:
                self._emit(ind, f"{self._new(op.result)} = {r(0)}.permute({perm})")
        elif name == "memref.reinterpret_cast":
            self._reinterpret(op, ind)
        elif name == "gpu.launch_func":
            self._launch(op, ind)
        elif name == "func.call":
            self._call(op, ind)
        elif name == "func.return":
            self._emit(ind, f"return {r(0)}" if ops else "return 0")
        elif name == "scf.if":  # sym-gpu-attention's split by size (its result: the output's buffer)
            for res in op.results:
                self._new(res)
            self._emit(ind, f"if {r(0)}:")
            self._branch_body(op.regions[0].blocks[0], ind + "    ")
            if len(op.regions[1].blocks) and len(op.regions[1].blocks[0].operations) > 1:
                self._emit(ind, "else:")
                self._branch_body(op.regions[1].blocks[0], ind + "    ")
        elif name == "scf.yield":  # of an scf.if: its results
            for res, v in zip(op.parent.results, ops):
                self._emit(ind, f"{self._ref(res)} = {self._as_kind(v, _key(res) in self.descs)}")
        elif name == "cf.br":
            self._branch(ind, op.successors[0], ops)
        elif name == "cf.cond_br":
            t, f = op.successors[0], op.successors[1]
            cb = op.opview
            self._emit(ind, f"if {r(0)}:")
            self._branch(ind + "    ", t, list(cb.trueDestOperands))
            self._emit(ind, "else:")
            self._branch(ind + "    ", f, list(cb.falseDestOperands))
        else:
            raise HostCodegenError(
                f"op '{name}' at {op.location} remains on the host: the GPU runtime cannot run it "
                "(it should have been mapped into a kernel)")

    def _as_kind(self, v: ir.Value, desc: bool) -> str:
        """`v` as a descriptor (`desc`) or as a tensor, whichever it is not yet."""
        n = self._ref(v)
        if (_key(v) in self.descs) == desc:
            return n
        return f"rt.desc({n})" if desc else f"rt.wrap({n}, '{_dtype_of(v.type)}')"

    def _tensor_root(self, v: ir.Value) -> str:
        """For a descriptor operand: the tensor it views (a function argument or a torch.empty buffer,
        through view ops), which the runtime makes a strided view of (as_strided: 3 us, a tensor over
        the descriptor's memory 8 us on the H100 host); else "None"."""
        if _key(v) not in self.descs:
            return "None"
        while True:
            o = v.owner
            if isinstance(o, ir.Block):
                break
            o = o.operation if hasattr(o, "operation") else o
            if o.name not in _VIEWS:
                break
            v = o.operands[0]
        tensor = isinstance(o, ir.Block) or (o.name == "memref.alloc" and HOST_BUFFER_ATTR not in o.attributes)
        return self._ref(v) if tensor and _key(v) not in self.descs else "None"

    def _alloc(self, op: ir.Operation, ind: str) -> None:
        t = ir.MemRefType(op.result.type)
        if _only_scan_accumulator(op.result):  # nothing reads it: the runtime's scan skips it
            self._emit(ind, f"{self._new(op.result)} = None")
            return
        dyn = iter(self._ref(v) for v in op.operands)
        shape = [next(dyn) if d == ir.ShapedType.get_dynamic_size() else str(d) for d in t.shape]
        tup = f"({', '.join(shape)}{',' if len(shape) == 1 else ''})"
        if _only_handed_out(op.result):  # the convolution allocates it only when it cannot hand its result out
            self._emit(ind, f"{self._new(op.result)} = ({tup}, rt.{_dtype_of(t)})")
            return
        if _key(op.result) in self.descs:  # only kernels read it: carved from the call's arena
            self.arena = True
            self._emit(ind, f"{self._new(op.result)} = _A.take({tup}, {_ITEM_BYTES[str(t.element_type)]})")
            return
        self._emit(ind, f"{self._new(op.result)} = rt.empty({tup}, rt.{_dtype_of(t)})")

    def _result_shape(self, op, dyn_names, src: str, collapse: bool) -> str:
        t = ir.MemRefType(op.result.type)
        if not collapse:
            # expand_shape's output_shape operands give every dynamic size; static ones are in the type
            static = list(ir.DenseI64ArrayAttr(op.attributes["static_output_shape"]))
            it = iter(dyn_names or [])
            parts = [next(it) if s == ir.ShapedType.get_dynamic_size() else str(s) for s in static]
        else:
            groups = [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(g)] for g in ir.ArrayAttr(op.attributes["reassociation"])]
            parts = []
            for g, d in zip(groups, t.shape):
                if d != ir.ShapedType.get_dynamic_size():
                    parts.append(str(d))
                else:
                    parts.append(" * ".join(f"{src}.shape[{i}]" for i in g) or "1")
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    def _mixed(self, op, static_attr: str, dyn_values: list) -> list[str]:
        static = list(ir.DenseI64ArrayAttr(op.attributes[static_attr]))
        it = iter(dyn_values)
        out = []
        for s in static:
            if s == ir.ShapedType.get_dynamic_size() or s == -(2 ** 63):
                out.append(self._ref(next(it)))
            else:
                out.append(str(s))
        return out

    def _subview(self, op: ir.Operation, ind: str) -> None:
        v = op.opview
        src = self._ref(v.source)
        offs = self._mixed(op, "static_offsets", list(v.offsets))
        sizes = self._mixed(op, "static_sizes", list(v.sizes))
        strides = self._mixed(op, "static_strides", list(v.strides))
        res = ir.MemRefType(op.result.type)
        keep = _kept_dims(sizes, list(res.shape), op)
        if _key(op.result) in self.descs:
            item = _ITEM_BYTES[str(res.element_type)]
            self._emit(ind, f"{self._new(op.result)} = rt.dsubview({src}, {item}, [{', '.join(offs)}], "
                            f"[{', '.join(sizes)}], [{', '.join(strides)}], {keep!r})")
            return
        self._emit(ind, f"{self._new(op.result)} = rt.subview({src}, [{', '.join(offs)}], [{', '.join(sizes)}], "
                        f"[{', '.join(strides)}], {keep!r})")

    def _reinterpret(self, op: ir.Operation, ind: str) -> None:
        v = op.opview
        src = self._ref(v.source)
        offs = self._mixed(op, "static_offsets", list(v.offsets))
        sizes = self._mixed(op, "static_sizes", list(v.sizes))
        strides = self._mixed(op, "static_strides", list(v.strides))
        self._emit(ind, f"{self._new(op.result)} = {src}.as_strided([{', '.join(sizes)}], [{', '.join(strides)}], {offs[0]})")

    def _launch(self, op: ir.Operation, ind: str) -> None:
        kattr = str(op.attributes["kernel"])  # @module::@kernel
        kname = kattr.split("::")[-1].lstrip("@")
        lf = op.opview
        grid = [self._ref(v) for v in (lf.gridSizeX, lf.gridSizeY, lf.gridSizeZ)]
        block = [self._ref(v) for v in (lf.blockSizeX, lf.blockSizeY, lf.blockSizeZ)]
        if getattr(lf, "clusterSizeX", None) is not None:
            raise HostCodegenError(f"kernel {kname}: thread-block clusters are not supported")
        shm = self._ref(lf.dynamicSharedMemorySize) if lf.dynamicSharedMemorySize is not None else "0"
        kops = list(lf.kernelOperands)
        params = [_type_kind(v.type) for v in kops]
        prev = self.kernels.setdefault(kname, params)
        if prev != params:
            raise HostCodegenError(f"kernel {kname} launched with two different argument lists")
        args = []
        for v, p in zip(kops, params):
            n = self._ref(v)
            if p.kind == "memref":
                if _key(v) in self.descs:
                    args.append(f"*{n}" if p.rank else f"*{n}[:3]")
                else:
                    args.append(f"*rt.desc({n})" if p.rank else f"*rt.desc0({n})")
            elif p.kind == "bf16":  # no struct code for bfloat16: its bits as a 16-bit integer
                args.append(f"rt.bf16_bits({n})")
            else:
                args.append(n)
        self.launches += 1
        self._emit(ind, f"rt.launch(K_{_ident(kname)}, {', '.join(grid)}, {', '.join(block)}, {shm}, "
                        f"({', '.join(args)}{',' if len(args) == 1 else ''}))")

    def _adoptable(self, copy: ir.Operation) -> bool:
        """Whether `memref.copy %src, %out` may make the output `%out` the tensor `%src` is instead of
        copying it (`Runtime.adopt`: when their layouts agree at run time): `%out` is an out-param
        (results-to-out-params' `sym.out_params`) that nothing else uses, `%src` a result of a library
        call that returns fresh tensors (training attention's out and log-sum-exp, `library_sdpa`), the
        copy is in the body of a function of one block (not under a branch), and nothing reads or
        writes `%src`, or a value made from it (views, results of regions yielding it), after the
        copy: the output must not change after, nor share its memory with another output."""
        src, dst = copy.operands
        if dst not in self.out_params or len(list(dst.uses)) != 1 or not isinstance(src, ir.OpResult):
            return False
        parent = copy.parent.operation if hasattr(copy.parent, "operation") else copy.parent
        if len(self.fn.regions[0].blocks) != 1 or parent.name != "func.func":
            return False
        call = src.owner.operation
        if call.name != "func.call" or not ir.FlatSymbolRefAttr(call.attributes["callee"]).value.startswith(_SDPA):
            return False
        aliases, todo = {src}, [src]  # src and every value made from it, over-approximated
        while todo:
            for use in todo.pop().uses:
                owner = use.owner.operation if hasattr(use.owner, "operation") else use.owner
                if owner.name == "scf.yield":  # a region's result: the op's results
                    owner = owner.parent.operation if hasattr(owner.parent, "operation") else owner.parent
                made = owner.results
                for res in made:
                    if isinstance(res.type, ir.MemRefType) and res not in aliases:
                        aliases.add(res)
                        todo.append(res)
        after, seen = [], False
        for o in copy.block.operations:
            if seen:
                after.append(o.operation)
            seen = seen or o.operation == copy
        return not any(_uses_any(o, aliases) for o in after)

    def _result_or_buffer(self, op: ir.Operation, call: str, ind: str) -> None:
        """A library call that may give PyTorch's result as the buffer it was to write (its last
        operand): the call's result is that tensor, or the buffer when the call copied into it (None)."""
        res = op.results[0]
        self._emit(ind, f"_t = {call}")
        if _key(res) in self.descs:  # kept alive while the call's buffers are (Runtime.Arena.keep)
            self.arena = True
            got = "_A.keep(_t)"
        else:
            got = "_t"
        self._emit(ind, f"{self._new(res)} = {self._as_kind(op.operands[-1], _key(res) in self.descs)} "
                        f"if _t is None else {got}")

    def _call(self, op: ir.Operation, ind: str) -> None:
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        args = [self._ref(v) for v in op.operands]
        if callee.startswith(_BIAS_CONTRACTIONS):
            # __sym_einsum_bias_<a>_<b>_<out>_<n>(a, b, bias, c): c = einsum(a, b) + bias
            # __sym_einsum_bgrad_<a>_<b>_<out>_<n>(a, b, c, db): c = einsum(a, b), db = a summed over k
            kind, a, b, out = callee[len("__sym_einsum_"):].split("_")[:4]
            dtypes = tuple(_dtype_of(v.type) for v in op.operands)
            self.library_calls += 1
            self._emit(ind, f"rt.library_einsum_{kind}('{a},{b}->{out}', {dtypes!r}, {', '.join(args)})")
            return
        if callee.startswith(_CONTRACTIONS):
            init, equation = _contraction(callee)
            dtypes = tuple(_dtype_of(v.type) for v in op.operands)
            self.library_calls += 1
            self._emit(ind, f"rt.library_einsum({init}, '{equation}', {dtypes!r}, {', '.join(args)})")
            return
        if callee.startswith("__sym_scan_"):  # __sym_scan_<add|mul|max|min>_<inc|exc>_d<dim>_<n>
            _, combine, inc, dim, _ = callee[len("__sym_"):].split("_")
            self.library_calls += 1
            self._emit(ind, f"rt.library_scan({combine!r}, {inc == 'inc'}, {int(dim[1:])}, {', '.join(args)})")
            return
        if callee.startswith("__sym_scatter_"):  # __sym_scatter_<set|add>_m<d0xd1...>_<n>
            _, combine, dims, _ = callee[len("__sym_"):].split("_")
            dim_map = tuple(int(d) for d in dims[1:].split("x"))
            self.library_calls += 1
            self._emit(ind, f"rt.library_scatter({combine == 'add'}, {dim_map!r}, {', '.join(args)})")
            return
        if callee.startswith("__sym_conv_"):  # sym-gpu-library-convolutions
            init, layout, stride, padding, dilation, bias = _convolution(callee)
            self.library_calls += 1
            call = (f"rt.library_conv({init}, {layout!r}, {stride!r}, {padding!r}, {dilation!r}, {bias}, "
                    f"{bool(op.results)}, {', '.join(args)})")
            if op.results:
                self._result_or_buffer(op, call, ind)
            else:
                self._emit(ind, call)
            return
        if callee.startswith("__sym_sort_"):  # __sym_sort_<asc|desc>_d<dim>_<n>
            _, direction, dim, _ = callee[len("__sym_"):].split("_")
            self.library_calls += 1
            self._emit(ind, f"rt.library_sort({direction == 'desc'}, {int(dim[1:])}, {', '.join(args)})")
            return
        if callee.startswith(_SDPA):  # training attention (sym-torch-attention, sym-library-calls-to-buffers)
            kind = callee[len(_SDPA):].rsplit("_", 1)[0]  # forward[_packed], backward[_packed]
            dtypes = tuple(_dtype_of(v.type) for v in op.operands)
            causal = ir.BoolAttr(op.attributes["sym.causal"]).value
            scale = ir.FloatAttr(op.attributes["sym.scale"]).value
            roots = [self._tensor_root(v) for v in op.operands]
            self.library_calls += 1
            heads = f", heads={ir.IntegerAttr(op.attributes['sym.heads']).value}" if "sym.heads" in op.attributes else ""
            outs = [self._new(r) for r in op.results]
            self._emit(ind, f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = rt.library_sdpa({kind!r}, "
                            f"{causal}, {scale!r}, {dtypes!r}, ({', '.join(roots)},), {', '.join(args)}{heads})")
            return
        if callee.startswith(_ATTENTION):  # sym-gpu-attention's library branch
            dtypes = tuple(_dtype_of(v.type) for v in op.operands)
            causal = ir.BoolAttr(op.attributes["sym.causal"]).value
            scale = ir.FloatAttr(op.attributes["sym.scale"]).value
            roots = [self._tensor_root(v) for v in op.operands]
            self.library_calls += 1
            call = (f"rt.library_attention({causal}, {scale!r}, {dtypes!r}, ({', '.join(roots)},), "
                    f"{bool(op.results)}, {', '.join(args)})")
            if not op.results:
                self._emit(ind, call)
                return
            self._result_or_buffer(op, call, ind)
            return
        if callee.startswith("__sym_"):
            kind = callee[len("__sym_"):].rsplit("_", 1)[0]
            self.library_calls += 1
            self._emit(ind, f"rt.library_{kind}({', '.join(args)})")
            for res in op.results:
                self._new(res)
            return
        raise HostCodegenError(f"call of '{callee}' on the host is not supported by the GPU runtime")


_CONTRACTIONS = ("__sym_einsum_", "__sym_matmul_", "__sym_batch_matmul_")
# (a, b, bias, c): sym-gpu-gemm-bias-epilogue; (a, b, c, db): sym-gpu-gemm-bias-grad
_BIAS_CONTRACTIONS = ("__sym_einsum_bias_", "__sym_einsum_bgrad_")
_ATTENTION = "__sym_attention_"
_SDPA = "__sym_sdpa_"


def _contraction(callee: str) -> tuple[bool, str]:
    """(init, einsum equation) of a contraction call of sym-gpu-library-calls:
    __sym_einsum[_init]_<a>_<b>_<out>_<n>, __sym_matmul[_init]_<n>, __sym_batch_matmul[_init]_<n>."""
    if callee.startswith("__sym_einsum_"):
        parts = callee[len("__sym_einsum_"):].split("_")
        init = parts[0] == "init"
        a, b, out = parts[1:4] if init else parts[0:3]
        return init, f"{a},{b}->{out}"
    init = "_init_" in callee
    return init, ("bik,bkj->bij" if callee.startswith("__sym_batch_matmul_") else "ik,kj->ij")


def _convolution(callee: str) -> tuple[bool, str, tuple, tuple, tuple, bool]:
    """(init, layout, strides, padding, dilations, has bias) of a call of sym-gpu-library-convolutions:
    __sym_conv_<init|acc>_<plain|grouped|depthwise>_s<a>x<b>_p<a>x<b>_d<a>x<b>_<b|nb>[_r]_<n>."""
    init, layout, s, p, d, bias = callee[len("__sym_conv_"):].split("_")[:6]

    def dims(t: str) -> tuple:
        return tuple(int(v) for v in t[1:].split("x"))

    return init == "init", layout, dims(s), dims(p), dims(d), bias == "b"


def _is_contraction_operand(o: ir.Operation, operand_number: int) -> bool:
    """Whether the library call `o` reads operand `operand_number` as a memref descriptor: cuBLAS's
    contractions, and attention (the runtime wraps descriptors as tensors)."""
    if o.name != "func.call":
        return False
    callee = ir.FlatSymbolRefAttr(o.attributes["callee"]).value
    return callee.startswith(_ATTENTION) or (operand_number < 3 and callee.startswith(_CONTRACTIONS)) \
        or (operand_number < 4 and callee.startswith(_BIAS_CONTRACTIONS))


_ITEM_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "ui8": 1, "i1": 1}
_VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast", "memref.transpose")


def _descriptor_views(blocks: list) -> set:
    """The views (subview, expand_shape, collapse_shape, cast, transpose) and allocations whose every use is a kernel
    operand, an operand of a contraction (cuBLAS reads descriptors, runtime/cublas.py), a `memref.dim`,
    or another such view: the host program computes their memref
    descriptors with integer arithmetic (Runtime.dsubview / dexpand / dcollapse / dtranspose: 0.4 us) instead of
    making tensor views (as_strided / view: 1.4 to 2.7 us each on the H100 host,
    bench_host_primitives.py), and carves such buffers from one allocation a call (Runtime.Arena)
    instead of a torch.empty each (5-7 us)."""
    ops = [o for b in blocks for o in _host_ops(b)]
    descs: set = set()
    for op in reversed(ops):  # users come after their operands: decided before them
        if op.name == "scf.if" or (op.name == "func.call" and op.results and _is_contraction_operand(op, 0)):
            # an scf.if's results (listed after its branches), an attention call's: like views
            for res in op.results:
                if isinstance(res.type, ir.MemRefType) and _uses_take_descriptors(res, descs):
                    descs.add(_key(res))
            continue
        if op.name == "memref.alloc":
            if HOST_BUFFER_ATTR in op.attributes or _only_scan_accumulator(op.result) or op.operation.regions \
                    or _only_handed_out(op.result):
                continue
        elif op.name not in _VIEWS:
            continue
        if str(ir.MemRefType(op.result.type).element_type) not in _ITEM_BYTES:
            continue
        if _uses_take_descriptors(op.result, descs):
            descs.add(_key(op.result))
    return descs


def _uses_take_descriptors(v: ir.Value, descs: set) -> bool:
    """Whether `v` has uses and each takes a descriptor: a kernel operand, a contraction's or attention's
    operand, a `memref.dim`, a view that is a descriptor, a yield into an scf.if result that is one."""
    uses = list(v.uses)
    for u in uses:
        o = u.owner.operation if hasattr(u.owner, "operation") else u.owner
        if o.name == "gpu.launch_func" or (o.name == "memref.dim" and u.operand_number == 0):
            continue
        if _is_contraction_operand(o, u.operand_number):  # cuBLAS reads descriptors (runtime/cublas.py)
            continue
        if o.name in _VIEWS and u.operand_number == 0 and _key(o.result) in descs:
            continue
        if o.name == "scf.yield" and _key(o.parent.results[u.operand_number]) in descs:
            continue
        return False
    return bool(uses)


def _host_ops(block: ir.Block) -> list[ir.Operation]:
    """The ops of a host block in order, an scf.if after those of its branches."""
    out = []
    for c in block.operations:
        o = c.operation
        if o.name == "scf.if":  # after its branches: its results are used after them
            for region in o.regions:
                for b in region.blocks:
                    out.extend(_host_ops(b))
        out.append(o)
    return out


def _groups(op: ir.Operation) -> list[list[int]]:
    return [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(g)] for g in ir.ArrayAttr(op.attributes["reassociation"])]


def _only_scan_accumulator(v: ir.Value) -> bool:
    """Whether every use of `v` is the accumulator operand (the third) of an inclusive scan call."""
    uses = list(v.uses)
    for u in uses:
        o = u.owner
        o = o.operation if hasattr(o, "operation") else o
        if o.name != "func.call" or u.operand_number != 2:
            return False
        callee = ir.FlatSymbolRefAttr(o.attributes["callee"]).value
        if not callee.startswith("__sym_scan_") or "_inc_" not in callee:
            return False
    return bool(uses)


def _only_handed_out(v: ir.Value) -> bool:
    """Whether `v`'s only uses are the last two operands (the output and the buffer it is) of one
    convolution call that hands PyTorch's result out (sym-gpu-library-convolutions' `_r` calls):
    the runtime allocates it only when that result cannot be the buffer (Runtime.library_conv)."""
    uses = list(v.uses)
    if len(uses) != 2:
        return False
    o = uses[0].owner
    o = o.operation if hasattr(o, "operation") else o
    n = len(o.operands)
    return (o.name == "func.call" and len(o.results) == 1
            and ir.FlatSymbolRefAttr(o.attributes["callee"]).value.startswith("__sym_conv_init_")
            and all(u.owner == uses[0].owner for u in uses)
            and sorted(u.operand_number for u in uses) == [n - 2, n - 1])


def _kept_dims(sizes: list[str], res_shape: list[int], op) -> list[int] | None:
    """For a rank-reducing subview: which source dims the result keeps (None when it keeps all)."""
    if len(res_shape) == len(sizes):
        return None
    keep, j = [], 0
    drop = len(sizes) - len(res_shape)
    for i, s in enumerate(sizes):
        if drop and s == "1" and (j >= len(res_shape) or res_shape[j] != 1 or len(sizes) - i > len(res_shape) - j):
            drop -= 1
            continue
        keep.append(i)
        j += 1
    if len(keep) != len(res_shape):
        raise HostCodegenError(f"cannot tell which dims the rank-reducing subview at {op.location} drops")
    return keep


def _const_literal(op: ir.Operation) -> str:
    attr = op.attributes["value"]
    if isinstance(attr, ir.BoolAttr):
        return "True" if ir.BoolAttr(attr).value else "False"
    if isinstance(attr, ir.IntegerAttr):
        t = str(attr.type)
        v = ir.IntegerAttr(attr).value
        return ("True" if v else "False") if t == "i1" else str(v)
    if isinstance(attr, ir.FloatAttr):
        return _float_literal(ir.FloatAttr(attr).value)
    raise HostCodegenError(f"constant {attr} cannot live on the host (dense constants must be in kernels)")


def _float_literal(v: float) -> str:
    if math.isnan(v):
        return "float('nan')"
    if math.isinf(v):
        return "float('inf')" if v > 0 else "float('-inf')"
    return repr(v)


def _cast_expr(op: ir.Operation, src: str) -> str:
    rt = str(op.result.type)
    if op.name in ("arith.sitofp", "arith.uitofp", "arith.extf", "arith.truncf"):
        return f"float({src})"
    if op.name in ("arith.fptosi", "arith.fptoui"):
        return f"int({src})"
    if op.name == "arith.trunci":
        bits = int(rt[1:]) if rt.startswith("i") else 64
        return f"rt.trunc({src}, {bits})"
    if op.name == "arith.extui":
        src_t = str(op.operands[0].type)
        bits = int(src_t[1:]) if src_t.startswith("i") else 64
        return f"({src} & {(1 << bits) - 1})" if bits > 1 else f"int({src})"
    if op.name == "arith.extsi" and str(op.operands[0].type) == "i1":
        return f"(-1 if {src} else 0)"
    return src


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _uses_any(op: ir.Operation, values: set) -> bool:
    """Whether `op` or an op nested in it has an operand in `values`."""
    if any(v in values for v in op.operands):
        return True
    return any(_uses_any(o.operation, values) for region in op.regions for block in region for o in block.operations)


def _key(v: ir.Value):
    return v  # ir.Value hashes/compares by identity of the underlying MLIR value


def _bkey(b: ir.Block):
    return b
