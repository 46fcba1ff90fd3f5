// RUN: symopt %s --guards-to-llvm | filecheck %s
// RUN: symopt %s --pass-pipeline='builtin.module(guards-to-llvm)' | filecheck %s
// RUN: symopt --help | filecheck %s --check-prefix=HELP

// HELP: named pipelines
// HELP: --guards-to-llvm {{.*}}guard function

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
// CHECK-LABEL: llvm.func @guards
// CHECK-SAME: -> i32
// CHECK: llvm.icmp "sge"
// CHECK: llvm.return
func.func @guards(%a: index {sym.source = "x.size(0)"}) attributes {sym.guards} {
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  "sym.bind"(%a, %s0) : (index, index) -> ()
  %c2 = "sym.constant"() {value = 2 : i64} : () -> index
  %ge = "sym.cmp"(%s0, %c2) {predicate = "ge"} : (index, index) -> i1
  "sym.guard"(%ge) {origin = "range of s0"} : (i1) -> ()
  return
}
