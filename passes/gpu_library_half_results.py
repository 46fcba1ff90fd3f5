"""Let a library contraction or convolution write its half-precision result itself instead of a
float32 buffer that a kernel of its own then rounds.

A bf16 product that nothing fuses with is still computed "in opmath": sym-matmul-half-operands and
sym-gpu-library-calls multiply the bf16 operands into a float32 buffer (cuBLAS accumulates in
float32), and the `arith.truncf` that PyTorch's decomposition put after it is a launch of its own
that reads the float32 buffer and writes the bf16 one. Attention's `probs @ v` in a bf16 GPT-2 or
BERT is such a product: one rounding kernel a layer, and a float32 buffer twice the size of the
result. cuBLAS writes a bf16 / f16 result from its float32 accumulator with the same rounding
(to nearest even, once), so the call can write the half buffer directly.

Runs after sym-gpu-library-calls, on the bufferized compute function. A contraction call that
replaces its output (`@__sym_einsum_init_*`, `@__sym_matmul_init_*`, `@__sym_batch_matmul_init_*`:
C = A*B; an accumulating call adds to float32 values, which a half buffer cannot hold; also
sym-gpu-gemm-bias-epilogue's `@__sym_einsum_bias_*`: C = A*B + bias) whose float32
output is a `memref.alloc` that only the call and one later `linalg.generic` in the same block use,
that generic being `truncf` with identity maps into a buffer of the same shape, calls a declaration
with the half output type instead: the generic and the float32 buffer go. The half buffer's
allocation moves before the call when it came after (its sizes must be defined before the call);
the generic is left alone when anything between the call and it touches the half buffer, or when
the half buffer is one of the call's operands. The runtime splits a contraction whose dims do not
collapse into several accumulating GEMMs; into a half buffer it takes torch's path then (one
product, rounded once).

When the float32 result is instead read only by generics that round it first (`truncf` of it and
nothing else: the rounding fused into a consumer, a bf16 GELU of a linear layer, a batch norm after a
convolution, the log-softmax of bf16 logits), also through reshapes of it (and of those), the call
writes a new half buffer those generics read.

Convolutions (sym-gpu-library-convolutions' `@__sym_conv_init_*`) are the same: torch-mlir's half
convolution accumulates into float32, the runtime computes it in the half type (as eager: cuDNN
rounds once from its float32 accumulator), so the float32 buffer only held a converted copy. A
convolution that hands PyTorch's result out as its buffer (`(..., %out, %out) -> result`) hands it
out as the half buffer; one whose rounding writes a buffer that is not a fresh allocation of the
block (a function argument, a view) copies into it.

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

from typing import NamedTuple

from torch_mlir import ir
from torch_mlir.dialects import func as func_d

from mlir_sym.passes._compute_common import (MEMREF_VIEW_OPS, ancestor_in, compute_funcs, defining_op,
                                             erase_uncalled, identity_layout, indexing_maps, library_declaration,
                                             module_functions, root_buffer, use_owner)
from mlir_sym.passes.registry import SymPass, register

_REPLACING = ("__sym_einsum_init_", "__sym_matmul_init_", "__sym_batch_matmul_init_")
_BIAS = "__sym_einsum_bias_"  # sym-gpu-gemm-bias-epilogue's (a, b, bias, c)
_CONVOLUTION = "__sym_conv_init_"
_HALF = ("bf16", "f16")
_RESHAPES = ("memref.expand_shape", "memref.collapse_shape")


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


class _Output(NamedTuple):
    """Where a library call puts its float32 result: `c` is what later ops read (the buffer, or the
    call's result when PyTorch's result is handed out as the buffer), `alloc` the buffer's
    `memref.alloc`, `prefix` the call's operands before its output operand(s)."""

    c: ir.Value
    alloc: ir.Operation
    prefix: list
    handed_out: bool


