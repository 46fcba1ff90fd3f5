"""Turn the marker calls of sym-defer-nested-asserts into branches to a `return -k` block.

Runs after convert-scf-to-cf, when the loops that held the deferred checks are plain blocks of the
function body. Each `func.call @__mlir_sym_nested_assert(%ok) {sym.assert_msg = "..."}` splits its
block: on %ok execution continues with the rest of the block, otherwise the function returns `-k`,
where k indexes the message appended to the function's `sym.assert_msgs` (after those
sym-assert-to-status put there), so the runtime raises a Python exception with that message. The
marker declaration is erased. A marker call still inside a region (scf not yet converted) and a
function with deferred checks that does not return an i32 status are rejected with a diagnostic.
(Buffers allocated before a failing check are not freed on that error path.)

Before (the embedding of sym-defer-nested-asserts' example, bufferized and lowered to loops):
  func.func @main(...) -> i32 {
    ...
  ^bb6:  // the innermost loop body
    %6 = memref.load %idx[%0, %2] : memref<?x?xi64>
    %7 = arith.index_cast %6 : i64 to index
    %8 = arith.cmpi slt, %7, %c50 : index
    call @__mlir_sym_nested_assert(%8) {sym.assert_msg = "index must be smaller than dim size (at model.py:18)"} : (i1) -> ()
    %10 = memref.load %weight[%7, %4] : memref<50x8xf32>
    memref.store %10, %out[%0, %2, %4] : memref<?x?x8xf32>
    ...
  }
  func.func private @__mlir_sym_nested_assert(i1)
After:
  func.func @main(...) -> i32 attributes {sym.assert_msgs = ["index must be smaller than dim size (at model.py:18)"]} {
    ...
  ^bb6:
    %6 = memref.load %idx[%0, %2] : memref<?x?xi64>
    %7 = arith.index_cast %6 : i64 to index
    %8 = arith.cmpi slt, %7, %c50 : index
    cf.cond_br %8, ^bb7, ^bb8
  ^bb7:
    %10 = memref.load %weight[%7, %4] : memref<50x8xf32>
    memref.store %10, %out[%0, %2, %4] : memref<?x?x8xf32>
    ...
  ^bb8:
    %c-1_i32 = arith.constant -1 : i32
    return %c-1_i32 : i32
  }
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, cf
from torch_mlir.dialects import func as func_d

from mlir_sym.passes._compute_common import compute_funcs
from mlir_sym.passes.defer_nested_asserts import MARKER, MSG_ATTR
from mlir_sym.passes.registry import SymPass, located_error, register


def _is_marker_call(o: ir.Operation) -> bool:
    return o.name == "func.call" and MSG_ATTR in o.attributes


def _contains_marker_call(o: ir.Operation) -> bool:
    return any(_is_marker_call(c.operation) or _contains_marker_call(c.operation)
               for r in o.regions for b in r.blocks for c in b.operations)


@register
class NestedAssertToStatus(SymPass):
    """Turn the marker calls of sym-defer-nested-asserts into branches to a `return -k` block."""

    name = "sym-nested-assert-to-status"

    def run(self, op: ir.Operation) -> None:
        i32 = ir.IntegerType.get_signless(32)
        for fn in compute_funcs(op):
            calls, nested = [], []
            for b in fn.regions[0].blocks:
                for o in b.operations:
                    if _is_marker_call(o.operation):
                        calls.append(o.operation)
                    elif o.operation.regions:
                        nested.append(o.operation)
            for o in nested:
                if _contains_marker_call(o):
                    raise located_error(o, "a deferred check is still nested in a region (run convert-scf-to-cf first)")
            if not calls:
                continue
            ftype = ir.FunctionType(ir.TypeAttr(fn.operation.attributes["function_type"]).value)
            if list(ftype.results) != [i32]:
                raise located_error(fn.operation, "function must return an i32 status (run sym-results-to-out-params first)")
            attrs = fn.operation.attributes
            msgs = [ir.StringAttr(m).value for m in ir.ArrayAttr(attrs["sym.assert_msgs"])] if "sym.assert_msgs" in attrs else []
            for call in calls:
                block = call.block
                ops = list(block.operations)
                idx = next(i for i, o in enumerate(ops) if o.operation == call)
                msgs.append(ir.StringAttr(call.attributes[MSG_ATTR]).value)
                cont = block.create_after()
                for o in ops[idx + 1:]:
                    cont.append(o.operation)
                fail = cont.create_after()
                with ir.InsertionPoint(fail), call.location:
                    func_d.ReturnOp([arith.ConstantOp(i32, -len(msgs)).result])
                with ir.InsertionPoint(call), call.location:
                    cf.CondBranchOp(call.operands[0], [], [], cont, fail)
                call.erase()
                self.bump("asserts-converted")
            attrs["sym.assert_msgs"] = ir.ArrayAttr.get([ir.StringAttr.get(m) for m in msgs])
        for f in list(op.regions[0].blocks[0].operations):
            if f.operation.name == "func.func" and ir.StringAttr(f.operation.attributes["sym_name"]).value == MARKER:
                f.operation.erase()
