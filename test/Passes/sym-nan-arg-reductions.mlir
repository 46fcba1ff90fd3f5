// RUN: symopt %s --split-input-file --sym-nan-arg-reductions | filecheck %s

// torch-mlir's argmax: the position follows `ogt` against the running maximumf; it becomes "greater
// or unordered while the running value is a number", so the first NaN's position wins.
// CHECK-LABEL: func.func @argmax
// CHECK:         ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32, %[[POS:.*]]: i64):
// CHECK:           arith.maximumf %[[IN]], %[[ACC]]
// CHECK-NOT:       arith.cmpf ogt
// CHECK:           %[[U:.*]] = arith.cmpf ugt, %[[IN]], %[[ACC]] : f32
// CHECK:           %[[O:.*]] = arith.cmpf ord, %[[ACC]], %[[ACC]] : f32
// CHECK:           %[[C:.*]] = arith.andi %[[U]], %[[O]] : i1
// CHECK:           arith.select %[[C]], %{{.*}}, %[[POS]] : i64
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @argmax(%x: tensor<?x?xf32>, %v: tensor<?xf32>, %i: tensor<?xi64>) -> tensor<?xi64> {
  %r:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%v, %i : tensor<?xf32>, tensor<?xi64>) {
  ^bb0(%in: f32, %acc: f32, %pos: i64):
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %p = arith.select %gt, %jj, %pos : i64
    linalg.yield %m, %p : f32, i64
  } -> (tensor<?xf32>, tensor<?xi64>)
  return %r#1 : tensor<?xi64>
}

// -----

// argmin: `olt` against minimumf (operands in either order) becomes `ult` and `ord`.
// CHECK-LABEL: func.func @argmin
// CHECK:         arith.cmpf ult, %{{.*}}, %{{.*}} : f32
// CHECK:         arith.cmpf ord
// CHECK-NOT:     arith.cmpf olt
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @argmin(%x: tensor<?x?xf32>, %v: tensor<?xf32>, %i: tensor<?xi64>) -> tensor<?xi64> {
  %r:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%v, %i : tensor<?xf32>, tensor<?xi64>) {
  ^bb0(%in: f32, %acc: f32, %pos: i64):
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %m = arith.minimumf %acc, %in : f32
    %lt = arith.cmpf olt, %in, %acc : f32
    %p = arith.select %lt, %jj, %pos : i64
    linalg.yield %m, %p : f32, i64
  } -> (tensor<?xf32>, tensor<?xi64>)
  return %r#1 : tensor<?xi64>
}

// -----

// Left alone: a running value that ignores NaNs (maxnumf), a comparison whose first operand is not
// the input element, and an elementwise (all-parallel) generic.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     arith.cmpf ugt
// CHECK-NOT:     arith.cmpf ord
// CHECK-COUNT-3: arith.cmpf ogt
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @left_alone(%x: tensor<?x?xf32>, %v: tensor<?xf32>, %i: tensor<?xi64>, %y: tensor<?x?xf32>) -> (tensor<?xi64>, tensor<?xi64>, tensor<?x?xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%v, %i : tensor<?xf32>, tensor<?xi64>) {
  ^bb0(%in: f32, %acc: f32, %pos: i64):
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %m = arith.maxnumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %p = arith.select %gt, %jj, %pos : i64
    linalg.yield %m, %p : f32, i64
  } -> (tensor<?xf32>, tensor<?xi64>)
  %s:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%v, %i : tensor<?xf32>, tensor<?xi64>) {
  ^bb0(%in: f32, %acc: f32, %pos: i64):
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %acc, %in : f32
    %p = arith.select %gt, %jj, %pos : i64
    linalg.yield %m, %p : f32, i64
  } -> (tensor<?xf32>, tensor<?xi64>)
  %t = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%y : tensor<?x?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %gt = arith.cmpf ogt, %in, %o : f32
    %m = arith.maximumf %in, %o : f32
    %q = arith.select %gt, %in, %m : f32
    linalg.yield %q : f32
  } -> tensor<?x?xf32>
  return %r#1, %s#1, %t : tensor<?xi64>, tensor<?xi64>, tensor<?x?xf32>
}
