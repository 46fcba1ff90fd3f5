// sym-sort-to-merge: 1-D tm_tensor.sort on memrefs becomes a call to a merge sort (one private
// function per comparator and element types); other sorts are left to tm-tensor-to-loops.
// RUN: symopt %s --split-input-file --sym-sort-to-merge | filecheck %s

// Keys and indices move together; the comparator's predicate is kept; passes over widths 1, 2, 4, ...
// ping-pong between the operands and scratch buffers, copied back when the result ends in scratch.
// CHECK-LABEL: func.func @sort_with_indices
// CHECK-NEXT:    call @__sym_merge_sort_cmpf_ole_f32_i64(%arg0, %arg1) : (memref<?xf32>, memref<?xi64>) -> ()
// CHECK-NEXT:    return
// CHECK-LABEL: func.func private @__sym_merge_sort_cmpf_ole_f32_i64(%arg0: memref<?xf32>, %arg1: memref<?xi64>)
// CHECK:         %[[N:.*]] = memref.dim %arg0
// CHECK:         %[[T0:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK:         %[[T1:.*]] = memref.alloc(%[[N]]) : memref<?xi64>
// CHECK:         scf.while
// CHECK:           arith.cmpi ult, %{{.*}}, %[[N]] : index
// CHECK:         } do {
// CHECK:           scf.for %[[LO:.*]] = %c0 to %[[N]] step
// CHECK:             scf.for {{.*}} iter_args
// CHECK:               %[[A:.*]] = memref.load
// CHECK:               %[[B:.*]] = memref.load
// CHECK:               %[[LE:.*]] = arith.cmpf ole, %[[A]], %[[B]] : f32
// CHECK-NEXT:          %[[NAN:.*]] = arith.cmpf uno, %[[B]], %[[B]] : f32
// CHECK-NEXT:          arith.ori %[[LE]], %[[NAN]] : i1
// CHECK:               memref.store {{.*}} : memref<?xf32>
// CHECK:               memref.store {{.*}} : memref<?xi64>
// CHECK:         scf.if
// CHECK-NEXT:      memref.copy %[[T0]], %arg0
// CHECK-NEXT:      memref.copy %[[T1]], %arg1
// CHECK:         memref.dealloc %[[T0]]
// CHECK:         memref.dealloc %[[T1]]
// CHECK-NOT:     tm_tensor.sort
func.func @sort_with_indices(%keys: memref<?xf32>, %idx: memref<?xi64>) {
  tm_tensor.sort dimension(0) outs(%keys, %idx : memref<?xf32>, memref<?xi64>) {
  ^bb0(%a: f32, %b: f32, %i: i64, %j: i64):
    %0 = arith.cmpf ole, %a, %b : f32
    tm_tensor.yield %0 : i1
  }
  return
}

// -----

// Descending float keys: NaN is the largest key, so the left key is taken first when it is NaN.
// CHECK-LABEL: func.func private @__sym_merge_sort_cmpf_oge_f32(
// CHECK:         %[[A:.*]] = memref.load
// CHECK:         %[[B:.*]] = memref.load
// CHECK:         %[[GE:.*]] = arith.cmpf oge, %[[A]], %[[B]] : f32
// CHECK-NEXT:    %[[NAN:.*]] = arith.cmpf uno, %[[A]], %[[A]] : f32
// CHECK-NEXT:    arith.ori %[[GE]], %[[NAN]] : i1
func.func @descending_nan_first(%keys: memref<?xf32>) {
  tm_tensor.sort dimension(0) outs(%keys : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %0 = arith.cmpf oge, %a, %b : f32
    tm_tensor.yield %0 : i1
  }
  return
}

// -----

// Two sorts with one comparator share one function; a static size is cast to dynamic.
// CHECK-LABEL: func.func @shared_and_static
// CHECK:         %[[C:.*]] = memref.cast %arg0 : memref<8xi64> to memref<?xi64>
// CHECK-NEXT:    call @__sym_merge_sort_cmpi_sge_i64(%[[C]])
// CHECK-NEXT:    call @__sym_merge_sort_cmpi_sge_i64(%arg1)
// CHECK-COUNT-1: func.func private @__sym_merge_sort_cmpi_sge_i64(
// CHECK-NOT:     func.func private
func.func @shared_and_static(%a: memref<8xi64>, %b: memref<?xi64>) {
  tm_tensor.sort dimension(0) outs(%a : memref<8xi64>) {
  ^bb0(%x: i64, %y: i64):
    %0 = arith.cmpi sge, %x, %y : i64
    tm_tensor.yield %0 : i1
  }
  tm_tensor.sort dimension(0) outs(%b : memref<?xi64>) {
  ^bb0(%x: i64, %y: i64):
    %0 = arith.cmpi sge, %x, %y : i64
    tm_tensor.yield %0 : i1
  }
  return
}

// -----

// Left alone: a sort along dim 1 of a 2-D buffer, and a comparator that is not one comparison.
// CHECK-LABEL: func.func @left_alone
// CHECK:         tm_tensor.sort dimension(1)
// CHECK:         tm_tensor.sort dimension(0)
// CHECK:           arith.negf
// CHECK-NOT:     call
func.func @left_alone(%a: memref<?x?xf32>, %b: memref<?xf32>) {
  tm_tensor.sort dimension(1) outs(%a : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.cmpf ole, %x, %y : f32
    tm_tensor.yield %0 : i1
  }
  tm_tensor.sort dimension(0) outs(%b : memref<?xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    %0 = arith.cmpf ole, %n, %y : f32
    tm_tensor.yield %0 : i1
  }
  return
}

// -----

// Left alone: a sort along dim 0 of a static 2-D buffer (a variant specialized to sizes): the
// element type is not "7xf32" (the pass built a function of that type and failed to parse it).
// CHECK-LABEL: func.func @static_two_d
// CHECK:         tm_tensor.sort dimension(0) outs(%arg0 : memref<4x7xf32>)
// CHECK-NOT:     call
// CHECK-NOT:     func.func private
func.func @static_two_d(%a: memref<4x7xf32>) {
  tm_tensor.sort dimension(0) outs(%a : memref<4x7xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.cmpf ole, %x, %y : f32
    tm_tensor.yield %0 : i1
  }
  return
}
