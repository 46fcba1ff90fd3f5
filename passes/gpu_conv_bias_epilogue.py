"""Add a convolution's bias in the kernel that reads its result instead of in PyTorch's call.

PyTorch's cuDNN path (`torch.convolution` of a plain, non-depthwise convolution) adds the bias
with a kernel of its own after the convolution: `output.add_(bias)`, a read and a write of the
whole output (at [32, 128, 28, 28] bf16 9.8 µs on the H100, more than the 1x1 convolution's GEMM).
When the only reader of sym-gpu-library-convolutions' result is one elementwise kernel, that kernel
can add the bias itself, as inductor does (its epilogue kernel reads the bias): the call drops its
bias, the generic reads it by the channel its loop maps to.

Runs after sym-gpu-library-convolutions, before sym-gpu-library-half-results. A call
`@__sym_conv_init_plain_..._b[_r]_<n>(%x, %w, %bias, %out[, %out])` whose result (the handed-out
value, or `%out`) is read by exactly one `linalg.generic` later in the block (parallel iterators, the
result one of its inputs, indexed with a plain dim `d_c` at the channel position), with nothing
between them writing the bias, calls the `_nb` kind without the bias; the generic gains the bias as
an input with map `(d_c)` and reads `result + bias` where it read the result:
- float32 (or float64) results: `addf(%r, %b)`, what PyTorch's `add_` computes;
- half inputs with a float32 accumulator (torch-mlir's half convolution): the generic may only
  round the result to the inputs' type (`truncf`, what sym-gpu-library-half-results then folds);
  the rounded value is replaced by `truncf(extf(round(r)) + extf(b))`: PyTorch's bf16 `add_` of its
  bf16 convolution result, rounded once more.
Depthwise convolutions keep their bias (PyTorch's kernel adds it while it writes); grouped ones
(written through a view of [N, G, F/G, ...]) too.

Before:
  %r = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_b_r_0(%x, %w, %bias, %o, %o) : (...) -> memref<?x128x?x?xf32>
  linalg.generic {maps [id, id]} ins(%r) outs(%y) { ^bb0(%a: f32, %_: f32): %m = arith.minimumf %a, %six ... }
After:
  %r = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_1(%x, %w, %o, %o) : (...) -> memref<?x128x?x?xf32>
  linalg.generic {maps [id, (d0, d1, d2, d3) -> (d1), id]} ins(%r, %bias) outs(%y) {
    ^bb0(%a: f32, %b: f32, %_: f32): %s = arith.addf %a, %b ; %m = arith.minimumf %s, %six ... }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith
from torch_mlir.dialects import func as func_d

from mlir_sym.passes._compute_common import (clone_remapped, compute_funcs, erase_uncalled, indexing_maps,
                                             library_declaration, module_functions, new_generic, ops_between,
                                             root_buffer, use_owner)
from mlir_sym.passes.gpu_library_convolutions import _unwritten_between
from mlir_sym.passes.registry import SymPass, register

_PLAIN_BIAS = "__sym_conv_init_plain_"
_HALF = ("bf16", "f16")


def _element(v: ir.Value) -> str:
    return str(ir.MemRefType(v.type).element_type)


@register
class GpuConvBiasEpilogue(SymPass):
    """Move a cuDNN convolution's bias add into the one elementwise kernel that reads its result."""

    name = "sym-gpu-conv-bias-epilogue"

    def run(self, op: ir.Operation) -> None:
        module = op
        decls = module_functions(module)
        moved: set[str] = set()
        for fn in compute_funcs(module):
            for block in fn.regions[0].blocks:
                for call in [o.operation for o in block.operations if o.operation.name == "func.call"]:
                    callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
                    if callee.startswith(_PLAIN_BIAS) and callee in decls and self._move(module, call, callee, decls):
                        moved.add(callee)
        erase_uncalled(module, moved, decls)

    def _move(self, module: ir.Operation, call: ir.Operation, callee: str, decls: dict) -> bool:
        kind = ir.StringAttr(decls[callee].attributes["sym.library_call"]).value
        parts = kind.split("_")  # conv init plain s.. p.. d.. b [r]
        if len(parts) < 7 or parts[6] != "b":
            return False
        handed = len(call.results) == 1
        ops = list(call.operands)
        x, bias = ops[0], ops[2]
        c = call.results[0] if handed else ops[3]
        if ir.MemRefType(bias.type).rank != 1:
            return False
        # the output must be a fresh buffer of the block that nothing but the call, its reader and
        # deallocations touch (not a function result, not read through a view): everything that
        # reads it then gets the bias
        root = ops[-1]
        alloc = root.owner.operation if not isinstance(root.owner, ir.Block) else None
        if alloc is None or alloc.name != "memref.alloc" or alloc.block != call.block \
                or any(use_owner(u) != call and use_owner(u).name != "memref.dealloc"
                       and not (not handed and use_owner(u).name == "linalg.generic") for u in root.uses):
            return False
        readers = [use_owner(u) for u in c.uses]
        readers = [r for r in readers if r != call and r.name != "memref.dealloc"]
        if len(readers) != 1 or readers[0].name != "linalg.generic" or readers[0].block != call.block:
            return False
        g = readers[0]
        if ops_between(call, g) is None or not _unwritten_between(bias, call, g):
            return False
        n_in = ir.DenseI32ArrayAttr(g.attributes["operandSegmentSizes"])[0]
        ks = [k for k, v in enumerate(g.operands) if v == c]
        its = [str(t) for t in ir.ArrayAttr(g.attributes["iterator_types"])]
        if len(ks) != 1 or ks[0] >= n_in or any("parallel" not in t for t in its) \
                or any(root_buffer(v) == root_buffer(c) for v in list(g.operands)[n_in:]):
            return False
        k = ks[0]
        maps = indexing_maps(g)
        channel = maps[k].results[1] if len(maps[k].results) > 1 else None
        if not isinstance(channel, ir.AffineDimExpr):
            self.bump("left-alone")
            return False
        arg = g.regions[0].blocks[0].arguments[k]
        out_t, in_t, bias_t = _element(c), _element(x), _element(bias)
        users = [use_owner(u) for u in arg.uses]
        if out_t in ("f32", "f64") and in_t == out_t and bias_t == out_t:
            half = None
        elif out_t == "f32" and in_t in _HALF and bias_t in (in_t, "f32") and users \
                and all(u.name == "arith.truncf" and str(u.results[0].type) == in_t
                        and u.block == g.regions[0].blocks[0] for u in users):  # not nested in a region
            half = users[0].results[0].type
        else:
            self.bump("left-alone")
            return False
        # the call without the bias
        new_kind = "_".join(parts[:6] + ["nb"] + parts[7:])
        new_ops = ops[:2] + ops[3:]
        results = [r.type for r in call.results]
        name = library_declaration(module, decls[callee], new_kind, [v.type for v in new_ops], results, decls)
        with ir.InsertionPoint(call), call.location:
            new_call = func_d.CallOp(results, ir.FlatSymbolRefAttr.get(name), new_ops).operation
        if handed:
            call.results[0].replace_all_uses_with(new_call.results[0])
            c = new_call.results[0]
        call.erase()
        # the generic reads the bias by its channel and adds it where it read the result
        ins = list(g.operands[:n_in]) + [bias]
        outs = list(g.operands[n_in:])
        bias_map = ir.AffineMap.get(maps[k].n_dims, 0, [channel])
        new_maps = maps[:n_in] + [bias_map] + maps[n_in:]
        fused = new_generic(g, [r.type for r in g.results], ins, outs, new_maps, g.attributes["iterator_types"])
        old = g.regions[0].blocks[0]
        types = [a.type for a in old.arguments[:n_in]] + [ir.MemRefType(bias.type).element_type] + \
                [a.type for a in old.arguments[n_in:]]
        block = fused.regions[0].blocks.append(*types)
        mapping: dict = {a: block.arguments[i] for i, a in enumerate(old.arguments[:n_in])}
        mapping.update({a: block.arguments[n_in + 1 + i] for i, a in enumerate(old.arguments[n_in:])})
        r, b = block.arguments[k], block.arguments[n_in]
        skip: list = []
        with ir.InsertionPoint(block), g.location:
            if half is None:
                mapping[arg] = arith.AddFOp(r, b).result
            else:
                f32 = ir.F32Type.get()
                rounded = arith.TruncFOp(half, r).result
                bb = b if bias_t == "f32" else arith.ExtFOp(f32, b).result
                s = arith.AddFOp(arith.ExtFOp(f32, rounded).result, bb).result
                total = arith.TruncFOp(half, s).result
                for u in users:  # the rounding of the result: the rounded sum now
                    mapping[u.results[0]] = total
                    skip.append(u)
                # the rounding sym-gpu-library-half-results folds reads the argument directly
                mapping[arg] = r
            for o in old.operations:
                if not any(o.operation == u for u in skip):
                    clone_remapped(o.operation, mapping)
        for o_res, n_res in zip(g.results, fused.results):
            o_res.replace_all_uses_with(n_res)
        g.erase()
        self.bump("biases-moved")
        return True
