// RUN: symopt %s --split-input-file --sym-defer-nested-asserts | filecheck %s

#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// torch-mlir's embedding (`nn.Embedding(50, 8)(idx)`): the bounds checks sit in the linalg.generic
// body. Each becomes a marker call carrying its message and Python source line; the marker is
// declared once, at the end of the module.
// CHECK-LABEL: func.func @embedding_bounds_checks
// CHECK: linalg.generic
// CHECK: %[[LT:.*]] = arith.cmpi slt
// CHECK-NEXT: func.call @__mlir_sym_nested_assert(%[[LT]]) {sym.assert_msg = "index must be smaller than dim size (at model.py:18)"} : (i1) -> ()
// CHECK-NEXT: %[[GE:.*]] = arith.cmpi sge
// CHECK-NEXT: func.call @__mlir_sym_nested_assert(%[[GE]]) {sym.assert_msg = "index must be larger or equal to 0"} : (i1) -> ()
// CHECK-NOT: cf.assert
// CHECK: func.func private @__mlir_sym_nested_assert(i1)
// CHECK-NOT: @__mlir_sym_nested_assert(i1)
func.func @embedding_bounds_checks(%w: tensor<50x8xf32>, %idx: tensor<?x?xi64>, %out: memref<?x?x8xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c50 = arith.constant 50 : index
  %c0_i64 = arith.constant 0 : i64
  %d0 = tensor.dim %idx, %c0 : tensor<?x?xi64>
  %d1 = tensor.dim %idx, %c1 : tensor<?x?xi64>
  %e = tensor.empty(%d0, %d1) : tensor<?x?x8xf32>
  %r = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%idx : tensor<?x?xi64>) outs(%e : tensor<?x?x8xf32>) {
  ^bb0(%in: i64, %o: f32):
    %i = arith.index_cast %in : i64 to index
    %j = linalg.index 2 : index
    %lt = arith.cmpi slt, %i, %c50 : index
    cf.assert %lt, "index must be smaller than dim size" loc("model.py":18:0)
    %ge = arith.cmpi sge, %in, %c0_i64 : i64
    cf.assert %ge, "index must be larger or equal to 0" loc(unknown)
    %v = tensor.extract %w[%i, %j] : tensor<50x8xf32>
    linalg.yield %v : f32
  } -> tensor<?x?x8xf32>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<?x?x8xf32>, memref<?x?x8xf32>) -> ()
  %z = arith.constant 0 : i32
  return %z : i32
}

// -----

// Any depth of nesting, in every compute function; one marker declaration for the module.
// CHECK-LABEL: func.func @in_loops
// CHECK: scf.for
// CHECK: scf.if
// CHECK-NEXT: func.call @__mlir_sym_nested_assert(%arg0) {sym.assert_msg = "deep (at a.py:3)"}
// CHECK-LABEL: func.func @in_another_function
// CHECK: scf.for
// CHECK-NEXT: func.call @__mlir_sym_nested_assert(%arg0) {sym.assert_msg = "other (at b.py:4)"}
// CHECK: func.func private @__mlir_sym_nested_assert(i1)
// CHECK-NOT: @__mlir_sym_nested_assert(i1)
func.func @in_loops(%a: i1, %b: i1, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.if %b {
      cf.assert %a, "deep" loc("a.py":3:7)
    }
  }
  %z = arith.constant 0 : i32
  return %z : i32
}
func.func @in_another_function(%a: i1, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    cf.assert %a, "other" loc("b.py":4:0)
  }
  %z = arith.constant 0 : i32
  return %z : i32
}

// -----

// An assert directly in the function body is sym-assert-to-status's: left, and no marker declared.
// CHECK-LABEL: func.func @no_rewrite_when_assert_is_in_the_body
// CHECK: cf.assert %arg0, "top level"
// CHECK-NOT: __mlir_sym_nested_assert
func.func @no_rewrite_when_assert_is_in_the_body(%a: i1) -> i32 {
  cf.assert %a, "top level"
  %z = arith.constant 0 : i32
  return %z : i32
}

// -----

// The guard function is not a compute function.
// CHECK-LABEL: func.func @no_rewrite_in_the_guard_function
// CHECK: scf.if
// CHECK-NEXT: cf.assert %arg0, "guard"
// CHECK-NOT: __mlir_sym_nested_assert
func.func @no_rewrite_in_the_guard_function(%a: i1, %b: i1) -> index attributes {sym.guards} {
  scf.if %b {
    cf.assert %a, "guard"
  }
  %c0 = arith.constant 0 : index
  return %c0 : index
}
