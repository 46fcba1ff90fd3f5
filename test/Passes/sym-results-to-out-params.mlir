// RUN: symopt %s --split-input-file --sym-results-to-out-params | filecheck %s

// CHECK-LABEL: func.func @one_result
// CHECK-SAME: (%arg0: tensor<?xf32>, %arg1: memref<?xf32>) -> i32
// CHECK-SAME: llvm.emit_c_interface
// CHECK: bufferization.materialize_in_destination %arg0 in restrict writable %arg1 : (tensor<?xf32>, memref<?xf32>) -> ()
// CHECK: %[[Z:.*]] = arith.constant 0 : i32
// CHECK: return %[[Z]] : i32
func.func @one_result(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// Existing argument attributes stay on their arguments; out-params get empty ones.
// CHECK-LABEL: func.func @keeps_arg_attrs
// CHECK-SAME: (%arg0: tensor<?x4xf32> {sym.dims = ["s0", "4"]}, %arg1: memref<?x4xf32>, %arg2: memref<4xf32>) -> i32
func.func @keeps_arg_attrs(%x: tensor<?x4xf32> {sym.dims = ["s0", "4"]}) -> (tensor<?x4xf32>, tensor<4xf32>) {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  return %x, %c : tensor<?x4xf32>, tensor<4xf32>
}

// The guard function is not compute: left alone.
// CHECK-LABEL: func.func @guards
// CHECK-SAME: -> index
func.func @guards(%a: index) -> index attributes {sym.guards} {
  return %a : index
}
