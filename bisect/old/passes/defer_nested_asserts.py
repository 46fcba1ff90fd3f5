"""Park each `cf.assert` nested in a region as a call to a marker, for sym-nested-assert-to-status.

torch-mlir emits per-element index bounds checks (embedding, gather, index_select, indexing with a
tensor) as `cf.assert` inside the body of a `linalg.generic`. Lowered as is, a failing check calls
`abort()` and kills the user's process; and it cannot become an early return of a status code
(sym-assert-to-status) while it sits in a region. This pass replaces each nested assert of a
compute function by a call to the private marker `@__mlir_sym_nested_assert(i1)`, carrying the
message (with the Python source line of the assert's location, when it has one) as `sym.assert_msg`.
The call survives bufferization and the conversion to loops; once the loops are a plain CFG
(after convert-scf-to-cf), sym-nested-assert-to-status turns each call into a branch to a
`return -k` block, so a failing check raises in Python as eager PyTorch does for an out-of-range
index. Asserts directly in a function body are left to sym-assert-to-status; the guard function is
not touched; the marker is declared only when some assert was deferred.

Before (embedding: `torch.nn.Embedding(50, 8)(idx)`):
  %1 = linalg.generic {...} ins(%idx : tensor<?x?xi64>) outs(%0 : tensor<?x?x8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %2 = arith.index_cast %in : i64 to index
    %3 = linalg.index 2 : index
    %4 = arith.cmpi slt, %2, %c50 : index
    cf.assert %4, "index must be smaller than dim size" loc("model.py":18:0)
    %extracted = tensor.extract %weight[%2, %3] : tensor<50x8xf32>
    linalg.yield %extracted : f32
  } -> tensor<?x?x8xf32>
After:
  %1 = linalg.generic {...} ins(%idx : tensor<?x?xi64>) outs(%0 : tensor<?x?x8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %2 = arith.index_cast %in : i64 to index
    %3 = linalg.index 2 : index
    %4 = arith.cmpi slt, %2, %c50 : index
    func.call @__mlir_sym_nested_assert(%4)
        {sym.assert_msg = "index must be smaller than dim size (at model.py:18)"} : (i1) -> ()
    %extracted = tensor.extract %weight[%2, %3] : tensor<50x8xf32>
    linalg.yield %extracted : f32
  } -> tensor<?x?x8xf32>
  ...
  func.func private @__mlir_sym_nested_assert(i1)    (appended to the module)
"""
from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import func as func_d

from mlir_sym.passes._compute_common import compute_funcs
from mlir_sym.passes.registry import SymPass, register

MARKER = "__mlir_sym_nested_assert"  # the marker function's name (sym-gpu-device-asserts turns calls to it back into device asserts)
MSG_ATTR = "sym.assert_msg"  # the message of a deferred check, on its marker call


def _loc_text(loc: ir.Location) -> str:
    text = str(loc)  # loc("file.py":12:0) -> file.py:12
    if text.startswith('loc("') and '":' in text:
        path, rest = text[5:].split('":', 1)
        return f"{path}:{rest.split(':')[0]}"
    return ""


@register
class DeferNestedAsserts(SymPass):
    """Park each cf.assert nested in a region as a call to a marker, for sym-nested-assert-to-status."""

    name = "sym-defer-nested-asserts"

    def run(self, op: ir.Operation) -> None:
        found: list[ir.Operation] = []

        def walk(o: ir.Operation) -> None:
            for region in o.regions:
                for block in region.blocks:
                    for child in block.operations:
                        if child.operation.name == "cf.assert":
                            found.append(child.operation)
                        walk(child.operation)

        for fn in compute_funcs(op):
            for block in fn.regions[0].blocks:
                for child in block.operations:
                    walk(child.operation)  # asserts directly in the body are sym-assert-to-status's
        if not found:
            return
        i1 = ir.IntegerType.get_signless(1)
        with ir.InsertionPoint(op.regions[0].blocks[0]), ir.Location.unknown():
            func_d.FuncOp(MARKER, ir.FunctionType.get([i1], []), visibility="private")
        for a in found:
            msg = ir.StringAttr(a.attributes["msg"]).value
            where = _loc_text(a.location)
            with ir.InsertionPoint(a), a.location:
                call = func_d.CallOp([], ir.FlatSymbolRefAttr.get(MARKER), [a.operands[0]])
            call.operation.attributes[MSG_ATTR] = ir.StringAttr.get(f"{msg} (at {where})" if where else msg)
            a.erase()
            self.bump("asserts-deferred")
