// RUN: symopt %s --split-input-file --sym-unify-sizes | filecheck %s
// RUN: symopt %s --split-input-file --sym-unify-sizes=values=0 | filecheck %s --check-prefix=RESHAPES

// Sizes equal under the facts become one value: the batch read from a SymInt argument, from the
// input ids and from a reshape of a [b*s, 768] matrix; the length likewise. The first value of each
// expression stays (values=0 leaves them all).
// CHECK-LABEL: func.func @equal_sizes
// CHECK:         %[[B:.*]] = arith.index_cast %arg0 : i64 to index
// CHECK:         %[[S:.*]] = arith.index_cast %arg1 : i64 to index
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg2 {{\[}}[0, 1], [2]] output_shape [%[[B]], %[[S]], 768]
// CHECK:         %[[T:.*]] = tensor.empty(%[[B]], %[[S]]) : tensor<?x?x768xf32>
// CHECK:         return %[[E]], %[[T]], %[[B]]
// RESHAPES-LABEL: func.func @equal_sizes
// RESHAPES:       tensor.empty(%dim, %dim_0)
func.func @equal_sizes(%arg0: i64 {sym.int = "s0"}, %arg1: i64 {sym.int = "s1"}, %x: tensor<?x768xf32> {sym.dims = ["s0*s1", "768"]}, %ids: tensor<?x?xi64> {sym.dims = ["s0", "s1"]}) -> (tensor<?x?x768xf32>, tensor<?x?x768xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = arith.index_cast %arg0 : i64 to index
  %s = arith.index_cast %arg1 : i64 to index
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [%b, %s, 768] : tensor<?x768xf32> into tensor<?x?x768xf32>
  %d0 = tensor.dim %e, %c0 : tensor<?x?x768xf32>
  %d1 = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %t = tensor.empty(%d0, %d1) : tensor<?x?x768xf32>
  %i0 = tensor.dim %ids, %c0 : tensor<?x?xi64>
  return %e, %t, %i0 : tensor<?x?x768xf32>, tensor<?x?x768xf32>, index
}

// -----

// Sizes the reader cannot express are values of their own: two dims of a tensor without facts stay
// apart; the same dim read twice is one value.
// CHECK-LABEL: func.func @unknown_sizes
// CHECK:         %[[D0:.*]] = tensor.dim %arg0, %c0
// CHECK:         %[[D1:.*]] = tensor.dim %arg0, %c1
// CHECK:         return %[[D0]], %[[D1]], %[[D0]]
func.func @unknown_sizes(%x: tensor<?x?xf32>) -> (index, index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %d2 = tensor.dim %x, %c0 : tensor<?x?xf32>
  return %d0, %d1, %d2 : index, index, index
}

// -----

// A linear layer's result viewed back at a dynamic batch: the expand undoes the collapse (the same
// groups, sizes equal to the source's dims), so the slices read the bias add itself and the pair
// goes (both modes).
// CHECK-LABEL: func.func @reshape_pair
// CHECK-NOT:     tensor.collapse_shape
// CHECK-NOT:     tensor.expand_shape
// CHECK:         tensor.extract_slice %[[G:.*]][0, 0, 256]
// RESHAPES-LABEL: func.func @reshape_pair
// RESHAPES-NOT:   tensor.collapse_shape
// RESHAPES:       tensor.extract_slice
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @reshape_pair(%arg0: i64 {sym.int = "s0"}, %arg1: i64 {sym.int = "s1"}, %x: tensor<?x?x768xf32> {sym.dims = ["s0", "s1", "768"]}) -> tensor<?x?x256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = arith.index_cast %arg0 : i64 to index
  %s = arith.index_cast %arg1 : i64 to index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x768xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x768xf32>
  %init = tensor.empty(%d0, %d1) : tensor<?x?x768xf32>
  %g = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x768xf32>) outs(%init : tensor<?x?x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.addf %in, %in : f32
    linalg.yield %y : f32
  } -> tensor<?x?x768xf32>
  %c = tensor.collapse_shape %g [[0, 1], [2]] : tensor<?x?x768xf32> into tensor<?x768xf32>
  %e = tensor.expand_shape %c [[0, 1], [2]] output_shape [%b, %s, 768] : tensor<?x768xf32> into tensor<?x?x768xf32>
  %k = tensor.extract_slice %e[0, 0, 256] [%b, %s, 256] [1, 1, 1] : tensor<?x?x768xf32> to tensor<?x?x256xf32>
  return %k : tensor<?x?x256xf32>
}

