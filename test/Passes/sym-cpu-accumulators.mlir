// RUN: symopt %s --split-input-file --sym-cpu-accumulators | filecheck %s

// A dot product per output (x @ W^T, W read where it is): C[i, j] is loaded once, carried, stored
// once; the sum reassociates (vectorizable) and the product contracts (fused multiply-add).
// CHECK-LABEL: func.func @dot_products
// CHECK: scf.for %[[I:.*]] =
// CHECK: scf.for %[[J:.*]] =
// CHECK: %[[INIT:.*]] = memref.load %arg2[%[[I]], %[[J]]]
// CHECK: %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// CHECK-NOT: memref.store
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] fastmath<reassoc,contract> : f32
// CHECK: scf.yield %[[S]] : f32
// CHECK: memref.store %[[R]], %arg2[%[[I]], %[[J]]]
func.func @dot_products(%a: memref<?x?xf32>, %w: memref<?x?xf32>, %c: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %k = memref.dim %a, %c1 : memref<?x?xf32>
  %n = memref.dim %w, %c0 : memref<?x?xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      scf.for %kk = %c0 to %k step %c1 {
        %x = memref.load %a[%i, %kk] : memref<?x?xf32>
        %y = memref.load %w[%j, %kk] : memref<?x?xf32>
        %acc = memref.load %c[%i, %j] : memref<?x?xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        memref.store %s, %c[%i, %j] : memref<?x?xf32>
      }
    }
  }
  return
}

// -----

// A sum of all elements: the inner loop's accumulator, then the outer one's (its body loads and
// stores the one element around the inner loop); integer adds get no fastmath flags.
// CHECK-LABEL: func.func @total
// CHECK: %[[INIT:.*]] = memref.load %arg1[]
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[OUTER:.*]] = %[[INIT]]) -> (i64)
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[OUTER]]) -> (i64)
// CHECK: arith.addi %[[ACC]], %{{.*}} : i64
// CHECK: memref.store %[[R]], %arg1[]
func.func @total(%a: memref<?x?xi64>, %c: memref<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xi64>
  %n = memref.dim %a, %c1 : memref<?x?xi64>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %x = memref.load %a[%i, %j] : memref<?x?xi64>
      %acc = memref.load %c[] : memref<i64>
      %s = arith.addi %acc, %x : i64
      memref.store %s, %c[] : memref<i64>
    }
  }
  return
}

// -----

// The accumulated buffer is read elsewhere in the loop (a view of it): left alone.
// CHECK-LABEL: func.func @read_elsewhere
// CHECK-NOT: iter_args
// CHECK: memref.store
func.func @read_elsewhere(%a: memref<?xf32>, %c: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %v = memref.subview %c[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  scf.for %k = %c0 to %n step %c1 {
    %x = memref.load %a[%k] : memref<?xf32>
    %y = memref.load %v[%c0] : memref<2xf32, strided<[1], offset: 1>>
    %acc = memref.load %c[%c0] : memref<4xf32>
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    memref.store %s, %c[%c0] : memref<4xf32>
  }
  return
}

// -----

// The element written depends on the loop (a store at k, not an accumulation), or the stored value
// does not come from the loaded one, or the loop calls a function: left alone.
// CHECK-LABEL: func.func @not_accumulations
// CHECK-NOT: iter_args
func.func private @f(f32) -> f32
func.func @not_accumulations(%a: memref<?xf32>, %c: memref<?xf32>, %d: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.for %k = %c0 to %n step %c1 {
    %x = memref.load %a[%k] : memref<?xf32>
    %acc = memref.load %c[%k] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%k] : memref<?xf32>
  }
  scf.for %k = %c0 to %n step %c1 {
    %x = memref.load %a[%k] : memref<?xf32>
    %old = memref.load %d[] : memref<f32>
    memref.store %x, %d[] : memref<f32>
  }
  scf.for %k = %c0 to %n step %c1 {
    %x = memref.load %a[%k] : memref<?xf32>
    %acc = memref.load %d[] : memref<f32>
    %y = func.call @f(%x) : (f32) -> f32
    %s = arith.addf %acc, %y : f32
    memref.store %s, %d[] : memref<f32>
  }
  return
}

// -----

// A loop that stores back the element it loaded (a reduction whose body canonicalization folded
// to its output) is left alone (it crashed the pass: the yield used the erased load); so is one
// reading a buffer that may be the accumulated one (a select of two arguments).
// CHECK-LABEL: func.func @stores_what_it_loaded
// CHECK-NOT: iter_args
// CHECK-LABEL: func.func @selected_buffer
// CHECK-NOT: iter_args
func.func @stores_what_it_loaded(%a: memref<?xf32>, %c: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.for %k = %c0 to %n step %c1 {
    %x = memref.load %a[%k] : memref<?xf32>
    %acc = memref.load %c[] : memref<f32>
    memref.store %acc, %c[] : memref<f32>
  }
  return
}
func.func @selected_buffer(%a: memref<?xf32>, %b: memref<?xf32>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %m = arith.select %p, %a, %b : memref<?xf32>
  scf.for %k = %c0 to %n step %c1 {
    %x = memref.load %m[%k] : memref<?xf32>
    %acc = memref.load %a[%c0] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %a[%c0] : memref<?xf32>
  }
  return
}
