// symopt reads stdin when the input is `-` (and when no input is given).
// RUN: symopt - --cse < %s | filecheck %s
// RUN: symopt --cse < %s | filecheck %s
// RUN: not symopt - < %S/Inputs/malformed.mlir 2>&1 | filecheck %s --check-prefix=ERR

// ERR: <stdin>:6:8: error: custom op 'foo' is unknown

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
// CHECK-LABEL: func.func @f() -> index
// CHECK-NEXT:    %[[S:.*]] = "sym.value"() {symbol = "s0"} : () -> index
// CHECK-NEXT:    %[[A:.*]] = "sym.add"(%[[S]], %[[S]]) : (index, index) -> index
// CHECK-NEXT:    return %[[A]] : index
func.func @f() -> index {
  %0 = "sym.value"() {symbol = "s0"} : () -> index
  %1 = "sym.value"() {symbol = "s0"} : () -> index
  %2 = "sym.add"(%0, %1) : (index, index) -> index
  return %2 : index
}
