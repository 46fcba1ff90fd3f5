"""Name each outlined kernel after its gpu.module, so that the kernels of all modules can share one PTX module.

`gpu-kernel-outlining` gives every gpu.module a unique name (`@main_kernel`, `@main_kernel_0`, ...)
but names the kernel inside after the launching function, so every module holds a
`gpu.func @main_kernel`; linked into one PTX module, those entry points would clash. A gpu.module
holding exactly one kernel gets its kernel renamed to the module's name, and the `gpu.launch_func`
ops that launch it are updated. Modules with several kernels (or none) are left alone.

Before:
  gpu.launch_func @main_kernel_0::@main_kernel blocks in (%g, %c1, %c1) threads in (%c256, %c1, %c1) args(...)
  gpu.module @main_kernel_0 {
    gpu.func @main_kernel(...) kernel { ... }
  }
After:
  gpu.launch_func @main_kernel_0::@main_kernel_0 blocks in (%g, %c1, %c1) threads in (%c256, %c1, %c1) args(...)
  gpu.module @main_kernel_0 {
    gpu.func @main_kernel_0(...) kernel { ... }
  }
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.passes._gpu_common import retarget_launches, single_kernel_modules
from mlir_sym.passes.registry import SymPass, register


@register
class GpuUniqueKernelNames(SymPass):
    """Name each outlined kernel after its gpu.module, so that all kernels can share one PTX module."""

    name = "sym-gpu-unique-kernel-names"

    def run(self, op: ir.Operation) -> None:
        renames: dict[tuple[str, str], str] = {}  # (module, old kernel name) -> new kernel name
        for _, mname, k in single_kernel_modules(op):
            old = ir.StringAttr(k.attributes["sym_name"]).value
            if old != mname:
                k.attributes["sym_name"] = ir.StringAttr.get(mname)
                renames[(mname, old)] = mname
        if renames:
            n = retarget_launches(op, lambda path: [path[0], renames[tuple(path)]] if tuple(path) in renames else None)
            if n:
                self.bump("kernels-renamed", n)
