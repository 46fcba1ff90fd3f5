// RUN: symopt %s --split-input-file --sym-parallel-dims-first | filecheck %s

// A sum over the leading dimension (x[mask].sum(0)): the parallel column dimension moves first, the
// maps follow the permutation.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @column_sum
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
func.func @column_sum(%x: memref<?x4xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<?x4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Already parallel-first: unchanged.
// CHECK-LABEL: func.func @unchanged
// CHECK:         iterator_types = ["parallel", "reduction"]
func.func @unchanged(%x: memref<?x4xf32>, %r: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x4xf32>) outs(%r : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// argmax over the rows (`x.argmax(0)`) reads the row with linalg.index 0: after the reorder the
// row loop is d1, so the index op names dim 1.
// CHECK-LABEL: func.func @argmax_rows
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:         ^bb0
// CHECK-NEXT:      %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT:      arith.index_cast %[[I]]
func.func @argmax_rows(%x: memref<?x4xf32>, %v: memref<4xf32>, %p: memref<4xi64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<?x4xf32>) outs(%v, %p : memref<4xf32>, memref<4xi64>) {
  ^bb0(%a: f32, %acc: f32, %pos: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %m = arith.maximumf %a, %acc : f32
    %gt = arith.cmpf ogt, %a, %acc : f32
    %q = arith.select %gt, %ii, %pos : i64
    linalg.yield %m, %q : f32, i64
  }
  return
}
