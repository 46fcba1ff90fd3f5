// RUN: symopt %s --split-input-file --sym-split-sliced-generics | filecheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>

// A fused qkv projection's bias add, sliced three ways, each slice copied again (scaled, or
// transposed): one bias add per slice, reading the slice's columns of the product and of the bias.
// CHECK-LABEL: func.func @qkv_bias
// CHECK-SAME:    (%[[MM:[a-z0-9]+]]: tensor<?x12xf32>, %[[B:[a-z0-9]+]]: tensor<12xf32>, %[[N:[a-z0-9]+]]: index
// CHECK:       %[[M0:.+]] = tensor.extract_slice %[[MM]][0, 0] [%[[N]], 4] [1, 1] : tensor<?x12xf32> to tensor<?x4xf32>
// CHECK-NEXT:  %[[B0:.+]] = tensor.extract_slice %[[B]][0] [4] [1] : tensor<12xf32> to tensor<4xf32>
// CHECK-NEXT:  %[[E0:.+]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK-NEXT:  %[[Q:.+]] = linalg.generic {{.*}} ins(%[[M0]], %[[B0]] : tensor<?x4xf32>, tensor<4xf32>) outs(%[[E0]] : tensor<?x4xf32>)
// CHECK:         arith.addf
// CHECK:       tensor.extract_slice %[[MM]][0, 4] [%[[N]], 4] [1, 1]
// CHECK-NEXT:  tensor.extract_slice %[[B]][4] [4] [1]
// CHECK:       tensor.extract_slice %[[MM]][0, 8] [%[[N]], 4] [1, 1]
// CHECK-NEXT:  tensor.extract_slice %[[B]][8] [4] [1]
// CHECK-NOT:   tensor<?x12xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[Q]] : tensor<?x4xf32>)
// CHECK:       return
func.func @qkv_bias(%mm: tensor<?x12xf32>, %bias: tensor<12xf32>, %n: index) -> (tensor<?x4xf32>, tensor<4x?xf32>, tensor<4x?xf32>) {
  %e = tensor.empty(%n) : tensor<?x12xf32>
  %b = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %bias : tensor<?x12xf32>, tensor<12xf32>) outs(%e : tensor<?x12xf32>) {
  ^bb0(%in: f32, %bb: f32, %out: f32):
    %s = arith.addf %in, %bb : f32
    linalg.yield %s : f32
  } -> tensor<?x12xf32>
  %q = tensor.extract_slice %b[0, 0] [%n, 4] [1, 1] : tensor<?x12xf32> to tensor<?x4xf32>
  %k = tensor.extract_slice %b[0, 4] [%n, 4] [1, 1] : tensor<?x12xf32> to tensor<?x4xf32>
  %v = tensor.extract_slice %b[0, 8] [%n, 4] [1, 1] : tensor<?x12xf32> to tensor<?x4xf32>
  %eq = tensor.empty(%n) : tensor<?x4xf32>
  %qs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%q : tensor<?x4xf32>) outs(%eq : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 0.5 : f32
    %s = arith.mulf %in, %c : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  %et = tensor.empty(%n) : tensor<4x?xf32>
  %kt = linalg.transpose ins(%k : tensor<?x4xf32>) outs(%et : tensor<4x?xf32>) permutation = [1, 0]
  %vt = linalg.transpose ins(%v : tensor<?x4xf32>) outs(%et : tensor<4x?xf32>) permutation = [1, 0]
  return %qs, %kt, %vt : tensor<?x4xf32>, tensor<4x?xf32>, tensor<4x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// A broadcast input (index 0 of a unit dim) keeps offset 0 and size 1 in that dim.
// CHECK-LABEL: func.func @broadcast_input
// CHECK:       tensor.extract_slice %arg1[0, 0] [%arg2, 1] [1, 1] : tensor<?x1xf32> to tensor<?x1xf32>
// CHECK:       tensor.extract_slice %arg1[0, 0] [%arg2, 1] [1, 1] : tensor<?x1xf32> to tensor<?x1xf32>
// CHECK-COUNT-2: linalg.transpose
func.func @broadcast_input(%x: tensor<?x8xf32>, %s: tensor<?x1xf32>, %n: index) -> (tensor<4x?xf32>, tensor<4x?xf32>) {
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<?x8xf32>, tensor<?x1xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%in: f32, %sc: f32, %out: f32):
    %r = arith.mulf %in, %sc : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  %lo = tensor.extract_slice %b[0, 0] [%n, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
  %hi = tensor.extract_slice %b[0, 4] [%n, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
  %et = tensor.empty(%n) : tensor<4x?xf32>
  %lt = linalg.transpose ins(%lo : tensor<?x4xf32>) outs(%et : tensor<4x?xf32>) permutation = [1, 0]
  %ht = linalg.transpose ins(%hi : tensor<?x4xf32>) outs(%et : tensor<4x?xf32>) permutation = [1, 0]
  return %lt, %ht : tensor<4x?xf32>, tensor<4x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A slice returned as it is would become a kernel of its own where it was a view: left alone.
// CHECK-LABEL: func.func @no_split_when_a_slice_is_not_copied
// CHECK:       linalg.generic {{.*}} outs(%{{.+}} : tensor<?x8xf32>)
// CHECK-COUNT-2: tensor.extract_slice %{{.+}}[0, {{[04]}}] [%arg1, 4]
func.func @no_split_when_a_slice_is_not_copied(%x: tensor<?x8xf32>, %n: index) -> (tensor<?x4xf32>, tensor<4x?xf32>) {
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  %lo = tensor.extract_slice %b[0, 0] [%n, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
  %hi = tensor.extract_slice %b[0, 4] [%n, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
  %et = tensor.empty(%n) : tensor<4x?xf32>
  %ht = linalg.transpose ins(%hi : tensor<?x4xf32>) outs(%et : tensor<4x?xf32>) permutation = [1, 0]
  return %lo, %ht : tensor<?x4xf32>, tensor<4x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A generic with another reader than slices, or using linalg.index, is left alone.
// CHECK-LABEL: func.func @no_split_with_an_index
// CHECK:       linalg.index
// CHECK:       tensor.extract_slice
func.func @no_split_with_an_index(%x: tensor<?x8xf32>, %n: index) -> (tensor<4x?xf32>, tensor<4x?xf32>) {
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %r = arith.addf %in, %f : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  %lo = tensor.extract_slice %b[0, 0] [%n, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
  %hi = tensor.extract_slice %b[0, 4] [%n, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
  %et = tensor.empty(%n) : tensor<4x?xf32>
  %lt = linalg.transpose ins(%lo : tensor<?x4xf32>) outs(%et : tensor<4x?xf32>) permutation = [1, 0]
  %ht = linalg.transpose ins(%hi : tensor<?x4xf32>) outs(%et : tensor<4x?xf32>) permutation = [1, 0]
  return %lt, %ht : tensor<4x?xf32>, tensor<4x?xf32>
}
