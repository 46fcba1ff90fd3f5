// RUN: symopt %s --split-input-file --sym-forward-copies | filecheck %s

// tm-tensor-bufferize's copy of a scatter's init: the zeros are written into the scatter's buffer.
// A chain forwards too, and a copy into an out-param makes the temporary the out-param itself.
// CHECK-LABEL: func.func @forwarded
// CHECK:         %[[B:.*]] = memref.alloc(%arg0) : memref<?xi64>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : i64) outs(%[[B]] : memref<?xi64>)
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : i64) outs(%[[B]] : memref<?xi64>)
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : i64) outs(%arg1 : memref<?xi64>)
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func @forwarded(%n: index, %out: memref<?xi64>) {
  %c0 = arith.constant 0 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  linalg.fill ins(%c0 : i64) outs(%a : memref<?xi64>)
  %b = memref.alloc(%n) : memref<?xi64>
  memref.copy %a, %b : memref<?xi64> to memref<?xi64>
  linalg.fill ins(%c0 : i64) outs(%b : memref<?xi64>)
  %t = memref.alloc(%n) : memref<?xi64>
  linalg.fill ins(%c0 : i64) outs(%t : memref<?xi64>)
  memref.copy %t, %out : memref<?xi64> to memref<?xi64>
  return
}

// -----

// Kept: the source is used after the copy, the destination before it, the source has a view, the
// destination's size is computed after the source's alloc, the layouts differ.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: memref.copy
func.func @kept(%n: index, %m: index, %s: memref<?xi64, strided<[?], offset: ?>>) {
  %c0 = arith.constant 0 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  %b = memref.alloc(%n) : memref<?xi64>
  memref.copy %a, %b : memref<?xi64> to memref<?xi64>
  linalg.fill ins(%c0 : i64) outs(%a : memref<?xi64>)
  %c = memref.alloc(%n) : memref<?xi64>
  %d = memref.alloc(%n) : memref<?xi64>
  linalg.fill ins(%c0 : i64) outs(%d : memref<?xi64>)
  memref.copy %c, %d : memref<?xi64> to memref<?xi64>
  %e = memref.alloc(%n) : memref<?xi64>
  %v = memref.subview %e[0] [%n] [1] : memref<?xi64> to memref<?xi64, strided<[1]>>
  %f = memref.alloc(%n) : memref<?xi64>
  memref.copy %e, %f : memref<?xi64> to memref<?xi64>
  linalg.fill ins(%c0 : i64) outs(%v : memref<?xi64, strided<[1]>>)
  %g = memref.alloc(%n) : memref<?xi64>
  %k = arith.addi %n, %m : index
  %h = memref.alloc(%k) : memref<?xi64>
  memref.copy %g, %h : memref<?xi64> to memref<?xi64>
  %i = memref.alloc(%n) : memref<?xi64>
  memref.copy %i, %s : memref<?xi64> to memref<?xi64, strided<[?], offset: ?>>
  return
}

// -----

// Kept: %a escapes through scf.yield (an alias the pass does not follow): %r must get the zeros.
// CHECK-LABEL: func.func @kept_yield
// CHECK-COUNT-2: memref.copy
func.func @kept_yield(%n: index, %c: i1, %o: memref<?xi64>, %r: memref<?xi64>) {
  %c0 = arith.constant 0 : i64
  %c7 = arith.constant 7 : i64
  %a = memref.alloc(%n) : memref<?xi64>
  linalg.fill ins(%c0 : i64) outs(%a : memref<?xi64>)
  %v = scf.if %c -> memref<?xi64> {
    scf.yield %a : memref<?xi64>
  } else {
    scf.yield %o : memref<?xi64>
  }
  %b = memref.alloc(%n) : memref<?xi64>
  memref.copy %a, %b : memref<?xi64> to memref<?xi64>
  linalg.fill ins(%c7 : i64) outs(%b : memref<?xi64>)
  memref.copy %v, %r : memref<?xi64> to memref<?xi64>
  return
}

// -----

