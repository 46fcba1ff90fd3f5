"""Drop `sym` facts from compute functions before lowering them (the guard function checks them).

`sym.bind` in a compute function states what the guard function already verified on entry; once the
compute is handed to torch-mlir's lowering (which knows no `sym`), the facts are erased together with
the expressions only they used. Guard functions (`sym.guards`) and module-level `sym.symbol`
declarations are left alone; use `sym-split-guards` style module surgery to separate them first.

Before:
  func.func @main(%x: !torch.vtensor<[?],f32>) -> ... {
    %s0 = "sym.value"() {symbol = "s0"} : () -> index
    "sym.bind"(%x, %s0) {dim = 0 : i64} : (!torch.vtensor<[?],f32>, index) -> ()
    ...
After:
  func.func @main(%x: !torch.vtensor<[?],f32>) -> ... {
    ...
"""
from __future__ import annotations

from torch_mlir import ir

from mlir_sym.dialects import sym
from mlir_sym.passes.registry import SymPass, located_error, register


@register
class StripFacts(SymPass):
    """Erase sym.bind facts and their expressions from compute (non-guard) functions."""

    name = "sym-strip-facts"

    def run(self, op: ir.Operation) -> None:
        for fn in op.regions[0].blocks[0].operations:
            if fn.operation.name != "func.func" or sym.GUARD_FN_ATTR in fn.operation.attributes:
                continue
            for block in fn.regions[0].blocks:
                for child in reversed(list(block.operations)):
                    name = child.operation.name
                    if not name.startswith("sym."):
                        continue
                    if name in ("sym.guard", "sym.assert"):
                        raise located_error(child.operation, f"'{name}' in a compute function; guards and asserts belong in the guard function")
                    o = child.operation
                    if any(True for r in o.results for _ in r.uses):
                        if name == "sym.bind":
                            continue
                        raise located_error(o, f"'{name}' result is used by a non-sym op and cannot be stripped")
                    o.erase()
                    self.bump("facts-erased")
