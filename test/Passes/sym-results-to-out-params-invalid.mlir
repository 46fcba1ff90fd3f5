// RUN: symopt %s --verify-diagnostics --sym-results-to-out-params

// expected-error @+1 {{result type i64 is not a ranked tensor; cannot pass it as an out-param}}
func.func @scalar_result(%a: i64) -> i64 {
  return %a : i64
}
