// --pass-pipeline takes MLIR's textual pipeline; pass flags build the same thing.
// RUN: symopt %s --pass-pipeline='builtin.module(func.func(cse),canonicalize)' | filecheck %s
// RUN: symopt %s --pass-pipeline='func.func(cse), canonicalize' | filecheck %s
// RUN: symopt %s --cse --canonicalize | filecheck %s
// An upstream pass restricted to func.func is nested under func.func when given as a flag.
// RUN: symopt %s --affine-loop-invariant-code-motion --cse | filecheck %s --check-prefix=NESTED
// The two ways cannot be mixed; a bad pipeline or pass option is a usage error.
// RUN: not symopt %s --cse --pass-pipeline='builtin.module(cse)' 2>&1 | filecheck %s --check-prefix=MIX
// RUN: not symopt %s --pass-pipeline='builtin.module(cse' 2>&1 | filecheck %s --check-prefix=UNBALANCED
// RUN: not symopt %s --canonicalize='no-such-option=1' 2>&1 | filecheck %s --check-prefix=BADOPT

// MIX: symopt: error: --pass-pipeline cannot be combined with individual pass flags
// UNBALANCED: symopt: error: unbalanced pipeline
// BADOPT: symopt: error: {{.*}}no such option no-such-option

"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()

// CHECK-LABEL: func.func @f() -> index
// CHECK-NEXT:    %[[S:.*]] = "sym.value"() {symbol = "s0"} : () -> index
// CHECK-NEXT:    %[[M:.*]] = "sym.mul"(%[[S]], %[[S]]) : (index, index) -> index
// CHECK-NEXT:    return %[[M]] : index
// NESTED-LABEL: func.func @f() -> index
// NESTED-COUNT-1: "sym.value"
// NESTED-NOT:     "sym.value"
// NESTED:         "sym.mul"
func.func @f() -> index {
  %0 = "sym.value"() {symbol = "s0"} : () -> index
  %1 = "sym.value"() {symbol = "s0"} : () -> index
  %2 = "sym.mul"(%0, %1) : (index, index) -> index
  %3 = "sym.add"(%0, %1) : (index, index) -> index
  return %2 : index
}
