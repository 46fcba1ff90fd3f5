// RUN: symopt %s --split-input-file --sym-collapse-broadcast-dims | filecheck %s

// A bf16 batch norm + ReLU after an NCHW convolution: the per-channel vectors ([C, 1, 1], map
// (d1, 0, 0)) skip H and W, the image and the output read them contiguously: the generic runs over
// [N, C, H*W], the image and the output through collapse_shape views, the vectors as they were.
// CHECK-LABEL: func.func @per_channel
// CHECK:       %[[X:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<?x64x?x?xbf16> into memref<?x64x?xbf16>
// CHECK:       %[[Y:.*]] = memref.collapse_shape %arg2 {{\[}}[0], [1], [2, 3]] : memref<?x64x?x?xbf16> into memref<?x64x?xbf16>
// CHECK:       linalg.generic {indexing_maps = [#[[ID:.*]], #[[CH:.*]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %arg1 : memref<?x64x?xbf16>, memref<64x1x1xbf16>) outs(%[[Y]] : memref<?x64x?xbf16>)
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @per_channel(%x: memref<?x64x?x?xbf16>, %s: memref<64x1x1xbf16>, %y: memref<?x64x?x?xbf16>) {
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x64x?x?xbf16>, memref<64x1x1xbf16>) outs(%y : memref<?x64x?x?xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %m = arith.mulf %a, %b : bf16
    linalg.yield %m : bf16
  }
  return
}

// -----

// 3-d convolutions: a [C] vector (map (d1)) over [N, C, D, H, W] collapses D, H and W; a static
// strided view that is contiguous over them collapses too (its strides kept).
// CHECK-LABEL: func.func @conv3d_bias
// CHECK:       memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3, 4]] : memref<2x8x4x5x6xf32> into memref<2x8x120xf32>
// CHECK:       memref.collapse_shape %arg2 {{\[}}[0], [1], [2, 3, 4]] : memref<2x8x4x5x6xf32, strided<[1920, 240, 30, 6, 1], offset: 7>> into memref<2x8x120xf32, strided<[1920, 240, 1], offset: 7>>
// CHECK:       iterator_types = ["parallel", "parallel", "parallel"]
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#c5 = affine_map<(d0, d1, d2, d3, d4) -> (d1)>
func.func @conv3d_bias(%x: memref<2x8x4x5x6xf32>, %b: memref<8xf32>, %y: memref<2x8x4x5x6xf32, strided<[1920, 240, 30, 6, 1], offset: 7>>) {
  linalg.generic {indexing_maps = [#id5, #c5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x, %b : memref<2x8x4x5x6xf32>, memref<8xf32>) outs(%y : memref<2x8x4x5x6xf32, strided<[1920, 240, 30, 6, 1], offset: 7>>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left alone: a pure elementwise generic (no broadcast: row groups want its rows), a bias over the
// innermost dim (a transformer's [B, S, H] + [H]: it uses the innermost dim), a transposed read, a
// non-contiguous view, a generic with linalg.index, a reduction, and a normalization that reads
// statistics a reduction wrote in the block (a row group).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:   memref.collapse_shape
// CHECK:       return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#tr = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#row = affine_map<(d0, d1, d2) -> (d0)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @left_alone(%x: memref<4x5x6xf32>, %b: memref<6xf32>, %r: memref<4xf32>, %v: memref<4x5x6xf32, strided<[60, 12, 1]>>, %y: memref<4x5x6xf32>, %st: memref<4x5xf32>, %xt: memref<4x6x5xf32>) {
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : memref<4x5x6xf32>) outs(%y : memref<4x5x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id3, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %b : memref<4x5x6xf32>, memref<6xf32>) outs(%y : memref<4x5x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#tr, #row, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xt, %r : memref<4x6x5xf32>, memref<4xf32>) outs(%y : memref<4x5x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id3, #row, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v, %r : memref<4x5x6xf32, strided<[60, 12, 1]>>, memref<4xf32>) outs(%y : memref<4x5x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id3, #row, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %r : memref<4x5x6xf32>, memref<4xf32>) outs(%y : memref<4x5x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %i = linalg.index 2 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %s = arith.addf %a, %f : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<4x5x6xf32>) outs(%st : memref<4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  %z = memref.alloc() : memref<4x1x1xf32>
  %c0 = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id3, #row], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : memref<4x5x6xf32>) outs(%r : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id3, #row, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %r : memref<4x5x6xf32>, memref<4xf32>) outs(%y : memref<4x5x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.subf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Review regression: a constant index other than 0 in a broadcast operand's map is kept.
// CHECK:       affine_map<(d0, d1, d2) -> (d1, 1)>
// CHECK-LABEL: func.func @const1
// CHECK:       memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 1)>
func.func @const1(%x: memref<2x4x6x6xf32>, %s: memref<4x2xf32>, %y: memref<2x4x6x6xf32>) {
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : memref<2x4x6x6xf32>, memref<4x2xf32>) outs(%y : memref<2x4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}
