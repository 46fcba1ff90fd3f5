"""Rewrite strided `memref.copy` into `linalg.copy`, so the copy becomes loops in generated code.

`finalize-memref-to-llvm` lowers a copy between non-identity layouts (subviews, e.g. from
`aten.cat`/`slice`) into a call to `memrefCopy` from MLIR's C runner-utils library, which the
bundled ExecutionEngine does not ship (and no GPU kernel could call). Copies between contiguous
memrefs are left alone: they lower to `llvm.memcpy`.

Before:
  memref.copy %src, %dst : memref<?xf32, strided<[?], offset: ?>> to memref<?xf32>
After:
  linalg.copy ins(%src : memref<?xf32, strided<[?], offset: ?>>) outs(%dst : memref<?xf32>)
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import linalg

from mlir_sym.passes.registry import SymPass, register


def _strided(t: ir.Type) -> bool:
    if not isinstance(t, ir.MemRefType):
        return False
    layout = ir.MemRefType(t).layout
    return not (isinstance(layout, ir.AffineMapAttr) and ir.AffineMapAttr(layout).value.is_permutation and str(ir.AffineMapAttr(layout).value) == str(ir.AffineMap.get_minor_identity(ir.MemRefType(t).rank, ir.MemRefType(t).rank)))


@register
class MemrefCopyToLinalg(SymPass):
    """Turn memref.copy between strided layouts into linalg.copy (no runtime-library call)."""

    name = "sym-memref-copy-to-linalg"

    def run(self, op: ir.Operation) -> None:
        self._walk(op)

    def _walk(self, op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in list(block.operations):
                    o = child.operation
                    if o.name == "memref.copy" and (_strided(o.operands[0].type) or _strided(o.operands[1].type)):
                        with ir.InsertionPoint(o), o.location:
                            linalg.copy(o.operands[0], outs=[o.operands[1]])
                        o.erase()
                        self.bump("copies-rewritten")
                    else:
                        self._walk(o)
