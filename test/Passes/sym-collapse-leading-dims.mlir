// RUN: symopt %s --split-input-file --sym-collapse-leading-dims | filecheck %s

// A layer norm's weight-grad partials over [B, L, 256] rows (the rows reduced, the columns kept):
// the grad and the statistics ([B, L, 1], read at (d0, d1, 0)) collapse to [B*L, ...] views, each
// buffer one view; the weight's map loses nothing.
// CHECK-LABEL: func.func @column_partials
// CHECK-DAG:   %[[DY:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1], [2]] : memref<?x?x256xbf16> into memref<?x256xbf16>
// CHECK-DAG:   %[[R:.*]] = memref.collapse_shape %arg1 {{\[}}[0, 1], [2]] : memref<?x?x1xf32> into memref<?x1xf32>
// CHECK:       linalg.generic {indexing_maps = [#[[ID:.*]], #[[ROW:.*]], #[[COL:.*]]], iterator_types = ["reduction", "parallel"]} ins(%[[DY]], %[[R]] : memref<?x256xbf16>, memref<?x1xf32>) outs(%arg2 : memref<256xf32>)
// CHECK-NOT:   memref.collapse_shape
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#col = affine_map<(d0, d1, d2) -> (d2)>
module attributes {sym.ranges = {s0 = "2:", s1 = "2:"}} {
func.func @column_partials(%dy: memref<?x?x256xbf16> {sym.dims = ["s0", "s1", "256"]}, %rstd: memref<?x?x1xf32> {sym.dims = ["s0", "s1", "1"]}, %dw: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #col], iterator_types = ["reduction", "reduction", "parallel"]} ins(%dy, %rstd : memref<?x?x256xbf16>, memref<?x?x1xf32>) outs(%dw : memref<256xf32>) {
  ^bb0(%a: bf16, %r: f32, %o: f32):
    %e = arith.extf %a : bf16 to f32
    %m = arith.mulf %e, %r : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
}

// -----

// A row reduction into a buffer it fills first, then a normalization reading it: the fill, the
// reduction and the normalization all see one [B*L, 1] view of the statistics (a row group of
// sym-gpu-map-parallel compares buffers by value), made once, after the allocation.
// CHECK-LABEL: func.func @row_group
// CHECK:       %[[A:.*]] = memref.alloc
// CHECK-NEXT:  %[[S:.*]] = memref.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : memref<?x?x1xf32> into memref<?x1xf32>
// CHECK:       linalg.fill ins(%{{.*}} : f32) outs(%[[S]] : memref<?x1xf32>)
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X:.*]] : memref<?x256xf32>) outs(%[[S]] : memref<?x1xf32>)
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[S]] : memref<?x256xf32>, memref<?x1xf32>)
// CHECK-SAME:  outs(%{{.*}} : memref<?x256xf32>)
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
module attributes {sym.ranges = {s0 = "2:", s1 = "2:"}} {
func.func @row_group(%x: memref<?x?x256xf32> {sym.dims = ["s0", "s1", "256"]}, %y: memref<?x?x256xf32> {sym.dims = ["s0", "s1", "256"]}, %b: index, %l: index) {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc(%b, %l) : memref<?x?x1xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<?x?x1xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<?x?x256xf32>) outs(%s : memref<?x?x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x?x256xf32>, memref<?x?x1xf32>) outs(%y : memref<?x?x256xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %t = arith.subf %a, %m : f32
    linalg.yield %t : f32
  }
  return
}
}

// -----

// Left alone: a position embedding [L, D] read at (d1, d2) (it uses part of the group); a group with
// a unit dim; a buffer not contiguous over the group; a body that reads its indices; the innermost
// dim (a generic over [B, L] keeps its last dim, as a row of a row group); arguments whose group ends
// in a dim that may be 1 (PyTorch's stride there is arbitrary): no facts, or a count from 0 (u0),
// generics and fills alike.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:   memref.collapse_shape
// CHECK:       return
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#pos = affine_map<(d0, d1, d2) -> (d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {sym.ranges = {s0 = "2:", s1 = "2:", u0 = "0:"}} {
func.func @left_alone(%x: memref<?x?x256xf32> {sym.dims = ["s0", "s1", "256"]}, %p: memref<?x256xf32>, %y: memref<?x?x256xf32> {sym.dims = ["s0", "s1", "256"]}, %u: memref<?x1x256xf32>,
                      %v: memref<?x1x256xf32>, %s: memref<4x8x256xf32, strided<[4096, 256, 1]>>, %t: memref<4x8x256xf32>,
                      %w: memref<?x?xf32>, %z: memref<?x?xf32>, %n: memref<?x?x256xf32>, %m: memref<?x?x256xf32> {sym.dims = ["s0", "u0", "256"]}) {
  linalg.generic {indexing_maps = [#id, #pos, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %p : memref<?x?x256xf32>, memref<?x256xf32>) outs(%y : memref<?x?x256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t0 = arith.addf %a, %b : f32
    linalg.yield %t0 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%u : memref<?x1x256xf32>) outs(%v : memref<?x1x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : memref<4x8x256xf32, strided<[4096, 256, 1]>>) outs(%t : memref<4x8x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : memref<?x?x256xf32>) outs(%y : memref<?x?x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %t1 = arith.addf %a, %f : f32
    linalg.yield %t1 : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : memref<?x?xf32>) outs(%z : memref<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%n : memref<?x?x256xf32>) outs(%y : memref<?x?x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m : memref<?x?x256xf32>) outs(%y : memref<?x?x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%n : memref<?x?x256xf32>)
  return
}
}

// -----

// Ops that share a reduction's per-row result collapse together or not at all: the normalization
// reads a position embedding at (d1, d2) and cannot collapse, so the fill and the reduction of its
// statistics stay as they are too (sym-gpu-map-parallel groups nests over the same rows only). The
// column sum of the same input, which shares no per-row result with them, still collapses.
// CHECK-LABEL: func.func @all_or_none
// CHECK:       %[[X:.*]] = memref.collapse_shape %arg0
// CHECK-NOT:   memref.collapse_shape
// CHECK:       linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<?x?x1xf32>)
// CHECK:       iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:       iterator_types = ["parallel", "parallel", "parallel"]
// CHECK:       iterator_types = ["reduction", "parallel"]} ins(%[[X]] : memref<?x256xf32>)
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#pos = affine_map<(d0, d1, d2) -> (d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>
module attributes {sym.ranges = {s0 = "2:", s1 = "2:"}} {
func.func @all_or_none(%x: memref<?x?x256xf32> {sym.dims = ["s0", "s1", "256"]}, %p: memref<?x256xf32> {sym.dims = ["s1", "256"]}, %y: memref<?x?x256xf32> {sym.dims = ["s0", "s1", "256"]}, %c: memref<256xf32>, %b: index, %l: index) {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc(%b, %l) : memref<?x?x1xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<?x?x1xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<?x?x256xf32>) outs(%s : memref<?x?x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #pos, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s, %p : memref<?x?x256xf32>, memref<?x?x1xf32>, memref<?x256xf32>) outs(%y : memref<?x?x256xf32>) {
  ^bb0(%a: f32, %m: f32, %q: f32, %o: f32):
    %t = arith.subf %a, %m : f32
    %u = arith.addf %t, %q : f32
    linalg.yield %u : f32
  }
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "reduction", "parallel"]} ins(%x : memref<?x?x256xf32>) outs(%c : memref<256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  }
  return
}
}
