// RUN: symopt %s --split-input-file --sym-cpu-register-tiles | filecheck %s

// A product's row loop (after sym-cpu-accumulators): four rows a step share each loaded element of
// B in one k loop with four accumulators; the rows past the last multiple of 4 run the original loops.
// CHECK-LABEL: func.func @product
// CHECK: %[[N:.*]] = arith.maxsi
// CHECK: arith.floordivsi %[[N]], %c4
// CHECK: %[[MAIN:.*]] = arith.addi
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[MAIN]] step %c4
// CHECK: scf.for %[[J:.*]] =
// CHECK-COUNT-4: memref.load %arg2
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK-COUNT-4: arith.addf {{.*}} fastmath<reassoc,contract>
// CHECK: scf.yield {{.*}} : f32, f32, f32, f32
// CHECK-COUNT-4: memref.store
// CHECK: scf.for %{{.*}} = %[[MAIN]] to %{{.*}} step %c1
// CHECK: iter_args({{.*}}) -> (f32)
func.func @product(%a: memref<?x256xf32>, %b: memref<8000x256xf32>, %c: memref<?x8000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c8000 = arith.constant 8000 : index
  %m = memref.dim %a, %c0 : memref<?x256xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %c8000 step %c1 {
      %init = memref.load %c[%i, %j] : memref<?x8000xf32>
      %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %init) -> (f32) {
        %x = memref.load %a[%i, %k] : memref<?x256xf32>
        %w = memref.load %b[%j, %k] : memref<8000x256xf32>
        %p = arith.mulf %x, %w fastmath<contract> : f32
        %s = arith.addf %acc, %p fastmath<reassoc,contract> : f32
        scf.yield %s : f32
      }
      memref.store %r, %c[%i, %j] : memref<?x8000xf32>
    }
  }
  return
}

// -----

// The output does not depend on the row (a sum over rows and k into out[j]): the rows are not
// independent, nothing changes.
// CHECK-LABEL: func.func @rows_reduced
// CHECK-NOT: step %c4
// CHECK: iter_args({{.*}}) -> (f32)
// CHECK-NOT: -> (f32, f32
func.func @rows_reduced(%a: memref<?x256xf32>, %b: memref<64x256xf32>, %c: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %m = memref.dim %a, %c0 : memref<?x256xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %c64 step %c1 {
      %init = memref.load %c[%j] : memref<64xf32>
      %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %init) -> (f32) {
        %x = memref.load %a[%i, %k] : memref<?x256xf32>
        %w = memref.load %b[%j, %k] : memref<64x256xf32>
        %p = arith.mulf %x, %w : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      memref.store %r, %c[%j] : memref<64xf32>
    }
  }
  return
}

// -----

// Every load depends on the row (an elementwise square summed per row and column): nothing to
// share, nothing changes.
// CHECK-LABEL: func.func @nothing_shared
// CHECK-NOT: step %c4
// CHECK-NOT: -> (f32, f32
func.func @nothing_shared(%a: memref<?x64x256xf32>, %c: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %m = memref.dim %a, %c0 : memref<?x64x256xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %c64 step %c1 {
      %init = memref.load %c[%i, %j] : memref<?x64xf32>
      %r = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %init) -> (f32) {
        %x = memref.load %a[%i, %j, %k] : memref<?x64x256xf32>
        %p = arith.mulf %x, %x : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      memref.store %r, %c[%i, %j] : memref<?x64xf32>
    }
  }
  return
}

// -----

// The output is also read in the k loop (the same argument): it may alias, nothing changes.
// CHECK-LABEL: func.func @output_read_inside
// CHECK-NOT: step %c4
// CHECK-NOT: -> (f32, f32
func.func @output_read_inside(%a: memref<?x64xf32>, %b: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %m = memref.dim %a, %c0 : memref<?x64xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %c64 step %c1 {
      %init = memref.load %a[%i, %j] : memref<?x64xf32>
      %r = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %init) -> (f32) {
        %x = memref.load %a[%i, %k] : memref<?x64xf32>
        %w = memref.load %b[%j, %k] : memref<64x64xf32>
        %p = arith.mulf %x, %w : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      memref.store %r, %a[%i, %j] : memref<?x64xf32>
    }
  }
  return
}

// -----

// C += A W with W as [K, N]: loops i, k, j, C's row updated at every k. Four rows a step around the
// k and j loops; in the j loop every row's loads and arithmetic first (W[k, j] four times, one after
// CSE), then the four stores; the rest of the rows in the original loops.
// CHECK-LABEL: func.func @updates
// CHECK: scf.for %{{.*}} step %c4
// CHECK: scf.for %[[K:.*]] =
// CHECK: scf.for %[[J:.*]] =
// CHECK-COUNT-4: memref.load %arg1[%[[K]], %[[J]]]
// CHECK-NOT: memref.store
// CHECK: arith.addf
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.store
// CHECK: scf.for %{{.*}} step %c1
func.func @updates(%a: memref<?x256xf32>, %w: memref<256x768xf32>, %c: memref<?x768xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c768 = arith.constant 768 : index
  %m = memref.dim %a, %c0 : memref<?x256xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %k = %c0 to %c256 step %c1 {
      scf.for %j = %c0 to %c768 step %c1 {
        %x = memref.load %a[%i, %k] : memref<?x256xf32>
        %y = memref.load %w[%k, %j] : memref<256x768xf32>
        %o = memref.load %c[%i, %j] : memref<?x768xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %o, %p : f32
        memref.store %s, %c[%i, %j] : memref<?x768xf32>
      }
    }
  }
  return
}

// -----

// The body reads C again after its store: the stores cannot move after the other rows' loads.
// CHECK-LABEL: func.func @load_after_store
// CHECK-NOT: step %c4
func.func @load_after_store(%a: memref<?x256xf32>, %w: memref<256x768xf32>, %c: memref<?x768xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c768 = arith.constant 768 : index
  %m = memref.dim %a, %c0 : memref<?x256xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %k = %c0 to %c256 step %c1 {
      scf.for %j = %c0 to %c768 step %c1 {
        %x = memref.load %a[%i, %k] : memref<?x256xf32>
        %y = memref.load %w[%k, %j] : memref<256x768xf32>
        %o = memref.load %c[%i, %j] : memref<?x768xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %o, %p : f32
        memref.store %s, %c[%i, %j] : memref<?x768xf32>
        %again = memref.load %c[%i, %j] : memref<?x768xf32>
      }
    }
  }
  return
}
