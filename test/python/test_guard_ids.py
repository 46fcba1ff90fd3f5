"""The id a compiled guard function returns names the right check after the guard passes
erase and reorder checks (the table is recorded by convert-sym-to-arith itself)."""
from torch_mlir import ir

from mlir_sym.context import make_context
from mlir_sym.passes.sym_to_arith import lowered_check_table
from mlir_sym.pipelines import run_named
from mlir_sym.runtime.cpu import JitModule, ScalarCall

IR = """
"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
"sym.symbol"() {sym_name = "s1", lo = 2 : i64} : () -> ()
func.func @guards(%a: index {sym.source = "x.size(0)"}, %b: index {sym.source = "x.size(1)"}) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %s1 = "sym.value"() {symbol = "s1"} : () -> index
  "sym.bind"(%b, %s1) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %c4 = "sym.constant"() {value = 4 : i64} : () -> index
  %m = "sym.mul"(%s0, %s1) : (index, index) -> index
  %big = "sym.cmp"(%m, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%big) {origin = "model.py:9"} : (i1) -> ()
  %ge2 = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%ge2) {origin = "range of s0"} : (i1) -> ()
  %ge4 = "sym.cmp"(%s0, %c4) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%ge4) {origin = "model.py:3"} : (i1) -> ()
  %le = "sym.cmp"(%s1, %c4) {predicate = "le"} : (index, index) -> i1
  "sym.guard"(%le) {origin = "model.py:5"} : (i1) -> ()
  return
}
"""


def test_failing_id_names_the_failing_guard_after_cse_and_schedule():
    ctx = make_context()
    with ctx:
        m = ir.Module.parse(IR)
    run_named("guards-to-llvm", m, ctx)
    table = lowered_check_table(m)
    assert not any(origin == "range of s0" for _, _, origin in table), table  # merged into s0 >= 4
    for op in list(m.body.operations):  # declarations have no LLVM form; capture drops them the same way
        if op.operation.name == "sym.symbol":
            op.operation.erase()
    jit = JitModule(m)  # keep the engine alive while calling into it
    call = ScalarCall(jit, "guards", 2)
    assert call([8, 3]) == 0
    for sizes, origin in (([3, 3], "model.py:3"), ([8, 9], "model.py:5")):
        status = call(sizes)
        assert status > 0 and table[status - 1][2] == origin, (sizes, status, table)
