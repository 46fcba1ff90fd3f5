// RUN: symopt %s --split-input-file --verify-diagnostics --sym-assert-to-status

// expected-error @+1 {{function must return an i32 status (run sym-results-to-out-params first)}}
func.func @needs_status(%a: i1) -> f32 {
  cf.assert %a, "boom"
  %z = arith.constant 0.0 : f32
  return %z : f32
}

// -----

func.func @nested(%a: i1, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{cf.assert nested inside a region cannot be turned into a status return}}
    cf.assert %a, "inside a loop"
  }
  %z = arith.constant 0 : i32
  return %z : i32
}
