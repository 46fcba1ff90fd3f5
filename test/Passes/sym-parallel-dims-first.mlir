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

// Already parallel-first, or using linalg.index (its dims would need renumbering): unchanged.
// CHECK-LABEL: func.func @unchanged
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:         iterator_types = ["reduction", "parallel"]
func.func @unchanged(%x: memref<?x4xf32>, %r: memref<?xf32>, %c: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x4xf32>) outs(%r : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<?x4xf32>) outs(%c : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 0 : index
    %f = arith.index_cast %i : index to i32
    %g = arith.sitofp %f : i32 to f32
    %s = arith.addf %a, %g : f32
    %t = arith.addf %s, %acc : f32
    linalg.yield %t : f32
  }
  return
}
