// RUN: not symopt %s --sym-strip-facts 2>&1 | filecheck %s

// A sym value used by a compute op cannot be dropped: say so at its location.
"sym.symbol"() {sym_name = "s0", lo = 2 : i64} : () -> ()
func.func @no_strip_when_result_escapes() -> index {
  // CHECK: sym-strip-facts-invalid.mlir:[[# @LINE + 1]]:9: error: {{.*}}'sym.value' result is used by a non-sym op and cannot be stripped
  %s0 = "sym.value"() {symbol = "s0"} : () -> index
  return %s0 : index
}
