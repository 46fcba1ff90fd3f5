// RUN: symopt %s --split-input-file --sym-assert-to-status | filecheck %s

// CHECK-LABEL: func.func @two_asserts
// CHECK-SAME: sym.assert_msgs = ["first", "second"]
// CHECK: cf.cond_br %arg0, ^[[B1:.*]], ^[[F1:[a-z0-9]+]]
// CHECK: ^[[B1]]:
// CHECK: cf.cond_br %arg1, ^[[B2:.*]], ^[[F2:[a-z0-9]+]]
// CHECK: ^[[B2]]:
// CHECK: arith.constant 0 : i32
// CHECK: ^[[F2]]:
// CHECK: arith.constant -2 : i32
// CHECK: ^[[F1]]:
// CHECK: arith.constant -1 : i32
// CHECK-NOT: cf.assert
func.func @two_asserts(%a: i1, %b: i1) -> i32 {
  cf.assert %a, "first"
  cf.assert %b, "second"
  %z = arith.constant 0 : i32
  return %z : i32
}

// -----

// Without an i32 status there is nowhere to report a failure: only functions with no asserts pass.
// CHECK-LABEL: func.func @no_rewrite_without_asserts
// CHECK: return %arg0 : f32
func.func @no_rewrite_without_asserts(%a: f32) -> f32 {
  return %a : f32
}
