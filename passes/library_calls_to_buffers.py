"""Give calls of runtime library functions on tensors buffers before bufferization: the call reads
its operands' buffers in place and returns new buffers, which the runtime allocates.

sym-torch-attention writes training attention (PyTorch's memory-efficient kernels, several results)
as `func.call`s on tensors of private declarations tagged `sym.library_call`. One-shot bufferization
with function boundaries treats a call of a declaration as reading and writing every operand
(copying each one that is read later, or not writable) and its results as buffers to deallocate.
Here each such call (kinds `KINDS`) becomes, on memrefs:

  - each operand `bufferization.to_buffer ... read_only` at a fully dynamic strided layout (a view
    of another buffer as it is: a slice of a projection, a reshape; the runtime reads strides), which
    one-shot bufferization sees as a read of the tensor where the call is;
  - each result a memref of identity layout that the call returns (the runtime's tensor, PyTorch's
    own output when it is contiguous), made a tensor again by `bufferization.to_tensor restrict
    writable` (nothing else aliases it; later ops may write into it in place);
  - the declaration's signature those memref types.

Before:
  %0:2 = func.call @__sym_sdpa_forward_0(%q, %k, %v) {sym.causal = true, sym.scale = 2.5e-01 : f64}
      : (tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?xf32>)
After:
  %qm = bufferization.to_buffer %q read_only : tensor<?x?x4x16xf32> to memref<?x?x4x16xf32, strided<[?, ?, ?, ?], offset: ?>>
  ...
  %r:2 = func.call @__sym_sdpa_forward_0(%qm, %km, %vm) {sym.causal = true, sym.scale = 2.5e-01 : f64}
      : (memref<?x?x4x16xf32, strided<[?, ?, ?, ?], offset: ?>>, ...) -> (memref<?x?x4x16xf32>, memref<?x4x?xf32>)
  %0 = bufferization.to_tensor %r#0 restrict writable : memref<?x?x4x16xf32> to tensor<?x?x4x16xf32>
  %1 = bufferization.to_tensor %r#1 restrict writable : memref<?x4x?xf32> to tensor<?x4x?xf32>
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._compute_common import library_declarations, ops_named
from mlir_sym.passes.registry import SymPass, located_error, register

KINDS = ("sdpa_forward", "sdpa_forward_packed", "sdpa_backward", "sdpa_backward_packed")


def _strided(t: ir.RankedTensorType) -> ir.MemRefType:
    """A memref of `t`'s shape with every stride and the offset dynamic."""
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    layout = ir.StridedLayoutAttr.get(dyn, [dyn] * t.rank)
    return ir.MemRefType.get(t.shape, t.element_type, layout)


def _identity(t: ir.RankedTensorType) -> ir.MemRefType:
    return ir.MemRefType.get(t.shape, t.element_type)


@register
class LibraryCallsToBuffers(SymPass):
    """Calls of runtime library functions on tensors (training attention) as calls on buffers."""

    name = "sym-library-calls-to-buffers"

    def run(self, op: ir.Operation) -> None:
        decls = library_declarations(op, KINDS)
        if not decls:
            return
        converted: set[str] = set()
        for call in ops_named(op, {"func.call"}):
            callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            if callee not in decls:
                continue
            if not all(isinstance(v.type, ir.RankedTensorType) for v in [*call.operands, *call.results]):
                raise located_error(call, f"call of '{callee}': its operands and results must be ranked tensors")
            self._rewrite(call)
            converted.add(callee)
            self.bump("calls")
        for name in converted:
            f = decls[name]
            ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
            ftype = ir.FunctionType.get([_strided(ir.RankedTensorType(t)) for t in ftype.inputs],
                                        [_identity(ir.RankedTensorType(t)) for t in ftype.results])
            f.attributes["function_type"] = ir.TypeAttr.get(ftype)

    @staticmethod
    def _rewrite(call: ir.Operation) -> None:
        unit = ir.UnitAttr.get()
        with ir.InsertionPoint(call), call.location:
            ins = [ir.Operation.create("bufferization.to_buffer", results=[_strided(ir.RankedTensorType(v.type))],
                                       operands=[v], attributes={"read_only": unit}).result
                   for v in call.operands]
            attrs = {name: call.attributes[name] for name in call.attributes}
            new = ir.Operation.create("func.call", results=[_identity(ir.RankedTensorType(r.type)) for r in call.results],
                                      operands=ins, attributes=attrs)
            for r, m in zip(call.results, new.results):
                t = ir.Operation.create("bufferization.to_tensor", results=[r.type], operands=[m],
                                        attributes={"restrict": unit, "writable": unit}).result
                r.replace_all_uses_with(t)
        call.erase()
