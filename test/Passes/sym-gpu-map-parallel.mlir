// RUN: symopt %s --split-input-file --sym-gpu-map-parallel | filecheck %s
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='block-size=128 elements-per-thread=1' | filecheck %s --check-prefix=OPT

// Runs on the bufferized compute function after convert-linalg-to-parallel-loops, lower-affine and
// canonicalize (sym-lower-to-nvvm): top-level scf.parallel nests, reduction nests and loose device
// ops become gpu.launch; sizes, allocations and library calls stay on the host.

// A 2-d nest is one launch over the linearized m*n space: blocks of 256 threads, 4 elements per
// thread 256 apart (loads first, then each store under its own bounds check), the innermost dimension
// taken from the remainder (consecutive threads, consecutive elements).
// CHECK-LABEL: func.func @elementwise_2d
// CHECK:       %[[M:.*]] = memref.dim %arg0, %c0
// CHECK:       %[[N:.*]] = memref.dim %arg0, %c1
// CHECK:       %[[T:.*]] = arith.muli %[[M]], %[[N]] : index
// CHECK:       %[[G:.*]] = arith.ceildivui %[[T]], %c1024 : index
// CHECK:       gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[G]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK:         %[[B:.*]] = arith.muli %[[BX]], %c1024{{.*}} : index
// CHECK:         %[[LIN:.*]] = arith.addi %[[B]], %[[TX]] : index
// CHECK:         %[[OK:.*]] = arith.cmpi ult, %[[LIN]], %[[T]] : index
// CHECK:         %[[SAFE:.*]] = arith.select %[[OK]], %[[LIN]], %{{.*}} : index
// CHECK:         %[[J:.*]] = arith.remui %[[SAFE]], %[[N]] : index
// CHECK:         %[[I:.*]] = arith.divui %[[SAFE]], %[[N]] : index
// CHECK:         %[[V:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK:         %[[W:.*]] = arith.mulf %[[V]]
// CHECK-COUNT-3: memref.load %arg0
// CHECK:         scf.if %[[OK]] {
// CHECK-NEXT:      memref.store %[[W]], %arg1[%[[I]], %[[J]]]
// CHECK-COUNT-3: scf.if
// CHECK:         gpu.terminator
// CHECK-NOT:   scf.parallel
// CHECK:       return
// The options: one element per thread, under one bounds check.
// OPT-LABEL:   func.func @elementwise_2d
// OPT:         %[[T:.*]] = arith.muli
// OPT:         %[[G:.*]] = arith.ceildivui %[[T]], %c128{{.*}} : index
// OPT:         gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[G]], {{.*}}) threads(%{{.*}}) in (%{{.*}} = %c128, {{.*}})
// OPT:           %[[OK:.*]] = arith.cmpi ult, %{{.*}}, %[[T]] : index
// OPT-NEXT:      scf.if %[[OK]] {
// OPT:             memref.load %arg0
// OPT:             memref.store
// OPT-NEXT:      }
// OPT-NEXT:      gpu.terminator
func.func @elementwise_2d(%x: memref<?x?xf32>, %y: memref<?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// A body that is not plain arithmetic (here the deferred index check of an embedding) is not copied
// per element: one element per thread, under one bounds check; the call stays in the kernel.
// CHECK-LABEL: func.func @body_with_call
// CHECK:       %[[N:.*]] = memref.dim %arg0, %c0
// CHECK:       %[[G:.*]] = arith.ceildivui %[[N]], %c256{{.*}} : index
// CHECK:       gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[G]], {{.*}}) threads(%{{.*}}) in (%{{.*}} = %c256, {{.*}})
// CHECK:         %[[LIN:.*]] = arith.addi
// CHECK:         %[[OK:.*]] = arith.cmpi ult, %[[LIN]], %[[N]] : index
// CHECK-NEXT:    scf.if %[[OK]] {
// CHECK-NEXT:      memref.load %arg0[%[[LIN]]]
// CHECK:           func.call @__mlir_sym_nested_assert
// CHECK:           memref.store %{{.*}}, %arg2[%[[LIN]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.terminator
// CHECK-NOT:   memref.load
func.func @body_with_call(%ix: memref<?xi64>, %x: memref<?xf32>, %y: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %n = memref.dim %ix, %c0 : memref<?xi64>
  %k = memref.dim %x, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %e = memref.load %ix[%i] : memref<?xi64>
    %j = arith.index_cast %e : i64 to index
    %in = arith.cmpi ult, %j, %k : index
    func.call @__mlir_sym_nested_assert(%in) {sym.assert_msg = "index out of range"} : (i1) -> ()
    %v = memref.load %x[%j] : memref<?xf32>
    memref.store %v, %y[%i] : memref<?xf32>
    scf.reduce
  }
  return %ok : i32
}
func.func private @__mlir_sym_nested_assert(i1)

