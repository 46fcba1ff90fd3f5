// RUN: symopt %s --split-input-file --sym-fold-transposes="arguments=1" | filecheck %s

// The CPU's option: nn.Linear's weight (a function argument) transposed for a named matmul is read
// where it is, by the matmul written as the generic it stands for: the dot products read the
// weight's rows (no copy of the weight at every call).
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%arg1, %arg0 : tensor<?x4xf32>, tensor<8x4xf32>)
func.func @linear(%w: tensor<8x4xf32>, %x: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %wt = linalg.transpose ins(%w : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %e2 = tensor.empty(%n) : tensor<?x8xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<?x4xf32>, tensor<4x8xf32>) outs(%z : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %mm : tensor<?x8xf32>
}

// -----

// An unknown option is a located error.
// RUN: not symopt %s --sym-fold-transposes="argumentz=1" 2>&1 | filecheck %s --check-prefix=BAD
// BAD: has no option 'argumentz'