// The copy reads the temporary through a collapse_shape (attention's heads [b, s, 4, 64] copied into
// the output [b, s, 256]): the temporary becomes the output seen through the reverse expand_shape,
// with the temporary's sizes. An expand_shape into an alloc becomes a collapse_shape of it.
// CHECK-LABEL: func.func @reshaped
// CHECK:         %[[E:.*]] = memref.expand_shape %arg1 {{\[}}[0], [1, 2]] output_shape [%arg0, 4, 64] : memref<?x256xf32> into memref<?x4x64xf32>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : memref<?x4x64xf32>)
// CHECK-NEXT:    %[[B:.*]] = memref.alloc(%arg0) : memref<?x4x64xf32>
// CHECK-NEXT:    %[[C:.*]] = memref.collapse_shape %[[B]] {{\[}}[0], [1, 2]] : memref<?x4x64xf32> into memref<?x256xf32>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : memref<?x256xf32>)
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<?x4x64xf32>)
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func @reshaped(%n: index, %out: memref<?x256xf32>) {
  %c0 = arith.constant 0.0 : f32
  %a = memref.alloc(%n) : memref<?x4x64xf32>
  linalg.fill ins(%c0 : f32) outs(%a : memref<?x4x64xf32>)
  %ac = memref.collapse_shape %a [[0], [1, 2]] : memref<?x4x64xf32> into memref<?x256xf32>
  memref.copy %ac, %out : memref<?x256xf32> to memref<?x256xf32>
  %t = memref.alloc(%n) : memref<?x256xf32>
  linalg.fill ins(%c0 : f32) outs(%t : memref<?x256xf32>)
  %te = memref.expand_shape %t [[0], [1, 2]] output_shape [%n, 4, 64] : memref<?x256xf32> into memref<?x4x64xf32>
  %b = memref.alloc(%n) : memref<?x4x64xf32>
  memref.copy %te, %b : memref<?x4x64xf32> to memref<?x4x64xf32>
  linalg.fill ins(%c0 : f32) outs(%b : memref<?x4x64xf32>)
  return
}

// -----

// The reshape is also read before the copy, directly and through a view (a training forward's saved
// layer norm output, read by the next linear layer as [b * s, 256]): forwarded all the same; the
// readers read the output.
// CHECK-LABEL: func.func @reshape_read_before
// CHECK:         %[[E:.*]] = memref.expand_shape %arg1 {{\[}}[0, 1], [2]] output_shape [%arg0, 4, 256] : memref<?x256xf32> into memref<?x4x256xf32>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : memref<?x4x256xf32>)
// CHECK-NEXT:    %[[C:.*]] = memref.collapse_shape %[[E]]
// CHECK-NEXT:    linalg.copy ins(%[[C]] : memref<?x256xf32>) outs(%arg2 : memref<?x256xf32>)
// CHECK-NEXT:    %[[V:.*]] = memref.expand_shape %[[C]]
// CHECK-NEXT:    linalg.copy ins(%[[V]] : memref<?x4x256xf32>) outs(%arg3 : memref<?x4x256xf32>)
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func @reshape_read_before(%n: index, %out: memref<?x256xf32>, %o2: memref<?x256xf32>, %o3: memref<?x4x256xf32>) {
  %c0 = arith.constant 0.0 : f32
  %a = memref.alloc(%n) : memref<?x4x256xf32>
  linalg.fill ins(%c0 : f32) outs(%a : memref<?x4x256xf32>)
  %ac = memref.collapse_shape %a [[0, 1], [2]] : memref<?x4x256xf32> into memref<?x256xf32>
  linalg.copy ins(%ac : memref<?x256xf32>) outs(%o2 : memref<?x256xf32>)
  %v = memref.expand_shape %ac [[0, 1], [2]] output_shape [%n, 4, 256] : memref<?x256xf32> into memref<?x4x256xf32>
  linalg.copy ins(%v : memref<?x4x256xf32>) outs(%o3 : memref<?x4x256xf32>)
  memref.copy %ac, %out : memref<?x256xf32> to memref<?x256xf32>
  return
}

// -----

// Kept: the reshape has another reader, the temporary is read after the copy.
// CHECK-LABEL: func.func @reshaped_kept
// CHECK-COUNT-2: memref.copy
func.func @reshaped_kept(%n: index, %out: memref<?x256xf32>, %out2: memref<?x256xf32>, %r: memref<f32>) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 0.0 : f32
  %a = memref.alloc(%n) : memref<?x4x64xf32>
  linalg.fill ins(%f : f32) outs(%a : memref<?x4x64xf32>)
  %ac = memref.collapse_shape %a [[0], [1, 2]] : memref<?x4x64xf32> into memref<?x256xf32>
  memref.copy %ac, %out : memref<?x256xf32> to memref<?x256xf32>
  %x = memref.load %ac[%c0, %c0] : memref<?x256xf32>
  memref.store %x, %r[] : memref<f32>
  %b = memref.alloc(%n) : memref<?x4x64xf32>
  linalg.fill ins(%f : f32) outs(%b : memref<?x4x64xf32>)
  %bc = memref.collapse_shape %b [[0], [1, 2]] : memref<?x4x64xf32> into memref<?x256xf32>
  memref.copy %bc, %out2 : memref<?x256xf32> to memref<?x256xf32>
  %y = memref.load %b[%c0, %c0, %c0] : memref<?x4x64xf32>
  memref.store %y, %r[] : memref<f32>
  return
}

