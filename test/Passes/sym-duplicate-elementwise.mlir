// RUN: symopt %s --split-input-file --sym-duplicate-elementwise | filecheck %s
// RUN: symopt %s --split-input-file --sym-duplicate-elementwise='max-reads=100' | filecheck %s --check-prefix=ALL

// Runs on tensors before linalg-fuse-elementwise-ops (sym-lower-to-nvvm), which fuses single-use
// producers only: every consumer of the producer must end up with a copy of its own.

#id = affine_map<(i, j) -> (i, j)>

// CHECK-LABEL: func.func @two_consumers
// CHECK:       %[[P1:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<?x?xf32>)
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    math.exp
// CHECK:       %[[P2:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<?x?xf32>)
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    math.exp
// CHECK-DAG:   linalg.generic {{.*}} ins(%[[P1]] : tensor<?x?xf32>)
// CHECK-DAG:   linalg.generic {{.*}} ins(%[[P2]] : tensor<?x?xf32>)
// CHECK-NOT:   math.exp
func.func @two_consumers(%x: tensor<?x?xf32>, %e: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %a, %b : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// Softmax's exp(x - max): consumed by the row sum (a reduction) and by the division, which also
// takes the sum. Each gets its own exp.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// CHECK-LABEL: func.func @softmax_exp
// CHECK:       %[[E1:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<?x?xf32>, tensor<?xf32>)
// CHECK:         arith.subf
// CHECK-NEXT:    math.exp
// CHECK:       %[[E2:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<?x?xf32>, tensor<?xf32>)
// CHECK:         arith.subf
// CHECK-NEXT:    math.exp
// CHECK-DAG:   %[[S:.*]] = linalg.generic {{.*}}"reduction"]} ins(%[[E1]] : tensor<?x?xf32>)
// CHECK-DAG:   linalg.generic {{.*}} ins(%[[E2]], %[[S]] : tensor<?x?xf32>, tensor<?xf32>)
// CHECK-NOT:   math.exp
func.func @softmax_exp(%x: tensor<?x?xf32>, %max: tensor<?xf32>, %e: tensor<?x?xf32>, %acc: tensor<?xf32>) -> tensor<?x?xf32> {
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %t = math.exp %d : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%p : tensor<?x?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %s : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %t = arith.divf %in, %sum : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// One consumer: fusion reaches it already.
#id = affine_map<(i) -> (i)>

// CHECK-LABEL: func.func @no_rewrite_when_single_use
// CHECK:       math.exp
// CHECK-NOT:   math.exp
func.func @no_rewrite_when_single_use(%x: tensor<?xf32>, %e: tensor<?xf32>) -> tensor<?xf32> {
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %a : tensor<?xf32>
}

// -----

// The result is also returned: it is materialized anyway, copying it would only add work.
#id = affine_map<(i) -> (i)>

// CHECK-LABEL: func.func @no_rewrite_when_a_user_is_not_a_generic
// CHECK:       math.exp
// CHECK-NOT:   math.exp
func.func @no_rewrite_when_a_user_is_not_a_generic(%x: tensor<?xf32>, %e: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %a, %p : tensor<?xf32>, tensor<?xf32>
}

// -----

// A user takes it as its `outs` operand: not elementwise fusion.
#id = affine_map<(i) -> (i)>

// CHECK-LABEL: func.func @no_rewrite_when_used_as_outs
// CHECK:       math.exp
// CHECK-NOT:   math.exp
func.func @no_rewrite_when_used_as_outs(%x: tensor<?xf32>, %e: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%p : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %a, %b : tensor<?xf32>, tensor<?xf32>
}

// -----

// A reduction is not elementwise: recomputing it per consumer would repeat the whole reduction.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#r = affine_map<(i) -> (i)>

// CHECK-LABEL: func.func @no_rewrite_when_producer_reduces
// CHECK:       "reduction"
// CHECK-NOT:   "reduction"
func.func @no_rewrite_when_producer_reduces(%x: tensor<?x?xf32>, %acc: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %a = linalg.generic {indexing_maps = [#r, #r], iterator_types = ["parallel"]}
      ins(%s : tensor<?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %b = linalg.generic {indexing_maps = [#r, #r], iterator_types = ["parallel"]}
      ins(%s : tensor<?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %a, %b : tensor<?xf32>, tensor<?xf32>
}

// -----

// A body of more than 12 ops (here 12 arith ops and the yield) costs more to recompute than to read.
#id = affine_map<(i) -> (i)>

// CHECK-LABEL: func.func @no_rewrite_when_body_is_large
// CHECK:       math.exp
// CHECK-NOT:   math.exp
func.func @no_rewrite_when_body_is_large(%x: tensor<?xf32>, %e: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t0 = math.exp %in : f32
    %t1 = arith.addf %t0, %in : f32
    %t2 = arith.addf %t1, %in : f32
    %t3 = arith.addf %t2, %in : f32
    %t4 = arith.addf %t3, %in : f32
    %t5 = arith.addf %t4, %in : f32
    %t6 = arith.addf %t5, %in : f32
    %t7 = arith.addf %t6, %in : f32
    %t8 = arith.addf %t7, %in : f32
    %t9 = arith.addf %t8, %in : f32
    %t10 = arith.addf %t9, %in : f32
    %t11 = arith.addf %t10, %in : f32
    linalg.yield %t11 : f32
  } -> tensor<?xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %a, %b : tensor<?xf32>, tensor<?xf32>
}

// -----

// GPT-2's residual stream: h1 = x + a, h2 = h1 + b, h3 = h2 + c, each also read by a row sum (a
// layer norm). h1 loads 2 tensors (x, a): copied. h2, with h1 fused in, would load 3 at every
// element in each of its copies: kept, written once. h3 loads h2 and c: copied. Without the limit,
// the last row sum would reload every tensor of the chain.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// CHECK-LABEL: func.func @residual_stream
// CHECK:       linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK:       linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK:       %[[H2:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %arg2 : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK-NOT:   ins(%{{.*}}, %arg2 : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[H2]], %arg3 : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[H2]], %arg3 : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK-NOT:   ins(%[[H2]], %arg3
// With max-reads=100 every h is copied into each consumer.
// ALL-LABEL: func.func @residual_stream
// ALL-COUNT-2: ins(%{{.*}}, %arg2 : tensor<?x?xf32>, tensor<?x?xf32>)
func.func @residual_stream(%x: tensor<?x?xf32>, %a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>,
                           %e: tensor<?x?xf32>, %acc: tensor<?xf32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>) {
  %h1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %a : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h1 : tensor<?x?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%p: f32, %out: f32):
    %t = arith.addf %p, %out : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h1, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h2 : tensor<?x?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%p: f32, %out: f32):
    %t = arith.addf %p, %out : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %h3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h2, %c : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %s3 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h3 : tensor<?x?xf32>) outs(%acc : tensor<?xf32>) {
  ^bb0(%p: f32, %out: f32):
    %t = arith.addf %p, %out : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h3 : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%p: f32, %out: f32):
    %t = arith.mulf %p, %p : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %s1, %s2, %s3, %y : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>
}

// -----

// A producer that reads no tensor (positions, an `arange`) is copied into each generic that takes it
// even when it is also returned; the original stays for the return.
#id = affine_map<(i) -> (i)>

// CHECK-LABEL: func.func @index_only_producer_also_returned
// CHECK-COUNT-3: linalg.index
// CHECK:       return
func.func @index_only_producer_also_returned(%e: tensor<?xi64>, %f: tensor<?xf32>) -> (tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) {
  %p = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%e : tensor<?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %t = arith.index_cast %i : index to i64
    linalg.yield %t : i64
  } -> tensor<?xi64>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<?xi64>) outs(%f : tensor<?xf32>) {
  ^bb0(%in: i64, %out: f32):
    %t = arith.sitofp %in : i64 to f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<?xi64>) outs(%f : tensor<?xf32>) {
  ^bb0(%in: i64, %out: f32):
    %t = arith.uitofp %in : i64 to f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %p, %a, %b : tensor<?xi64>, tensor<?xf32>, tensor<?xf32>
}

// -----

// ... and into a generic that takes it through a reshape (positions broadcast as [1, L] by a causal
// mask): the copy and its own reshape, which fusion by expansion then folds.
#id = affine_map<(i) -> (i)>
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (0, j)>

// CHECK-LABEL: func.func @index_only_producer_through_a_reshape
// CHECK-COUNT-2: linalg.index
// CHECK:       tensor.expand_shape
// CHECK:       return
func.func @index_only_producer_through_a_reshape(%e: tensor<?xi64>, %f: tensor<?x?xi1>) -> (tensor<?xi64>, tensor<?x?xi1>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %e, %c0 : tensor<?xi64>
  %p = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%e : tensor<?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %t = arith.index_cast %i : index to i64
    linalg.yield %t : i64
  } -> tensor<?xi64>
  %r = tensor.expand_shape %p [[0, 1]] output_shape [1, %n] : tensor<?xi64> into tensor<1x?xi64>
  %a = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<1x?xi64>) outs(%f : tensor<?x?xi1>) {
  ^bb0(%in: i64, %out: i1):
    %j = linalg.index 0 : index
    %jj = arith.index_cast %j : index to i64
    %t = arith.cmpi sgt, %in, %jj : i64
    linalg.yield %t : i1
  } -> tensor<?x?xi1>
  return %p, %a : tensor<?xi64>, tensor<?x?xi1>
}

// -----

// Left alone: a reduction would not absorb a copy of a producer that reads nothing (it would be a
// kernel of its own), and a body that reads its `outs` element loads a tensor after all.
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>

// CHECK-LABEL: func.func @index_only_producer_into_a_reduction
// CHECK-COUNT-1: linalg.index
// CHECK-NOT:   linalg.index
func.func @index_only_producer_into_a_reduction(%e: tensor<?xf32>, %acc: tensor<f32>) -> (tensor<?xf32>, tensor<f32>) {
  %p = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%e : tensor<?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    %t = arith.sitofp %c : i64 to f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%p : tensor<?xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %p, %s : tensor<?xf32>, tensor<f32>
}

// -----

#id = affine_map<(i) -> (i)>

// CHECK-LABEL: func.func @producer_reading_its_outs
// CHECK-COUNT-1: linalg.index
// CHECK-NOT:   linalg.index
func.func @producer_reading_its_outs(%e: tensor<?xf32>, %f: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %p = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%e : tensor<?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    %t = arith.sitofp %c : i64 to f32
    %u = arith.addf %t, %out : f32
    linalg.yield %u : f32
  } -> tensor<?xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<?xf32>) outs(%f : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %p, %a : tensor<?xf32>, tensor<?xf32>
}
