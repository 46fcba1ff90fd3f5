"""Divide by a float constant as a multiply by its reciprocal, in GPU kernels.

A correctly rounded `div.rn.f32` is a subroutine of a dozen instructions on NVIDIA GPUs; elementwise
kernels such as gelu (`x / sqrt(2)`) become compute-bound on it. PyTorch's own kernels multiply by the
reciprocal (gelu is `x * M_SQRT1_2`), as does Triton with its approximate division. The rewrite
changes a result by at most one ulp, and is exact when the divisor is a power of two. Divisors whose
reciprocal is not a normal number (0, inf, NaN, subnormal reciprocals) are left alone. Only ops
inside `gpu.module`s are rewritten: host and CPU code keep IEEE division.

Before:
  %c = arith.constant 1.41421354 : f32
  %y = arith.divf %x, %c : f32
After:
  %r = arith.constant 0.707106769 : f32
  %y = arith.mulf %x, %r : f32
"""
from __future__ import annotations

import math
import struct

from torch_mlir import ir
from torch_mlir.dialects import arith

from mlir_sym.passes._compute_common import constant_value
from mlir_sym.passes.registry import SymPass, register

_NORMAL_MIN = {"f32": 2.0 ** -126, "f64": 2.0 ** -1022, "f16": 2.0 ** -14, "bf16": 2.0 ** -126}
_MAX = {"f32": 3.4028234663852886e38, "f64": 1.7976931348623157e308, "f16": 65504.0, "bf16": 3.3895313892515355e38}


def _round_to(t: str, x: float) -> float:
    if t == "f32":
        return struct.unpack("<f", struct.pack("<f", x))[0]
    return x


@register
class GpuDivByConstant(SymPass):
    """In gpu.modules: arith.divf by a float constant with a normal reciprocal becomes arith.mulf by it."""

    name = "sym-gpu-div-by-constant"

    def run(self, op: ir.Operation) -> None:
        found: list[ir.Operation] = []

        def walk(o: ir.Operation, in_gpu: bool) -> None:
            for region in o.regions:
                for block in region.blocks:
                    for c in block.operations:
                        c = c.operation
                        if in_gpu and c.name == "arith.divf":
                            found.append(c)
                        walk(c, in_gpu or c.name == "gpu.module")

        walk(op, op.name == "gpu.module")
        for c in found:
            t = str(c.results[0].type)
            d = constant_value(c.operands[1])
            if t not in _NORMAL_MIN or not isinstance(d, float) or d == 0 or not math.isfinite(d):
                continue
            r = _round_to(t, 1.0 / d)
            if not (_NORMAL_MIN[t] <= abs(r) <= _MAX[t]):
                continue
            with ir.InsertionPoint(c), c.location:
                rc = arith.ConstantOp(c.results[0].type, r).result
                attrs = {"fastmath": c.attributes["fastmath"]} if "fastmath" in c.attributes else {}
                new = ir.Operation.create("arith.mulf", results=[c.results[0].type],
                                          operands=[c.operands[0], rc], attributes=attrs)
            c.results[0].replace_all_uses_with(new.results[0])
            c.erase()
            self.bump("divisions-rewritten")
