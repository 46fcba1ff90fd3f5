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
(and `%s = math.sqrt %c2 : bf16; %y = arith.divf %x, %s : bf16` becomes a multiply by 0.70703125.)
"""
from __future__ import annotations

import math
import struct

from torch_mlir import ir
from torch_mlir.dialects import arith

from mlir_sym.passes._compute_common import constant_value, defining_op, enclosing, ops_named
from mlir_sym.passes.registry import SymPass, register

_NORMAL_MIN = {"f32": 2.0 ** -126, "f64": 2.0 ** -1022, "f16": 2.0 ** -14, "bf16": 2.0 ** -126}
_MAX = {"f32": 3.4028234663852886e38, "f64": 1.7976931348623157e308, "f16": 65504.0, "bf16": 3.3895313892515355e38}


def _round_to(t: str, x: float) -> float:
    """`x` rounded to the nearest value of float type `t` (ties to even)."""
    if not math.isfinite(x) or t == "f64":
        return x
    if t == "f16":
        try:
            return struct.unpack("<e", struct.pack("<e", x))[0]
        except OverflowError:
            return math.copysign(math.inf, x)
    try:
        f = struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)
    if t == "bf16":
        (b,) = struct.unpack("<I", struct.pack("<f", f))
        b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
        return struct.unpack("<f", struct.pack("<I", b & 0xFFFFFFFF))[0]
    return f


_UNARY = {"math.sqrt": lambda a: math.sqrt(a) if a >= 0 else math.nan, "arith.negf": lambda a: -a,
          "arith.extf": lambda a: a, "arith.truncf": lambda a: a}
_BINARY = {"arith.mulf": lambda a, b: a * b, "arith.addf": lambda a, b: a + b, "arith.subf": lambda a, b: a - b,
           "arith.divf": lambda a, b: a / b if b else math.nan}


def float_value(v: ir.Value, depth: int = 0) -> float | None:
    """The value of a float scalar computed from constants only (constants, sqrt, negation, casts,
    + - * /), each step rounded to its result type; None when `v` is not such a value."""
    c = constant_value(v)
    if isinstance(c, float) or depth > 8:
        return c if isinstance(c, float) else None
    op = defining_op(v)
    if op is None or len(op.results) != 1:
        return None
    t = str(op.results[0].type)
    if op.name in _UNARY and len(op.operands) == 1:
        a = float_value(op.operands[0], depth + 1)
        return None if a is None else _round_to(t, _UNARY[op.name](a))
    if op.name in _BINARY and len(op.operands) == 2:
        a, b = float_value(op.operands[0], depth + 1), float_value(op.operands[1], depth + 1)
        return None if a is None or b is None else _round_to(t, _BINARY[op.name](a, b))
    return None


@register
class GpuDivByConstant(SymPass):
    """In gpu.modules: arith.divf by a float constant with a normal reciprocal becomes arith.mulf by it."""

    name = "sym-gpu-div-by-constant"

    def run(self, op: ir.Operation) -> None:
        found = [c for c in ops_named(op, {"arith.divf"})
                 if op.name == "gpu.module" or enclosing(c, ("gpu.module",))]
        for c in found:
            t = str(c.results[0].type)
            d = float_value(c.operands[1])
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
