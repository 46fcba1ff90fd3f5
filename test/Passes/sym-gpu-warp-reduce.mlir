// RUN: symopt %s --split-input-file --sym-gpu-warp-reduce | filecheck %s
// RUN: symopt %s --split-input-file --sym-gpu-warp-reduce="max-block=0" | filecheck %s --check-prefix=OFF
// max-block=0: every all_reduce is left to upstream's lowering.
// OFF-NOT: gpu.shuffle
// OFF-LABEL: func.func @one_warp
// OFF: gpu.all_reduce add

// One warp: five xor shuffles, each combined; no shared memory, no barrier.
// CHECK-LABEL: func.func @one_warp
// CHECK:       gpu.launch
// CHECK-NOT:   workgroup(
// CHECK:       %[[W:.+]] = arith.constant 32 : i32
// CHECK:       %[[S0:.+]], %{{.+}} = gpu.shuffle xor %[[V:.+]], %c16_i32, %[[W]] : f32
// CHECK-NEXT:  %[[A0:.+]] = arith.addf %[[V]], %[[S0]] : f32
// CHECK:       gpu.shuffle xor %[[A0]], %c8_i32, %[[W]] : f32
// CHECK:       gpu.shuffle xor %{{.+}}, %c4_i32, %[[W]] : f32
// CHECK:       gpu.shuffle xor %{{.+}}, %c2_i32, %[[W]] : f32
// CHECK:       %[[S4:.+]], %{{.+}} = gpu.shuffle xor %[[A3:.+]], %c1_i32, %[[W]] : f32
// CHECK-NEXT:  %[[T:.+]] = arith.addf %[[A3]], %[[S4]] : f32
// CHECK-NOT:   gpu.barrier
// CHECK-NOT:   gpu.all_reduce
// CHECK:       memref.store %[[T]]
func.func @one_warp(%x: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<?xf32>
    %t = gpu.all_reduce add %v uniform {} : (f32) -> f32
    memref.store %t, %x[%bx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// Two warps, an i32 maximum: each warp's total through a workgroup buffer of two values, stored by
// lane 0, read by every thread between two barriers.
// CHECK-LABEL: func.func @two_warps_i32
// CHECK:       gpu.launch {{.*}} workgroup(%[[BUF:.+]] : memref<2xi32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK:       %[[LANE:.+]] = arith.remui %{{.+}}, %c32{{.*}} : index
// CHECK:       %[[IS0:.+]] = arith.cmpi eq, %[[LANE]], %c0{{.*}} : index
// CHECK:       scf.if %[[IS0]] {
// CHECK-NEXT:    %[[WARP:.+]] = arith.divui %{{.+}}, %c32{{.*}} : index
// CHECK-NEXT:    memref.store %{{.+}}, %[[BUF]][%[[WARP]]]
// CHECK:       gpu.barrier
// CHECK:       %[[L0:.+]] = memref.load %[[BUF]][%{{.+}}]
// CHECK:       %[[L1:.+]] = memref.load %[[BUF]][%{{.+}}]
// CHECK-NEXT:  %[[T:.+]] = arith.maxsi %[[L0]], %[[L1]] : i32
// CHECK-NEXT:  gpu.barrier
// CHECK:       memref.store %[[T]]
func.func @two_warps_i32(%x: memref<?xi32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<?xi32>
    %t = gpu.all_reduce maxsi %v uniform {} : (i32) -> i32
    memref.store %t, %x[%bx] : memref<?xi32>
    gpu.terminator
  }
  return
}

// -----

// sym-gpu-map-parallel's block size for a static row length: selects on comparisons of constants,
// decided here (256 <= 512: 32 threads, one warp).
// CHECK-LABEL: func.func @select_of_constants
// CHECK-NOT:   workgroup(
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-NOT:   gpu.barrier
func.func @select_of_constants(%x: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %small = arith.cmpi ule, %c256, %c512 : index
  %bs = arith.select %small, %c32, %c64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %bs, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<?xf32>
    %t = gpu.all_reduce maximumf %v uniform {} : (f32) -> f32
    memref.store %t, %x[%bx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A block size chosen at run time among multiples of 32 (up to 256): a buffer for the most warps,
// and a loop over the block's warps (its size / 32).
// CHECK-LABEL: func.func @size_at_run_time
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) workgroup(%[[BUF:.+]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK:       gpu.barrier
// CHECK:       %[[FIRST:.+]] = memref.load %[[BUF]][%c0{{.*}}]
// CHECK:       %[[N:.+]] = arith.divui %{{.+}}, %c32{{.*}} : index
// CHECK:       scf.for %[[W:.+]] = %{{.+}} to %[[N]] step %{{.+}} iter_args(%[[ACC:.+]] = %[[FIRST]]) -> (f32) {
// CHECK-NEXT:    %[[L:.+]] = memref.load %[[BUF]][%[[W]]]
// CHECK-NEXT:    %[[S:.+]] = arith.addf %[[ACC]], %[[L]] : f32
// CHECK-NEXT:    scf.yield %[[S]] : f32
// CHECK:       gpu.barrier
func.func @size_at_run_time(%x: memref<?xf32>, %n: index, %len: index) {
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %small = arith.cmpi ule, %len, %c512 : index
  %bs = arith.select %small, %c32, %c256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %bs, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<?xf32>
    %t = gpu.all_reduce add %v uniform {} : (f32) -> f32
    memref.store %t, %x[%bx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// Left to upstream's lowering: a block that is not whole warps, a 2-d block, an f16 value, a
// non-uniform reduction, and a reduction with a region.
// CHECK-LABEL: func.func @not_ours
// CHECK-COUNT-5: gpu.all_reduce
// CHECK-NOT:   gpu.shuffle
func.func @not_ours(%x: memref<?xf32>, %h: memref<?xf16>, %n: index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c48, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<?xf32>
    %t = gpu.all_reduce add %v uniform {} : (f32) -> f32
    memref.store %t, %x[%bx] : memref<?xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c2, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<?xf32>
    %t = gpu.all_reduce add %v uniform {} : (f32) -> f32
    memref.store %t, %x[%bx] : memref<?xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %h[%tx] : memref<?xf16>
    %t = gpu.all_reduce add %v uniform {} : (f16) -> f16
    memref.store %t, %h[%bx] : memref<?xf16>
    %w = memref.load %x[%tx] : memref<?xf32>
    %u = gpu.all_reduce add %w {} : (f32) -> f32
    memref.store %u, %x[%bx] : memref<?xf32>
    %r = gpu.all_reduce %w uniform {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      gpu.yield %s : f32
    } : (f32) -> f32
    memref.store %r, %x[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}
