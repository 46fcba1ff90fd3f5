"""Check integer divisions of tensor elements for a zero divisor, as eager PyTorch does, instead of
letting them trap (on tensors or buffers, before sym-defer-nested-asserts).

torch-mlir lowers integer `div(rounding_mode=...)`, `//`, `%`, `fmod` and `remainder` to
`arith.divsi` / `floordivsi` / `remsi` (and the unsigned forms) inside `linalg.generic` bodies. A
zero divisor is undefined behaviour in LLVM: on x86 `idiv` raises SIGFPE and killed the user's
process (eager raises `RuntimeError: ZeroDivisionError`), and so does the one overflowing signed
division, `INT_MIN / -1`. For each such op in a `linalg.generic` body whose divisor is not a constant
other than 0 and -1, the pass adds `cf.assert(divisor != 0, "ZeroDivisionError")` (deferred to a
status code by sym-defer-nested-asserts, so the call raises in Python; a device assert on the GPU)
and divides by 1 instead where the divisor is 0 or, for signed ops, where `INT_MIN / -1` would
overflow (giving INT_MIN and remainder 0: the wrapped results eager's CPU kernels compute).

Before:
  ^bb0(%a: i64, %b: i64, %out: i64):
    %q = arith.divsi %a, %b : i64
After:
  ^bb0(%a: i64, %b: i64, %out: i64):
    %nz = arith.cmpi ne, %b, %c0 : i64
    cf.assert %nz, "ZeroDivisionError"
    %m1 = arith.cmpi eq, %b, %c-1 : i64
    %mn = arith.cmpi eq, %a, %cmin : i64
    %ov = arith.andi %m1, %mn : i1
    %z = arith.xori %nz, %true : i1
    %bad = arith.ori %z, %ov : i1
    %d = arith.select %bad, %c1, %b : i64
    %q = arith.divsi %a, %d : i64
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, cf

from mlir_sym.passes._compute_common import compute_funcs, constant_value, ops_named
from mlir_sym.passes.registry import SymPass, register

_SIGNED = ("arith.divsi", "arith.remsi", "arith.floordivsi", "arith.ceildivsi")
_UNSIGNED = ("arith.divui", "arith.remui", "arith.ceildivui")
MESSAGE = "ZeroDivisionError"


@register
class CheckedIntDivision(SymPass):
    """Assert nonzero divisors of integer divisions in linalg bodies, and never divide by 0 or overflow."""

    name = "sym-checked-int-division"

    def run(self, op: ir.Operation) -> None:
        for fn in compute_funcs(op):
            for o in ops_named(fn.operation, set(_SIGNED + _UNSIGNED)):
                parent = o.parent
                if parent is None or parent.name != "linalg.generic":
                    continue
                t = o.results[0].type
                if not isinstance(t, ir.IntegerType):
                    continue
                d = constant_value(o.operands[1])
                if d is not None and d != 0 and not (d == -1 and o.name in _SIGNED):
                    continue
                self._check(o, ir.IntegerType(t))
                self.bump("divisions-checked")

    @staticmethod
    def _check(o: ir.Operation, t: ir.IntegerType) -> None:
        a, b = o.operands[0], o.operands[1]
        with ir.InsertionPoint(o), o.location:
            c0 = arith.constant(t, 0)
            c1 = arith.constant(t, 1)
            nonzero = arith.cmpi(arith.CmpIPredicate.ne, b, c0)
            cf.assert_(nonzero, MESSAGE)
            i1 = ir.IntegerType.get_signless(1)
            bad = arith.xori(nonzero, arith.constant(i1, 1))
            if o.name in _SIGNED:
                w = t.width
                minus_one = arith.cmpi(arith.CmpIPredicate.eq, b, arith.constant(t, -1))
                smallest = arith.cmpi(arith.CmpIPredicate.eq, a, arith.constant(t, -(1 << (w - 1))))
                bad = arith.ori(bad, arith.andi(minus_one, smallest))
            o.operands[1] = arith.select(bad, c1, b)
