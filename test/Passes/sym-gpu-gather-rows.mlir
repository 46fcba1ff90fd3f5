// RUN: symopt %s --split-input-file --sym-gpu-gather-rows | filecheck %s

// A layer norm's backward in torch-mlir's order: the per-row sums (R), a column sum of the rows
// (C: a weight's grad), then the input's grad (N), which reads the row sums at its own row. N does
// not depend on C, so it moves up to R, with the allocation and view of its output (sym-gpu-map-parallel
// then runs R and N as one row group).
// CHECK-LABEL: func.func @row_group_past_a_column_sum
// CHECK:       scf.parallel (%[[I:.*]]) = (%c0) to (%arg3) step (%c1) {
// CHECK:         memref.store {{.*}}, %[[S:.*]][%[[I]]] : memref<?xf32>
// CHECK:       %[[Y:.*]] = memref.alloc(%arg3) : memref<?x256xf32>
// CHECK-NEXT:  %[[V:.*]] = memref.cast %[[Y]]
// CHECK-NEXT:  scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%arg3, %c256)
// CHECK:         memref.store {{.*}}, %[[V]]
// CHECK:       scf.parallel (%{{.*}}) = (%c0) to (%c256) step (%c1) {
// CHECK:         memref.store {{.*}}, %arg2
// CHECK:       return %[[Y]]
func.func @row_group_past_a_column_sum(%x: memref<?x256xf32>, %s: memref<?xf32>, %c: memref<256xf32>, %n: index) -> memref<?x256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %c256 step %c1 {
      %a = memref.load %x[%i, %j] : memref<?x256xf32>
      %o = memref.load %s[%i] : memref<?xf32>
      %t = arith.addf %a, %o : f32
      memref.store %t, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%j) = (%c0) to (%c256) step (%c1) {
    scf.for %i = %c0 to %n step %c1 {
      %a = memref.load %x[%i, %j] : memref<?x256xf32>
      %o = memref.load %c[%j] : memref<256xf32>
      %t = arith.addf %a, %o : f32
      memref.store %t, %c[%j] : memref<256xf32>
    }
    scf.reduce
  }
  %y = memref.alloc(%n) : memref<?x256xf32>
  %v = memref.cast %y : memref<?x256xf32> to memref<?x256xf32, strided<[256, 1]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c256) step (%c1, %c1) {
    %a = memref.load %x[%i, %j] : memref<?x256xf32>
    %m = memref.load %s[%i] : memref<?xf32>
    %d = arith.subf %a, %m : f32
    memref.store %d, %v[%i, %j] : memref<?x256xf32, strided<[256, 1]>>
    scf.reduce
  }
  return %y : memref<?x256xf32>
}

// -----

// Left alone: a nest between that writes what the last one reads (the column sum writes %c, which
// the last nest reads), and a library call between (anything but nests and host ops stops the search).
// CHECK-LABEL: func.func @dependent_or_barrier
// CHECK:       scf.parallel (%{{.*}}) = (%c0) to (%arg3)
// CHECK:       scf.parallel (%{{.*}}) = (%c0) to (%c256)
// CHECK:       scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%arg3, %c256)
// CHECK:       call @lib
// CHECK:       scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%arg3, %c256)
func.func private @lib(memref<?x256xf32>)
func.func @dependent_or_barrier(%x: memref<?x256xf32>, %s: memref<?xf32>, %c: memref<256xf32>, %n: index, %y: memref<?x256xf32>, %z: memref<?x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %c256 step %c1 {
      %a = memref.load %x[%i, %j] : memref<?x256xf32>
      %o = memref.load %s[%i] : memref<?xf32>
      %t = arith.addf %a, %o : f32
      memref.store %t, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%j) = (%c0) to (%c256) step (%c1) {
    scf.for %i = %c0 to %n step %c1 {
      %a = memref.load %x[%i, %j] : memref<?x256xf32>
      %o = memref.load %c[%j] : memref<256xf32>
      %t = arith.addf %a, %o : f32
      memref.store %t, %c[%j] : memref<256xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c256) step (%c1, %c1) {
    %m = memref.load %s[%i] : memref<?xf32>
    %w = memref.load %c[%j] : memref<256xf32>
    %d = arith.subf %w, %m : f32
    memref.store %d, %y[%i, %j] : memref<?x256xf32>
    scf.reduce
  }
  func.call @lib(%x) : (memref<?x256xf32>) -> ()
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c256) step (%c1, %c1) {
    %a = memref.load %x[%i, %j] : memref<?x256xf32>
    %m = memref.load %s[%i] : memref<?xf32>
    %d = arith.subf %a, %m : f32
    memref.store %d, %z[%i, %j] : memref<?x256xf32>
    scf.reduce
  }
  return
}

