// RUN: symopt %s --split-input-file --sym-fold-reduction-reshapes | filecheck %s

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>

// Softmax's max (torch-mlir: reduce into [n], then expand to [n, 1]) and the sum reading it: the
// max writes [n, 1] itself, its output map taking index 0 in the new dim, so both reductions store
// and load one buffer the same way. Its init, a fill of an empty, is a fill of an empty of that
// shape (the old ones, now unread, are erased).
// CHECK: #[[OUT:map[0-9]*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @softmax_max_keepdim
// CHECK: %[[N:.+]] = tensor.dim
// CHECK-NEXT: %[[E:.+]] = tensor.empty(%[[N]]) : tensor<?x1xf32>
// CHECK-NEXT: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<?x1xf32>) -> tensor<?x1xf32>
// CHECK-NEXT: %[[M:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[OUT]]], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<?x?xf32>) outs(%[[F]] : tensor<?x1xf32>)
// CHECK: arith.maximumf
// CHECK: } -> tensor<?x1xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor<?xf32>
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[M]] : tensor<?x?xf32>, tensor<?x1xf32>)
func.func @softmax_max_keepdim(%x: tensor<?x?xf32>) -> tensor<?x1xf32> {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %m = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%f : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %me = tensor.expand_shape %m [[0, 1]] output_shape [%n, 1] : tensor<?xf32> into tensor<?x1xf32>
  %e1 = tensor.empty(%n) : tensor<?x1xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x1xf32>) -> tensor<?x1xf32>
  %s = linalg.generic {indexing_maps = [#map, #map2, #map2], iterator_types = ["parallel", "reduction"]} ins(%x, %me : tensor<?x?xf32>, tensor<?x1xf32>) outs(%f1 : tensor<?x1xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x2 = math.exp %d : f32
    %r = arith.addf %x2, %out : f32
    linalg.yield %r : f32
  } -> tensor<?x1xf32>
  return %s : tensor<?x1xf32>
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>

// Two expands of one result, of the same type: both are replaced by the one expanded result. A
// static unit dim before the reduced one (a batch of 1) keeps its expression. An init that is not
// a fill of an empty is read through the expand.
// CHECK: #[[OUT2:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-LABEL: func.func @two_expands_with_a_unit_batch
// CHECK: %[[I:.+]] = tensor.expand_shape %arg1 {{\[}}[0], [1, 2]] output_shape [1, %arg2, 1] : tensor<1x?xf32> into tensor<1x?x1xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[OUT2]]]
// CHECK-SAME: outs(%[[I]] : tensor<1x?x1xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: return %[[R:.+]], %[[R]] : tensor<1x?x1xf32>, tensor<1x?x1xf32>
func.func @two_expands_with_a_unit_batch(%x: tensor<1x?x?xf32>, %init: tensor<1x?xf32>, %n: index) -> (tensor<1x?x1xf32>, tensor<1x?x1xf32>) {
  %m = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<1x?x?xf32>) outs(%init : tensor<1x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x?xf32>
  %a = tensor.expand_shape %m [[0], [1, 2]] output_shape [1, %n, 1] : tensor<1x?xf32> into tensor<1x?x1xf32>
  %b = tensor.expand_shape %m [[0], [1, 2]] output_shape [1, %n, 1] : tensor<1x?xf32> into tensor<1x?x1xf32>
  return %a, %b : tensor<1x?x1xf32>, tensor<1x?x1xf32>
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>

// A result also read as it is stays: the reshape is needed there anyway.
// CHECK-LABEL: func.func @no_rewrite_when_read_unexpanded
// CHECK: } -> tensor<?xf32>
// CHECK: tensor.expand_shape
func.func @no_rewrite_when_read_unexpanded(%x: tensor<?x?xf32>, %init: tensor<?xf32>, %n: index) -> (tensor<?x1xf32>, tensor<?xf32>) {
  %m = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %a = tensor.expand_shape %m [[0, 1]] output_shape [%n, 1] : tensor<?xf32> into tensor<?x1xf32>
  return %a, %m : tensor<?x1xf32>, tensor<?xf32>
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>

// An expand that splits a dim in two that are not unit dims is a real reshape: left alone.
// CHECK-LABEL: func.func @no_rewrite_when_a_dim_is_split
// CHECK: } -> tensor<?xf32>
// CHECK: tensor.expand_shape {{.*}} into tensor<?x4xf32>
func.func @no_rewrite_when_a_dim_is_split(%x: tensor<?x?xf32>, %init: tensor<?xf32>, %n: index) -> tensor<?x4xf32> {
  %m = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %a = tensor.expand_shape %m [[0, 1]] output_shape [%n, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %a : tensor<?x4xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// An all-parallel generic is left to canonicalization (its expand is a free reshape).
// CHECK-LABEL: func.func @no_rewrite_when_all_parallel
// CHECK: } -> tensor<?xf32>
// CHECK: tensor.expand_shape
func.func @no_rewrite_when_all_parallel(%x: tensor<?xf32>, %init: tensor<?xf32>, %n: index) -> tensor<?x1xf32> {
  %m = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %a = tensor.expand_shape %m [[0, 1]] output_shape [%n, 1] : tensor<?xf32> into tensor<?x1xf32>
  return %a : tensor<?x1xf32>
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>

// Fusion's reshape of an init (BERT's softmax max: a fill of an expand of an empty) is a fill of an
// empty of the expanded shape: bufferized, the fill and the reduction write one buffer the same way.
// CHECK-LABEL: func.func @expand_of_an_empty
// CHECK-NEXT: %[[E:.+]] = tensor.empty(%arg1) : tensor<4x?x1xf32>
// CHECK-NEXT: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<4x?x1xf32>)
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[F]] : tensor<4x?x1xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @expand_of_an_empty(%x: tensor<4x?x?xf32>, %n: index, %ninf: f32) -> tensor<4x?x1xf32> {
  %e = tensor.empty(%n) : tensor<4x?xf32>
  %ee = tensor.expand_shape %e [[0], [1, 2]] output_shape [4, %n, 1] : tensor<4x?xf32> into tensor<4x?x1xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%ee : tensor<4x?x1xf32>) -> tensor<4x?x1xf32>
  %m = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x?x?xf32>) outs(%f : tensor<4x?x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<4x?x1xf32>
  return %m : tensor<4x?x1xf32>
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>

// The same with the expand after the fill (what elementwise fusion leaves): a fill of an empty of the
// expanded shape, the old fill and empty erased.
// CHECK-LABEL: func.func @expand_of_a_fill
// CHECK-NEXT: %[[E:.+]] = tensor.empty(%arg1) : tensor<4x?x1xf32>
// CHECK-NEXT: %[[F:.+]] = linalg.fill ins(%arg2 : f32) outs(%[[E]] : tensor<4x?x1xf32>)
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[F]] : tensor<4x?x1xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @expand_of_a_fill(%x: tensor<4x?x?xf32>, %n: index, %ninf: f32) -> tensor<4x?x1xf32> {
  %e = tensor.empty(%n) : tensor<4x?xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<4x?xf32>) -> tensor<4x?xf32>
  %fe = tensor.expand_shape %f [[0], [1, 2]] output_shape [4, %n, 1] : tensor<4x?xf32> into tensor<4x?x1xf32>
  %m = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x?x?xf32>) outs(%fe : tensor<4x?x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<4x?x1xf32>
  return %m : tensor<4x?x1xf32>
}
