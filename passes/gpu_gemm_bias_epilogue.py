"""Add a linear layer's bias in its GEMM's epilogue (cuBLASLt) instead of in the kernels that read the product.

PyTorch's `linear` / `addmm` decompositions become a contraction into a float32 buffer and a generic
that adds the bias (and, for bf16 / f16, rounds): sym-gpu-library-calls makes the contraction a
cuBLAS call, and the bias add stays a kernel of its own (or part of the kernel that reads the
product, a residual add and layer norm). In a bf16 model that kernel reads a float32 product twice
the size of the result: a bf16 training step of a 4-layer model had 8 such kernels in its forward.
Eager (and inductor) call cuBLASLt with a bias epilogue instead: the bias added to the float32
accumulator, rounded once. This pass does the same: the call becomes
`@__sym_einsum_bias_<a>_<b>_<out>_<n>(%a, %b, %bias, %c)`, computing `c = einsum(a, b) + bias`
(runtime/cuda.py `library_einsum_bias`: one cuBLASLt GEMM with its bias epilogue), and the readers
read `c` where they read `c + bias`.

Runs after sym-gpu-library-calls, before sym-gpu-library-half-results (which then lets the call
write the rounded bf16 result itself). A call `@__sym_einsum_init_*` / `@__sym_matmul_init_*`
(C = A*B) with no batch letters and one column letter, last in its output (the bias runs along
it), whose output is a `memref.alloc` of the block that only the call, deallocations and
`linalg.generic`s after the call in the block use, as inputs:
- every reader adds the same rank-1 `bias` to the product, `addf(c, b)` (either order) with `b`
  the bias's element (or its `extf`) read with the map `(d...) -> (dj)` where `dj` is the last
  result of the product's map, and uses the product for nothing else;
- float32 / float64 products: the bias has the product's type (the sum is the same addition);
- half operands into float32: the bias has the operands' type, and every use of the sum is a
  `truncf` to that type (the rounding that sym-gpu-library-half-results folds into the call:
  `truncf(acc + extf(b))`, what cuBLASLt computes);
- nothing between the call and the last reader writes the bias; the bias is defined before the call.
A float32 reader left as a plain copy into a buffer of the same type and shape (the bias add was
all it did) is folded: the call writes that buffer, when the buffer is defined before the call and
nothing between them uses it.

Before:
  %c = memref.alloc(%n) : memref<?x768xf32>
  call @__sym_einsum_init_ab_cb_ac_0(%x, %w, %c) : (memref<?x256xbf16>, memref<768x256xbf16>, memref<?x768xf32>) -> ()
  linalg.generic {maps [(d0, d1) -> (d0, d1), (d0, d1) -> (d1), id]} ins(%c, %bias) outs(%y : memref<?x768xbf16>) {
    ^bb0(%p: f32, %b: bf16, %o: bf16): %e = arith.extf %b ; %s = arith.addf %p, %e ; %r = arith.truncf %s ; linalg.yield %r }
After:
  %c = memref.alloc(%n) : memref<?x768xf32>
  call @__sym_einsum_bias_ab_cb_ac_1(%x, %w, %bias, %c) : (..., memref<768xbf16>, memref<?x768xf32>) -> ()
  linalg.generic {maps [(d0, d1) -> (d0, d1), id]} ins(%c) outs(%y : memref<?x768xbf16>) {
    ^bb0(%p: f32, %o: bf16): %r = arith.truncf %p ; linalg.yield %r }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import func as func_d

from mlir_sym.passes._compute_common import (clone_remapped, compute_funcs, defining_op, erase_uncalled,
                                             indexing_maps, library_declaration, module_functions, new_generic,
                                             ops_between, root_buffer, use_owner, walk_ops)
from mlir_sym.passes.gpu_library_convolutions import _unwritten_between
from mlir_sym.passes.registry import SymPass, register

_HALF = ("bf16", "f16")
_FLOATS = ("f32", "f64")


def _element(v: ir.Value) -> str:
    return str(ir.MemRefType(v.type).element_type)


def _equation(kind: str) -> tuple[str, str, str] | None:
    """(a, b, out) letters of a replacing contraction kind whose output's last letter is its only
    column letter and that has no batch letters; else None."""
    if kind == "matmul_init":
        a, b, out = "ik", "kj", "ij"
    elif kind.startswith("einsum_init_"):
        parts = kind[len("einsum_init_"):].split("_")
        if len(parts) != 3:
            return None
        a, b, out = parts
    else:
        return None
    batch = [x for x in out if x in a and x in b]
    columns = [x for x in out if x in b and x not in a]
    if batch or columns != [out[-1]] or len(set(out)) != len(out):
        return None
    return a, b, out


class _Reader:
    """A generic reading the product: per input that is the product (sibling fusion may read it
    twice), its index `k`, the bias input's index `kb` and the sum `addf`."""

    def __init__(self, g: ir.Operation, reads: list[tuple[int, int, ir.Operation]]) -> None:
        self.g, self.reads = g, reads


