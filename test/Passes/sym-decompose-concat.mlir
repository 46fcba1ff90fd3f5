// RUN: symopt %s --split-input-file --sym-decompose-concat | filecheck %s
// RUN: symopt %s --split-input-file --pass-pipeline='builtin.module(sym-decompose-concat, canonicalize, eliminate-empty-tensors, empty-tensor-to-alloc-tensor, one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, cse, canonicalize)' | filecheck %s --check-prefix=BUF

// A concat along a dynamic dim: an empty tensor of the summed size and an insert_slice per input at
// the running offset. Bufferized, the generic producing the first input writes into its slice of the
// result (eliminate-empty-tensors): only the constant's copy is left.
// CHECK-LABEL: func.func @along_dynamic
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK:         tensor.dim %[[R]], %c0
// CHECK:         %[[SIZE:.*]] = arith.addi %{{.*}}, %c1
// CHECK:         %[[E:.*]] = tensor.empty(%[[SIZE]]) : tensor<?xi64>
// CHECK:         %[[I0:.*]] = tensor.insert_slice %[[R]] into %[[E]][0] [%{{.*}}] [1] : tensor<?xi64> into tensor<?xi64>
// CHECK:         %[[I1:.*]] = tensor.insert_slice %arg1 into %[[I0]][%{{.*}}] [1] [1] : tensor<1xi64> into tensor<?xi64>
// CHECK:         return %[[I1]]
// CHECK-NOT:     tensor.concat
// BUF-LABEL:   func.func @along_dynamic
// BUF:           %[[A:.*]] = memref.alloc
// BUF:           %[[S:.*]] = memref.subview %[[A]][0] [%{{.*}}] [1]
// BUF:           linalg.generic {{.*}} outs(%[[S]] :
// BUF-COUNT-1:   memref.copy
// BUF-NOT:       memref.copy
// BUF:           return %[[A]]
#id = affine_map<(d0) -> (d0)>
func.func @along_dynamic(%x: tensor<?xi64>, %t: tensor<1xi64>) -> tensor<?xi64> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xi64>
  %e = tensor.empty(%n) : tensor<?xi64>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<?xi64>) outs(%e : tensor<?xi64>) {
  ^bb0(%a: i64, %o: i64):
    %y = arith.addi %a, %a : i64
    linalg.yield %y : i64
  } -> tensor<?xi64>
  %c = tensor.concat dim(0) %r, %t : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  return %c : tensor<?xi64>
}

// -----

// Along dim 1 of 2-d inputs (torch.stack of columns): static offsets, the other dims from the first
// input; the result keeps its declared type.
// CHECK-LABEL: func.func @columns
// CHECK:         %[[R:.*]] = tensor.dim %arg0, %c0
// CHECK:         %[[E:.*]] = tensor.empty(%[[R]]) : tensor<?x3xf32>
// CHECK:         %[[I0:.*]] = tensor.insert_slice %arg0 into %[[E]][0, 0] [%{{.*}}, 1] [1, 1] : tensor<?x1xf32> into tensor<?x3xf32>
// CHECK:         tensor.insert_slice %arg1 into %[[I0]][0, 1] [%{{.*}}, 2] [1, 1] : tensor<?x2xf32> into tensor<?x3xf32>
func.func @columns(%a: tensor<?x1xf32>, %b: tensor<?x2xf32>) -> tensor<?x3xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<?x1xf32>, tensor<?x2xf32>) -> tensor<?x3xf32>
  return %c : tensor<?x3xf32>
}
