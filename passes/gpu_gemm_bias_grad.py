"""Compute a linear layer's bias gradient in its weight gradient's GEMM (cuBLASLt's BGRADB epilogue).

A linear layer's backward computes the weight's gradient `dW = dY^T X`, a contraction over the rows
of dY, and the bias's gradient `db = sum of dY over the same rows`: after sym-gpu-library-calls a
cuBLAS call, and a zero fill and a column reduction of dY into a float32 buffer (then, in bf16,
rounded into the gradient). The column reduction is two launches of ours (column partials and their
sum) that read dY again; cuBLASLt's `CUBLASLT_EPILOGUE_BGRADB` sums the GEMM's B operand over the
contracted dim while it multiplies (what Transformer Engine does for its weight gradients). This
pass makes the call `@__sym_einsum_bgrad_<a>_<b>_<out>_<n>(%dy, %x, %dw, %db)`: `dw = einsum(dy,
x)` and `db[i] = sum_k dy[k, i]` (runtime/cuda.py `library_einsum_bgrad`).

Runs after sym-gpu-library-half-results (the weight gradient's call writes its bf16 result by
then). A `linalg.generic` with iterators [reduction, parallel], input `%a` read with the identity
map, output `%r` ([1, N] written as (0, d1) or [N] as (d1)) that a zero `linalg.fill` set, body `out + in` (or `out + extf(in)`), matches a call
`@__sym_einsum_init_<k i>_<k j>_<i j>_*` of the same block whose first operand is `%a`. Then:
- float32 `%a`: the call writes `%r` (the fill and the reduction go); `%r` is a `memref.alloc` of
  the block (it moves before the call), or a view (of an output) whose making moves before the call,
  nothing else touching its buffer between the call and the reduction;
- bf16 / f16 `%a`: `%r`, a `memref.alloc` of the block, must have one reader: a generic rounding it into a buffer `%d` of the same
  shape (identity maps, `truncf`): the call writes `%d`, rounded once from cuBLASLt's float32 sum,
  as the rounding did (the fill, the reduction, the rounding and `%r` go). The ops that make `%d`
  (views of a function argument) move before the call; nothing between may touch `%d`.
Nothing between the call and the reduction may write `%a`; every other reader of `%r` must come
after the call.

Before:
  call @__sym_einsum_init_ca_cb_ab_14(%dy, %x, %dw) : (memref<?x256xbf16>, memref<?x1024xbf16>, memref<256x1024xbf16>) -> ()
  %r = memref.alloc() : memref<1x256xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x256xf32>)
  linalg.generic {maps [(d0, d1) -> (d0, d1), (d0, d1) -> (0, d1)], [reduction, parallel]} ins(%dy) outs(%r) { extf, addf }
  %d = memref.expand_shape %db [[0, 1]] output_shape [1, 256] : memref<256xbf16> into memref<1x256xbf16>
  linalg.generic {identity maps} ins(%r) outs(%d) { truncf }
After:
  %d = memref.expand_shape %db [[0, 1]] output_shape [1, 256] : memref<256xbf16> into memref<1x256xbf16>
  call @__sym_einsum_bgrad_ca_cb_ab_15(%dy, %x, %dw, %d) : (..., memref<1x256xbf16>) -> ()
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import func as func_d

from mlir_sym.passes._compute_common import (compute_funcs, constant_value, defining_op, erase_uncalled,
                                             indexing_maps, library_declaration, module_functions, ops_between,
                                             root_buffer, use_owner, walk_ops)
from mlir_sym.passes.gpu_library_convolutions import _unwritten_between
from mlir_sym.passes.registry import SymPass, register

_HALF = ("bf16", "f16")


def _element(v: ir.Value) -> str:
    return str(ir.MemRefType(v.type).element_type)


def _column_sum(g: ir.Operation) -> bool:
    """Whether `g` is `r[0, i] (or r[i]) += a[k, i]` over a 2-d input, extf'd from a half type or not."""
    if g.name != "linalg.generic" or len(g.operands) != 2 or len(g.results):
        return False
    its = [str(t) for t in ir.ArrayAttr(g.attributes["iterator_types"])]
    if its != ['#linalg.iterator_type<reduction>', '#linalg.iterator_type<parallel>']:
        return False
    a, r = g.operands
    if ir.MemRefType(a.type).rank != 2 or _element(r) != "f32":
        return False
    m_in, m_out = (str(m) for m in indexing_maps(g))
    if m_in != "(d0, d1) -> (d0, d1)" or m_out not in ("(d0, d1) -> (0, d1)", "(d0, d1) -> (d1)"):
        return False
    if m_out.endswith("(0, d1)") and ir.MemRefType(r.type).shape[0] != 1:
        return False  # only row 0 of the sum's buffer is written
    block = g.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    x, acc = block.arguments[0], block.arguments[1]
    if _element(a) in _HALF:
        if len(body) != 3 or body[0].name != "arith.extf" or body[0].operands[0] != x:
            return False
        x = body[0].results[0]
        body = body[1:]
    elif _element(a) != "f32" or len(body) != 2:
        return False
    add, y = body
    return add.name == "arith.addf" and {add.operands[0], add.operands[1]} == {x, acc} and \
        y.name == "linalg.yield" and y.operands[0] == add.results[0]