// -----

// A lower bound and step other than 0 and 1: the trip count is ceil((ub - lb) / step) and each
// thread's index is lb + i * step.
// CHECK-LABEL: func.func @strided
// CHECK:       %[[SPAN:.*]] = arith.subi %arg1, %c2 : index
// CHECK:       %[[T:.*]] = arith.ceildivui %[[SPAN]], %c3 : index
// CHECK:       %[[G:.*]] = arith.ceildivui %[[T]], %c1024 : index
// CHECK:       gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[G]], {{.*}})
// CHECK:         %[[SAFE:.*]] = arith.select
// CHECK-NEXT:    %[[SCALED:.*]] = arith.muli %[[SAFE]], %c3 : index
// CHECK-NEXT:    %[[I:.*]] = arith.addi %c2, %[[SCALED]] : index
// CHECK:         memref.store %{{.*}}, %arg0[%[[I]]]
func.func @strided(%x: memref<?xf32>, %n: index) -> i32 {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %ok = arith.constant 0 : i32
  scf.parallel (%i) = (%c2) to (%n) step (%c3) {
    memref.store %zero, %x[%i] : memref<?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// A reduction nest (linalg's parallel-loop form: an scf.for accumulating into out[i]) is one block per
// output element, 32..256 threads by the row length; each thread strides over the row 4 elements at a
// time, the block combines with gpu.all_reduce and thread 0 adds the result to out[i].
// CHECK-LABEL: func.func @row_sum
// CHECK:       %[[M:.*]] = memref.dim %arg0, %c0
// CHECK:       %[[N:.*]] = memref.dim %arg0, %c1
// CHECK:       %[[B:.*]] = arith.select %{{.*}}, %c256, %{{.*}} : index
// CHECK:       gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[M]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BDIM:.*]] = %[[B]], {{.*}})
// CHECK:         %[[STEP:.*]] = arith.muli %[[BDIM]], %c4 : index
// CHECK:         %[[PART:.*]] = scf.for %[[J:.*]] = %[[TX]] to %[[N]] step %[[STEP]] iter_args
// CHECK:           memref.load %arg0[%[[BX]], %[[J]]]
// CHECK-COUNT-3:   memref.load %arg0[%[[BX]],
// CHECK:           scf.yield
// CHECK:         %[[SUM:.*]] = gpu.all_reduce add %[[PART]] uniform
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %[[TX]], %{{.*}} : index
// CHECK:         scf.if %[[FIRST]] {
// CHECK-NEXT:      %[[ACC:.*]] = memref.load %arg1[%[[BX]]]
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[SUM]], %[[ACC]] : f32
// CHECK-NEXT:      memref.store %[[NEW]], %arg1[%[[BX]]]
// CHECK-NOT:   gpu.launch
func.func @row_sum(%x: memref<?x?xf32>, %s: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %acc = memref.load %s[%i] : memref<?xf32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// A fill of the accumulator right before the reduction is folded into it: one launch, the fill's
// value combined in instead of read back.
// CHECK-LABEL: func.func @fill_folded_into_reduction
// CHECK:       %[[INIT:.*]] = arith.constant 0xFF800000 : f32
// CHECK:       gpu.launch
// CHECK:         %[[MAX:.*]] = gpu.all_reduce maximumf
// CHECK:         scf.if
// CHECK-NEXT:      %[[NEW:.*]] = arith.maximumf %[[MAX]], %[[INIT]] : f32
// CHECK-NEXT:      memref.store %[[NEW]], %arg1
// CHECK-NOT:   gpu.launch
// CHECK-NOT:   memref.load %arg1
func.func @fill_folded_into_reduction(%x: memref<?x?xf32>, %s: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant 0xFF800000 : f32
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %init, %s[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %acc = memref.load %s[%i] : memref<?xf32>
      %t = arith.maximumf %v, %acc : f32
      memref.store %t, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// The fill writes another buffer than the reduction's accumulator: it is a launch of its own, and the
// reduction reads its accumulator.
// CHECK-LABEL: func.func @no_rewrite_of_fill_when_reduction_writes_another_buffer
// CHECK:       gpu.launch
// CHECK:         memref.store %{{.*}}, %arg2
// CHECK:       gpu.launch
// CHECK:         gpu.all_reduce maximumf
// CHECK:         scf.if
// CHECK-NEXT:      memref.load %arg1
func.func @no_rewrite_of_fill_when_reduction_writes_another_buffer(%x: memref<?x?xf32>, %s: memref<?xf32>, %t: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant 0xFF800000 : f32
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %init, %t[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %acc = memref.load %s[%i] : memref<?xf32>
      %r = arith.maximumf %v, %acc : f32
      memref.store %r, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// An inner loop that only overwrites out[i] is no reduction: one thread per row runs the loop.
// CHECK-LABEL: func.func @no_rewrite_to_reduction_when_loop_only_overwrites
// CHECK:       gpu.launch
// CHECK:         scf.if
// CHECK-NEXT:      scf.for
// CHECK-NOT:   gpu.all_reduce
func.func @no_rewrite_to_reduction_when_loop_only_overwrites(%x: memref<?x?xf32>, %s: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      memref.store %v, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// Device ops outside loops run in a one-thread launch; sizes and allocations they do not depend on are
// evaluated on the host before it, and library calls stay on the host.
// CHECK-LABEL: func.func @host_work_stays_on_host
// CHECK:       %[[M:.*]] = memref.dim %arg0
// CHECK-NEXT:  %[[TMP:.*]] = memref.alloc(%[[M]])
// CHECK-NEXT:  %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:  gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%{{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK-NEXT:    memref.store %{{.*}}, %arg3
// CHECK-NEXT:    memref.store %{{.*}}, %[[TMP]]
// CHECK-NEXT:    gpu.terminator
// CHECK-NEXT:  }
// CHECK-NEXT:  call @__sym_matmul_0(%arg0, %arg1, %arg2)
// CHECK-NEXT:  return
func.func @host_work_stays_on_host(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %out: memref<1xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %ok = arith.constant 0 : i32
  memref.store %one, %out[%c0] : memref<1xf32>
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %tmp = memref.alloc(%m) : memref<?xf32>
  memref.store %one, %tmp[%c0] : memref<?xf32>
  call @__sym_matmul_0(%a, %b, %c) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  return %ok : i32
}
func.func private @__sym_matmul_0(memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) attributes {sym.library_call = "matmul"}

// -----

// A small integer buffer that only feeds memref.reshape's shape is kept by the host (as a list):
// marked, and its stores are no device work.
// CHECK-LABEL: func.func @shape_buffer_stays_on_host
// CHECK:       memref.alloc() {sym.host_buffer} : memref<2xindex>
// CHECK-NOT:   gpu.launch
func.func @shape_buffer_stays_on_host(%x: memref<?xf32>, %m: index, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %shape = memref.alloc() : memref<2xindex>
  memref.store %m, %shape[%c0] : memref<2xindex>
  memref.store %n, %shape[%c1] : memref<2xindex>
  %r = memref.reshape %x(%shape) : (memref<?xf32>, memref<2xindex>) -> memref<?x?xf32>
  return %ok : i32
}

// -----

// The guard function runs on the host: left alone.
// CHECK-LABEL: func.func @no_rewrite_when_guard_function
// CHECK:       scf.parallel
// CHECK-NOT:   gpu.launch
func.func @no_rewrite_when_guard_function(%x: memref<?xf32>, %n: index) -> i32 attributes {sym.guards} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ok = arith.constant 0 : i32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %x[%i] : memref<?xf32>
    scf.reduce
  }
  return %ok : i32
}
