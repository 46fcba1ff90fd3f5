// --mlir-print-ir-after-all prints the module after each pass to stderr, in command-line order.
// RUN: symopt %s --cse --canonicalize --mlir-print-ir-after-all 2> %t.err | filecheck %s --check-prefix=OUT
// RUN: filecheck %s < %t.err
// RUN: symopt %s --canonicalize --cse --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=REVERSED
// RUN: symopt %s --pass-pipeline='builtin.module(func.func(cse))' --mlir-print-ir-after-all 2>&1 >/dev/null \
// RUN:   | filecheck %s --check-prefix=NESTED

// CHECK:      // -----// IR Dump After CSE
// CHECK-NEXT: module {
// CHECK-NEXT:   func.func @f(%arg0: index) -> index {
// CHECK-NEXT:     %0 = "sym.add"(%arg0, %arg0) : (index, index) -> index
// CHECK-NEXT:     %1 = "sym.mul"(%0, %0) : (index, index) -> index
// CHECK-NEXT:     return %1 : index
// CHECK:      // -----// IR Dump After Canonicalizer
// CHECK-NEXT: module {
// CHECK-NOT:  IR Dump

// REVERSED: IR Dump After Canonicalizer
// REVERSED-NEXT: module {
// REVERSED-COUNT-2: "sym.add"
// REVERSED: IR Dump After CSE
// REVERSED-NEXT: module {
// REVERSED-COUNT-1: "sym.add"
// REVERSED-NOT: "sym.add"

// NESTED: IR Dump After CSE{{.*}}('func.func' operation: @f)
// NESTED-NEXT: module {

// The output still goes to stdout, once.
// OUT-COUNT-1: module {
// OUT-NOT:     IR Dump

func.func @f(%a: index) -> index {
  %0 = "sym.add"(%a, %a) : (index, index) -> index
  %1 = "sym.add"(%a, %a) : (index, index) -> index
  %2 = "sym.mul"(%0, %1) : (index, index) -> index
  return %2 : index
}
