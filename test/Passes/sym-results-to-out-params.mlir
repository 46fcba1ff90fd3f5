// RUN: symopt %s --split-input-file --sym-results-to-out-params | filecheck %s

// CHECK-LABEL: func.func @one_result
// CHECK-SAME: (%arg0: tensor<?xf32>, %arg1: memref<?xf32>) -> i32
// CHECK-SAME: attributes {llvm.emit_c_interface, sym.out_params = 1 : i64}
// CHECK: bufferization.materialize_in_destination %arg0 in restrict writable %arg1 : (tensor<?xf32>, memref<?xf32>) -> ()
// CHECK: %[[Z:.*]] = arith.constant 0 : i32
// CHECK: return %[[Z]] : i32
func.func @one_result(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// Existing argument attributes stay on their arguments; an out-param gets the sizes of its result
// as a `sym.dims` fact where they are known expressions of the symbols (none for a static one).
// CHECK-LABEL: func.func @keeps_arg_attrs
// CHECK-SAME: (%arg0: tensor<?x4xf32> {sym.dims = ["s0", "4"]}, %arg1: memref<?x4xf32> {sym.dims = ["s0", "4"]}, %arg2: memref<4xf32>) -> i32
// CHECK-SAME: sym.out_params = 2 : i64
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

// -----

// Sizes read through the producers: a SymInt argument's `sym.int`, a collapse's product, a reduction's
// `outs`; a size from data (an opaque value) stays "?"; a result with no known size gets no fact.
// CHECK-LABEL: func.func @result_facts
// CHECK-SAME: %arg4: memref<?x8xf32> {sym.dims = ["s1", "8"]}
// CHECK-SAME: %arg5: memref<?xf32> {sym.dims = ["8*s0"]}
// CHECK-SAME: %arg6: memref<?x?xf32> {sym.dims = ["s0", "?"]}
// CHECK-SAME: %arg7: memref<?xf32>) -> i32
func.func @result_facts(%x: tensor<?x8xf32> {sym.dims = ["s0", "8"]}, %n: i64 {sym.int = "s1"}, %m: index, %y: tensor<?xf32>)
    -> (tensor<?x8xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %i = arith.index_cast %n : i64 to index
  %e = tensor.empty(%i) : tensor<?x8xf32>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<?x8xf32> into tensor<?xf32>
  %d = tensor.dim %x, %c0 : tensor<?x8xf32>
  %f = tensor.empty(%d, %m) : tensor<?x?xf32>
  return %e, %flat, %f, %y : tensor<?x8xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<?xf32>
}
