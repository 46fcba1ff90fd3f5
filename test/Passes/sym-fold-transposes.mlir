// RUN: symopt %s --split-input-file --sym-fold-transposes | filecheck %s

// A transpose only generics read: each reads the transpose's input through the composed map (k^T
// into q @ k^T keeps the contraction's `out + a * b` body, the library call's form).
// CHECK-DAG:   #[[KT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-LABEL: func.func @into_readers
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[KT]], #{{.*}}]
// CHECK-SAME:      ins(%arg0, %arg1 : tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>)
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.addf
func.func @into_readers(%q: tensor<2x4x?x16xf32>, %k: tensor<2x4x?x16xf32>, %s: tensor<2x4x?x?xf32>) -> tensor<2x4x?x?xf32> {
  %c2 = arith.constant 2 : index
  %n = tensor.dim %k, %c2 : tensor<2x4x?x16xf32>
  %e = tensor.empty(%n) : tensor<2x4x16x?xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x?x16xf32>) outs(%e : tensor<2x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kt : tensor<2x4x?x16xf32>, tensor<2x4x16x?xf32>) outs(%s : tensor<2x4x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %x = arith.addf %acc, %m : f32
    linalg.yield %x : f32
  } -> tensor<2x4x?x?xf32>
  return %r : tensor<2x4x?x?xf32>
}

// -----

// Shape queries of the transpose (a `tensor.dim`, a reshape only `tensor.dim`s read: what attention's
// expansion leaves beside q @ k^T) ask the transpose's init instead; they no longer keep it a kernel.
// CHECK-LABEL: func.func @shape_queries
// CHECK-SAME:    (%[[Q:.*]]: tensor<1x4x?x16xf32>, %[[K:.*]]: tensor<1x4x?x16xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<1x4x16x?xf32>
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[E]] {{\[}}[0, 1], [2], [3]]
// CHECK:         tensor.dim %[[C]], %c2
// CHECK:         tensor.dim %[[E]], %c3
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[Q]], %[[K]] : tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>)
func.func @shape_queries(%q: tensor<1x4x?x16xf32>, %k: tensor<1x4x?x16xf32>, %s: tensor<1x4x?x?xf32>) -> (tensor<1x4x?x?xf32>, index, index) {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %k, %c2 : tensor<1x4x?x16xf32>
  %e = tensor.empty(%n) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x?x16xf32>) outs(%e : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %c = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %d = tensor.dim %c, %c2 : tensor<4x16x?xf32>
  %d2 = tensor.dim %kt, %c3 : tensor<1x4x16x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kt : tensor<1x4x?x16xf32>, tensor<1x4x16x?xf32>) outs(%s : tensor<1x4x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %x = arith.addf %acc, %m : f32
    linalg.yield %x : f32
  } -> tensor<1x4x?x?xf32>
  return %r, %d, %d2 : tensor<1x4x?x?xf32>, index, index
}

// -----