def _zero_fill(o: ir.Operation, r: ir.Value) -> bool:
    return o.name == "linalg.fill" and o.operands[1] == r and constant_value(o.operands[0]) == 0


def _rounding(g: ir.Operation, r: ir.Value) -> bool:
    """Whether `g` rounds `r` into a half buffer of its shape (identity maps, body `truncf`)."""
    if g.name != "linalg.generic" or len(g.operands) != 2 or len(g.results) or g.operands[0] != r:
        return False
    d = g.operands[1]
    if ir.MemRefType(d.type).shape != ir.MemRefType(r.type).shape or _element(d) not in _HALF:
        return False
    identity = str(ir.AffineMap.get_identity(ir.MemRefType(r.type).rank))
    if any(str(m) != identity for m in indexing_maps(g)):
        return False
    block = g.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    return len(body) == 2 and body[0].name == "arith.truncf" and body[0].operands[0] == block.arguments[0] \
        and "roundingmode" not in body[0].attributes and body[1].operands[0] == body[0].results[0]


def _equation(kind: str) -> tuple[str, str, str] | None:
    """(a, b, out) of `einsum_init_<k i>_<k j>_<i j>` (a weight gradient: the rows k contracted)."""
    if not kind.startswith("einsum_init_"):
        return None
    parts = kind[len("einsum_init_"):].split("_")
    if len(parts) != 3 or any(len(p) != 2 for p in parts):
        return None
    a, b, out = parts
    if a[0] != b[0] or out != a[1] + b[1] or len({a[0], a[1], b[1]}) != 3:
        return None
    return a, b, out


def _position(ops: list, op: ir.Operation) -> int:
    return next((i for i, o in enumerate(ops) if o == op), -1)


