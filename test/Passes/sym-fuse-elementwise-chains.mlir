// RUN: symopt %s --split-input-file --sym-fuse-elementwise-chains | filecheck %s
// RUN: symopt %s --split-input-file --sym-fuse-elementwise-chains='max-reads=3' | filecheck %s --check-prefix=READS3

// Runs on tensors after linalg-fuse-elementwise-ops (sym-lower-to-nvvm): elementwise producers whose
// other users are tensor.dims are fused into their elementwise consumer; nothing else is.

#id = affine_map<(i, j, k) -> (i, j, k)>
#col = affine_map<(i, j, k) -> (k)>

// A bf16 linear's epilogue after a reshape: the bias add (also read by tensor.dims) and the rounding.
// CHECK-LABEL: func.func @bias_then_round
// CHECK-SAME:  (%[[MM:.*]]: tensor<?x?x32xf32>, %[[B:.*]]: tensor<32xbf16>, %[[E0:.*]]: tensor<?x?x32xf32>, %[[E1:.*]]: tensor<?x?x32xbf16>)
// CHECK:       %[[D:.*]] = tensor.dim %[[E0]], %c0
// CHECK:       %[[R:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[B]] : tensor<?x?x32xf32>, tensor<32xbf16>) outs(%[[E1]] : tensor<?x?x32xbf16>)
// CHECK-NEXT:  ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:    %[[W:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[X]], %[[W]] : f32
// CHECK-NEXT:    %[[T:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT:    linalg.yield %[[T]] : bf16
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R]], %[[D]]
func.func @bias_then_round(%mm: tensor<?x?x32xf32>, %b: tensor<32xbf16>, %e0: tensor<?x?x32xf32>,
                           %e1: tensor<?x?x32xbf16>) -> (tensor<?x?x32xbf16>, index) {
  %c0 = arith.constant 0 : index
  %a = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm, %b : tensor<?x?x32xf32>, tensor<32xbf16>) outs(%e0 : tensor<?x?x32xf32>) {
  ^bb0(%x: f32, %y: bf16, %out: f32):
    %w = arith.extf %y : bf16 to f32
    %s = arith.addf %x, %w : f32
    linalg.yield %s : f32
  } -> tensor<?x?x32xf32>
  %d = tensor.dim %a, %c0 : tensor<?x?x32xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<?x?x32xf32>) outs(%e1 : tensor<?x?x32xbf16>) {
  ^bb0(%x: f32, %out: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x?x32xbf16>
  return %r, %d : tensor<?x?x32xbf16>, index
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// A chain of three, the middle one read twice by its consumer: one generic.
// CHECK-LABEL: func.func @chain_of_three
// CHECK:       linalg.generic {{.*}} ins(%arg0 : tensor<?x?xf32>) outs(%arg1 : tensor<?x?xf32>)
// CHECK-NEXT:  ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[X]]
// CHECK-NEXT:    %[[N:.*]] = arith.negf %[[E]]
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[N]], %[[N]]
// CHECK-NEXT:    linalg.yield %[[M]]
// CHECK-NOT:   linalg.generic
func.func @chain_of_three(%x: tensor<?x?xf32>, %e: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.negf %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q, %q : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (i)>

// Left apart: a producer with a second real user, a contraction consumer (a matrix-vector product:
// sym-gpu-library-calls' cuBLAS call would be lost), and a producer reading its outs value.
// CHECK-LABEL: func.func @left_apart
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT:   linalg.generic
func.func @left_apart(%x: tensor<?x?xf32>, %e: tensor<?x?xf32>, %acc: tensor<?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>) {
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.negf %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.cos %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%r, %x : tensor<?x?xf32>, tensor<?x?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %m = arith.mulf %in, %w : f32
    %t = arith.addf %m, %out : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%u : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.negf %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %a, %p, %s, %v : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>
#col = affine_map<(i, j) -> (j)>

// A consumer reading the producer through a permutation (q's bias add read by its scale through the
// permute into heads): fused, the producer's input maps composed with it.
// CHECK-DAG: #[[T:map[0-9]*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[R:map[0-9]*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @through_a_permutation
// CHECK:       linalg.generic {indexing_maps = [#[[T]], #[[R]], #{{map[0-9]*}}]
// CHECK-SAME:    ins(%arg0, %arg2 : tensor<?x?xf32>, tensor<?xf32>)
// CHECK:         arith.addf
// CHECK-NEXT:    arith.negf
// CHECK-NOT:   linalg.generic
func.func @through_a_permutation(%x: tensor<?x?xf32>, %e: tensor<?x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {
  %q = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %t = arith.addf %in, %b : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %b = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.negf %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %b : tensor<?x?xf32>
}

// -----

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#red4 = affine_map<(a, b, c, d) -> (a, b, c)>

// Attention's scale of the scores, read by softmax's max, its sum of exponentials and its
// normalization: each consumer (two reductions, one elementwise) gets its own copy of the multiply;
// the scaled scores are no longer a kernel and a buffer of their own.
// CHECK-LABEL: func.func @into_reductions
// CHECK-SAME:    (%[[S:[a-z0-9]+]]: tensor<1x4x?x?xf32>
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME:      ins(%[[S]] : tensor<1x4x?x?xf32>)
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.maximumf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME:      ins(%[[S]], %{{.*}} : tensor<1x4x?x?xf32>, tensor<1x4x?xf32>)
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.subf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME:      ins(%[[S]], %{{.*}}, %{{.*}} :
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.subf
// CHECK-NOT:     linalg.generic
func.func @into_reductions(%s: tensor<1x4x?x?xf32>, %e: tensor<1x4x?x?xf32>, %acc: tensor<1x4x?xf32>)
    -> tensor<1x4x?x?xf32> {
  %scale = arith.constant 0.125 : f32
  %p = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x4x?x?xf32>) outs(%e : tensor<1x4x?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %in, %scale : f32
    linalg.yield %t : f32
  } -> tensor<1x4x?x?xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p : tensor<1x4x?x?xf32>) outs(%acc : tensor<1x4x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.maximumf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<1x4x?xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #red4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %mx : tensor<1x4x?x?xf32>, tensor<1x4x?xf32>) outs(%acc : tensor<1x4x?xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %x = math.exp %d : f32
    %t = arith.addf %x, %out : f32
    linalg.yield %t : f32
  } -> tensor<1x4x?xf32>
  %r = linalg.generic {indexing_maps = [#id4, #red4, #red4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %mx, %sum : tensor<1x4x?x?xf32>, tensor<1x4x?xf32>, tensor<1x4x?xf32>) outs(%e : tensor<1x4x?x?xf32>) {
  ^bb0(%in: f32, %m: f32, %z: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %x = math.exp %d : f32
    %t = arith.divf %x, %z : f32
    linalg.yield %t : f32
  } -> tensor<1x4x?x?xf32>
  return %r : tensor<1x4x?x?xf32>
}

// -----

#id2 = affine_map<(i, j) -> (i, j)>
#none = affine_map<(i, j) -> ()>

// A producer with no inputs (its loops' sizes come from its init) read by a reduction to one value:
// the fused generic takes a 1-d empty tensor of each loop's size (without them it had no operand
// giving the sizes: invalid IR, which crashed the GPU lowering of a masked_select's count).
// CHECK-DAG:   #[[R:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[C:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @loop_sizes_from_the_init
// CHECK-DAG:     %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK-DAG:     %[[M:.*]] = tensor.dim %arg0, %c1
// CHECK-DAG:     %[[RS:.*]] = tensor.empty(%[[N]]) : tensor<?xi64>
// CHECK-DAG:     %[[CS:.*]] = tensor.empty(%[[M]]) : tensor<?xi64>
// CHECK:         linalg.generic {indexing_maps = [#[[R]], #[[C]], #{{.*}}], iterator_types = ["reduction", "reduction"]}
// CHECK-SAME:      ins(%[[RS]], %[[CS]] : tensor<?xi64>, tensor<?xi64>) outs(%arg1 : tensor<i64>)
// CHECK-NEXT:    ^bb0(%{{.*}}: i64, %{{.*}}: i64, %[[OUT:.*]]: i64):
// CHECK-NEXT:      %[[I:.*]] = linalg.index 0
// CHECK-NEXT:      %[[V:.*]] = arith.index_cast %[[I]]
// CHECK-NEXT:      arith.addi %[[V]], %[[OUT]]
// CHECK-NOT:     linalg.generic
func.func @loop_sizes_from_the_init(%e: tensor<?x?xi64>, %acc: tensor<i64>) -> tensor<i64> {
  %p = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<?x?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i64
    linalg.yield %v : i64
  } -> tensor<?x?xi64>
  %s = linalg.generic {indexing_maps = [#id2, #none], iterator_types = ["reduction", "reduction"]}
      ins(%p : tensor<?x?xi64>) outs(%acc : tensor<i64>) {
  ^bb0(%in: i64, %out: i64):
    %t = arith.addi %in, %out : i64
    linalg.yield %t : i64
  } -> tensor<i64>
  return %s : tensor<i64>
}

// -----

#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// Left apart: a product summed over rows (`(x * x[0]).sum(0)`, the product with a second use): the
// fused body would be a contraction's (`out + a * b`), which sym-gpu-library-calls makes a library
// call of an equation cuBLAS does not take, instead of our column reduction.
// CHECK-LABEL: func.func @no_new_contraction
// CHECK-COUNT-3: linalg.generic
func.func @no_new_contraction(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>, %e: tensor<?x?xf32>, %acc: tensor<?xf32>)
    -> (tensor<?xf32>, tensor<?x?xf32>) {
  %p = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %s = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%p : tensor<?x?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.negf %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %s, %n : tensor<?xf32>, tensor<?x?xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>

// Through a permutation, the producer's `linalg.index 1` (its loop j) is the consumer's loop 0 (a
// gather along the last dim, `x.index_select(-1, i) * 3`, read its indices transposed before).
// CHECK-LABEL: func.func @index_through_a_permutation
// CHECK:       linalg.generic
// CHECK:         linalg.index 0 : index
// CHECK-NOT:     linalg.index 1
// CHECK:         arith.negf
func.func @index_through_a_permutation(%x: tensor<?x?xf32>, %e: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %t = arith.addf %in, %jf : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %b = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.negf %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %b : tensor<?x?xf32>
}

// -----

// A causal mask at a dynamic batch: aranges over [s, 1] and [1, s] (no inputs, a few ops), read by
// the softmax max through broadcasts, are computed in it: their loop indices become the consumer's
// loops, a broadcast unit dim's index 0. A producer with inputs read through a broadcast stays (its
// body would run once per consumer element).
// CHECK-LABEL: func.func @broadcast_aranges
// CHECK:       %[[BIAS:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<?xf32>)
// CHECK:       linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %[[BIAS]] : tensor<?x?x?xf32>, tensor<?xf32>)
// CHECK-DAG:     %[[Z:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[I:.*]] = linalg.index 1 : index
// CHECK-DAG:     arith.addi %[[I]], %[[Z]] : index
// CHECK-DAG:     %[[J:.*]] = linalg.index 2 : index
// CHECK-DAG:     arith.index_cast %[[J]]
// CHECK:         arith.cmpi sgt
// CHECK-NOT:   linalg.generic
#col = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1, d2) -> (d1, 0)>
#cols = affine_map<(d0, d1, d2) -> (0, d2)>
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#b3 = affine_map<(d0, d1, d2) -> (d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
#id1 = affine_map<(d0) -> (d0)>
func.func @broadcast_aranges(%x: tensor<?x?x?xf32>, %bias: tensor<?xf32>, %acc: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c1 = arith.constant 1 : index
  %s = tensor.dim %x, %c1 : tensor<?x?x?xf32>
  %ninf = arith.constant -3.0e38 : f32
  %er = tensor.empty(%s) : tensor<?x1xi64>
  %r = linalg.generic {indexing_maps = [#col], iterator_types = ["parallel", "parallel"]} outs(%er : tensor<?x1xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %unit = linalg.index 1 : index
    %iu = arith.addi %i, %unit : index
    %v = arith.index_cast %iu : index to i64
    linalg.yield %v : i64
  } -> tensor<?x1xi64>
  %ec = tensor.empty(%s) : tensor<1x?xi64>
  %c = linalg.generic {indexing_maps = [#col], iterator_types = ["parallel", "parallel"]} outs(%ec : tensor<1x?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 1 : index
    %v = arith.index_cast %i : index to i64
    linalg.yield %v : i64
  } -> tensor<1x?xi64>
  %eb = tensor.empty(%s) : tensor<?xf32>
  %b2 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%bias : tensor<?xf32>) outs(%eb : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<?xf32>
  %m = linalg.generic {indexing_maps = [#x3, #rows, #cols, #b3, #red], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %r, %c, %b2 : tensor<?x?x?xf32>, tensor<?x1xi64>, tensor<1x?xi64>, tensor<?xf32>) outs(%acc : tensor<?x?xf32>) {
  ^bb0(%in: f32, %row: i64, %col: i64, %b: f32, %out: f32):
    %future = arith.cmpi sgt, %col, %row : i64
    %y = arith.addf %in, %b : f32
    %v = arith.select %future, %ninf, %y : f32
    %mx = arith.maximumf %v, %out : f32
    linalg.yield %mx : f32
  } -> tensor<?x?xf32>
  return %m : tensor<?x?xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// A residual sum of three tensors read by a row sum and by the next elementwise op: a copy in each
// would load three tensors at every element, more than writing the sum once and reading it twice
// costs; it stays. With one consumer it is fused (a copy is no extra load).
// CHECK-LABEL: func.func @copies_loading_too_much
// CHECK:         %[[H:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 :
// CHECK:         linalg.generic {{.*}}"reduction"]} ins(%[[H]] :
// CHECK:         linalg.generic {{.*}} ins(%[[H]] :
// With max-reads=3 it is copied into both.
// READS3-LABEL: func.func @copies_loading_too_much
// READS3:         linalg.generic {{.*}}"reduction"]} ins(%arg0, %arg1, %arg2 :
// READS3:         linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 :
// READS3-NOT:     linalg.generic
// READS3-LABEL: func.func @one_consumer_loading_three
// CHECK-LABEL: func.func @one_consumer_loading_three
// CHECK:         linalg.generic {{.*}}"reduction"]} ins(%arg0, %arg1, %arg2 :
// CHECK-NOT:     linalg.generic
func.func @copies_loading_too_much(%x: tensor<?x?xf32>, %a: tensor<?x?xf32>, %b: tensor<?x?xf32>,
                                   %e: tensor<?x?xf32>, %acc: tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  %h = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %a, %b : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32, %out: f32):
    %t = arith.addf %p, %q : f32
    %u = arith.addf %t, %r : f32
    linalg.yield %u : f32
  } -> tensor<?x?xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<?x?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%p: f32, %out: f32):
    %t = arith.addf %p, %out : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%p: f32, %out: f32):
    %t = arith.mulf %p, %p : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %s, %y : tensor<?xf32>, tensor<?x?xf32>
}
func.func @one_consumer_loading_three(%x: tensor<?x?xf32>, %a: tensor<?x?xf32>, %b: tensor<?x?xf32>,
                                      %e: tensor<?x?xf32>, %acc: tensor<?xf32>) -> tensor<?xf32> {
  %h = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %a, %b : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32, %out: f32):
    %t = arith.addf %p, %q : f32
    %u = arith.addf %t, %r : f32
    linalg.yield %u : f32
  } -> tensor<?x?xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<?x?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%p: f32, %out: f32):
    %t = arith.addf %p, %out : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %s : tensor<?xf32>
}

// -----

// A producer reading its input through `d1 mod 8` (a concat after sym-concat-to-select), read
// transposed: the composed map is `d0 mod 8` over the consumer's loops (every expression of the
// producer's maps is composed, not only bare dims).
// CHECK:       #[[MAP:.*]] = affine_map<(d0, d1) -> (d1, d0 mod 8)>
// CHECK-LABEL: func.func @modulo_map_through_transpose
// CHECK:         linalg.generic {indexing_maps = [#[[MAP]], #{{.*}}]
// CHECK-SAME:      ins(%arg0 : tensor<4x8xf32>)
// CHECK:           linalg.index 0
// CHECK:           math.exp
#id = affine_map<(d0, d1) -> (d0, d1)>
#mod = affine_map<(d0, d1) -> (d0, d1 mod 8)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @modulo_map_through_transpose(%a: tensor<4x8xf32>) -> (tensor<16x4xf32>, index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %e0 = tensor.empty() : tensor<4x16xf32>
  %c = linalg.generic {indexing_maps = [#mod, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e0 : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %j = linalg.index 1 : index
    %first = arith.cmpi ult, %j, %c8 : index
    %n = arith.negf %x : f32
    %v = arith.select %first, %x, %n : f32
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  %d = tensor.dim %c, %c0 : tensor<4x16xf32>
  %e = tensor.empty() : tensor<16x4xf32>
  %r = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<4x16xf32>) outs(%e : tensor<16x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<16x4xf32>
  return %r, %d : tensor<16x4xf32>, index
}

// -----

#bc = affine_map<(i, j) -> (i, 0)>
#id2 = affine_map<(i, j) -> (i, j)>

// Cross entropy's gradient before its row sum: a one-hot [N, V] of [N, 1] targets (V only in the
// init's sizes), read by the row sum and by the final elementwise op (each gets a copy). The row sum
// takes a 1-d empty tensor of V's size, so the one-hot is not a float32 [N, V] buffer written and
// read back.
// CHECK-DAG:   #[[V:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @one_hot_row_sum
// CHECK:         %[[VS:.*]] = tensor.empty(%{{.*}}) : tensor<?xf32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[V]], #{{.*}}], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      ins(%arg0, %[[VS]] : tensor<?x1xi64>, tensor<?xf32>)
// CHECK:           arith.cmpi eq
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK-SAME:      ins(%arg0, %arg1, %{{.*}} : tensor<?x1xi64>, tensor<?x?xf32>, tensor<?x1xf32>)
// CHECK:           arith.cmpi eq
// CHECK:           arith.subf
// CHECK-NOT:     linalg.generic
func.func @one_hot_row_sum(%t: tensor<?x1xi64>, %logp: tensor<?x?xf32>, %acc: tensor<?x1xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %logp, %c0 : tensor<?x?xf32>
  %v = tensor.dim %logp, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%n, %v) : tensor<?x?xf32>
  %oh = linalg.generic {indexing_maps = [#bc, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<?x1xi64>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%i: i64, %out: f32):
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %jj, %i : i64
    %one = arith.constant -1.0 : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.select %eq, %one, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %s = linalg.generic {indexing_maps = [#id2, #bc], iterator_types = ["parallel", "reduction"]}
      ins(%oh : tensor<?x?xf32>) outs(%acc : tensor<?x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<?x1xf32>
  %e2 = tensor.empty(%n, %v) : tensor<?x?xf32>
  %g = linalg.generic {indexing_maps = [#id2, #id2, #bc, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%oh, %logp, %s : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x1xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%o: f32, %l: f32, %z: f32, %out: f32):
    %x = math.exp %l : f32
    %m = arith.mulf %x, %z : f32
    %d = arith.subf %o, %m : f32
    linalg.yield %d : f32
  } -> tensor<?x?xf32>
  return %g : tensor<?x?xf32>
}
