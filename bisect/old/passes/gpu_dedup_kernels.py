"""Launch one kernel for every structurally identical one, and erase the copies.

The layers of a model make the same kernels over and over (GPT-2's 4 layers: 126 launches of 55
distinct kernels). Two gpu.modules of one kernel each (after `sym-gpu-unique-kernel-names`) are
duplicates when their text is the same once the kernel's name is blanked out; the launches of a
duplicate are pointed at the first of its kind and the duplicate is erased, so that the NVVM
conversion, the translation to LLVM IR and PTX see each kernel once. Runs after the passes that edit
kernels per launch site (`sym-gpu-div-by-invariant` and friends) and before the gpu.module lowering.
Modules with several kernels (or none) are left alone.

Before:
  gpu.launch_func @main_kernel::@main_kernel blocks in (%g, %c1, %c1) ... args(%a : memref<?xf32>)
  gpu.launch_func @main_kernel_0::@main_kernel_0 blocks in (%g, %c1, %c1) ... args(%b : memref<?xf32>)
  gpu.module @main_kernel { gpu.func @main_kernel(%arg0: memref<?xf32>) kernel { BODY } }
  gpu.module @main_kernel_0 { gpu.func @main_kernel_0(%arg0: memref<?xf32>) kernel { BODY } }
After:
  gpu.launch_func @main_kernel::@main_kernel blocks in (%g, %c1, %c1) ... args(%a : memref<?xf32>)
  gpu.launch_func @main_kernel::@main_kernel blocks in (%g, %c1, %c1) ... args(%b : memref<?xf32>)
  gpu.module @main_kernel { gpu.func @main_kernel(%arg0: memref<?xf32>) kernel { BODY } }
"""
from __future__ import annotations

import re

from torch_mlir import ir

from mlir_sym.passes._gpu_common import retarget_launches, single_kernel_modules
from mlir_sym.passes.registry import SymPass, register


@register
class GpuDedupKernels(SymPass):
    """Launch the first of each set of structurally identical kernels and erase the others."""

    name = "sym-gpu-dedup-kernels"

    def run(self, op: ir.Operation) -> None:
        first_of: dict[str, str] = {}  # normalized text -> the first module's name
        replace: dict[str, str] = {}  # duplicate module name -> the one to launch instead
        dead: list[ir.Operation] = []
        for m, mname, k in single_kernel_modules(op):
            if ir.StringAttr(k.attributes["sym_name"]).value != mname:
                continue
            shape = re.sub(rf"@{re.escape(mname)}(?![\w$.])", "@__kernel__",
                           m.get_asm(use_local_scope=True, assume_verified=True))
            if shape in first_of:
                replace[mname] = first_of[shape]
                dead.append(m)
            else:
                first_of[shape] = mname
        if not replace:
            return
        n = retarget_launches(op, lambda path: [replace[path[0]]] * 2 if path[0] in replace else None)
        if n:
            self.bump("launches-redirected", n)
        for m in dead:
            m.erase()
            self.bump("kernels-erased")
