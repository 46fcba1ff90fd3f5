// RUN: symopt %s --split-input-file --sym-unshare-inits | filecheck %s
// RUN: symopt %s --split-input-file --pass-pipeline="builtin.module(sym-unshare-inits, eliminate-empty-tensors, empty-tensor-to-alloc-tensor, one-shot-bufferize{allow-unknown-ops bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, canonicalize)" | filecheck %s --check-prefix=BUF

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>

// Two row sums whose zero init CSE merged (`[c.sum(1) for c in x.chunk(2, 1)]`, reduced): each
// reduction gets its own fill of its own empty. Bufferized, each then accumulates directly in its
// own out-param; with the init shared, one result was computed in the other's buffer and copied
// over it (%arg3 received the sums of %arg0). Each copy sits right before its user (the original is
// gone), so the GPU mapping can fold a fill into the reduction after it.
// CHECK-LABEL: func.func @shared_reduction_init
// CHECK: %[[N:[a-z0-9_]+]] = tensor.dim
// CHECK-NEXT: %[[E0:[a-z0-9_]+]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK-NEXT: %[[F0:[a-z0-9_]+]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<?xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%arg0 : tensor<?x?xf32>) outs(%[[F0]] : tensor<?xf32>)
// CHECK: %[[E1:[a-z0-9_]+]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK-NEXT: %[[F1:[a-z0-9_]+]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<?xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%arg1 : tensor<?x?xf32>) outs(%[[F1]] : tensor<?xf32>)
// CHECK-NOT: tensor.empty
// CHECK-NOT: linalg.fill
// BUF-LABEL: func.func @shared_reduction_init
// BUF-NOT: memref.alloc
// BUF: linalg.generic {{.*}} ins(%arg0 : memref<?x?xf32>) outs(%arg2 : memref<?xf32>)
// BUF: linalg.generic {{.*}} ins(%arg1 : memref<?x?xf32>) outs(%arg3 : memref<?xf32>)
// BUF-NOT: memref.copy
// BUF: return
func.func @shared_reduction_init(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>, %o0: memref<?xf32>, %o1: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %a = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%z : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %b = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<?x?xf32>) outs(%z : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  bufferization.materialize_in_destination %a in restrict writable %o0 : (tensor<?xf32>, memref<?xf32>) -> ()
  bufferization.materialize_in_destination %b in restrict writable %o1 : (tensor<?xf32>, memref<?xf32>) -> ()
  %r = arith.constant 0 : i32
  return %r : i32
}

// -----

#map = affine_map<(d0) -> (d0)>

// A tensor.empty with three users: each gets a clone right before it, the original is erased.
// CHECK-LABEL: func.func @shared_empty
// CHECK-NEXT: %[[E0:[a-z0-9_]+]] = tensor.empty(%arg1) : tensor<?xf32>
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[E0]] : tensor<?xf32>)
// CHECK: %[[E1:[a-z0-9_]+]] = tensor.empty(%arg1) : tensor<?xf32>
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[E1]] : tensor<?xf32>)
// CHECK: %[[E2:[a-z0-9_]+]] = tensor.empty(%arg1) : tensor<?xf32>
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[E2]] : tensor<?xf32>)
// CHECK-NOT: tensor.empty
func.func @shared_empty(%x: tensor<?xf32>, %n: index) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %e = tensor.empty(%n) : tensor<?xf32>
  %a = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %b = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %c = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.subf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %a, %b, %c : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// One use each: nothing to clone.
// CHECK-LABEL: func.func @no_rewrite_when_each_init_has_one_use
// CHECK: tensor.empty
// CHECK-NOT: tensor.empty
// CHECK: linalg.fill
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @no_rewrite_when_each_init_has_one_use(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %a = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%z : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %a : tensor<?xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// Only tensor.empty and linalg.fill are cloned: a shared constant init stays shared.
// CHECK-LABEL: func.func @no_rewrite_when_init_is_a_constant
// CHECK: arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NOT: arith.constant dense
// CHECK: return
func.func @no_rewrite_when_init_is_a_constant(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// The guard function is not a compute function.
// CHECK-LABEL: func.func @no_rewrite_in_the_guard_function
// CHECK: tensor.empty
// CHECK-NOT: tensor.empty
// CHECK: return
func.func @no_rewrite_in_the_guard_function(%n: index) -> index attributes {sym.guards} {
  %c0 = arith.constant 0 : index
  %e = tensor.empty(%n) : tensor<?xf32>
  %d0 = tensor.dim %e, %c0 : tensor<?xf32>
  %d1 = tensor.dim %e, %c0 : tensor<?xf32>
  %s = arith.addi %d0, %d1 : index
  return %s : index
}
