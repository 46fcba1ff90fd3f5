"""Call libm for `math.log1p` and `math.expm1` on the CPU, where MLIR's LLVM lowering loses them.

`convert-math-to-llvm` lowers `math.log1p(x)` as `log(1 + x)` and `math.expm1(x)` as `exp(x) - 1`:
both cancel for small |x| (float32 `log1p(1e-10)` gave 0.0, eager 1e-10; `log1p(1e-3)` was off by 5e-5
relative), and `convert-math-to-libm`, which would call the C library's accurate functions, runs after
it and finds nothing left. This pass, run before them on the CPU path (`TO_LLVM`), replaces each scalar
f32 / f64 `math.log1p` / `math.expm1` by a call of `log1pf` / `log1p` / `expm1f` / `expm1`, declared
`llvm.readnone` as convert-math-to-libm declares them. The GPU path keeps the ops: convert-gpu-to-nvvm
calls libdevice's `__nv_log1pf` / `__nv_expm1f`.

Before:
  %y = math.log1p %x : f32
After:
  func.func private @log1pf(f32) -> f32 attributes {llvm.readnone}
  %y = func.call @log1pf(%x) : (f32) -> f32
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import func

from mlir_sym.passes._compute_common import ops_named
from mlir_sym.passes.registry import SymPass, register

_CALLEES = {("math.log1p", "f32"): "log1pf", ("math.log1p", "f64"): "log1p",
            ("math.expm1", "f32"): "expm1f", ("math.expm1", "f64"): "expm1"}


@register
class MathPreciseLibm(SymPass):
    """Call libm's log1p / expm1 for math.log1p / math.expm1 (the LLVM lowering computes log(1 + x) and exp(x) - 1)."""

    name = "sym-math-precise-libm"

    def run(self, op: ir.Operation) -> None:
        declared: set[str] = set()
        module_body = op.regions[0].blocks[0]
        for o in op.regions[0].blocks[0].operations:
            if o.operation.name == "func.func":
                declared.add(ir.StringAttr(o.operation.attributes["sym_name"]).value)
        for o in ops_named(op, ("math.log1p", "math.expm1")):
            t = o.operands[0].type
            callee = _CALLEES.get((o.name, str(t)))
            if callee is None:
                continue  # vectors, other types: left to the upstream lowering
            if callee not in declared:
                with ir.InsertionPoint.at_block_begin(module_body), op.location:
                    decl = func.FuncOp(callee, ir.FunctionType.get([t], [t]), visibility="private")
                    decl.attributes["llvm.readnone"] = ir.UnitAttr.get()
                declared.add(callee)
            with ir.InsertionPoint(o), o.location:
                call = func.CallOp([t], ir.FlatSymbolRefAttr.get(callee), [o.operands[0]])
            o.results[0].replace_all_uses_with(call.results[0])
            o.erase()
            self.bump("libm-calls")