def _bias_read(g: ir.Operation, k: int, n_in: int) -> tuple[int, ir.Operation] | None:
    """(bias operand index, the addf) when the only use of generic `g`'s input `k` (the product) in
    its body is `addf` with an element of a rank-1 input indexed by the product's last dim (or its
    extf)."""
    block = g.regions[0].blocks[0]
    arg = block.arguments[k]
    uses = [use_owner(u) for u in arg.uses]
    if len(uses) != 1 or uses[0].name != "arith.addf" or uses[0].block != block:
        return None
    add = uses[0]
    other = add.operands[1] if add.operands[0] == arg else add.operands[0]
    if other == arg:
        return None
    src = defining_op(other)
    if src is not None and src.name == "arith.extf" and src.block == block:
        other = src.operands[0]
    if defining_op(other) is not None or other.owner != block:
        return None
    kb = other.arg_number
    if kb >= n_in or kb == k or root_buffer(g.operands[kb]) == root_buffer(g.operands[k]):
        return None  # the product read as its own bias
    maps = indexing_maps(g)
    last = maps[k].results[-1] if len(maps[k].results) else None
    bias = g.operands[kb]
    if not isinstance(last, ir.AffineDimExpr) or ir.MemRefType(bias.type).rank != 1:
        return None
    if len(maps[kb].results) != 1 or str(maps[kb].results[0]) != str(last):
        return None
    return kb, add


