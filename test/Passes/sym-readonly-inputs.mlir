// RUN: symopt %s --split-input-file --sym-readonly-inputs | filecheck %s
// RUN: symopt %s --split-input-file --pass-pipeline="builtin.module(sym-readonly-inputs, one-shot-bufferize{allow-unknown-ops bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map})" | filecheck %s --check-prefix=BUF

// Ranked tensor arguments become read-only; their other attributes stay, scalar and out-param
// arguments are left alone.
// CHECK-LABEL: func.func @marks_tensor_inputs
// CHECK-SAME: (%arg0: i64, %arg1: tensor<?x4xf32> {bufferization.writable = false, sym.dims = ["s0", "4"]}, %arg2: tensor<3xi64> {bufferization.writable = false}, %arg3: memref<?x4xf32>) -> i32
func.func @marks_tensor_inputs(%n: i64, %x: tensor<?x4xf32> {sym.dims = ["s0", "4"]}, %i: tensor<3xi64>, %out: memref<?x4xf32>) -> i32 {
  %z = arith.constant 0 : i32
  return %z : i32
}

// -----

// `y = x.clone(); y[1:] += 1` after sym-results-to-out-params: the update is an insert_slice into
// the input itself. Bufferized, it must land in a copy of %x, not in the caller's buffer.
// CHECK-LABEL: func.func @in_place_update_of_an_input
// CHECK-SAME: %arg0: tensor<?x4xf32> {bufferization.writable = false}
// BUF-LABEL: func.func @in_place_update_of_an_input
// BUF: memref.copy %arg0, %[[COPY:[a-z0-9_]+]] :
// BUF: %[[DST:[a-z0-9_]+]] = memref.subview %[[COPY]][1, 0]
// BUF: memref.copy %{{[a-z0-9_]+}}, %[[DST]] :
// BUF: memref.copy %[[COPY]], %arg1 :
func.func @in_place_update_of_an_input(%x: tensor<?x4xf32>, %out: memref<?x4xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  %dim = tensor.dim %x, %c0 : tensor<?x4xf32>
  %m = arith.subi %dim, %c1 : index
  %s = tensor.extract_slice %x[1, 0] [%m, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
  %e = tensor.empty(%m) : tensor<?x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %a = arith.addf %in, %cst : f32
    linalg.yield %a : f32
  } -> tensor<?x4xf32>
  %r = tensor.insert_slice %y into %x[1, 0] [%m, 4] [1, 1] : tensor<?x4xf32> into tensor<?x4xf32>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<?x4xf32>, memref<?x4xf32>) -> ()
  %z = arith.constant 0 : i32
  return %z : i32
}

// -----

// Unranked tensors are not marked (one-shot bufferization cannot take them at a boundary anyway).
// CHECK-LABEL: func.func @no_rewrite_when_not_a_ranked_tensor
// CHECK-SAME: (%arg0: tensor<*xf32>, %arg1: f32) -> i32 {
func.func @no_rewrite_when_not_a_ranked_tensor(%x: tensor<*xf32>, %s: f32) -> i32 {
  %z = arith.constant 0 : i32
  return %z : i32
}

// -----

// The guard function and declarations are not compute functions.
// CHECK-LABEL: func.func @no_rewrite_in_the_guard_function
// CHECK-SAME: (%arg0: tensor<?xf32>) -> index attributes {sym.guards}
// CHECK-LABEL: func.func private @no_rewrite_of_a_declaration
// CHECK-SAME: (tensor<?xf32>)
// CHECK-NOT: writable
func.func @no_rewrite_in_the_guard_function(%x: tensor<?xf32>) -> index attributes {sym.guards} {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  return %d : index
}
func.func private @no_rewrite_of_a_declaration(tensor<?xf32>)