// A transpose the return reads, of an elementwise generic's result that nothing else reads: the
// generic writes the transposed layout into the transpose's init (the bias add and the permute into
// heads in one kernel).
// CHECK-DAG:   #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func.func @into_producer
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<1x4x?x16xf32>
// CHECK-NEXT:    %[[G:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[OUT]]]
// CHECK-SAME:      outs(%[[E]] : tensor<1x4x?x16xf32>)
// CHECK:           arith.addf
// CHECK:         } -> tensor<1x4x?x16xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         return %[[G]]
func.func @into_producer(%x: tensor<1x?x4x16xf32>, %b: tensor<4x16xf32>) -> tensor<1x4x?x16xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c1 : tensor<1x?x4x16xf32>
  %e0 = tensor.empty(%n) : tensor<1x?x4x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (d2, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<1x?x4x16xf32>, tensor<4x16xf32>) outs(%e0 : tensor<1x?x4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x?x4x16xf32>
  %e1 = tensor.empty(%n) : tensor<1x4x?x16xf32>
  %t = linalg.transpose ins(%y : tensor<1x?x4x16xf32>) outs(%e1 : tensor<1x4x?x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x4x?x16xf32>
}

// -----

// A named matmul reading the transpose of a computed tensor (the gradient of a tied head,
// grad_logits^T @ h, where grad_logits has another reader) becomes the generic it stands for, which
// reads the transpose's input through the composed map; a matmul reading it untransposed is kept.
// CHECK-DAG:   #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @into_matmul_reader
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [#[[AT]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[NEG:.*]], %arg1 : tensor<6x5xf32>, tensor<6x3xf32>)
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK:         linalg.matmul ins(%[[NEG]], %arg2
func.func @into_matmul_reader(%g: tensor<6x5xf32>, %h: tensor<6x3xf32>, %w: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<6x3xf32>) {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<6x5xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<6x5xf32>) outs(%e0 : tensor<6x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %n = arith.negf %u : f32
    linalg.yield %n : f32
  } -> tensor<6x5xf32>
  %e1 = tensor.empty() : tensor<5x6xf32>
  %t = linalg.transpose ins(%neg : tensor<6x5xf32>) outs(%e1 : tensor<5x6xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<5x3xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %gw = linalg.matmul ins(%t, %h : tensor<5x6xf32>, tensor<6x3xf32>) outs(%z : tensor<5x3xf32>) -> tensor<5x3xf32>
  %e3 = tensor.empty() : tensor<6x3xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<6x3xf32>) -> tensor<6x3xf32>
  %gh = linalg.matmul ins(%neg, %w : tensor<6x5xf32>, tensor<5x3xf32>) outs(%z2 : tensor<6x3xf32>) -> tensor<6x3xf32>
  return %gw, %gh : tensor<5x3xf32>, tensor<6x3xf32>
}

// -----

// The same in bf16: the matmul reads the half operands and accumulates in float32 (the form
// sym-matmul-half-operands leaves); the generic keeps its conversions.
// CHECK-DAG:   #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @into_half_matmul_reader
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#[[AT]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[NEG:.*]], %arg1 : tensor<6x5xbf16>, tensor<6x3xbf16>) outs(%{{.*}} : tensor<5x3xf32>)
// CHECK:           arith.extf
// CHECK-NEXT:      arith.extf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf
func.func @into_half_matmul_reader(%g: tensor<6x5xbf16>, %h: tensor<6x3xbf16>) -> (tensor<5x3xf32>, tensor<6x5xbf16>) {
  %cst = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<6x5xbf16>
  %neg = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<6x5xbf16>) outs(%e0 : tensor<6x5xbf16>) {
  ^bb0(%u: bf16, %o: bf16):
    %n = arith.negf %u : bf16
    linalg.yield %n : bf16
  } -> tensor<6x5xbf16>
  %e1 = tensor.empty() : tensor<5x6xbf16>
  %t = linalg.transpose ins(%neg : tensor<6x5xbf16>) outs(%e1 : tensor<5x6xbf16>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<5x3xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %gw = linalg.matmul ins(%t, %h : tensor<5x6xbf16>, tensor<6x3xbf16>) outs(%z : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %gw, %neg : tensor<5x3xf32>, tensor<6x5xbf16>
}

// -----

// A linear layer under autocast: its weight's bf16 cast (a computed tensor) read transposed by a
// matmul that sym-matmul-half-operands built without an `indexing_maps` attribute (the default maps,
// which the generic form below leaves out too); it failed with "KeyError: attempt to access a
// non-existent attribute".
// CHECK-DAG:   #[[WT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @autocast_linear
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[WT]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%arg0, %[[W16:.*]] : tensor<?x4xbf16>, tensor<8x4xbf16>) outs(%{{.*}} : tensor<?x8xf32>)
func.func @autocast_linear(%x: tensor<?x4xbf16>, %w: tensor<8x4xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xbf16>
  %e0 = tensor.empty() : tensor<8x4xbf16>
  %w16 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x4xf32>) outs(%e0 : tensor<8x4xbf16>) {
  ^bb0(%u: f32, %o: bf16):
    %r = arith.truncf %u : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<8x4xbf16>
  %e1 = tensor.empty() : tensor<4x8xbf16>
  %t = linalg.transpose ins(%w16 : tensor<8x4xbf16>) outs(%e1 : tensor<4x8xbf16>) permutation = [1, 0]
  %e2 = tensor.empty(%n) : tensor<?x8xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %mm = "linalg.matmul"(%x, %t, %z) <{operandSegmentSizes = array<i32: 2, 1>}> ({
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %p = arith.mulf %a32, %b32 : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }) : (tensor<?x4xbf16>, tensor<4x8xbf16>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %mm : tensor<?x8xf32>
}

// -----

// Left alone: a transpose of a function argument a named matmul reads (sym-gpu-library-calls folds
// it into a transposed view), one of a result something else reads too, one of a reduction's
// result, and one whose producer reads its output.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: linalg.transpose
func.func @kept(%w: tensor<8x4xf32>, %x: tensor<3x4xf32>, %r: tensor<4x4xf32>) -> (tensor<3x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %wt = linalg.transpose ins(%w : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<3x8xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e2 : tensor<3x8xf32>) -> tensor<3x8xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<3x4xf32>, tensor<4x8xf32>) outs(%z : tensor<3x8xf32>) -> tensor<3x8xf32>
  %e3 = tensor.empty() : tensor<4x4xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4x4xf32>) outs(%e3 : tensor<4x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %n = arith.negf %u : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %e4 = tensor.empty() : tensor<4x4xf32>
  %nt = linalg.transpose ins(%neg : tensor<4x4xf32>) outs(%e4 : tensor<4x4xf32>) permutation = [1, 0]
  %acc = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4x4xf32>) outs(%r : tensor<4x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %s = arith.addf %u, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e5 = tensor.empty() : tensor<4x4xf32>
  %at = linalg.transpose ins(%acc : tensor<4x4xf32>) outs(%e5 : tensor<4x4xf32>) permutation = [1, 0]
  %red = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%r : tensor<4x4xf32>) outs(%r : tensor<4x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %s = arith.addf %u, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e6 = tensor.empty() : tensor<4x4xf32>
  %rt = linalg.transpose ins(%red : tensor<4x4xf32>) outs(%e6 : tensor<4x4xf32>) permutation = [1, 0]
  return %mm, %nt, %neg, %at, %rt : tensor<3x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
