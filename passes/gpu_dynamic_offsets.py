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

from mlir_sym.passes._compute_common import MEMREF_VIEW_OPS, use_owner
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


def _launch_of(op: ir.Operation) -> ir.Operation | None:
    """The gpu.launch `op` is nested in (None on the host)."""
    op = op.parent
    while op is not None and op.name not in ("gpu.launch", "func.func", "builtin.module"):
        op = op.parent
    return op if op is not None and op.name == "gpu.launch" else None


def _host_values(op: ir.Operation):
    """Results and block arguments defined on the host (outside gpu.launch bodies), in order."""
    for region in op.regions:
        for block in region.blocks:
            yield from block.arguments
            for child in block.operations:
                c = child.operation
                yield from c.results
                if c.name != "gpu.launch":
                    yield from _host_values(c)


@register
class GpuDynamicOffsets(SymPass):
    """Cast memrefs with a static nonzero offset to `offset: ?` where a gpu.launch reads them (the runtime's descriptors carry offsets in their pointers)."""

    name = "sym-gpu-dynamic-offsets"

    def run(self, op: ir.Operation) -> None:
        # only the host's values of such types (a few views) are looked at, not every operand of
        # every launch (tens of thousands in a model)
        for v in list(_host_values(op)):
            new_type = _dynamic_offset_type(v.type)
            if new_type is None:
                continue
            by_launch: dict = {}
            for use in list(v.uses):
                launch = _launch_of(use_owner(use))
                if launch is not None:
                    by_launch.setdefault(launch, []).append(use)
            for launch, uses in by_launch.items():
                for use in uses:
                    u = use_owner(use)
                    if u.name in _VIEW_OPS:
                        raise located_error(u, f"{self.name}: a view ({u.name}) inside a gpu.launch of a buffer "
                                               "with a static offset is not supported")
                with ir.InsertionPoint(launch), launch.location:
                    cast = memref.CastOp(new_type, v).result
                for use in uses:
                    use.owner.operands[use.operand_number] = cast
                self.bump("operands-cast")
