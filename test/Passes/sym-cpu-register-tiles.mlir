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

// -----

// The rows start at 2: the tiles run from 2 to 2 + 4 * floordiv(max(m - 2, 0), 4), the original
// loop from there.
// CHECK-LABEL: func.func @rows_from_two
// CHECK: %[[N:.*]] = arith.subi %{{.*}}, %c2
// CHECK: %[[P:.*]] = arith.maxsi %[[N]], %c0
// CHECK: %[[Q:.*]] = arith.floordivsi %[[P]], %c4
// CHECK: %[[W:.*]] = arith.muli %[[Q]], %c4
// CHECK: %[[MAIN:.*]] = arith.addi %c2, %[[W]]
// CHECK: scf.for %{{.*}} = %c2 to %[[MAIN]] step %c4
// CHECK: scf.for %{{.*}} = %[[MAIN]] to %{{.*}} step %c1
func.func @rows_from_two(%a: memref<?x64xf32>, %b: memref<32x64xf32>, %c: memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %m = memref.dim %a, %c0 : memref<?x64xf32>
  scf.for %i = %c2 to %m step %c1 {
    scf.for %j = %c0 to %c32 step %c1 {
      %init = memref.load %c[%i, %j] : memref<?x32xf32>
      %r = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %init) -> (f32) {
        %x = memref.load %a[%i, %k] : memref<?x64xf32>
        %w = memref.load %b[%j, %k] : memref<32x64xf32>
        %p = arith.mulf %x, %w : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      memref.store %r, %c[%i, %j] : memref<?x32xf32>
    }
  }
  return
}

// -----

// C's rows are one (a stride-0 view): each row adds to the row before, nothing changes.
// CHECK-LABEL: func.func @rows_overlap
// CHECK-NOT: step %c4
func.func @rows_overlap(%a: memref<8x8xf32>, %bt: memref<6x8xf32>, %out: memref<6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %d = memref.reinterpret_cast %out to offset: [0], sizes: [8, 6], strides: [0, 1] : memref<6xf32> to memref<8x6xf32, strided<[0, 1]>>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c6 step %c1 {
      %init = memref.load %d[%i, %j] : memref<8x6xf32, strided<[0, 1]>>
      %r = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (f32) {
        %x = memref.load %a[%i, %k] : memref<8x8xf32>
        %y = memref.load %bt[%j, %k] : memref<6x8xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      memref.store %r, %d[%i, %j] : memref<8x6xf32, strided<[0, 1]>>
    }
  }
  return
}

// -----

// out[j] += A[i, k] W[k, j]: the rows all update one output row (a sum over rows), nothing changes.
// CHECK-LABEL: func.func @updates_summed_over_rows
// CHECK-NOT: step %c4
func.func @updates_summed_over_rows(%a: memref<9x8xf32>, %w: memref<8x6xf32>, %c: memref<6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  scf.for %i = %c0 to %c9 step %c1 {
    scf.for %k = %c0 to %c8 step %c1 {
      scf.for %j = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<9x8xf32>
        %y = memref.load %w[%k, %j] : memref<8x6xf32>
        %o = memref.load %c[%j] : memref<6xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %o, %p : f32
        memref.store %s, %c[%j] : memref<6xf32>
      }
    }
  }
  return
}

// -----

// The updates read C's own buffer elsewhere (C += C W): it may alias, nothing changes.
// CHECK-LABEL: func.func @updates_read_the_output
// CHECK-NOT: step %c4
func.func @updates_read_the_output(%w: memref<8x8xf32>, %c: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %m = memref.dim %c, %c0 : memref<?x8xf32>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %k = %c0 to %c8 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        %x = memref.load %c[%i, %k] : memref<?x8xf32>
        %y = memref.load %w[%k, %j] : memref<8x8xf32>
        %o = memref.load %c[%i, %j] : memref<?x8xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %o, %p : f32
        memref.store %s, %c[%i, %j] : memref<?x8xf32>
      }
    }
  }
  return
}