// -----

// Left alone: a nest between that writes by an atomic (a scatter's accumulation), whose buffer we
// do not track: only loads and stores are placed.
// CHECK-LABEL: func.func @atomic_between
// CHECK:       scf.parallel (%{{.*}}) = (%c0) to (%arg3)
// CHECK:       memref.atomic_rmw
// CHECK:       scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%arg3, %c256)
func.func @atomic_between(%x: memref<?x256xf32>, %s: memref<?xf32>, %c: memref<256xf32>, %n: index, %y: memref<?x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %c256 step %c1 {
      %a = memref.load %x[%i, %j] : memref<?x256xf32>
      %o = memref.load %s[%i] : memref<?xf32>
      %t = arith.addf %a, %o : f32
      memref.store %t, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%j) = (%c0) to (%c256) step (%c1) {
    %a = memref.load %x[%c0, %j] : memref<?x256xf32>
    %r = memref.atomic_rmw addf %a, %s[%c0] : (f32, memref<?xf32>) -> f32
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c256) step (%c1, %c1) {
    %a = memref.load %x[%i, %j] : memref<?x256xf32>
    %m = memref.load %s[%i] : memref<?xf32>
    %d = arith.subf %a, %m : f32
    memref.store %d, %y[%i, %j] : memref<?x256xf32>
    scf.reduce
  }
  return
}

// -----

// A host value the moved nest uses that a nest of the group uses too (the review's case): it stays
// where it is, before that nest; the moved nest goes after the group's last nest.
// CHECK-LABEL: func.func @host_op_used_by_the_group
// CHECK:       %[[H:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:       scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%arg3, %c256)
// CHECK:         arith.mulf %{{.*}}, %[[H]]
// CHECK:         memref.store {{.*}}, %arg5
// CHECK:       scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%arg3, %c256)
// CHECK:         memref.store {{.*}}, %arg4
// CHECK:       scf.parallel (%{{.*}}) = (%c0) to (%c256)
func.func @host_op_used_by_the_group(%x: memref<?x256xf32>, %s: memref<?xf32>, %c: memref<256xf32>, %n: index, %y: memref<?x256xf32>, %z: memref<?x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %c256 step %c1 {
      %a = memref.load %x[%i, %j] : memref<?x256xf32>
      %o = memref.load %s[%i] : memref<?xf32>
      %t = arith.addf %a, %o : f32
      memref.store %t, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  %k = arith.constant 2.0 : f32
  %h = arith.mulf %k, %k : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c256) step (%c1, %c1) {
    %a = memref.load %x[%i, %j] : memref<?x256xf32>
    %d = arith.mulf %a, %h : f32
    memref.store %d, %z[%i, %j] : memref<?x256xf32>
    scf.reduce
  }
  scf.parallel (%j) = (%c0) to (%c256) step (%c1) {
    scf.for %i = %c0 to %n step %c1 {
      %a = memref.load %x[%i, %j] : memref<?x256xf32>
      %o = memref.load %c[%j] : memref<256xf32>
      %t = arith.addf %a, %o : f32
      memref.store %t, %c[%j] : memref<256xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c256) step (%c1, %c1) {
    %a = memref.load %x[%i, %j] : memref<?x256xf32>
    %m = memref.load %s[%i] : memref<?xf32>
    %d = arith.subf %a, %m : f32
    %e = arith.mulf %d, %h : f32
    memref.store %e, %y[%i, %j] : memref<?x256xf32>
    scf.reduce
  }
  return
}
