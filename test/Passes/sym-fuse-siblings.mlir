// RUN: symopt %s --split-input-file --sym-fuse-siblings | filecheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#col = affine_map<(d0, d1) -> (d1)>

// q, k and v written from slices of one projection (k's generic with its loops in the other order):
// one generic with three results, at the last one's place; k's loops are permuted so that every
// output map is the identity.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[T:map[0-9]*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[COL:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @qkv
// CHECK:       %[[R:.+]]:3 = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]], #[[T]], #[[ID]], #[[ID]], #[[ID]]]
// CHECK-SAME:    ins(%arg0, %arg3, %arg1, %arg2 : tensor<4x?xf32>, tensor<?xf32>, tensor<4x?xf32>, tensor<?x4xf32>)
// CHECK-SAME:    outs(%{{.+}}, %{{.+}}, %{{.+}} : tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xf32>)
// CHECK-NEXT:  ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %[[C:.+]]: f32, %[[D:.+]]: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32):
// CHECK-NEXT:    %[[X:.+]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:    %[[Y:.+]] = math.exp %[[C]] : f32
// CHECK-NEXT:    %[[Z:.+]] = arith.negf %[[D]] : f32
// CHECK-NEXT:    linalg.yield %[[X]], %[[Y]], %[[Z]] : f32, f32, f32
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @qkv(%a: tensor<4x?xf32>, %b: tensor<4x?xf32>, %c: tensor<?x4xf32>, %bias: tensor<?xf32>, %n: index) -> (tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xf32>) {
  %e = tensor.empty(%n) : tensor<4x?xf32>
  %q = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %bias : tensor<4x?xf32>, tensor<?xf32>) outs(%e : tensor<4x?xf32>) {
  ^bb0(%in: f32, %bb: f32, %out: f32):
    %r = arith.addf %in, %bb : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  %k = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x?xf32>) outs(%e : tensor<4x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  %v = linalg.generic {indexing_maps = [#id, #t], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<?x4xf32>) outs(%e : tensor<4x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  return %q, %k, %v : tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A generic reading another's result is not its sibling; two over other sizes are not either.
// CHECK-LABEL: func.func @not_siblings
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:   linalg.generic
func.func @not_siblings(%a: tensor<4x?xf32>, %n: index, %m: index) -> (tensor<4x?xf32>, tensor<4x?xf32>) {
  %e = tensor.empty(%n) : tensor<4x?xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x?xf32>) outs(%e : tensor<4x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x?xf32>) outs(%e : tensor<4x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  %em = tensor.empty(%m) : tensor<4x?xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x?xf32>) outs(%em : tensor<4x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.sin %in : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  return %y, %z : tensor<4x?xf32>, tensor<4x?xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#red = affine_map<(d0) -> ()>

// Reductions, and generics reading their outputs, are not fused.
// CHECK-LABEL: func.func @not_elementwise
// CHECK-COUNT-2: linalg.generic
func.func @not_elementwise(%a: tensor<?xf32>, %acc: tensor<f32>, %n: index) -> (tensor<f32>, tensor<?xf32>) {
  %s = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction"]} ins(%a : tensor<?xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %s, %x : tensor<f32>, tensor<?xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A result also used in a later block of the function (the blocks sym-assert-to-status makes): still
// fused (the later block comes after both); this crashed the pass once.
// CHECK-LABEL: func.func @use_in_a_later_block
// CHECK:       %[[R:.+]]:2 = linalg.generic
// CHECK:       ^bb1:
// CHECK-NEXT:  return %[[R]]#0, %[[R]]#1
func.func @use_in_a_later_block(%a: tensor<?xf32>, %n: index) -> (tensor<?xf32>, tensor<?xf32>) {
  %e = tensor.empty(%n) : tensor<?xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.sin %in : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  cf.br ^bb1
^bb1:
  return %x, %y : tensor<?xf32>, tensor<?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Outputs whose shapes are permutations of each other (q as [n, 4] beside k as [4, n]): the later
// one's maps are rewritten over the earlier one's loops. Loops of equal sizes in order pair up as
// they are (a transposing [n, n] generic beside a plain one).
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[T:map[0-9]*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @permuted_shapes
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[T]], #[[ID]], #[[T]]]
// CHECK-SAME:    outs(%{{.+}}, %{{.+}} : tensor<?x4xf32>, tensor<4x?xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[T]], #[[ID]], #[[T]]]
// CHECK-SAME:    outs(%{{.+}}, %{{.+}} : tensor<?x?xf32>, tensor<?x?xf32>)
func.func @permuted_shapes(%a: tensor<?x4xf32>, %b: tensor<4x?xf32>, %c: tensor<?x?xf32>, %n: index) -> (tensor<?x4xf32>, tensor<4x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %e0 = tensor.empty(%n) : tensor<?x4xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%e0 : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %e1 = tensor.empty(%n) : tensor<4x?xf32>
  %k = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x?xf32>) outs(%e1 : tensor<4x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.sin %in : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  %e2 = tensor.empty(%n, %n) : tensor<?x?xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<?x?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.cos %in : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<?x?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tan %in : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  return %q, %k, %x, %y : tensor<?x4xf32>, tensor<4x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Sizes are compared through the `tensor.dim`s fusion leaves (of an expand's result, of an empty):
// %d0 and %d1 are both %n.
// CHECK-LABEL: func.func @sizes_through_dims
// CHECK:       linalg.generic {{.*}} outs(%{{.+}}, %{{.+}} : tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK-NOT:   linalg.generic
func.func @sizes_through_dims(%a: tensor<?x4xf32>, %flat: tensor<?xf32>, %n: index) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %x = tensor.expand_shape %flat [[0, 1]] output_shape [%n, 4] : tensor<?xf32> into tensor<?x4xf32>
  %d0 = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e0 = tensor.empty(%d0) : tensor<?x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%e0 : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %d1 = tensor.dim %e, %c0 : tensor<?x4xf32>
  %e1 = tensor.empty(%d1) : tensor<?x4xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x4xf32>) outs(%e1 : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.sin %in : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  return %p, %q : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A `tensor.dim` of the earlier result between the two asks its init instead: still fused.
// CHECK-LABEL: func.func @dim_between
// CHECK:       %[[E:.+]] = tensor.empty(%arg1) : tensor<?xf32>
// CHECK:       tensor.dim %[[E]], %{{.+}} : tensor<?xf32>
// CHECK:       linalg.generic {{.*}} outs(%[[E]], %[[E]] : tensor<?xf32>, tensor<?xf32>)
// CHECK-NOT:   linalg.generic
func.func @dim_between(%a: tensor<?xf32>, %n: index) -> (tensor<?xf32>, tensor<?xf32>, index) {
  %c0 = arith.constant 0 : index
  %e = tensor.empty(%n) : tensor<?xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.sin %in : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %x, %y, %d : tensor<?xf32>, tensor<?xf32>, index
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A body's `linalg.index` (a position from the loop, as a causal mask computes it) names the fused
// loop its loop became: k's loop 0 (the 4) is the fused loop 1.
// CHECK-LABEL: func.func @loop_indices
// CHECK:       linalg.generic
// CHECK:         linalg.index 0
// CHECK:         linalg.index 1
// CHECK-NOT:   linalg.generic
func.func @loop_indices(%a: tensor<?x4xf32>, %b: tensor<4x?xf32>, %n: index) -> (tensor<?x4xf32>, tensor<4x?xf32>) {
  %e0 = tensor.empty(%n) : tensor<?x4xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%e0 : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    %f = arith.sitofp %c : i64 to f32
    %r = arith.addf %in, %f : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %e1 = tensor.empty(%n) : tensor<4x?xf32>
  %k = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x?xf32>) outs(%e1 : tensor<4x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    %f = arith.sitofp %c : i64 to f32
    %r = arith.mulf %in, %f : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  return %q, %k : tensor<?x4xf32>, tensor<4x?xf32>
}