@register
class GpuGemmBiasEpilogue(SymPass):
    """Add a linear layer's bias in its cuBLASLt GEMM's epilogue instead of in the kernels that read the product."""

    name = "sym-gpu-gemm-bias-epilogue"

    def run(self, op: ir.Operation) -> None:
        module = op
        decls = module_functions(module)
        replaced: set[str] = set()
        for fn in compute_funcs(module):
            for block in fn.regions[0].blocks:
                for call in [o.operation for o in block.operations if o.operation.name == "func.call"]:
                    callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
                    decl = decls.get(callee)
                    if decl is None or "sym.library_call" not in decl.attributes:
                        continue
                    eq = _equation(ir.StringAttr(decl.attributes["sym.library_call"]).value)
                    if eq is not None and self._fold(module, block, call, decl, eq, decls):
                        replaced.add(callee)
        erase_uncalled(module, replaced, decls)

    def _fold(self, module: ir.Operation, block: ir.Block, call: ir.Operation, decl: ir.Operation,
              eq: tuple, decls: dict) -> bool:
        ops = list(call.operands)
        if len(ops) != 3 or len(call.results):
            return False
        a, b, c = ops
        alloc = defining_op(c)
        if alloc is None or alloc.name != "memref.alloc" or alloc.block != block:
            return False
        out_t, in_t = _element(c), _element(a)
        if out_t not in _FLOATS or not (in_t == out_t or (in_t in _HALF and out_t == "f32")):
            return False
        readers: list[_Reader] = []
        for u in c.uses:
            o = use_owner(u)
            if o == call or o.name == "memref.dealloc":
                continue
            if o.name != "linalg.generic" or o.block != block or ops_between(call, o) is None:
                return False
            if any(r.g == o for r in readers):
                continue  # read at several positions: all seen at its first use
            n_in = ir.DenseI32ArrayAttr(o.attributes["operandSegmentSizes"])[0]
            ks = [k for k, v in enumerate(o.operands) if v == c]
            if any(k >= n_in for k in ks):
                return False
            reads = [(k, *found) for k in ks if (found := _bias_read(o, k, n_in)) is not None]
            if len(reads) != len(ks):
                self.bump("left-alone")
                return False
            readers.append(_Reader(o, reads))
        if not readers:
            return False
        bias = readers[0].g.operands[readers[0].reads[0][1]]
        if any(r.g.operands[kb] != bias for r in readers for _, kb, _ in r.reads):
            return False
        bias_t = _element(bias)
        half = in_t if in_t != out_t else None
        if bias_t != (half or out_t):
            self.bump("left-alone")
            return False
        if half is not None and not all(
                use_owner(u).name == "arith.truncf" and str(use_owner(u).results[0].type) == half
                and "roundingmode" not in use_owner(u).attributes  # to nearest, as cuBLASLt rounds
                for r in readers for _, _, add in r.reads for u in add.results[0].uses):
            self.bump("left-alone")  # the sum is used unrounded: cuBLASLt would round it to bf16
            return False
        bias_def = defining_op(bias)
        if bias_def is not None and bias_def.block == block and ops_between(bias_def, call) is None:
            return False  # defined after the call
        if not all(_unwritten_between(bias, call, r.g) for r in readers):  # uses are in no particular order
            return False
        # the call with the bias
        kind = f"einsum_bias_{eq[0]}_{eq[1]}_{eq[2]}"
        operands = [a, b, bias, c]
        name = library_declaration(module, decl, kind, [v.type for v in operands], [], decls)
        with ir.InsertionPoint(call), call.location:
            new_call = func_d.CallOp([], ir.FlatSymbolRefAttr.get(name), operands).operation
        call.erase()
        for r in readers:
            g = self._without_bias(r)
            self._fold_copy(block, new_call, g, c, alloc)
        self.bump("biases-in-epilogue")
        return True

    @staticmethod
    def _without_bias(r: _Reader) -> ir.Operation:
        """Replace the reader's `product + bias` by the product; drop the bias inputs that nothing
        else in the body reads. The (new) generic."""
        g = r.g
        block = g.regions[0].blocks[0]
        for k, _, add in r.reads:
            arg = block.arguments[k]
            other = add.operands[1] if add.operands[0] == arg else add.operands[0]
            add.results[0].replace_all_uses_with(arg)
            add.erase()
            ext = defining_op(other)
            if ext is not None and ext.name == "arith.extf" and not list(ext.results[0].uses):
                ext.erase()
        unused = {kb for _, kb, _ in r.reads if not list(block.arguments[kb].uses)}
        if not unused:
            return g
        n_in = ir.DenseI32ArrayAttr(g.attributes["operandSegmentSizes"])[0]
        keep = [i for i in range(len(g.operands)) if i not in unused]
        maps = indexing_maps(g)
        ins = [g.operands[i] for i in keep if i < n_in]
        outs = [g.operands[i] for i in keep if i >= n_in]
        new = new_generic(g, [x.type for x in g.results], ins, outs, [maps[i] for i in keep],
                          g.attributes["iterator_types"])
        body = new.regions[0].blocks.append(*[block.arguments[i].type for i in keep])
        mapping = {block.arguments[i]: body.arguments[j] for j, i in enumerate(keep)}
        with ir.InsertionPoint(body):
            for o in block.operations:
                clone_remapped(o.operation, mapping)
        for old, res in zip(g.results, new.results):
            old.replace_all_uses_with(res)
        g.erase()
        return new

    def _fold_copy(self, block: ir.Block, call: ir.Operation, g: ir.Operation, c: ir.Value,
                   alloc: ir.Operation) -> None:
        """When the reader `g` is now a copy of the product into a buffer `d` of its type and shape
        (identity maps, body `yield %in`) and `d` is defined before the call, nothing between the
        call and `g` touches `d`, and the product's buffer has no other reader: the call writes `d`."""
        if len(g.operands) != 2 or len(g.results) or g.operands[0] != c:
            return
        d = g.operands[1]
        if d.type != c.type:
            return
        maps = indexing_maps(g)
        identity = ir.AffineMap.get_identity(ir.MemRefType(c.type).rank)
        if any(m != identity for m in maps):
            return
        body = [o.operation for o in g.regions[0].blocks[0].operations]
        args = g.regions[0].blocks[0].arguments
        if len(body) != 1 or body[0].name != "linalg.yield" or body[0].operands[0] != args[0]:
            return
        if any(use_owner(u) not in (call, g) and use_owner(u).name != "memref.dealloc" for u in c.uses):
            return
        d_def = defining_op(d)
        if d_def is not None and d_def.block == block and ops_between(d_def, call) is None:
            return
        between = ops_between(call, g)
        d_root = root_buffer(d)
        if between is None or any(root_buffer(v) == d_root for o in between for v in _all_operands(o)):
            return
        if any(root_buffer(v) == d_root for v in list(call.operands)[:3]):
            return
        call.operands[3] = d
        g.erase()
        for u in [use_owner(u) for u in c.uses]:
            u.erase()  # deallocations
        alloc.erase()
        self.bump("copies-folded")


def _all_operands(o: ir.Operation) -> list:
    """The operands of `o` and of the ops nested in it."""
    return [v for x in (o, *walk_ops(o)) for v in x.operands]
