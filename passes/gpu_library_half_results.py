"""Let a library contraction write its half-precision result itself instead of a float32 buffer that a
kernel of its own then rounds.

A bf16 product that nothing fuses with is still computed "in opmath": sym-matmul-half-operands and
sym-gpu-library-calls multiply the bf16 operands into a float32 buffer (cuBLAS accumulates in
float32), and the `arith.truncf` that PyTorch's decomposition put after it is a launch of its own
that reads the float32 buffer and writes the bf16 one. Attention's `probs @ v` in a bf16 GPT-2 or
BERT is such a product: one rounding kernel a layer, and a float32 buffer twice the size of the
result. cuBLAS writes a bf16 / f16 result from its float32 accumulator with the same rounding
(to nearest even, once), so the call can write the half buffer directly.

Runs after sym-gpu-library-calls, on the bufferized compute function. A contraction call that
replaces its output (`@__sym_einsum_init_*`, `@__sym_matmul_init_*`, `@__sym_batch_matmul_init_*`:
C = A*B; an accumulating call adds to float32 values, which a half buffer cannot hold) whose float32
output is a `memref.alloc` that only the call and one later `linalg.generic` in the same block use,
that generic being `truncf` with identity maps into a buffer of the same shape, calls a declaration
with the half output type instead: the generic and the float32 buffer go. The half buffer's
allocation moves before the call when it came after (its sizes must be defined before the call);
the generic is left alone when anything between the call and it touches the half buffer, or when
the half buffer is one of the call's operands. The runtime splits a contraction whose dims do not
collapse into several accumulating GEMMs; into a half buffer it takes torch's path then (one
product, rounded once).

Before:
  %c = memref.alloc(%n) : memref<1x4x?x64xf32>
  call @__sym_einsum_init_abce_abed_abcd_2(%p, %v, %c) : (memref<1x4x?x?xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xf32>) -> ()
  %d = memref.alloc(%n) : memref<1x4x?x64xbf16>
  linalg.generic {identity maps} ins(%c : memref<1x4x?x64xf32>) outs(%d : memref<1x4x?x64xbf16>) { truncf }
After:
  %d = memref.alloc(%n) : memref<1x4x?x64xbf16>
  call @__sym_einsum_init_abce_abed_abcd_3(%p, %v, %d) : (memref<1x4x?x?xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>) -> ()
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import func as func_d

from mlir_sym.passes._compute_common import compute_funcs, defining_op, indexing_maps, ops_named, root_buffer, use_owner
from mlir_sym.passes.registry import SymPass, register

_REPLACING = ("__sym_einsum_init_", "__sym_matmul_init_", "__sym_batch_matmul_init_")
_HALF = ("bf16", "f16")


def _truncation(g: ir.Operation) -> bool:
    """Whether `g` is `linalg.generic` ins(f32 memref) outs(half memref of the same shape), identity
    maps, body `truncf`."""
    if g.name != "linalg.generic" or len(g.operands) != 2 or len(g.results) != 0:
        return False
    src, dst = g.operands[0].type, g.operands[1].type
    if not (isinstance(src, ir.MemRefType) and isinstance(dst, ir.MemRefType)) or src.shape != dst.shape \
            or str(src.element_type) != "f32" or str(dst.element_type) not in _HALF:
        return False
    maps = indexing_maps(g)
    identity = ir.AffineMap.get_identity(len(src.shape))
    if any(m != identity for m in maps):
        return False
    block = g.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    return (len(body) == 2 and body[0].name == "arith.truncf" and body[1].name == "linalg.yield"
            and body[0].operands[0] == block.arguments[0] and body[1].operands[0] == body[0].results[0])


def _position(block_ops: list, op: ir.Operation) -> int:
    return next((i for i, o in enumerate(block_ops) if o == op), -1)


@register
class GpuLibraryHalfResults(SymPass):
    """Let a library contraction write a bf16/f16 result directly instead of a float32 buffer a kernel then rounds."""

    name = "sym-gpu-library-half-results"

    def run(self, op: ir.Operation) -> None:
        module = op
        self._replaced: set[str] = set()
        decls = {f.operation.attributes["sym_name"].value: f.operation
                 for f in module.regions[0].blocks[0].operations if f.operation.name == "func.func"}
        for fn in compute_funcs(module):
            for block in fn.regions[0].blocks:
                ops = [o.operation for o in block.operations]
                for call in [o for o in ops if o.name == "func.call"]:
                    callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
                    if callee.startswith(_REPLACING) and len(call.operands) == 3:
                        self._narrow(module, block, call, callee, decls)
        called = {ir.FlatSymbolRefAttr(o.attributes["callee"]).value for o in ops_named(module, {"func.call"})}
        for name, f in decls.items():  # declarations whose calls all write a half buffer now
            if name in self._replaced and name not in called:
                f.erase()

    def _narrow(self, module: ir.Operation, block: ir.Block, call: ir.Operation, callee: str,
                decls: dict) -> None:
        c = call.operands[2]
        alloc = defining_op(c)
        if alloc is None or alloc.name != "memref.alloc" or str(ir.MemRefType(c.type).element_type) != "f32":
            return
        users = [use_owner(u) for u in c.uses]
        readers = [u for u in users if u != call and u.name != "memref.dealloc"]
        if len(readers) != 1 or not _truncation(readers[0]) or readers[0].operands[0] != c:
            self._narrow_rounding_readers(module, block, call, callee, decls, readers)
            return
        trunc = readers[0]
        ops = [o.operation for o in block.operations]
        at_call, at_trunc = _position(ops, call), _position(ops, trunc)
        if at_call < 0 or at_trunc < at_call:
            self.bump("left-alone")
            return
        d = trunc.operands[1]
        d_root = root_buffer(d)
        if any(root_buffer(v) == d_root for v in call.operands[:2]):
            self.bump("left-alone")
            return
        # nothing between the call and the rounding may read or write the half buffer; the ops that make
        # it (its allocation, views the rounding writes through) move before the call
        makers = []
        v = d
        while True:
            dv = defining_op(v)
            if dv is None:
                break
            makers.append(dv)
            if v == d_root:
                break
            v = dv.operands[0]
        between = ops[at_call + 1:at_trunc]
        movable = [o for o in between if any(o == m for m in makers)]
        for o in between:
            if not any(o == m for m in movable) and any(root_buffer(v) == d_root for v in o.operands):
                self.bump("left-alone")
                return
        for o in movable:
            for v in o.operands:
                dv = defining_op(v)
                if dv is not None and any(dv == b for b in between) and not any(dv == m for m in movable):
                    self.bump("left-alone")
                    return
        for o in movable:
            o.move_before(call)
        types = [v.type for v in call.operands[:2]] + [d.type]
        name = self._declaration(module, callee, types, decls)
        with ir.InsertionPoint(call), call.location:
            func_d.CallOp([], ir.FlatSymbolRefAttr.get(name), [call.operands[0], call.operands[1], d])
        call.erase()
        self._replaced.add(callee)
        trunc.erase()
        for u in [use_owner(u) for u in c.uses]:
            u.erase()  # deallocations of the float32 buffer
        alloc.erase()
        self.bump("half-results")

    def _narrow_rounding_readers(self, module: ir.Operation, block: ir.Block, call: ir.Operation, callee: str,
                                 decls: dict, readers: list) -> None:
        """The float32 product `c` is read only by generics after the call (in its block) that round it
        to one half type before anything else (a bf16 SiLU or GELU of a linear layer, a residual add:
        the rounding PyTorch's decomposition put after the product, fused into its consumer): the call
        writes a new half buffer, the generics read it, their `truncf`s of it go."""
        c = call.operands[2]
        alloc = defining_op(c)
        ops = [o.operation for o in block.operations]
        at_call = _position(ops, call)
        half = None
        plan = []  # (generic, [operand indexes of c])
        for g in readers:
            if g.name != "linalg.generic" or _position(ops, g) <= at_call:
                return
            n_in = ir.DenseI32ArrayAttr(g.attributes["operandSegmentSizes"])[0]
            ks = [k for k, v in enumerate(g.operands) if v == c]
            if not ks or any(k >= n_in for k in ks):
                return  # c written (an output) or not read directly
            args = g.regions[0].blocks[0].arguments
            for k in ks:
                for u in args[k].uses:
                    t = use_owner(u)
                    if t.name != "arith.truncf" or str(t.results[0].type) not in _HALF:
                        return
                    if half is not None and str(t.results[0].type) != str(half):
                        return
                    half = t.results[0].type
            plan.append((g, ks))
        if half is None:
            return
        mt = ir.MemRefType(c.type)
        with ir.InsertionPoint(call), call.location:
            h = ir.Operation.create("memref.alloc", results=[ir.MemRefType.get(mt.shape, half)],
                                    operands=list(alloc.operands),  # sizes and symbols, as the float32 one's
                                    attributes={n: alloc.attributes[n] for n in alloc.attributes}).result
            name = self._declaration(module, callee, [v.type for v in call.operands[:2]] + [h.type], decls)
            func_d.CallOp([], ir.FlatSymbolRefAttr.get(name), [call.operands[0], call.operands[1], h])
        call.erase()
        self._replaced.add(callee)
        for g, ks in plan:
            args = g.regions[0].blocks[0].arguments
            for k in ks:
                g.operands[k] = h
                args[k].set_type(half)
                for t in [use_owner(u) for u in args[k].uses]:
                    t.results[0].replace_all_uses_with(args[k])
                    t.erase()
        for u in [use_owner(u) for u in c.uses]:  # deallocations of the float32 buffer
            u.operands[0] = h
        alloc.erase()
        self.bump("half-results-read-rounded")

    @staticmethod
    def _declaration(module: ir.Operation, callee: str, types: list, decls: dict) -> str:
        """The private declaration of the callee's kind with the given signature, made if missing."""
        old = decls[callee]
        kind = ir.StringAttr(old.attributes["sym.library_call"]).value
        ftype = ir.FunctionType.get(types, [])
        for name, f in decls.items():
            if "sym.library_call" in f.attributes and ir.StringAttr(f.attributes["sym.library_call"]).value == kind \
                    and str(ir.TypeAttr(f.attributes["function_type"]).value) == str(ftype):
                return name
        prefix, n = f"__sym_{kind}_", sum("sym.library_call" in f.attributes for f in decls.values())
        while f"{prefix}{n}" in decls:
            n += 1
        with ir.InsertionPoint(module.regions[0].blocks[0]), old.location:
            f = func_d.FuncOp(f"{prefix}{n}", ftype, visibility="private")
            f.operation.attributes["sym.library_call"] = ir.StringAttr.get(kind)
        decls[f"{prefix}{n}"] = f.operation
        return f"{prefix}{n}"
