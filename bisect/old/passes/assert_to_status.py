"""Turn `cf.assert` in a status-returning compute function into an early return of a failure code.

An `cf.assert` lowered for the CPU would call `abort()` and kill the user's process. After
`sym-results-to-out-params` the function returns an i32 status, so a failing check can return
`-(k)` instead, where k indexes the message list stored on the function as `sym.assert_msgs`; the
runtime raises a Python exception with that message. Only asserts directly in the function body
are converted (torch-mlir emits its shape checks there); one nested in a region is rejected with a
diagnostic rather than left to abort.

Before:
  func.func @main(...) -> i32 {
    cf.assert %ok, "mismatching contracting dimension for torch.aten.mm"
    ... rest ...
  }
After:
  func.func @main(...) -> i32 attributes {sym.assert_msgs = ["mismatching contracting dimension ..."]} {
    cf.cond_br %ok, ^bb1, ^bb2
  ^bb1:
    ... rest ...
  ^bb2:
    %c-1_i32 = arith.constant -1 : i32
    return %c-1_i32 : i32
  }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, cf
from torch_mlir.dialects import func as func_d

from mlir_sym.dialects import sym
from mlir_sym.passes.registry import SymPass, located_error, register


@register
class AssertToStatus(SymPass):
    """Replace cf.assert in i32-status functions by an early return of a failure code."""

    name = "sym-assert-to-status"

    def run(self, op: ir.Operation) -> None:
        i32 = ir.IntegerType.get_signless(32)
        for fn in list(op.regions[0].blocks[0].operations):
            if fn.operation.name != "func.func" or sym.GUARD_FN_ATTR in fn.operation.attributes:
                continue
            if len(fn.regions[0].blocks) == 0:
                continue
            ftype = ir.FunctionType(ir.TypeAttr(fn.operation.attributes["function_type"]).value)
            msgs: list[str] = []
            self._check_nested(fn.operation)
            if list(ftype.results) != [i32]:
                if self._has_assert(fn):
                    raise located_error(fn.operation, "function must return an i32 status (run sym-results-to-out-params first)")
                continue
            block = fn.regions[0].blocks[0]
            while True:
                ops = list(block.operations)
                idx = next((i for i, o in enumerate(ops) if o.operation.name == "cf.assert"), None)
                if idx is None:
                    break
                a = ops[idx].operation
                msgs.append(ir.StringAttr(a.attributes["msg"]).value)
                cont = block.create_after()
                for o in ops[idx + 1:]:
                    cont.append(o.operation)
                fail = cont.create_after()
                with ir.InsertionPoint(fail), a.location:
                    code = arith.ConstantOp(i32, -len(msgs)).result
                    func_d.ReturnOp([code])
                with ir.InsertionPoint(a), a.location:
                    cf.CondBranchOp(a.operands[0], [], [], cont, fail)
                a.erase()
                block = cont
                self.bump("asserts-converted")
            if msgs:
                fn.operation.attributes["sym.assert_msgs"] = ir.ArrayAttr.get([ir.StringAttr.get(m) for m in msgs])

    @staticmethod
    def _has_assert(fn) -> bool:
        return any(o.operation.name == "cf.assert" for b in fn.regions[0].blocks for o in b.operations)

    def _check_nested(self, fnop: ir.Operation) -> None:
        for block in fnop.regions[0].blocks:
            for o in block.operations:
                for region in o.operation.regions:
                    for b in region.blocks:
                        for inner in b.operations:
                            if inner.operation.name == "cf.assert":
                                raise located_error(inner.operation, "cf.assert nested inside a region cannot be turned into a status return")
