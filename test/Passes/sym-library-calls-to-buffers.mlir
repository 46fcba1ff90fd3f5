// RUN: symopt %s --split-input-file --sym-library-calls-to-buffers | filecheck %s
// RUN: symopt %s --split-input-file --sym-library-calls-to-buffers --one-shot-bufferize="allow-unknown-ops bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize | filecheck %s --check-prefix=BUF

// A training attention forward on tensors: operands read in place as fully dynamic strided
// buffers, results new identity-layout buffers the call returns, tensors again for the ops after.
// CHECK-LABEL: func.func @forward
// CHECK:       %[[QE:.+]] = tensor.expand_shape
// CHECK:       %[[Q:.+]] = bufferization.to_buffer %[[QE]] read_only : tensor<?x?x4x16xf32> to memref<?x?x4x16xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK:       %[[R:.+]]:2 = call @__sym_sdpa_forward_0(%[[Q]], %{{.+}}, %{{.+}}) {sym.causal = true, sym.scale = 2.500000e-01 : f64} : (memref<?x?x4x16xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x4x16xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x4x16xf32, strided<[?, ?, ?, ?], offset: ?>>) -> (memref<?x?x4x16xf32>, memref<?x4x?xf32>)
// CHECK:       %[[O:.+]] = bufferization.to_tensor %[[R]]#0 restrict writable : memref<?x?x4x16xf32> to tensor<?x?x4x16xf32>
// CHECK:       %[[L:.+]] = bufferization.to_tensor %[[R]]#1 restrict writable : memref<?x4x?xf32> to tensor<?x4x?xf32>
// CHECK:       return %[[O]], %[[L]]
// CHECK:       func.func private @__sym_sdpa_forward_0(memref<?x?x4x16xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x4x16xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x4x16xf32, strided<[?, ?, ?, ?], offset: ?>>) -> (memref<?x?x4x16xf32>, memref<?x4x?xf32>) attributes {sym.library_call = "sdpa_forward"}
// After one-shot bufferization the call reads the slices of the projection where they are: no
// copy of an operand, no allocation of a result.
// BUF-LABEL:   func.func @forward
// BUF-NOT:     memref.alloc
// BUF-NOT:     memref.copy
// BUF:         %[[S:.+]] = memref.subview %arg0[0, 0, 0] [%{{.+}}, %{{.+}}, 64] [1, 1, 1]
// BUF:         %[[E:.+]] = memref.expand_shape %[[S]]
// BUF:         %[[C:.+]] = memref.cast %[[E]]
// BUF:         %[[R:.+]]:2 = call @__sym_sdpa_forward_0(%[[C]],
// BUF-NOT:     memref.copy
// BUF:         return %[[R]]#0, %[[R]]#1
func.func @forward(%qkv: tensor<?x?x192xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %qkv, %c0 : tensor<?x?x192xf32>
  %l = tensor.dim %qkv, %c1 : tensor<?x?x192xf32>
  %q0 = tensor.extract_slice %qkv[0, 0, 0] [%b, %l, 64] [1, 1, 1] : tensor<?x?x192xf32> to tensor<?x?x64xf32>
  %k0 = tensor.extract_slice %qkv[0, 0, 64] [%b, %l, 64] [1, 1, 1] : tensor<?x?x192xf32> to tensor<?x?x64xf32>
  %v0 = tensor.extract_slice %qkv[0, 0, 128] [%b, %l, 64] [1, 1, 1] : tensor<?x?x192xf32> to tensor<?x?x64xf32>
  %q = tensor.expand_shape %q0 [[0], [1], [2, 3]] output_shape [%b, %l, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
  %k = tensor.expand_shape %k0 [[0], [1], [2, 3]] output_shape [%b, %l, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
  %v = tensor.expand_shape %v0 [[0], [1], [2, 3]] output_shape [%b, %l, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
  %r:2 = call @__sym_sdpa_forward_0(%q, %k, %v) {sym.causal = true, sym.scale = 2.500000e-01 : f64} : (tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?xf32>)
  return %r#0, %r#1 : tensor<?x?x4x16xf32>, tensor<?x4x?xf32>
}
func.func private @__sym_sdpa_forward_0(tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?xf32>) attributes {sym.library_call = "sdpa_forward"}

// -----

// Calls of other functions (not tagged, or of another kind) are left alone.
// CHECK-LABEL: func.func @others
// CHECK:       call @helper(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       call @__sym_other_0(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT:   bufferization
func.func @others(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @__sym_other_0(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
func.func private @helper(tensor<4xf32>) -> tensor<4xf32>
func.func private @__sym_other_0(tensor<4xf32>) -> tensor<4xf32> attributes {sym.library_call = "other"}
