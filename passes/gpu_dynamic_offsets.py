"""Give the buffers a `gpu.launch` reads from the host a dynamic offset, as the GPU runtime passes them.

The host program (codegen/host.py) hands a kernel each memref as a descriptor whose pointers already
point at the view's first element and whose offset field is 0: a view is a torch tensor (or a
descriptor tuple computed like one) that carries its offset in its data pointer. A kernel whose
argument type has a *static* nonzero offset would add that offset again: `x.split(E, dim=-1)` of a
`[1, L, 3E]` tensor gives subviews `strided<[?, 192, 1], offset: 64>`, whose kernels read 64
elements past the slice (attention at batch 1 read q where k and v were). Each such value used
inside a launch is cast to the same type with `offset: ?` before the launch, and the launch body
reads the cast, so the outlined kernel takes the offset from the descriptor (0 there). Static
strides and sizes are kept: the runtime's strides are the real ones. Values with offset 0 (identity
layouts included) need nothing.

Runs after sym-gpu-map-parallel and gpu-launch-sink-index-computations, before gpu-kernel-outlining.
A view made inside a launch of such a buffer would keep the static offset in its own type; no pass
makes one, and the pass reports it at the view rather than guess. On the host the cast is an alias
(codegen/host.py: a descriptor when only kernels read it).

Before:
  %v = memref.subview %a[0, 64] [%n, 64] [1, 1] : memref<?x192xf32> to memref<?x64xf32, strided<[192, 1], offset: 64>>
  gpu.launch ... { ... memref.load %v[%i, %j] ... }
After:
  %v = memref.subview ...
  %c = memref.cast %v : memref<?x64xf32, strided<[192, 1], offset: 64>> to memref<?x64xf32, strided<[192, 1], offset: ?>>
  gpu.launch ... { ... memref.load %c[%i, %j] ... }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import memref

from mlir_sym.passes._compute_common import MEMREF_VIEW_OPS, walk_ops
from mlir_sym.passes.registry import SymPass, located_error, register

_VIEW_OPS = MEMREF_VIEW_OPS
_DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset()


def _dynamic_offset_type(t: ir.Type) -> ir.Type | None:
    """`t` with `offset: ?` where `t` is a memref with a static nonzero offset; else None."""
    if not isinstance(t, ir.MemRefType):
        return None
    mt = ir.MemRefType(t)
    if not isinstance(mt.layout, ir.StridedLayoutAttr):
        return None  # identity layout: offset 0
    layout = ir.StridedLayoutAttr(mt.layout)
    if layout.offset in (0, _DYNAMIC):
        return None
    return ir.MemRefType.get(mt.shape, mt.element_type, ir.StridedLayoutAttr.get(_DYNAMIC, layout.strides),
                             mt.memory_space)


def _inside(op: ir.Operation, ancestor: ir.Operation) -> bool:
    op = op.operation
    while op is not None:
        if op == ancestor:
            return True
        op = op.parent
    return False


def _defined_inside(v: ir.Value, launch: ir.Operation) -> bool:
    owner = v.owner
    if isinstance(owner, ir.Block):  # a block argument: of the launch or of an op in it
        return _inside(owner.owner, launch)
    return owner.operation != launch and _inside(owner, launch)


def _outside_values(launch: ir.Operation) -> list[ir.Value]:
    """Values used in the launch body and defined outside it, in first-use order."""
    found: list[ir.Value] = []
    for c in walk_ops(launch):
        for v in c.operands:
            if not _defined_inside(v, launch) and v not in found:
                found.append(v)
    return found


@register
class GpuDynamicOffsets(SymPass):
    """Cast memrefs with a static nonzero offset to `offset: ?` where a gpu.launch reads them (the runtime's descriptors carry offsets in their pointers)."""

    name = "sym-gpu-dynamic-offsets"

    def run(self, op: ir.Operation) -> None:
        launches = [o for o in walk_ops(op) if o.name == "gpu.launch"]
        for launch in launches:
            for v in _outside_values(launch):
                new_type = _dynamic_offset_type(v.type)
                if new_type is None:
                    continue
                users = [u.owner.operation if hasattr(u.owner, "operation") else u.owner for u in v.uses]
                for u in users:
                    if _inside(u, launch) and u.name in _VIEW_OPS:
                        # the view's type would keep the static offset (and verification fails on
                        # the cast): nothing makes such IR today, so say so rather than guess
                        raise located_error(u, f"{self.name}: a view ({u.name}) inside a gpu.launch of a buffer "
                                               "with a static offset is not supported")
                with ir.InsertionPoint(launch), launch.location:
                    cast = memref.CastOp(new_type, v).result
                for use in list(v.uses):
                    if _inside(use.owner, launch):
                        use.owner.operands[use.operand_number] = cast
                self.bump("operands-cast")
