"""Inside gpu.modules, turn sym-defer-nested-asserts' marker calls back into `cf.assert`.

`sym-defer-nested-asserts` parks each `cf.assert` nested in a region (the index checks of embedding
and gather bodies) as a call to the private marker `@__mlir_sym_nested_assert`, with the message in
`sym.assert_msg`; the call survives bufferization, loop lowering and `gpu-kernel-outlining`, which
copies the marker's declaration into each gpu.module whose kernel calls it. Here, inside gpu.modules
only, each marker call becomes `cf.assert` again, which `convert-gpu-to-nvvm` lowers to a device-side
assertion (`__assertfail`, as CUDA's assert()): a bad index stops the kernel with the check's message
instead of reading out of bounds. The marker declarations copied into the gpu.modules go; calls
outside gpu.modules are left alone. A call without a message asserts "check failed".

Before:
  gpu.module @main_kernel {
    gpu.func @main_kernel(...) kernel {
      func.call @__mlir_sym_nested_assert(%ok) {sym.assert_msg = "index out of range"} : (i1) -> ()
      ...
    }
    func.func private @__mlir_sym_nested_assert(i1)
  }
After:
  gpu.module @main_kernel {
    gpu.func @main_kernel(...) kernel {
      cf.assert %ok, "index out of range"
      ...
    }
  }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import cf

from mlir_sym.passes._compute_common import ops_named
from mlir_sym.passes.defer_nested_asserts import MARKER as _NESTED_ASSERT_MARKER
from mlir_sym.passes.registry import SymPass, register


@register
class GpuDeviceAsserts(SymPass):
    """Turn sym-defer-nested-asserts' marker calls inside gpu.modules back into device-side cf.assert."""

    name = "sym-gpu-device-asserts"

    def run(self, op: ir.Operation) -> None:
        for child in op.regions[0].blocks[0].operations:
            m = child.operation
            if m.name != "gpu.module":
                continue
            calls = [c for c in ops_named(m, {"func.call"})
                     if ir.FlatSymbolRefAttr(c.attributes["callee"]).value == _NESTED_ASSERT_MARKER]
            for c in calls:
                msg = ir.StringAttr(c.attributes["sym.assert_msg"]).value if "sym.assert_msg" in c.attributes else "check failed"
                with ir.InsertionPoint(c), c.location:
                    cf.AssertOp(c.operands[0], msg)
                c.erase()
                self.bump("device-asserts")
            for f in list(m.regions[0].blocks[0].operations):
                f = f.operation
                if f.name == "func.func" and ir.StringAttr(f.attributes["sym_name"]).value == _NESTED_ASSERT_MARKER:
                    f.erase()