@register
class GpuGemmBiasGrad(SymPass):
    """Compute a linear layer's bias gradient in its weight gradient's cuBLASLt GEMM (BGRADB epilogue)."""

    name = "sym-gpu-gemm-bias-grad"

    def run(self, op: ir.Operation) -> None:
        module = op
        decls = module_functions(module)
        replaced: set[str] = set()
        for fn in compute_funcs(module):
            for block in fn.regions[0].blocks:
                folded = True
                while folded:  # a fold erases ops: the block's ops are listed afresh after each
                    folded = False
                    for g in [o.operation for o in block.operations]:
                        callee = self._fold(module, block, g, decls) if _column_sum(g) else None
                        if callee:
                            replaced.add(callee)
                            folded = True
                            break
        erase_uncalled(module, replaced, decls)

    def _fold(self, module: ir.Operation, block: ir.Block, g: ir.Operation, decls: dict) -> str | None:
        a, r = g.operands
        ops = [o.operation for o in block.operations]
        call = None
        for u in a.uses:
            o = use_owner(u)
            if o.name != "func.call" or o.block != block or u.operand_number != 0 or len(o.operands) != 3:
                continue
            decl = decls.get(ir.FlatSymbolRefAttr(o.attributes["callee"]).value)
            if decl is not None and "sym.library_call" in decl.attributes and \
                    _equation(ir.StringAttr(decl.attributes["sym.library_call"]).value) is not None:
                call = o
                break
        if call is None:
            return None
        callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        decl = decls[callee]
        eq = _equation(ir.StringAttr(decl.attributes["sym.library_call"]).value)
        alloc = defining_op(r)
        fresh = alloc is not None and alloc.name == "memref.alloc" and alloc.block == block and not len(alloc.operands)
        at_call, at_g = _position(ops, call), _position(ops, g)
        lo, hi = (call, g) if at_call < at_g else (g, call)
        if not _unwritten_between(a, lo, hi):
            return None
        fill, readers = None, []
        for u in r.uses:
            o = use_owner(u)
            if o == g:
                continue
            if o.name == "memref.dealloc":
                if o.block != block or _position(ops, o) < max(at_call, at_g):
                    return None  # freed before the call would write it
                continue
            if _zero_fill(o, r) and o.block == block and fill is None and _position(ops, o) < at_g:
                fill = o
                continue
            readers.append(o)
        if fill is None:
            return None
        if any(o.block != block or _position(ops, o) < max(at_call, at_g) for o in readers):
            return None  # read before both the call and the reduction are done
        if any(_position(ops, fill) < _position(ops, o) < at_g for o in readers):
            return None
        half = _element(a) in _HALF
        rounding = None
        if half:
            if not fresh or len(readers) != 1 or not _rounding(readers[0], r):
                self.bump("left-alone")
                return None
            rounding = readers[0]
            target = rounding.operands[1]
            if _element(target) != _element(call.operands[2]) or \
                    not self._movable_before(target, call, rounding, block, ops, ()):
                self.bump("left-alone")
                return None
        else:
            target = r
            if _element(target) != _element(call.operands[2]):
                self.bump("left-alone")
                return None
            if fresh:
                alloc.move_before(call)
            elif not self._movable_before(r, call, g, block, ops, (fill, g), first=fill):
                return None  # a view of an output, say: made before the call, untouched in between
        kind = f"einsum_bgrad_{eq[0]}_{eq[1]}_{eq[2]}"
        operands = list(call.operands) + [target]
        name = library_declaration(module, decl, kind, [v.type for v in operands], [], decls)
        with ir.InsertionPoint(call), call.location:
            func_d.CallOp([], ir.FlatSymbolRefAttr.get(name), operands)
        call.erase()
        g.erase()
        fill.erase()
        if rounding is not None:
            rounding.erase()
            for u in [use_owner(u) for u in r.uses]:
                u.erase()  # deallocations
            alloc.erase()
        self.bump("bias-grads-in-epilogue")
        return callee

    @staticmethod
    def _movable_before(d: ir.Value, call: ir.Operation, rounding: ir.Operation, block: ir.Block, ops: list,
                        ignore: tuple, first: ir.Operation | None = None) -> bool:
        """Whether the buffer `d` can be written by `call` instead of by `rounding` (the rounding, or
        the reduction writing `d` itself): the view ops making it (up to a function argument or an
        allocation) are before the call or move there, their operands defined before it; nothing
        else between the call and `rounding` (from `first` when it comes earlier: the zero fill the
        fold erases; but the ops in `ignore`) touches `d`'s buffer. Moves the ops when it can."""
        at_call, at_round = _position(ops, call), _position(ops, rounding)
        makers, v = [], d
        while True:
            dv = defining_op(v)
            if dv is None or dv.block != block or _position(ops, dv) < at_call:
                break
            if dv.name not in ("memref.expand_shape", "memref.collapse_shape", "memref.cast") or \
                    _position(ops, dv) > at_round:
                return False
            makers.append(dv)
            v = dv.operands[0]
        root = root_buffer(d)
        if any(root_buffer(x) == root for x in call.operands):
            return False
        lo, hi = min(at_call, at_round), max(at_call, at_round)
        if first is not None:
            lo = min(lo, _position(ops, first))
        for o in ops[lo + 1:hi]:
            if any(o == m for m in makers) or any(o == x for x in ignore):
                continue
            if any(root_buffer(x) == root for inner in (o, *walk_ops(o)) for x in inner.operands):
                return False
        for m in makers:
            for x in m.operands[1:]:
                dx = defining_op(x)
                if dx is not None and dx.block == block and _position(ops, dx) > at_call:
                    return False
        for m in reversed(makers):
            m.move_before(call)
        return True
