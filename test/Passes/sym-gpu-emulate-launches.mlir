// RUN: symopt %s --split-input-file --sym-gpu-emulate-launches | filecheck %s

// A launch becomes loops over blocks and threads (y, then x); the ids and sizes become the loop
// variables and the launch's sizes (z ids are 0).
// CHECK-LABEL: func.func @elementwise
// CHECK:         scf.for %[[BX:.*]] = %c0{{.*}} to %arg1 step %c1
// CHECK-NEXT:      scf.for %{{.*}} = %c0{{.*}} to %c1{{.*}} step %c1
// CHECK-NEXT:        scf.for %[[TX:.*]] = %c0{{.*}} to %c4 step %c1
// CHECK:             %[[B:.*]] = arith.muli %[[BX]], %c4
// CHECK:             %[[I:.*]] = arith.addi %[[B]], %[[TX]]
// CHECK:             memref.store %{{.*}}, %arg0[%[[I]]]
// CHECK-NOT:     gpu.launch
func.func @elementwise(%x: memref<?xf32>, %g: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %b = arith.muli %bx, %sx : index
    %i = arith.addi %b, %tx : index
    memref.store %zero, %x[%i] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A launch that synchronizes its block runs one thread per block: the barrier goes, the block
// reduction is the thread's own value.
// CHECK-LABEL: func.func @block_reduction
// CHECK:         scf.for %[[BX:.*]] = %c0{{.*}} to %arg1 step %c1
// CHECK-NEXT:      scf.for %{{.*}} = %c0{{.*}} to %c1{{.*}} step %c1
// CHECK-NEXT:        scf.for %{{.*}} = %c0{{.*}} to %c1{{.*}} step %c1
// CHECK:             %[[V:.*]] = memref.load %arg0[%[[BX]]]
// CHECK-NOT:         gpu.all_reduce
// CHECK-NOT:         gpu.barrier
// CHECK:             memref.store %[[V]], %arg0[%[[BX]]]
func.func @block_reduction(%x: memref<?xf32>, %g: index) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx] : memref<?xf32>
    %s = gpu.all_reduce add %v uniform {} : (f32) -> f32
    gpu.barrier
    memref.store %s, %x[%bx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// Lanes that shuffle run one x thread per block and y: a shuffle is the thread's own value; every
// y thread (independent work) runs.
// CHECK-LABEL: func.func @lanes
// CHECK:         scf.for %[[BX:.*]] = %c0{{.*}} to %arg1 step %c1
// CHECK-NEXT:      scf.for %[[TY:.*]] = %c0{{.*}} to %c8 step %c1
// CHECK-NEXT:        scf.for %{{.*}} = %c0{{.*}} to %c1{{.*}} step %c1
// CHECK:               %[[I:.*]] = arith.addi %{{.*}}, %[[TY]]
// CHECK:               %[[V:.*]] = memref.load %arg0[%[[I]]]
// CHECK-NOT:           gpu.shuffle
// CHECK:               %[[S:.*]] = arith.addf %[[V]], %[[V]]
// CHECK:               memref.store %[[S]], %arg0[%[[I]]]
func.func @lanes(%x: memref<?xf32>, %g: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c1_i32 = arith.constant 1 : i32
  %c32_i32 = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c8, %sz = %c1) {
    %b = arith.muli %bx, %sy : index
    %i = arith.addi %b, %ty : index
    %v = memref.load %x[%i] : memref<?xf32>
    %o, %ok = gpu.shuffle xor %v, %c1_i32, %c32_i32 : f32
    %s = arith.addf %v, %o : f32
    memref.store %s, %x[%i] : memref<?xf32>
    gpu.terminator
  }
  return
}