// -----

// Left alone: an expand whose sizes are not the source's (the length and the batch swapped), and one
// that a contraction reads (upstream fusion would then fuse the producer into it, and it would be no
// library call). A plain reduction (a layer norm's sum) reads the source itself.
// CHECK-LABEL: func.func @reshapes_kept
// CHECK:         tensor.collapse_shape
// CHECK:         tensor.expand_shape {{.*}} output_shape [%{{.*}}, %{{.*}}, 768]
// CHECK:         tensor.collapse_shape
// CHECK:         %[[E:.*]] = tensor.expand_shape
// CHECK:         linalg.generic {{.*}}reduction{{.*}} ins(%[[E]], %arg3
// CHECK:         linalg.generic {{.*}}reduction{{.*}} ins(%arg2 :
#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#w = affine_map<(d0, d1, d2) -> (d2)>
#out2 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @reshapes_kept(%arg0: i64 {sym.int = "s0"}, %arg1: i64 {sym.int = "s1"}, %x: tensor<?x?x768xf32> {sym.dims = ["s0", "s1", "768"]}, %w: tensor<768xf32>, %acc: tensor<?x?xf32>) -> (tensor<?x?x768xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %b = arith.index_cast %arg0 : i64 to index
  %s = arith.index_cast %arg1 : i64 to index
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x768xf32> into tensor<?x768xf32>
  %swapped = tensor.expand_shape %c [[0, 1], [2]] output_shape [%s, %b, 768] : tensor<?x768xf32> into tensor<?x?x768xf32>
  %c2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x768xf32> into tensor<?x768xf32>
  %e = tensor.expand_shape %c2 [[0, 1], [2]] output_shape [%b, %s, 768] : tensor<?x768xf32> into tensor<?x?x768xf32>
  %dot = linalg.generic {indexing_maps = [#in3, #w, #out2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%e, %w : tensor<?x?x768xf32>, tensor<768xf32>) outs(%acc : tensor<?x?xf32>) {
  ^bb0(%in: f32, %in_w: f32, %out: f32):
    %p = arith.mulf %in, %in_w : f32
    %y = arith.addf %out, %p : f32
    linalg.yield %y : f32
  } -> tensor<?x?xf32>
  %c3 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x768xf32> into tensor<?x768xf32>
  %e3 = tensor.expand_shape %c3 [[0, 1], [2]] output_shape [%b, %s, 768] : tensor<?x768xf32> into tensor<?x?x768xf32>
  %sum = linalg.generic {indexing_maps = [#in3, #out2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%e3 : tensor<?x?x768xf32>) outs(%acc : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.addf %in, %out : f32
    linalg.yield %y : f32
  } -> tensor<?x?xf32>
  return %swapped, %dot, %sum : tensor<?x?x768xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// Sizes equal by a guard the module records (`sym.equalities`): the targets' count (s0*s1, their own
// symbols) and the logits' rows (the product of the SymInt arguments s2, s3) are one value, so the
// one-hot of the targets and the logits share their loops' sizes.
// CHECK-LABEL: func.func @guarded_equal_sizes
// CHECK:         %[[N:.*]] = tensor.dim %arg2, %c0
// CHECK:         tensor.empty(%[[N]])
// CHECK:         return %[[N]], %[[N]]
module attributes {sym.equalities = [["s2*s3", "s0*s1"]]} {
func.func @guarded_equal_sizes(%a: i64 {sym.int = "s2"}, %b: i64 {sym.int = "s3"}, %t: tensor<?xi64> {sym.dims = ["s0*s1"]}) -> (index, index, tensor<?x8192xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %t, %c0 : tensor<?xi64>
  %ai = arith.index_cast %a : i64 to index
  %bi = arith.index_cast %b : i64 to index
  %ab = arith.muli %ai, %bi : index
  %e = tensor.empty(%ab) : tensor<?x8192xf32>
  return %n, %ab, %e : index, index, tensor<?x8192xf32>
}
}
