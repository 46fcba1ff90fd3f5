// RUN: symopt %s --split-input-file --verify-diagnostics --sym-gpu-dynamic-offsets | filecheck %s

// The GPU runtime passes every view with its offset in the pointer (offset field 0); a launch
// reading a static nonzero offset gets the value cast to `offset: ?` (x.split at batch 1 read the
// wrong slice before).

// CHECK-LABEL: func.func @split_slice
// CHECK:         %[[V:.*]] = memref.subview %{{.*}}[0, 64] [%{{.*}}, 64] [1, 1] : memref<?x192xf32> to memref<?x64xf32, strided<[192, 1], offset: 64>>
// CHECK:         %[[C:.*]] = memref.cast %[[V]] : memref<?x64xf32, strided<[192, 1], offset: 64>> to memref<?x64xf32, strided<[192, 1], offset: ?>>
// CHECK-NEXT:    gpu.launch
// CHECK:           memref.load %[[C]][
// CHECK-NOT:       memref.load %[[V]]
// CHECK:         memref.dim %[[V]]
func.func @split_slice(%a: memref<?x192xf32>, %out: memref<?x64xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x192xf32>
  %v = memref.subview %a[0, 64] [%n, 64] [1, 1] : memref<?x192xf32> to memref<?x64xf32, strided<[192, 1], offset: 64>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %x = memref.load %v[%bx, %c0] : memref<?x64xf32, strided<[192, 1], offset: 64>>
    memref.store %x, %out[%bx, %c0] : memref<?x64xf32>
    gpu.terminator
  }
  %d = memref.dim %v, %c0 : memref<?x64xf32, strided<[192, 1], offset: 64>>
  return %d : index
}

// -----

// Offsets the descriptor already has as 0 (identity layouts, `offset: 0`) or dynamic ones stay; a
// value read in two launches gets one cast per launch.

// CHECK-LABEL: func.func @unchanged_and_two_launches
// CHECK-NOT:     memref.cast %{{.*}} : memref<?x64xf32, strided<[192, 1]>>
// CHECK-NOT:     memref.cast %{{.*}} : memref<?x64xf32, strided<[192, 1], offset: ?>> to
// CHECK:         memref.cast %{{.*}} : memref<64xf32, strided<[1], offset: 128>> to memref<64xf32, strided<[1], offset: ?>>
// CHECK-NEXT:    gpu.launch
// CHECK:         memref.cast %{{.*}} : memref<64xf32, strided<[1], offset: 128>> to memref<64xf32, strided<[1], offset: ?>>
// CHECK-NEXT:    gpu.launch
func.func @unchanged_and_two_launches(%a: memref<?x192xf32>, %k: index, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x192xf32>
  %z = memref.subview %a[0, 0] [%n, 64] [1, 1] : memref<?x192xf32> to memref<?x64xf32, strided<[192, 1]>>
  %d = memref.subview %a[0, %k] [%n, 64] [1, 1] : memref<?x192xf32> to memref<?x64xf32, strided<[192, 1], offset: ?>>
  %r = memref.subview %a[0, 128] [1, 64] [1, 1] : memref<?x192xf32> to memref<64xf32, strided<[1], offset: 128>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %x = memref.load %z[%c0, %c0] : memref<?x64xf32, strided<[192, 1]>>
    %y = memref.load %d[%c0, %c0] : memref<?x64xf32, strided<[192, 1], offset: ?>>
    %w = memref.load %r[%c0] : memref<64xf32, strided<[1], offset: 128>>
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %w : f32
    memref.store %t, %out[%c0] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %w = memref.load %r[%c1] : memref<64xf32, strided<[1], offset: 128>>
    memref.store %w, %out[%c1] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A view made inside a launch of such a buffer would keep the static offset in its own type: the pass
// reports it at the view.
func.func @view_inside_launch(%a: memref<?x192xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x192xf32>
  %r = memref.subview %a[0, 128] [1, 64] [1, 1] : memref<?x192xf32> to memref<64xf32, strided<[1], offset: 128>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{a view (memref.subview) inside a gpu.launch of a buffer with a static offset is not supported}}
    %s = memref.subview %r[8] [8] [1] : memref<64xf32, strided<[1], offset: 128>> to memref<8xf32, strided<[1], offset: 136>>
    %w = memref.load %s[%c0] : memref<8xf32, strided<[1], offset: 136>>
    memref.store %w, %out[%c0] : memref<64xf32>
    gpu.terminator
  }
  return
}
