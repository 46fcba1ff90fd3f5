"""Let `linalg.matmul` / `linalg.batch_matmul` on tensors read half-precision operands directly where
they read float32 copies of them.

PyTorch's decompositions of `addmm` / `linear` upcast bfloat16 / float16 operands to float32 (they
compute "in opmath"), so a bf16 `nn.Linear` reaches linalg as `extf` generics of its input and its
(transposed) weight feeding a float32 matmul. sym-gpu-library-calls only sees float32 buffers
then, and elementwise fusion folds the conversions into the contraction: the matmul ran as our own
loop kernel instead of cuBLAS (GPT-2 in bf16 at length 128: 1.33 times inductor's time a call).
A named matmul already converts its inputs to the accumulator's type, so
`matmul(extf(a), extf(b)) -> f32` and `matmul(a, b) -> f32` are the same computation: the pass
drops both conversions when each operand is one `arith.extf` generic (identity maps) of a tensor of
one half type, and the accumulator is float32. The library call then multiplies the half buffers
with a float32 result (cuBLAS accumulates in float32, as the upcast product does).

Before:
  %xa = linalg.generic {identity maps} ins(%x : tensor<?x256xbf16>) outs(%e : tensor<?x256xf32>) { extf }
  %wa = linalg.generic {identity maps} ins(%wt : tensor<256x1000xbf16>) outs(%f : tensor<256x1000xf32>) { extf }
  %y = linalg.matmul ins(%xa, %wa : tensor<?x256xf32>, tensor<256x1000xf32>) outs(%acc : tensor<?x1000xf32>)
After:
  %y = linalg.matmul ins(%x, %wt : tensor<?x256xbf16>, tensor<256x1000xbf16>) outs(%acc : tensor<?x1000xf32>)
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import defining_op, ops_named
from mlir_sym.passes._compute_common import NAMED_CONTRACTION_MAPS
from mlir_sym.passes.registry import SymPass, register

_MATMULS = ("linalg.matmul", "linalg.batch_matmul")
_HALF = ("bf16", "f16")


def _extended(v: ir.Value) -> ir.Value | None:
    """The half tensor `v` is the float32 copy of, when one extf generic with identity maps makes `v`."""
    g = defining_op(v)
    if g is None or g.name != "linalg.generic" or len(g.operands) != 2 or len(g.results) != 1:
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(g.attributes["indexing_maps"])]
    identity = str(ir.AffineMap.get_identity(maps[0].n_dims))
    if not all(str(m) == identity for m in maps):
        return None
    body = [o.operation for o in g.regions[0].blocks[0].operations]
    if len(body) != 2 or body[0].name != "arith.extf" or body[1].name != "linalg.yield":
        return None
    if body[0].operands[0] != g.regions[0].blocks[0].arguments[0] or body[1].operands[0] != body[0].results[0]:
        return None
    src = g.operands[0]
    if not isinstance(src.type, ir.RankedTensorType) or str(src.type.element_type) not in _HALF:
        return None
    return src


@register
class MatmulHalfOperands(SymPass):
    """Let linalg.matmul / batch_matmul read bf16/f16 operands directly instead of their f32 extf copies."""

    name = "sym-matmul-half-operands"

    def run(self, op: ir.Operation) -> None:
        for mm in ops_named(op, _MATMULS):
            if len(mm.results) != 1 or not isinstance(mm.results[0].type, ir.RankedTensorType) \
                    or str(mm.results[0].type.element_type) != "f32":
                continue
            if "indexing_maps" in mm.attributes and [str(ir.AffineMapAttr(m).value) for m in ir.ArrayAttr(
                    mm.attributes["indexing_maps"])] != NAMED_CONTRACTION_MAPS[mm.name]:
                continue  # transposed operands: left as they are
            a, b = _extended(mm.operands[0]), _extended(mm.operands[1])
            if a is None or b is None or str(a.type.element_type) != str(b.type.element_type):
                self.bump("left-alone")
                continue
            from torch_mlir.dialects import linalg

            build = linalg.matmul if mm.name == "linalg.matmul" else linalg.batch_matmul
            with ir.InsertionPoint(mm), mm.location:  # a new op: its region's arguments follow the types
                new = build(a, b, outs=[mm.operands[2]])
            mm.results[0].replace_all_uses_with(new)
            mm.erase()
            self.bump("half-operands")
