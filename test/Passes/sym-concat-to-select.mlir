// RUN: symopt %s --split-input-file --sym-concat-to-select | filecheck %s
// RUN: symopt %s --split-input-file --pass-pipeline='builtin.module(sym-concat-to-select, sym-decompose-concat, canonicalize, func.func(linalg-fuse-elementwise-ops), canonicalize)' | filecheck %s --check-prefix=FUSED

// Two pieces of 32 along dim 1: one generic over the result reading both through `j mod 32`,
// selecting the first for j < 32.
// CHECK-DAG:   #[[MOD:.*]] = affine_map<(d0, d1) -> (d0, d1 mod 32)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @two_pieces
// CHECK:         %[[M:.*]] = tensor.dim %arg0, %c0
// CHECK:         %[[E:.*]] = tensor.empty(%[[M]]) : tensor<?x64xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[MOD]], #[[MOD]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<?x32xf32>, tensor<?x32xf32>) outs(%[[E]] : tensor<?x64xf32>)
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[J:.*]] = linalg.index 1 : index
// CHECK:           %[[FIRST:.*]] = arith.cmpi ult, %[[J]], %c32
// CHECK:           %[[V:.*]] = arith.select %[[FIRST]], %[[A]], %[[B]] : f32
// CHECK:           linalg.yield %[[V]]
// CHECK:         return %[[R]]
// CHECK-NOT:     tensor.concat
func.func @two_pieces(%a: tensor<?x32xf32>, %b: tensor<?x32xf32>) -> tensor<?x64xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x64xf32>
  return %c : tensor<?x64xf32>
}

// -----

// rotate_half as Llama writes it, then q * cos + rotate_half(q) * sin: the negation and both slices
// are read by the select, which fuses into the product: one generic reading q (directly and
// through `j mod 8` at offsets 8 and 0 as slices), cos and sin. Sizes typed dynamic but computed
// from constants (torch-mlir's max(size - min(size, start), 0) of a dim of 16) are folded.
// CHECK-LABEL: func.func @rotate_half
// CHECK:         linalg.generic
// CHECK:           linalg.index 3
// CHECK:           arith.select
// CHECK-NOT:     tensor.concat
// FUSED-LABEL: func.func @rotate_half
// FUSED-COUNT-1: linalg.generic
// FUSED-NOT:     linalg.generic
// FUSED:           arith.negf
// FUSED:           arith.select
// FUSED:           arith.mulf
// FUSED:           arith.addf
// FUSED-NOT:     tensor.insert_slice
// FUSED:         return
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#cs = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
func.func @rotate_half(%q: tensor<?x2x?x16xf32>, %cos: tensor<?x16xf32>, %sin: tensor<?x16xf32>) -> tensor<?x2x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8_i64 = arith.constant 8 : i64
  %c0_i64 = arith.constant 0 : i64
  %b = tensor.dim %q, %c0 : tensor<?x2x?x16xf32>
  %l = tensor.dim %q, %c2 : tensor<?x2x?x16xf32>
  %d = tensor.dim %q, %c3 : tensor<?x2x?x16xf32>
  %di = arith.index_cast %d : index to i64
  %start = arith.minsi %di, %c8_i64 : i64
  %s = arith.index_cast %start : i64 to index
  %rest = arith.subi %d, %s : index
  %len = arith.maxsi %rest, %c0 : index
  %hi = tensor.extract_slice %q[0, 0, 0, %s] [%b, 2, %l, %len] [1, 1, 1, 1] : tensor<?x2x?x16xf32> to tensor<?x2x?x?xf32>
  %e = tensor.empty(%b, %l, %len) : tensor<?x2x?x?xf32>
  %neg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi : tensor<?x2x?x?xf32>) outs(%e : tensor<?x2x?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<?x2x?x?xf32>
  %lo = tensor.extract_slice %q[0, 0, 0, 0] [%b, 2, %l, 8] [1, 1, 1, 1] : tensor<?x2x?x16xf32> to tensor<?x2x?x8xf32>
  %r = tensor.concat dim(3) %neg, %lo : (tensor<?x2x?x?xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x?xf32>
  %rc = tensor.cast %r : tensor<?x2x?x?xf32> to tensor<?x2x?x16xf32>
  %e2 = tensor.empty(%b, %l) : tensor<?x2x?x16xf32>
  %out = linalg.generic {indexing_maps = [#id4, #cs, #id4, #cs, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q, %cos, %rc, %sin : tensor<?x2x?x16xf32>, tensor<?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x16xf32>) outs(%e2 : tensor<?x2x?x16xf32>) {
  ^bb0(%x: f32, %c: f32, %y: f32, %sn: f32, %o: f32):
    %p = arith.mulf %x, %c : f32
    %t = arith.mulf %y, %sn : f32
    %z = arith.addf %p, %t : f32
    linalg.yield %z : f32
  } -> tensor<?x2x?x16xf32>
  return %out : tensor<?x2x?x16xf32>
}

// -----

// Four pieces: a chain of selects at 4, 8 and 12.
// FUSED-LABEL: func.func @four_pieces
// CHECK-LABEL: func.func @four_pieces
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}]
// CHECK:           %[[J:.*]] = linalg.index 0 : index
// CHECK:           arith.cmpi ult, %[[J]], %c12
// CHECK:           arith.select
// CHECK:           arith.cmpi ult, %[[J]], %c8
// CHECK:           arith.select
// CHECK:           arith.cmpi ult, %[[J]], %c4
// CHECK:           arith.select
func.func @four_pieces(%a: tensor<4xi32>, %b: tensor<4xi32>, %c: tensor<4xi32>, %d: tensor<4xi32>) -> tensor<16xi32> {
  %r = tensor.concat dim(0) %a, %b, %c, %d : (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> tensor<16xi32>
  return %r : tensor<16xi32>
}

// -----

// Left to sym-decompose-concat: pieces of different sizes, of a size known only at run time, and a
// piece a contraction produces (it writes its slice of the result in place there, no copy).
// CHECK-LABEL: func.func @unequal
// CHECK:         tensor.concat
// CHECK-LABEL: func.func @dynamic_size
// CHECK:         tensor.concat
// CHECK-LABEL: func.func @contraction_piece
// CHECK:         linalg.matmul
// CHECK:         tensor.concat
// A rank-reducing slice's static sizes are its source's dims: no size is read from them.
// CHECK-LABEL: func.func @rank_reducing_slice
// CHECK:         tensor.concat
func.func @unequal(%a: tensor<?x32xf32>, %b: tensor<?x16xf32>) -> tensor<?x48xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<?x32xf32>, tensor<?x16xf32>) -> tensor<?x48xf32>
  return %c : tensor<?x48xf32>
}
func.func @dynamic_size(%a: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %c = tensor.concat dim(1) %a, %a : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>
  return %c : tensor<4x?xf32>
}
func.func @contraction_piece(%a: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = tensor.concat dim(1) %m, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}
func.func @rank_reducing_slice(%t: tensor<?x?x?xf32>, %n: index, %b: tensor<1x5xf32>) -> tensor<?x5xf32> {
  %s = tensor.extract_slice %t[0, 0, 0] [1, %n, 5] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x5xf32>
  %c = tensor.concat dim(0) %s, %b : (tensor<?x5xf32>, tensor<1x5xf32>) -> tensor<?x5xf32>
  return %c : tensor<?x5xf32>
}
