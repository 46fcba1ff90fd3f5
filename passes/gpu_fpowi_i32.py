"""Give `math.fpowi` an i32 exponent, as libdevice's `__nv_powif` / `__nv_powi` take `int`.

torch-mlir produces `math.fpowi` with an i64 exponent; `convert-gpu-to-nvvm` would declare the
libdevice function with that i64 exponent, and the kernel would then read a garbage exponent
(`x ** 2` returns NaN). Every `math.fpowi` of the module with a non-i32 exponent gets it clamped into
the i32 range (exponents beyond it saturate) and truncated.

Before:
  %y = math.fpowi %x, %e : f32, i64
After:
  %lo = arith.constant -2147483648 : i64
  %hi = arith.constant 2147483647 : i64
  %0 = arith.maxsi %e, %lo : i64
  %1 = arith.minsi %0, %hi : i64
  %2 = arith.trunci %1 : i64 to i32
  %y = math.fpowi %x, %2 : f32, i32
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith
from torch_mlir.dialects import math as math_d

from mlir_sym.passes._compute_common import ops_named
from mlir_sym.passes.registry import SymPass, register


@register
class GpuFPowI32(SymPass):
    """Give math.fpowi an i32 exponent (saturated), the `int` that libdevice's __nv_powif / __nv_powi take."""

    name = "sym-gpu-fpowi-i32"

    def run(self, op: ir.Operation) -> None:
        found = [c for c in ops_named(op, {"math.fpowi"}) if str(c.operands[1].type) != "i32"]
        i32 = ir.IntegerType.get_signless(32)
        for c in found:
            with ir.InsertionPoint(c), c.location:
                e = c.operands[1]
                wide = e.type
                lo = arith.ConstantOp(wide, -(2 ** 31)).result
                hi = arith.ConstantOp(wide, 2 ** 31 - 1).result
                clamped = arith.MinSIOp(arith.MaxSIOp(e, lo).result, hi).result
                new = math_d.FPowIOp(c.operands[0], arith.TruncIOp(i32, clamped).result)
            c.results[0].replace_all_uses_with(new.result)
            c.erase()
            self.bump("fpowi-narrowed")