// -----

// A copy of the out-param into itself through a cast (the result was computed in place, its type
// generalized by bufferization) is erased; a copy from a cast of another buffer stays.
// CHECK-LABEL: func.func @self_copy
// CHECK:         linalg.fill
// CHECK-NOT:     memref.copy
// CHECK:         return
// CHECK-LABEL: func.func @copy_from_a_cast_of_another
// CHECK:         memref.copy
func.func @self_copy(%out: memref<?x?xf32>) -> i32 {
  %ok = arith.constant 0 : i32
  %z = arith.constant 0.0 : f32
  %c = memref.cast %out : memref<?x?xf32> to memref<?x64xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<?x64xf32>)
  %back = memref.cast %c : memref<?x64xf32> to memref<?x?xf32>
  memref.copy %back, %out : memref<?x?xf32> to memref<?x?xf32>
  return %ok : i32
}
func.func @copy_from_a_cast_of_another(%in: memref<?x64xf32>, %out: memref<?x?xf32>) -> i32 {
  %ok = arith.constant 0 : i32
  %c = memref.cast %in : memref<?x64xf32> to memref<?x?xf32>
  memref.copy %c, %out : memref<?x?xf32> to memref<?x?xf32>
  return %ok : i32
}

// -----

// A temporary read through views before the copy into the out-param (a static cache written at
// positions, expanded for grouped-query attention, then copied into the output the runtime makes
// the cache itself, mutations.py): the views read the out-param, whose init is the input's copy.
// CHECK-LABEL: func.func @forwarded_through_views
// CHECK-SAME:    (%[[IN:.*]]: memref<2x?xf32>, %[[OUT:.*]]: memref<2x?xf32>, %{{.*}}: memref<2x1x?xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         memref.copy %[[IN]], %[[OUT]]
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<2x?xf32>)
// CHECK-NEXT:    %[[V:.*]] = memref.expand_shape %[[OUT]]
// CHECK-NEXT:    linalg.copy ins(%[[V]] : memref<2x1x?xf32>)
// CHECK-NEXT:    return
func.func @forwarded_through_views(%in: memref<2x?xf32>, %out: memref<2x?xf32>, %r: memref<2x1x?xf32>) {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %n = memref.dim %in, %c1 : memref<2x?xf32>
  %a = memref.alloc(%n) : memref<2x?xf32>
  memref.copy %in, %a : memref<2x?xf32> to memref<2x?xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<2x?xf32>)
  %v = memref.expand_shape %a [[0, 1], [2]] output_shape [2, 1, %n] : memref<2x?xf32> into memref<2x1x?xf32>
  linalg.copy ins(%v : memref<2x1x?xf32>) outs(%r : memref<2x1x?xf32>)
  memref.copy %a, %out : memref<2x?xf32> to memref<2x?xf32>
  return
}

// -----

// Kept: a view of the temporary is read after the copy.
// CHECK-LABEL: func.func @kept_view_read_after
// CHECK:         memref.copy %{{.*}}, %arg1
func.func @kept_view_read_after(%in: memref<2x?xf32>, %out: memref<2x?xf32>, %r: memref<2x1x?xf32>) {
  %c1 = arith.constant 1 : index
  %n = memref.dim %in, %c1 : memref<2x?xf32>
  %a = memref.alloc(%n) : memref<2x?xf32>
  memref.copy %in, %a : memref<2x?xf32> to memref<2x?xf32>
  %v = memref.expand_shape %a [[0, 1], [2]] output_shape [2, 1, %n] : memref<2x?xf32> into memref<2x1x?xf32>
  memref.copy %a, %out : memref<2x?xf32> to memref<2x?xf32>
  linalg.copy ins(%v : memref<2x1x?xf32>) outs(%r : memref<2x1x?xf32>)
  return
}