def _output(call: ir.Operation, callee: str) -> _Output | None:
    """The call's float32 output, when it replaces a fresh buffer: a contraction `(a, b, c)`, or a
    convolution `(x, w[, bias], out)` / handed out `(x, w[, bias], out, out) -> result`."""
    ops = list(call.operands)
    if callee.startswith(_REPLACING) and len(ops) == 3 and not len(call.results):
        c, prefix, handed = ops[2], ops[:2], False
    elif callee.startswith(_BIAS) and len(ops) == 4 and not len(call.results):
        c, prefix, handed = ops[3], ops[:3], False  # (a, b, bias, c): cuBLASLt rounds acc + bias once
    elif callee.startswith(_CONVOLUTION) and len(call.results) == 1 and len(ops) >= 4 and ops[-1] == ops[-2]:
        c, prefix, handed = call.results[0], ops[:-2], True  # the buffer itself, not a grouped view of it
    elif callee.startswith(_CONVOLUTION) and not len(call.results) and len(ops) >= 3:
        c, prefix, handed = ops[-1], ops[:-1], False
    else:
        return None
    alloc = defining_op(ops[-1])
    if alloc is None or alloc.name != "memref.alloc" or str(ir.MemRefType(c.type).element_type) != "f32":
        return None
    if handed and any(use_owner(u) != call and use_owner(u).name != "memref.dealloc" for u in ops[-1].uses):
        return None  # the buffer is read elsewhere (a size, a view): only the call's result may stand for it
    return _Output(c, alloc, prefix, handed)


def _fresh_in_block(d: ir.Value, block: ir.Block) -> bool:
    """Whether `d` is a `memref.alloc` of `block` with an identity layout that nothing outside the
    block uses (a call may hand PyTorch's result out as it)."""
    a = defining_op(d)
    t = ir.MemRefType(d.type)
    return a is not None and a.name == "memref.alloc" and a.block == block \
        and identity_layout(t) \
        and all(ancestor_in(use_owner(u), block) is not None and use_owner(u).name not in MEMREF_VIEW_OPS
                for u in d.uses)  # a view of it made before the call would keep reading the old buffer


