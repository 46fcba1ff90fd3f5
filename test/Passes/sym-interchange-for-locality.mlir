// RUN: symopt %s --split-input-file --sym-interchange-for-locality | filecheck %s

// A generalized matmul: (i, j, k) becomes (i, k, j), so B and C are read along their last index.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "reduction", "parallel"]}
func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row sum already reads its input contiguously in the innermost (reduction) loop.
// CHECK-LABEL: func.func @no_rewrite_when_innermost_is_contiguous
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @no_rewrite_when_innermost_is_contiguous(%a: memref<?x?xf32>, %c: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<?x?xf32>) outs(%c : memref<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A body that reads its loop indices would need them renumbered: left alone (the same matmul).
// CHECK-LABEL: func.func @no_rewrite_when_body_uses_linalg_index
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
func.func @no_rewrite_when_body_uses_linalg_index(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %i = linalg.index 2 : index
    %f = arith.index_cast %i : index to i32
    %g = arith.sitofp %f : i32 to f32
    %m = arith.mulf %x, %g : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Layer norm's row statistic fused into the product it feeds: read at (d0, d1, 0) from a
// [1, ?, 1] buffer (a constant index into a size-1 dim): the maps are dims and constants, the
// weight's column dim moves innermost (was left in (b, i, j, k) order, the weight read down its
// columns: GPT-2's MLP after its layer norm, 20 times slower).
// CHECK-DAG: affine_map<(d0, d1, d2, d3) -> (d0, d1, 0)>
// CHECK-DAG: affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @row_statistic
// CHECK: iterator_types = ["parallel", "parallel", "reduction", "parallel"]
func.func @row_statistic(%x: memref<1x?x256xf32>, %mean: memref<1x?x1xf32>, %w: memref<256x1024xf32>, %c: memref<1x?x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0)>,
                                   affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %mean, %w : memref<1x?x256xf32>, memref<1x?x1xf32>, memref<256x1024xf32>) outs(%c : memref<1x?x1024xf32>) {
  ^bb0(%a: f32, %m: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %p = arith.mulf %d, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A constant index into a dim of size 4 (x[:, :, 0] of [1, ?, 4]) is a stride of 4 along d1: the
// row dim stays where it is (moving d1 innermost would not make that operand contiguous).
// CHECK: affine_map<(d0, d1) -> (d1, d0, 0)>
// CHECK-LABEL: func.func @constant_index_into_a_wide_dim
// CHECK: iterator_types = ["parallel", "parallel"]
func.func @constant_index_into_a_wide_dim(%x: memref<?x8x4xf32>, %c: memref<8x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x8x4xf32>) outs(%c : memref<8x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
