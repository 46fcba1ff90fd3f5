// RUN: symopt %s --split-input-file --verify-diagnostics --sym-nested-assert-to-status

func.func @still_in_a_loop(%a: i1, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{a deferred check is still nested in a region (run convert-scf-to-cf first)}}
  scf.for %i = %c0 to %n step %c1 {
    func.call @__mlir_sym_nested_assert(%a) {sym.assert_msg = "inside a loop"} : (i1) -> ()
  }
  %z = arith.constant 0 : i32
  return %z : i32
}
func.func private @__mlir_sym_nested_assert(i1)

// -----

// expected-error @+1 {{function must return an i32 status (run sym-results-to-out-params first)}}
func.func @needs_status(%a: i1) -> f32 {
  func.call @__mlir_sym_nested_assert(%a) {sym.assert_msg = "boom"} : (i1) -> ()
  %z = arith.constant 0.0 : f32
  return %z : f32
}
func.func private @__mlir_sym_nested_assert(i1)