@register
class GpuLibraryHalfResults(SymPass):
    """Let a library contraction or convolution write a bf16/f16 result directly instead of a float32 buffer a kernel then rounds."""

    name = "sym-gpu-library-half-results"

    def run(self, op: ir.Operation) -> None:
        module = op
        self._replaced: set[str] = set()
        decls = module_functions(module)
        for fn in compute_funcs(module):
            for block in fn.regions[0].blocks:
                ops = [o.operation for o in block.operations]
                for call in [o for o in ops if o.name == "func.call"]:
                    callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
                    out = _output(call, callee)
                    if out is not None:
                        self._narrow(module, block, call, callee, decls, out)
        erase_uncalled(module, self._replaced, decls)  # declarations whose calls all write a half buffer now

    def _narrow(self, module: ir.Operation, block: ir.Block, call: ir.Operation, callee: str,
                decls: dict, out: _Output) -> None:
        c = out.c
        users = [use_owner(u) for u in c.uses]
        readers = [u for u in users if u != call and u.name != "memref.dealloc"]
        if len(readers) != 1 or not _truncation(readers[0]) or readers[0].operands[0] != c:
            self._narrow_rounding_readers(module, block, call, callee, decls, readers, out)
            return
        trunc = readers[0]
        ops = [o.operation for o in block.operations]
        at_call, at_trunc = _position(ops, call), _position(ops, trunc)
        if at_call < 0 or at_trunc < at_call:
            self.bump("left-alone")
            return
        d = trunc.operands[1]
        d_root = root_buffer(d)
        if any(root_buffer(v) == d_root for v in out.prefix):
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
        # a convolution hands PyTorch's result out as a fresh half buffer (what reads it later reads the
        # call's result), else copies into it
        hand_out = callee.startswith(_CONVOLUTION) and _fresh_in_block(d, block)
        later = [u for u in d.uses if hand_out and use_owner(u) != trunc
                 and _position(ops, ancestor_in(use_owner(u), block)) > at_call]
        new = self._call(module, call, callee, decls, out.prefix, d, hand_out)
        for u in later:
            use_owner(u).operands[u.operand_number] = new.results[0]
        trunc.erase()
        call.erase()
        self._drop(out)
        self.bump("half-results")

    def _narrow_rounding_readers(self, module: ir.Operation, block: ir.Block, call: ir.Operation, callee: str,
                                 decls: dict, readers: list, out: _Output) -> None:
        """The float32 result `c` is read only by generics after the call (in its block) that round it
        to one half type before anything else (a bf16 SiLU or GELU of a linear layer, a residual add,
        a batch norm after a convolution, a log-softmax of bf16 logits: the rounding PyTorch's
        decomposition put after the product, fused into its consumer): the call writes a new half buffer, the generics read it, their
        `truncf`s of it go."""
        c, alloc = out.c, out.alloc
        ops = [o.operation for o in block.operations]
        at_call = _position(ops, call)
        half = None
        plan = []  # (generic, the value it reads: c or a reshape of it, [operand indexes of that value])
        views = []  # reshapes of c (and of them) after the call (a grouped conv's [N, G, F/G, ...] view) that generics read

        def reading(r: ir.Operation, v: ir.Value) -> list:
            """(op, the value it reads) for `r` reading `v`, through reshapes of reshapes (a cross
            entropy's [N, 1, V] expansion of the logits' [N, V] collapse)."""
            if r.name in _RESHAPES and r.operands[0] == v and _position(ops, r) > at_call:
                views.append(r)
                return [p for u in r.results[0].uses for p in reading(use_owner(u), r.results[0])]
            return [(r, v)]

        for r in readers:
            for g, v in reading(r, c):
                if g.name != "linalg.generic" or _position(ops, g) <= at_call:
                    return
                n_in = ir.DenseI32ArrayAttr(g.attributes["operandSegmentSizes"])[0]
                ks = [k for k, x in enumerate(g.operands) if x == v]
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
                if not any(p[0] == g and p[1] == v for p in plan):
                    plan.append((g, v, ks))
        if half is None:
            return
        mt = ir.MemRefType(c.type)
        with ir.InsertionPoint(call), call.location:
            h = ir.Operation.create("memref.alloc", results=[ir.MemRefType.get(mt.shape, half)],
                                    operands=list(alloc.operands),  # sizes and symbols, as the float32 one's
                                    attributes={n: alloc.attributes[n] for n in alloc.attributes}).result
        new = self._call(module, call, callee, decls, out.prefix, h, out.handed_out)
        hv = new.results[0] if out.handed_out else h
        for view in views:
            vt = ir.MemRefType(view.results[0].type)
            if view.operands[0] == c:
                view.operands[0] = hv
            view.results[0].set_type(ir.MemRefType.get(vt.shape, half, layout=vt.layout, memory_space=vt.memory_space))
        for g, v, ks in plan:
            args = g.regions[0].blocks[0].arguments
            for k in ks:
                if v == c:
                    g.operands[k] = hv
                args[k].set_type(half)
                for t in [use_owner(u) for u in args[k].uses]:
                    t.results[0].replace_all_uses_with(args[k])
                    t.erase()
        for u in list(c.uses):  # deallocations of the float32 buffer
            if use_owner(u) != call:
                use_owner(u).operands[u.operand_number] = hv
        call.erase()
        self._drop(out)
        self.bump("half-results-read-rounded")

    def _call(self, module: ir.Operation, call: ir.Operation, callee: str, decls: dict, prefix: list,
              h: ir.Value, hand_out: bool) -> ir.Operation:
        """A call of `call`'s kind, before it, writing the half buffer `h` (handing PyTorch's result out
        as `h` when `hand_out`: `(..., h, h) -> result`); the caller erases `call`."""
        kind = ir.StringAttr(decls[callee].attributes["sym.library_call"]).value
        if kind.startswith("conv_"):
            kind = kind.removesuffix("_r") + ("_r" if hand_out else "")
        operands = list(prefix) + ([h, h] if hand_out else [h])
        results = [h.type] if hand_out else []
        name = library_declaration(module, decls[callee], kind, [v.type for v in operands], results, decls)
        with ir.InsertionPoint(call), call.location:
            new = func_d.CallOp(results, ir.FlatSymbolRefAttr.get(name), operands).operation
        self._replaced.add(callee)
        return new

    @staticmethod
    def _drop(out: _Output) -> None:
        """Erase the float32 buffer and its deallocations once the call no longer writes it."""
        for u in [use_owner(u) for u in out.alloc.results[0].uses]:
            u.erase()  # deallocations
        out.alloc.erase()
