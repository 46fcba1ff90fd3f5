// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='vectorize=0' | filecheck %s
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel | filecheck %s --check-prefix=VEC
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='fuse-rows=0' | filecheck %s --check-prefix=ROWS0
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='block-size=128 elements-per-thread=1 vectorize=0' | filecheck %s --check-prefix=OPT
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='reduction-vectors=2 max-reduction-block=128' | filecheck %s --check-prefix=RED2
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='split-full=0' | filecheck %s --check-prefix=SPLIT0
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='row-registers=0' | filecheck %s --check-prefix=MEM
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel --cse | filecheck %s --check-prefix=REG
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='column-reductions=0' | filecheck %s --check-prefix=COL0
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='vectorize=0 row-scalar-elements=2' | filecheck %s --check-prefix=SCAL2
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='flat-vectors=0' | filecheck %s --check-prefix=FLAT0
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='peel-rows=0' | filecheck %s --check-prefix=PEEL0
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='vectorize=0 scalar-chunk=4' | filecheck %s --check-prefix=CHUNK4
// RUN: symopt %s --split-input-file --sym-gpu-map-parallel='shifted-loads=1' | filecheck %s --check-prefix=SHIFT

// Runs on the bufferized compute function after convert-linalg-to-parallel-loops, lower-affine and
// canonicalize (sym-lower-to-nvvm): top-level scf.parallel nests, reduction nests and loose device
// ops become gpu.launch; sizes, allocations and library calls stay on the host.

// A 2-d nest is one launch over the linearized m*n space: blocks of 256 threads, 4 elements per
// thread 256 apart, the innermost dimension taken from the remainder (consecutive threads,
// consecutive elements). Two elements at a time (scalar-chunk=2) load first, then each stores under
// its own bounds check; only the first element's indices are divided out, the next ones add 256's
// digits with a carry (no division).
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
// CHECK:         %[[SJ:.*]] = arith.remui %c256{{.*}}, %[[N]] : index
// CHECK:         %[[SI:.*]] = arith.divui %c256{{.*}}, %[[N]] : index
// CHECK:         %[[J1:.*]] = arith.addi %[[J]], %[[SJ]] : index
// CHECK:         %[[C:.*]] = arith.cmpi uge, %[[J1]], %[[N]] : index
// CHECK:         %[[V:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK:         %[[W:.*]] = arith.mulf %[[V]]
// CHECK:         memref.load %arg0
// CHECK-NOT:     memref.load
// CHECK:         scf.if %[[OK]] {
// CHECK-NEXT:      memref.store %[[W]], %arg1[%[[I]], %[[J]]]
// CHECK:         scf.if
// CHECK-COUNT-2: memref.load %arg0
// CHECK-COUNT-2: scf.if
// CHECK-NOT:     arith.divui
// CHECK:         gpu.terminator
// CHECK-NOT:   scf.parallel
// CHECK:       return
// scalar-chunk=4: the four elements' loads all in flight before the first store.
// CHUNK4-LABEL: func.func @elementwise_2d
// CHUNK4-COUNT-4: memref.load %arg0
// CHUNK4-NOT:     memref.load
// CHUNK4-COUNT-4: memref.store
// CHUNK4:         gpu.terminator
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
// With 128-bit loads (the default): a runtime split between a loop of vector loads (16 bytes per
// thread and access, 4 accesses per step, a block-width apart, their loads in flight together; the
// later ones clamped into the row and their values masked with the identity) and the scalar loop,
// both yielding the thread's partial value.
// VEC-LABEL: func.func @row_sum
// VEC:         %[[P:.*]] = scf.if %{{.*}} -> (f32) {
// VEC:           %[[FIRSTV:.*]] = arith.muli %{{.*}}, %c4{{.*}} : index
// VEC:           %[[RS:.*]] = arith.muli %{{.*}}, %c4{{.*}} : index
// VEC:           %[[VSTEP:.*]] = arith.muli %[[RS]], %c4{{.*}} : index
// VEC:           scf.for %[[V:.*]] = %[[FIRSTV]] to %{{.*}} step %[[VSTEP]]
// VEC:             vector.load %arg0[%{{.*}}, %[[V]]] {{.*}} : memref<?x?xf32>, vector<4xf32>
// VEC:             %[[V1:.*]] = arith.addi %[[V]], %{{.*}} : index
// VEC:             %[[IN1:.*]] = arith.cmpi ult, %[[V1]]
// VEC:             %[[S1:.*]] = arith.select %[[IN1]], %[[V1]], %[[V]] : index
// VEC:             vector.load %arg0[%{{.*}}, %[[S1]]] {{.*}} : memref<?x?xf32>, vector<4xf32>
// VEC:             arith.select %[[IN1]], %{{.*}}, %cst
// VEC-COUNT-2:     vector.load %arg0
// VEC:         } else {
// VEC:           scf.for
// VEC:             memref.load %arg0
// VEC:         gpu.all_reduce add %[[P]] uniform
// Options: at most 128 threads per reduction block, 2 vector loads per step.
// RED2-LABEL: func.func @row_sum
// RED2:         arith.select %{{.*}}, %c64, %c128 : index
// RED2:         %[[B:.*]] = arith.select %{{.*}}, %c32, %{{.*}} : index
// RED2-NOT:     %c256
// RED2:         gpu.launch {{.*}} threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[B]],
// RED2:           arith.muli %{{.*}}, %c4{{.*}} : index
// RED2:           %[[RS:.*]] = arith.muli %{{.*}}, %c4{{.*}} : index
// RED2:           %[[VSTEP:.*]] = arith.muli %[[RS]], %c2{{.*}} : index
// RED2:           scf.for %{{.*}} step %[[VSTEP]]
// RED2-COUNT-2:     vector.load %arg0
// RED2-NOT:         vector.load
// RED2:             scf.yield
// SCAL2-LABEL: func.func @row_sum
// SCAL2:         %[[STEP:.*]] = arith.muli %{{.*}}, %c2{{.*}} : index
// SCAL2:         scf.for %{{.*}} step %[[STEP]] iter_args
// SCAL2-COUNT-2:   memref.load %arg0
// SCAL2-NOT:       memref.load
// SCAL2:           scf.yield
// CHECK-LABEL: func.func @row_sum
// CHECK:       %[[M:.*]] = memref.dim %arg0, %c0
// CHECK:       %[[N:.*]] = memref.dim %arg0, %c1
// The block: the fewest threads (32..256) that give each at most 64 bytes of the row (16 f32).
// CHECK:       %[[L2:.*]] = arith.cmpi ule, %[[N]], %c2048
// CHECK:       arith.select %[[L2]], %c128, %c256 : index
// CHECK:       %[[L0:.*]] = arith.cmpi ule, %[[N]], %c512
// CHECK:       %[[B:.*]] = arith.select %[[L0]], %c32, %{{.*}} : index
// CHECK:       gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[M]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BDIM:.*]] = %[[B]], {{.*}})
// The scalar path (vectorize=0 here): 8 elements per thread and step (row-scalar-elements).
// CHECK:         %[[STEP:.*]] = arith.muli %[[BDIM]], %c8{{.*}} : index
// CHECK:         %[[PART:.*]] = scf.for %[[J:.*]] = %[[TX]] to %[[N]] step %[[STEP]] iter_args
// CHECK:           memref.load %arg0[%[[BX]], %[[J]]]
// CHECK-COUNT-7:   memref.load %arg0[%[[BX]],
// CHECK-NOT:       memref.load
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

// bf16 rows: the block size counts bytes, so a thread takes up to 32 elements (4 vectors of 8), as
// many loads in flight as float32's 16; rows held in registers are 4 vectors of 8 bf16 a thread too.
// The peeled path (odd row lengths, below) takes 4 vectors a step too.
// CHECK-LABEL: func.func @row_sum_bf16
// CHECK:       %[[N:.*]] = memref.dim %arg0, %c1
// CHECK:       %[[L2:.*]] = arith.cmpi ule, %[[N]], %c4096
// CHECK:       arith.select %[[L2]], %c128, %c256 : index
// CHECK:       %[[L0:.*]] = arith.cmpi ule, %[[N]], %c1024
// CHECK:       arith.select %[[L0]], %c32, %{{.*}} : index
// REG-LABEL: func.func @row_sum_bf16
// REG:         gpu.launch
// REG-COUNT-4:   vector.load %arg0{{.*}} : memref<?x?xbf16>, vector<8xbf16>
// REG-NOT:       vector.load
// REG:           } else {
// REG-COUNT-4:   vector.load %arg0{{.*}} : memref<?x?xbf16>, vector<8xbf16>
// REG-NOT:       vector.load
// REG:           gpu.all_reduce add
func.func @row_sum_bf16(%x: memref<?x?xbf16>, %s: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xbf16>
  %n = memref.dim %x, %c1 : memref<?x?xbf16>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xbf16>
      %w = arith.extf %v : bf16 to f32
      %acc = memref.load %s[%i] : memref<?xf32>
      %t = arith.addf %w, %acc : f32
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

// -----

// 128-bit accesses (the default; the first RUN line turns them off): a runtime split, not a
// recompile. When the row length is a multiple of 4 and every vector-accessed buffer (x, y) has an
// aligned address, offset and row stride, each thread takes 4 consecutive elements with one
// vector.load per input and one vector.store; the bias b[i] is the same for the 4 elements (no index
// on the innermost loop variable) and loaded once. Otherwise the scalar mapping runs.
// CHECK-LABEL: func.func @vector_split
// OPT-LABEL: func.func @vector_split
// ROWS0-LABEL: func.func @vector_split
// VEC-LABEL: func.func @vector_split
// VEC:       %[[N:.*]] = memref.dim %arg0, %c1
// VEC:       gpu.launch
// VEC:         arith.remui %[[N]], %c4
// VEC:         memref.extract_aligned_pointer_as_index %arg0
// VEC:         memref.extract_strided_metadata %arg0
// VEC:         memref.extract_aligned_pointer_as_index %arg2
// VEC:         memref.extract_strided_metadata %arg2
// VEC:         arith.cmpi eq, %strides_{{[0-9]+}}#1, %c1
// VEC-NEXT:    %[[OK:.*]] = arith.andi
// VEC-NEXT:    scf.if %[[OK]] {
// VEC:           %[[FIRST:.*]] = arith.muli %{{.*}}, %c4{{.*}} : index
// VEC:           scf.if
// VEC:             %[[J:.*]] = arith.remui %[[FIRST]], %[[N]]
// VEC:             %[[I:.*]] = arith.divui %[[FIRST]], %[[N]]
// VEC:             %[[V:.*]] = vector.load %arg0[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// VEC-COUNT-4:     vector.extract %[[V]]
// VEC:             %[[B:.*]] = memref.load %arg1[%[[I]]] : memref<?xf32>
// VEC-NOT:         memref.load
// VEC:             %[[W:.*]] = vector.from_elements
// VEC:             vector.store %[[W]], %arg2[%[[I]], %[[J]]] {alignment = 16 : i64}
// VEC:         } else {
// VEC-COUNT-4:   memref.load %arg0
// VEC:         gpu.terminator
func.func @vector_split(%x: memref<?x?xf32>, %b: memref<?xf32>, %y: memref<?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %w = memref.load %b[%i] : memref<?xf32>
    %s = arith.addf %v, %w : f32
    memref.store %s, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// Odd innermost sizes (a conv block's N x C x H*W with H*W odd): when the plain 128-bit path's check
// fails, the flat path takes 8 consecutive elements of the whole iteration space per thread, if x
// and y are contiguous over it (strides checked against the trips) and aligned, and H*W >= 8 (a
// vector spans at most two channels). x and y are one vector access each at the thread's first
// linear index of a 1-D view; the per-channel scale is loaded for the first lane's channel and the
// last lane's, and each lane selects its own. The last thread's partial vector goes element by
// element; else the scalar mapping. `flat-vectors=0` turns it off.
// VEC-LABEL: func.func @flat_per_channel
// VEC:       %[[C:.*]] = memref.dim %arg0, %c1
// VEC:       %[[TRIP:.*]] = memref.dim %arg0, %c2
// VEC:       gpu.launch
// VEC:         vector.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}] {{.*}} : memref<?x?x?xbf16>, vector<8xbf16>
// VEC:       } else {
// VEC:         %[[LONG:.*]] = arith.cmpi uge, %[[TRIP]], %c8
// VEC:         memref.extract_strided_metadata %arg0
// VEC:         arith.muli %strides{{.*}}#1, %[[C]] : index
// VEC:         memref.extract_strided_metadata %arg2
// VEC:         scf.if
// VEC:           %[[FIRST:.*]] = arith.muli %{{.*}}, %c8
// VEC:           %[[END:.*]] = arith.addi %[[FIRST]], %c8
// VEC:           %[[WHOLE:.*]] = arith.cmpi ule, %[[END]]
// VEC:           scf.if %[[WHOLE]] {
// VEC:             %[[K0:.*]] = arith.remui %[[FIRST]], %[[TRIP]]
// VEC:             %[[Q0:.*]] = arith.divui %[[FIRST]], %[[TRIP]]
// VEC:             %[[CH0:.*]] = arith.remui %[[Q0]], %[[C]]
// VEC:             %[[LAST:.*]] = arith.addi %[[FIRST]], %c7
// VEC:             %[[Q7:.*]] = arith.divui %[[LAST]], %[[TRIP]]
// VEC:             %[[CH7:.*]] = arith.remui %[[Q7]], %[[C]]
// VEC:             %[[S1:.*]] = arith.addi %[[K0]], %c1
// VEC:             %[[X1:.*]] = arith.cmpi uge, %[[S1]], %[[TRIP]]
// VEC:             %[[BASEX:[^,]*]], %[[OFFX:[^,]*]], %{{.*}} = memref.extract_strided_metadata %arg0
// VEC:             %[[FLATX:.*]] = memref.reinterpret_cast %[[BASEX]] to offset: [%[[OFFX]]], sizes: [%{{.*}}], strides: [1]
// VEC:             %[[V:.*]] = vector.load %[[FLATX]][%[[FIRST]]] {alignment = 16 : i64} : memref<?xbf16, strided<[1], offset: ?>>, vector<8xbf16>
// VEC:             %[[W0:.*]] = memref.load %arg1[%[[CH0]]] : memref<?xf32>
// VEC:             %[[W7:.*]] = memref.load %arg1[%{{.*}}] : memref<?xf32>
// VEC:             arith.select %[[X1]], %[[W7]], %[[W0]] : f32
// VEC-NOT:         memref.load
// VEC:             memref.extract_strided_metadata %arg2
// VEC:             %[[FLATY:.*]] = memref.reinterpret_cast
// VEC:             vector.store %{{.*}}, %[[FLATY]][%[[FIRST]]] {alignment = 16 : i64}
// VEC:           } else {
// VEC-COUNT-8:     memref.load %arg0
// VEC:       } else {
// VEC-COUNT-4: memref.load %arg0
// VEC:       gpu.terminator
// FLAT0-LABEL: func.func @flat_per_channel
// FLAT0-NOT:   memref.reinterpret_cast
// FLAT0:       gpu.terminator
func.func @flat_per_channel(%x: memref<?x?x?xbf16>, %s: memref<?xf32>, %y: memref<?x?x?xbf16>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ok = arith.constant 0 : i32
  %n = memref.dim %x, %c0 : memref<?x?x?xbf16>
  %c = memref.dim %x, %c1 : memref<?x?x?xbf16>
  %hw = memref.dim %x, %c2 : memref<?x?x?xbf16>
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%n, %c, %hw) step (%c1, %c1, %c1) {
    %v = memref.load %x[%i, %j, %k] : memref<?x?x?xbf16>
    %w = memref.load %s[%j] : memref<?xf32>
    %e = arith.extf %v : bf16 to f32
    %m = arith.mulf %e, %w : f32
    %t = arith.truncf %m : f32 to bf16
    memref.store %t, %y[%i, %j, %k] : memref<?x?x?xbf16>
    scf.reduce
  }
  return %ok : i32
}

// -----

// A static innermost size that is no multiple of the width (rows of 777) takes the flat path or
// the scalar one, without the plain 128-bit path; the column bias b[j] is loaded per lane. A
// transposed store (y[j, i]) is not contiguous over the iteration space: no flat path.
// VEC-LABEL: func.func @flat_static_odd_rows
// VEC-NOT:     vector.load %arg0
// VEC:         memref.extract_strided_metadata %arg0
// VEC:         memref.reinterpret_cast
// VEC:         vector.load
// VEC-COUNT-4: memref.load %arg1
// VEC:         vector.store
// VEC-LABEL: func.func @no_flat_when_store_transposed
// VEC-NOT:     memref.reinterpret_cast
// VEC:         return
// FLAT0-LABEL: func.func @flat_static_odd_rows
// FLAT0-NOT:   memref.reinterpret_cast
// FLAT0:       gpu.terminator
func.func @flat_static_odd_rows(%x: memref<?x777xf32>, %b: memref<777xf32>, %y: memref<?x777xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c777 = arith.constant 777 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x777xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %c777) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x777xf32>
    %w = memref.load %b[%j] : memref<777xf32>
    %s = arith.addf %v, %w : f32
    memref.store %s, %y[%i, %j] : memref<?x777xf32>
    scf.reduce
  }
  return %ok : i32
}
func.func @no_flat_when_store_transposed(%x: memref<?x?xf32>, %y: memref<?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    memref.store %v, %y[%j, %i] : memref<?x?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// Odd row lengths in a block reduction: each row starts at another alignment, so the plain 128-bit
// path's check fails. When every vector-accessed buffer is 16-byte aligned and its rows start at the
// same element offset modulo the width, the row's elements p .. vend - 1 (p: the first aligned one,
// at most the row's length; vend - p a multiple of 8) are whole aligned vector loads, and the head
// and tail elements are taken one per thread; else the scalar loop. `peel-rows=0` turns it off.
// VEC-LABEL: func.func @row_sum_odd
// VEC:       %[[N:.*]] = memref.dim %arg0, %c1
// VEC:       gpu.launch
// VEC:         vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xbf16>, vector<8xbf16>
// VEC:       } else {
// VEC:         memref.extract_strided_metadata %arg0
// VEC:         %[[START:.*]] = arith.addi %offset{{.*}}, %{{.*}} : index
// VEC:         %[[MIS:.*]] = arith.remui %[[START]], %c8
// VEC:         %[[TO:.*]] = arith.subi %c8{{.*}}, %[[MIS]]
// VEC:         %[[P:.*]] = arith.remui %[[TO]], %c8
// VEC:         %[[P0:.*]] = arith.minui %[[P]], %[[N]]
// VEC:         %[[VEND:.*]] = arith.addi %[[P0]], %{{.*}} : index
// VEC:         scf.if
// VEC:           %[[FROM:.*]] = arith.addi %[[P0]], %{{.*}} : index
// VEC:           scf.for %[[J:.*]] = %[[FROM]] to %[[VEND]]
// VEC:             vector.load %arg0[%{{.*}}, %[[J]]] {alignment = 16 : i64} : memref<?x?xbf16>, vector<8xbf16>
// VEC:           scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// VEC:             %[[HEAD:.*]] = arith.cmpi ult, %[[K]], %[[P0]]
// VEC:             %[[E:.*]] = arith.select %[[HEAD]], %[[K]], %{{.*}} : index
// VEC:             memref.load %arg0[%{{.*}}, %[[E]]] : memref<?x?xbf16>
// VEC:         } else {
// VEC-COUNT-8:   memref.load %arg0
// VEC:       gpu.all_reduce add
// PEEL0-LABEL: func.func @row_sum_odd
// PEEL0-NOT:   arith.minui
// PEEL0:       gpu.all_reduce add
func.func @row_sum_odd(%x: memref<?x?xbf16>, %y: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xbf16>
  %n = memref.dim %x, %c1 : memref<?x?xbf16>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %y[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xbf16>
      %e = arith.extf %v : bf16 to f32
      %a = memref.load %y[%i] : memref<?xf32>
      %s = arith.addf %a, %e : f32
      memref.store %s, %y[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// A static row length that is a multiple of the width, in rows that start unaligned (the slice
// x[:, 1:] of rows of 17): the plain path's check fails (MLIR folds it from the type), and the
// peeled one runs vectors from each row's first aligned element.
// VEC-LABEL: func.func @row_sum_unaligned_slice
// VEC:         vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x16xf32, strided<[17, 1], offset: 1>>, vector<4xf32>
// VEC:       } else {
// VEC:         %[[MIS:.*]] = arith.remui %{{.*}}, %c4
// VEC:         %[[P0:.*]] = arith.minui %{{.*}}, %c16
// VEC:         scf.if
// VEC:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// VEC:             vector.load %arg0[%{{.*}}, %[[J]]] {alignment = 16 : i64} : memref<?x16xf32, strided<[17, 1], offset: 1>>, vector<4xf32>
// VEC:         } else {
// VEC:       gpu.all_reduce add
// PEEL0-LABEL: func.func @row_sum_unaligned_slice
// PEEL0-NOT:   arith.minui
// PEEL0:       gpu.all_reduce add
func.func @row_sum_unaligned_slice(%x: memref<?x16xf32, strided<[17, 1], offset: 1>>, %y: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x16xf32, strided<[17, 1], offset: 1>>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %y[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x16xf32, strided<[17, 1], offset: 1>>
      %a = memref.load %y[%i] : memref<?xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %y[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// A buffer read at the same place by every row (a weight: no outer index) need not share the odd
// rows' alignment: at the row's first aligned element p it sits e = (offset + p) mod 4 lanes past a
// 16-byte boundary, and its vectors are two aligned loads (at j - e, and 4 further unless e = 0)
// shifted by e lanes in log2(4) selects between static shuffles (`shifted-loads=1`; not the default). Each row takes the peeled path,
// not the scalar loop at 3 rows in 4 (a layer norm's weight and bias at rows of 4097).
// SHIFT-LABEL: func.func @row_dot_odd
// SHIFT:       } else {
// SHIFT:         %[[P0:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// SHIFT:         %[[WP:.*]] = arith.addi %offset{{.*}}, %[[P0]] : index
// SHIFT:         %[[E:.*]] = arith.remui %[[WP]], %c4{{.*}} : index
// SHIFT:         scf.if
// SHIFT:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// SHIFT:             vector.load %arg0[%{{.*}}, %[[J]]] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// SHIFT:             %[[A:.*]] = arith.subi %[[J]], %[[E]] : index
// SHIFT:             %[[MORE:.*]] = arith.cmpi ne, %[[E]], %c0{{.*}} : index
// SHIFT:             %[[W:.*]] = arith.select %[[MORE]], %c4{{.*}}, %c0{{.*}} : index
// SHIFT:             %[[B:.*]] = arith.addi %[[A]], %[[W]] : index
// SHIFT:             %[[LA:.*]] = vector.load %arg1[%[[A]]] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// SHIFT:             %[[LB:.*]] = vector.load %arg1[%[[B]]] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// SHIFT:             %[[AB:.*]] = vector.shuffle %[[LA]], %[[LB]] [0, 1, 2, 3, 4, 5, 6, 7]
// SHIFT:             %[[HI2:.*]] = vector.shuffle %[[AB]], %[[AB]] [2, 3, 4, 5, 6]
// SHIFT:             %[[LO2:.*]] = vector.shuffle %[[AB]], %[[AB]] [0, 1, 2, 3, 4]
// SHIFT:             %[[S2:.*]] = arith.select %{{.*}}, %[[HI2]], %[[LO2]] : vector<5xf32>
// SHIFT:             %[[HI1:.*]] = vector.shuffle %[[S2]], %[[S2]] [1, 2, 3, 4]
// SHIFT:             %[[LO1:.*]] = vector.shuffle %[[S2]], %[[S2]] [0, 1, 2, 3]
// SHIFT:             arith.select %{{.*}}, %[[HI1]], %[[LO1]] : vector<4xf32>
// SHIFT:       gpu.all_reduce add
// VEC-LABEL: func.func @row_dot_odd
// VEC-NOT:     vector.shuffle
// VEC:         gpu.all_reduce add
func.func @row_dot_odd(%x: memref<?x?xf32>, %w: memref<?xf32>, %y: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %y[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %u = memref.load %w[%j] : memref<?xf32>
      %p = arith.mulf %v, %u : f32
      %a = memref.load %y[%i] : memref<?xf32>
      %s = arith.addf %a, %p : f32
      memref.store %s, %y[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// The widest element type sets the width: a bf16 input and an f32 output take 4 elements (8 bytes of
// bf16, 16 bytes of f32); a bf16-only body takes 8.
// CHECK-LABEL: func.func @vector_width_by_widest_type
// OPT-LABEL: func.func @vector_width_by_widest_type
// ROWS0-LABEL: func.func @vector_width_by_widest_type
// VEC-LABEL: func.func @vector_width_by_widest_type
// VEC:         vector.load %arg0{{.*}} {alignment = 8 : i64} : memref<?xbf16>, vector<4xbf16>
// VEC:         vector.store {{.*}} {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// VEC-LABEL: func.func @vector_width_bf16
// VEC:         vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// VEC:         vector.store {{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
func.func @vector_width_by_widest_type(%x: memref<?xbf16>, %y: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %n = memref.dim %x, %c0 : memref<?xbf16>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xbf16>
    %e = arith.extf %v : bf16 to f32
    memref.store %e, %y[%i] : memref<?xf32>
    scf.reduce
  }
  return %ok : i32
}
func.func @vector_width_bf16(%x: memref<?xbf16>, %y: memref<?xbf16>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %n = memref.dim %x, %c0 : memref<?xbf16>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xbf16>
    %e = arith.addf %v, %v : bf16
    memref.store %e, %y[%i] : memref<?xbf16>
    scf.reduce
  }
  return %ok : i32
}

// -----

// Reads at `j mod C` (a concat's pieces after sym-concat-to-select, as lower-affine writes the mod)
// are vector loads at the first lane's `j mod C` when the width divides C: a vector step's lanes
// start at a multiple of the width, so theirs are consecutive. With C = 2 (4 f32 lanes would wrap)
// the scalar mapping only.
// VEC-LABEL: func.func @modulo_reads
// VEC:         %[[R:.*]] = arith.remsi %{{.*}}, %c8
// VEC:         %[[M:.*]] = arith.select %{{.*}}, %{{.*}}, %[[R]] : index
// VEC:         vector.load %arg0[%{{.*}}, %[[M]]] {{.*}} : memref<?x8xf32>, vector<4xf32>
// VEC:         vector.store {{.*}} : memref<?x16xf32>, vector<4xf32>
// VEC-LABEL: func.func @modulo_reads_too_narrow
// VEC-NOT:     vector.load
// VEC:         return
func.func @modulo_reads(%x: memref<?x8xf32>, %y: memref<?x16xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %c16) step (%c1, %c1) {
    %r = arith.remsi %j, %c8 : index
    %neg = arith.cmpi slt, %r, %c0 : index
    %w = arith.addi %r, %c8 : index
    %k = arith.select %neg, %w, %r : index
    %v = memref.load %x[%i, %k] : memref<?x8xf32>
    %first = arith.cmpi ult, %j, %c8 : index
    %n = arith.negf %v : f32
    %e = arith.select %first, %n, %v : f32
    memref.store %e, %y[%i, %j] : memref<?x16xf32>
    scf.reduce
  }
  return %ok : i32
}
func.func @modulo_reads_too_narrow(%x: memref<?x2xf32>, %y: memref<?x16xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x2xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %c16) step (%c1, %c1) {
    %r = arith.remsi %j, %c2 : index
    %neg = arith.cmpi slt, %r, %c0 : index
    %w = arith.addi %r, %c2 : index
    %k = arith.select %neg, %w, %r : index
    %v = memref.load %x[%i, %k] : memref<?x2xf32>
    memref.store %v, %y[%i, %j] : memref<?x16xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// A dynamic broadcast (torch-mlir's `dim == 1 ? 0 : i` per dim, here a grouped-query repeat of
// keys): outer dims take the select of their loop variable (the same for all lanes); the innermost
// select is the loop variable under a runtime check that its size differs from 1.
// VEC-LABEL: func.func @broadcast_reads
// VEC:         %[[NE:.*]] = arith.cmpi ne, %[[D:.*]], %c1
// VEC:         arith.andi %{{.*}}, %[[NE]]
// VEC:         scf.if
// VEC:           %[[J:.*]] = arith.remui %[[FIRST:.*]], %[[D]]
// VEC:           %[[S:.*]] = arith.select %{{.*}}, %c0, %{{.*}} : index
// VEC:           vector.load %arg0[%[[S]], %c0, %{{.*}}, %[[J]]] {alignment = 16 : i64} : memref<?x1x?x?xbf16>, vector<8xbf16>
// VEC:           vector.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}, %{{.*}}, %[[J]]] {alignment = 16 : i64} : memref<?x2x?x?xbf16>, vector<8xbf16>
// VEC:         } else {
// VEC-NOT:       vector.load
// VEC:         gpu.terminator
func.func @broadcast_reads(%x: memref<?x1x?x?xbf16>, %y: memref<?x2x?x?xbf16>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %ok = arith.constant 0 : i32
  %b = memref.dim %x, %c0 : memref<?x1x?x?xbf16>
  %l = memref.dim %x, %c2 : memref<?x1x?x?xbf16>
  %d = memref.dim %x, %c3 : memref<?x1x?x?xbf16>
  scf.parallel (%i, %g, %k, %j) = (%c0, %c0, %c0, %c0) to (%b, %c2, %l, %d) step (%c1, %c1, %c1, %c1) {
    %0 = arith.cmpi eq, %b, %c1 : index
    %1 = arith.select %0, %c0, %i : index
    %2 = arith.cmpi eq, %d, %c1 : index
    %3 = arith.select %2, %c0, %j : index
    %v = memref.load %x[%1, %c0, %k, %3] : memref<?x1x?x?xbf16>
    memref.store %v, %y[%i, %g, %k, %j] : memref<?x2x?x?xbf16>
    scf.reduce
  }
  return %ok : i32
}

// -----

// A transposed read (the innermost loop variable indexes a row) cannot be one vector access: the
// scalar mapping only.
// CHECK-LABEL: func.func @no_vector_when_transposed
// OPT-LABEL: func.func @no_vector_when_transposed
// ROWS0-LABEL: func.func @no_vector_when_transposed
// VEC-LABEL: func.func @no_vector_when_transposed
// VEC-NOT:     vector.load
// VEC:         gpu.terminator
func.func @no_vector_when_transposed(%x: memref<?x?xf32>, %y: memref<?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %y, %c0 : memref<?x?xf32>
  %n = memref.dim %y, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %x[%j, %i] : memref<?x?xf32>
    memref.store %v, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// Loops over the same rows (softmax: max, sum of exp, normalize) are one launch with a block per row:
// the loops run in order, so the later ones re-read the row from L1/L2. The fills fold into the
// reductions' initial values; rows are recognized through views (the dim of an expand_shape of an
// allocation of %m is %m). The row max and the row sum are buffers nothing else reads: each stays in
// registers (gpu.all_reduce gives every thread the total), so no store, no barrier, no allocation,
// and the sizes taken from them become the sizes they were made with. MEM (row-registers=0): the
// loops re-read the row.
//
// By default, rows of at most 64 bytes per thread (4 vectors of 4 f32) are held in registers, a
// runtime split: each thread loads its vectors once (4 loads at tx*4 + s*bdim*4, each masked to the
// row), every loop works on them, so the exp of the sum is the exp the normalization divides (one
// math.exp per element, after CSE); the stores go under each vector's bounds check. The row length is
// dynamic, so the row is held from its first aligned element (%PEEL, 0 for aligned rows): the head
// and tail elements of odd rows (fewer than 8) go one per thread in a loop after each loop's
// vectors. Longer rows and unaligned buffers take the loops (else branch).
// REG-LABEL: func.func @softmax_rows
// REG-SAME:      (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// REG:         %[[N:.*]] = memref.dim %[[X]], %c1
// REG:         gpu.launch blocks(%[[BX:[a-z0-9_]+]], %{{.*}}, %{{.*}}) in ({{.*}}) threads(%[[TX:[a-z0-9_]+]], %{{.*}}, %{{.*}}) in (%[[BDIM:[a-z0-9_]+]] = %{{.*}}, {{.*}})
// REG:           %[[CAP:.*]] = arith.muli %[[BDIM]], %c16
// REG:           arith.cmpi ule, %[[N]], %[[CAP]]
// REG:           scf.if %[[FITS:.*]] {
// REG-NOT:         scf.for
// REG:             %[[Q0:.*]] = arith.muli %[[TX]], %c4{{.*}}
// REG:             %[[P0:.*]] = arith.addi %[[PEEL:.*]], %[[Q0]]
// REG:             %[[OK0:.*]] = arith.cmpi ult, %[[P0]], %[[VEND:.*]] : index
// REG:             %[[S0:.*]] = arith.select %[[OK0]], %[[P0]], %[[PEEL]]
// REG-COUNT-4:     vector.load %[[X]][%[[BX]], %{{.*}}]
// REG-NOT:         vector.load
// REG:             scf.for
// REG:               memref.load %[[X]]
// REG:             gpu.all_reduce maximumf
// REG-COUNT-16:    math.exp
// REG:             scf.for
// REG:               math.exp
// REG-NOT:         math.exp
// REG:             gpu.all_reduce add
// REG-NOT:         vector.load
// REG-NOT:         math.exp
// REG:             arith.divf
// REG:             scf.if %[[OK0]] {
// REG-NEXT:          vector.store %{{.*}}, %[[Y]][%[[BX]], %[[S0]]]
// REG-COUNT-3:     vector.store %{{.*}}, %[[Y]]
// REG:             scf.for
// REG:               math.exp
// REG:               memref.store %{{.*}}, %[[Y]]
// REG:           } else {
// REG:             scf.for
// REG:           gpu.terminator
// REG-NOT:     gpu.launch
// REG:         return
// CHECK-LABEL: func.func @softmax_rows
// OPT-LABEL: func.func @softmax_rows
// MEM-LABEL: func.func @softmax_rows
// MEM-SAME:      (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// MEM:         %[[M:.*]] = memref.dim %[[X]], %c0
// MEM-NOT:     memref.alloc
// MEM:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[M]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BDIM:.*]] = %{{.*}}, {{.*}})
// MEM:           scf.for %{{.*}} = %[[TX]] to %{{.*}} step
// MEM:           %[[MAXP:.*]] = gpu.all_reduce maximumf
// MEM:           %[[MAX:.*]] = arith.maximumf %[[MAXP]], %cst
// MEM-NOT:       memref.store
// MEM-NOT:       gpu.barrier
// MEM:           scf.for %{{.*}} = %[[TX]] to %{{.*}} step
// MEM:             arith.subf %{{.*}}, %[[MAX]]
// MEM:             math.exp
// MEM:           %[[SUMP:.*]] = gpu.all_reduce add
// MEM:           %[[SUM:.*]] = arith.addf %[[SUMP]], %cst
// MEM-NOT:       gpu.barrier
// MEM:           scf.for %{{.*}} = %[[TX]] to %{{.*}} step
// MEM:             arith.divf %{{.*}}, %[[SUM]]
// MEM:             memref.store %{{.*}}, %[[Y]][%[[BX]],
// MEM:           gpu.terminator
// MEM-NOT:     gpu.launch
// MEM:         return
// With fuse-rows=0: a launch per loop.
// ROWS0-LABEL: func.func @softmax_rows
// ROWS0-COUNT-3: gpu.launch
func.func @softmax_rows(%x: memref<?x?xf32>, %y: memref<?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %a = memref.alloc(%m) : memref<?xf32>
  %mx = memref.expand_shape %a [[0, 1]] output_shape [%m, 1] : memref<?xf32> into memref<?x1xf32>
  %m1 = memref.dim %mx, %c0 : memref<?x1xf32>
  scf.parallel (%i) = (%c0) to (%m1) step (%c1) {
    memref.store %ninf, %mx[%i, %c0] : memref<?x1xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %acc = memref.load %mx[%i, %c0] : memref<?x1xf32>
      %r = arith.maximumf %v, %acc : f32
      memref.store %r, %mx[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  %s = memref.alloc(%m) : memref<?x1xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %s[%i, %c0] : memref<?x1xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %mm = memref.load %mx[%i, %c0] : memref<?x1xf32>
      %acc = memref.load %s[%i, %c0] : memref<?x1xf32>
      %d = arith.subf %v, %mm : f32
      %e = math.exp %d : f32
      %r = arith.addf %e, %acc : f32
      memref.store %r, %s[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %mm = memref.load %mx[%i, %c0] : memref<?x1xf32>
    %ss = memref.load %s[%i, %c0] : memref<?x1xf32>
    %d = arith.subf %v, %mm : f32
    %e = math.exp %d : f32
    %r = arith.divf %e, %ss : f32
    memref.store %r, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return %ok : i32
}


// -----

// A bf16 row group: 64 bytes of the row a thread in registers are 4 vectors of 8 bf16 (32 elements).
// REG-LABEL: func.func @row_scale_bf16
// REG:         gpu.launch blocks(%{{.*}}) in ({{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%[[BDIM:[a-z0-9_]+]] = %{{.*}}, {{.*}})
// REG:           %[[CAP:.*]] = arith.muli %[[BDIM]], %c32
// REG:           scf.if
// REG-COUNT-4:     vector.load %arg0{{.*}} : memref<?x?xbf16>, vector<8xbf16>
// REG-NOT:         vector.load
// REG:             gpu.all_reduce add
// REG-COUNT-4:     vector.store {{.*}} : memref<?x?xbf16>, vector<8xbf16>
func.func @row_scale_bf16(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xbf16>
  %n = memref.dim %x, %c1 : memref<?x?xbf16>
  %s = memref.alloc(%m) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %s[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xbf16>
      %w = arith.extf %v : bf16 to f32
      %acc = memref.load %s[%i] : memref<?xf32>
      %r = arith.addf %w, %acc : f32
      memref.store %r, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xbf16>
    %w = arith.extf %v : bf16 to f32
    %ss = memref.load %s[%i] : memref<?xf32>
    %r = arith.divf %w, %ss : f32
    %t = arith.truncf %r : f32 to bf16
    memref.store %t, %y[%i, %j] : memref<?x?xbf16>
    scf.reduce
  }
  return %ok : i32
}
// -----

// The row max is also read after the group (copied to an output): it stays a buffer, stored by thread
// 0, with a barrier before the loops that read it; the row sum still stays in registers. In the
// register path the row is not loaded again after the barrier.
// VEC-LABEL: func.func @softmax_rows_max_escapes
// VEC:         %[[A:.*]] = memref.alloc
// VEC:         gpu.launch
// VEC:           scf.if
// VEC-COUNT-4:     vector.load
// VEC:             gpu.all_reduce maximumf
// VEC:             scf.if
// VEC:               memref.store %{{.*}}, %[[A]]
// VEC:             gpu.barrier
// VEC-NOT:         vector.load %arg0
// VEC:             memref.load %[[A]]
// VEC:             gpu.all_reduce add
// VEC-NOT:         gpu.barrier
// VEC:           } else {
// VEC:             gpu.barrier
// VEC:           gpu.terminator
// VEC:         memref.copy %[[A]], %arg2
// MEM-LABEL: func.func @softmax_rows_max_escapes
// MEM:         %[[A:.*]] = memref.alloc
// MEM:         gpu.launch
// MEM:           gpu.all_reduce maximumf
// MEM:           scf.if
// MEM:             memref.store %{{.*}}, %[[A]]
// MEM:           gpu.barrier
// MEM:           gpu.all_reduce add
// MEM-NOT:       gpu.barrier
// MEM:           gpu.terminator
// MEM:         memref.copy %[[A]], %arg2
func.func @softmax_rows_max_escapes(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %z: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %a = memref.alloc(%m) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %ninf, %a[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %acc = memref.load %a[%i] : memref<?xf32>
      %r = arith.maximumf %v, %acc : f32
      memref.store %r, %a[%i] : memref<?xf32>
    }
    scf.reduce
  }
  %s = memref.alloc(%m) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %s[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %mm = memref.load %a[%i] : memref<?xf32>
      %acc = memref.load %s[%i] : memref<?xf32>
      %d = arith.subf %v, %mm : f32
      %e = math.exp %d : f32
      %r = arith.addf %e, %acc : f32
      memref.store %r, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %mm = memref.load %a[%i] : memref<?xf32>
    %ss = memref.load %s[%i] : memref<?xf32>
    %d = arith.subf %v, %mm : f32
    %e = math.exp %d : f32
    %r = arith.divf %e, %ss : f32
    memref.store %r, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  memref.copy %a, %z : memref<?xf32> to memref<?xf32>
  return %ok : i32
}

// -----

// A loop that reads another row of a buffer the group writes would race between blocks: no group.
// CHECK-LABEL: func.func @no_row_group_when_reading_another_row
// OPT-LABEL: func.func @no_row_group_when_reading_another_row
// ROWS0-LABEL: func.func @no_row_group_when_reading_another_row
// VEC-LABEL: func.func @no_row_group_when_reading_another_row
// VEC-COUNT-2: gpu.launch
func.func @no_row_group_when_reading_another_row(%x: memref<?x?xf32>, %y: memref<?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %s = memref.alloc(%m) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %s[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %acc = memref.load %s[%i] : memref<?xf32>
      %r = arith.addf %v, %acc : f32
      memref.store %r, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %first = memref.load %s[%c0] : memref<?xf32>
    memref.store %first, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// A batch of 1: the per-row buffers are [1, n, 1] and every nest indexes them `[0, row, 0]`; index 0
// of a static unit dim names no row, so the sum and the normalization are still one row group.
// VEC-LABEL: func.func @row_group_with_unit_dims
// VEC-COUNT-1: gpu.launch
// VEC-NOT:     gpu.launch
func.func @row_group_with_unit_dims(%x: memref<1x?x256xf32>, %y: memref<1x?x256xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c1 : memref<1x?x256xf32>
  %s = memref.alloc(%n) : memref<1x?x1xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %s[%c0, %i, %c0] : memref<1x?x1xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %c256 step %c1 {
      %v = memref.load %x[%c0, %i, %j] : memref<1x?x256xf32>
      %acc = memref.load %s[%c0, %i, %c0] : memref<1x?x1xf32>
      %r = arith.addf %v, %acc : f32
      memref.store %r, %s[%c0, %i, %c0] : memref<1x?x1xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c256) step (%c1, %c1) {
    %v = memref.load %x[%c0, %i, %j] : memref<1x?x256xf32>
    %t = memref.load %s[%c0, %i, %c0] : memref<1x?x1xf32>
    %r = arith.divf %v, %t : f32
    memref.store %r, %y[%c0, %i, %j] : memref<1x?x256xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// Index 0 of a dim that is not a static 1 is a row of its own: reading `[0, row]` of a [?, n]
// buffer reads what another block writes, so no group.
// VEC-LABEL: func.func @no_row_group_when_zero_index_is_a_row
// VEC-COUNT-2: gpu.launch
func.func @no_row_group_when_zero_index_is_a_row(%x: memref<?x?xf32>, %y: memref<?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %s = memref.alloc(%m, %m) : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %s[%c0, %i] : memref<?x?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %acc = memref.load %s[%c0, %i] : memref<?x?xf32>
      %r = arith.addf %v, %acc : f32
      memref.store %r, %s[%c0, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %t = memref.load %s[%c0, %i] : memref<?x?xf32>
    memref.store %t, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// A count computed on the device that the host needs (an assert on `x[mask].amax()` of an empty
// selection): the device store runs in a one-thread launch; the load and the scalar arithmetic on
// it stay on the host, which reads the value back after the launch.
// CHECK-LABEL: func.func @count_read_back
// CHECK:         gpu.launch
// CHECK:           memref.store
// CHECK:           gpu.terminator
// CHECK:         %[[N:.*]] = memref.load %arg0
// CHECK:         arith.cmpi sgt, %[[N]]
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @count_read_back(%count: memref<1xi64>, %out: memref<1xi64>) -> i32 {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %ok = arith.constant 0 : i32
  %bad = arith.constant -1 : i32
  memref.store %z, %out[%c0] : memref<1xi64>
  %n = memref.load %count[%c0] : memref<1xi64>
  %p = arith.cmpi sgt, %n, %z : i64
  %s = arith.select %p, %ok, %bad : i32
  return %s : i32
}

// -----

// A gather of one element, its loop of one iteration unrolled onto the host: the deferred index
// check (sym-defer-nested-asserts' marker call) reads the loaded index, so it runs in the one-thread
// launch with the load and the store, not on the host (which cannot read device memory there).
// CHECK-LABEL: func.func @one_element_gather
// CHECK:         gpu.launch
// CHECK:           %[[I:.*]] = memref.load %arg1
// CHECK:           %[[II:.*]] = arith.index_cast %[[I]]
// CHECK:           %[[OK:.*]] = arith.cmpi slt, %[[II]]
// CHECK:           func.call @__mlir_sym_nested_assert(%[[OK]])
// CHECK:           memref.store
// CHECK:           gpu.terminator
// CHECK-NOT:     func.call @__mlir_sym_nested_assert
// CHECK:         return
func.func @one_element_gather(%x: memref<?xf32>, %idx: memref<1xi64>, %out: memref<1xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %ok0 = arith.constant 0 : i32
  %i = memref.load %idx[%c0] : memref<1xi64>
  %ii = arith.index_cast %i : i64 to index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %in = arith.cmpi slt, %ii, %n : index
  func.call @__mlir_sym_nested_assert(%in) {sym.assert_msg = "index must be smaller than dim size"} : (i1) -> ()
  %v = memref.load %x[%ii] : memref<?xf32>
  memref.store %v, %out[%c0] : memref<1xf32>
  return %ok0 : i32
}
func.func private @__mlir_sym_nested_assert(i1)

// -----

// A reduction to one value: g = min(ceil(n / 8192), 1024) blocks each reduce a chunk (a multiple of
// 16 elements) of the linearized iteration space into a buffer of partials, then one block reduces
// the partials and adds them to the accumulator, whose fill (`acc[] = 0`) is folded into that last
// step instead of a launch of its own. With split-full=0: one block does it all.
// VEC-LABEL: func.func @full_sum
// VEC:         %[[N:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// VEC:         %[[G0:.*]] = arith.ceildivui %[[N]], %c8192
// VEC:         %[[G:.*]] = arith.minui %[[G0]], %c1024
// VEC:         %[[CH0:.*]] = arith.ceildivui %[[N]],
// VEC:         %[[CH1:.*]] = arith.ceildivui %[[CH0]], %c16
// VEC:         %[[CHUNK:.*]] = arith.muli %[[CH1]], %c16
// VEC:         %[[P:.*]] = memref.alloc(%[[G]]) : memref<?xf32>
// VEC:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[G]],
// VEC:           %[[LO:.*]] = arith.muli %[[BX]], %[[CHUNK]]
// VEC:           %[[END:.*]] = arith.addi %[[LO]], %[[CHUNK]]
// VEC:           %[[HI:.*]] = arith.minui %[[END]], %[[N]]
// VEC:           scf.for %{{.*}} = %{{.*}} to %[[HI]]
// VEC:           %[[T:.*]] = gpu.all_reduce add
// VEC:           memref.store %[[T]], %[[P]][%[[BX]]]
// VEC:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BD:.*]] = %c256
// VEC:           scf.for %[[I:.*]] = %[[TX]] to %[[G]] step %[[BD]]
// VEC:             memref.load %[[P]][%[[I]]]
// VEC:           %[[TOTAL:.*]] = gpu.all_reduce add
// VEC:           scf.if
// VEC-NOT:         memref.load %arg1
// VEC:             %[[R:.*]] = arith.addf %[[TOTAL]], %cst
// VEC:             memref.store %[[R]], %arg1[]
// VEC-NOT:     gpu.launch
// VEC:         return
// SPLIT0-LABEL: func.func @full_sum
// SPLIT0-COUNT-1: gpu.launch
// SPLIT0-NOT:   gpu.launch
// SPLIT0:       return
func.func @full_sum(%x: memref<?x?xf32>, %s: memref<f32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  memref.store %zero, %s[] : memref<f32>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %acc = memref.load %s[] : memref<f32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %s[] : memref<f32>
    }
  }
  return %ok : i32
}

// -----

// A reduction to one value of static length within one chunk (8192 elements): one block, one
// launch (the split would be a block of partials and a launch combining its one partial). The one
// row of a decode step at batch 1: its unit row dims are gone, and a layer norm took 5 launches.
// Past one chunk the split stays.
// VEC-LABEL: func.func @one_chunk_sum
// VEC-NOT:     memref.alloc
// VEC-COUNT-1: gpu.launch
// VEC-NOT:     gpu.launch
// VEC:         return
// VEC-LABEL: func.func @two_chunks_sum
// VEC:         memref.alloc
// VEC-COUNT-2: gpu.launch
// VEC-NOT:     gpu.launch
// VEC:         return
func.func @one_chunk_sum(%x: memref<1x8192xf32>, %s: memref<f32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8192 = arith.constant 8192 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %s[] : memref<f32>
  scf.for %j = %c0 to %c8192 step %c1 {
    %v = memref.load %x[%c0, %j] : memref<1x8192xf32>
    %acc = memref.load %s[] : memref<f32>
    %t = arith.addf %v, %acc : f32
    memref.store %t, %s[] : memref<f32>
  }
  return %ok : i32
}
func.func @two_chunks_sum(%x: memref<2x4097xf32>, %s: memref<f32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4097 = arith.constant 4097 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %s[] : memref<f32>
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c4097 step %c1 {
      %v = memref.load %x[%i, %j] : memref<2x4097xf32>
      %acc = memref.load %s[] : memref<f32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %s[] : memref<f32>
    }
  }
  return %ok : i32
}

// -----

// Layer norm's shape: both accumulators are filled before the first reduction. Each fill folds into
// its own reduction across the loops between them, and both results (row sum, sum of squared
// deviations) stay in registers: no buffer, no barrier, one launch.
// VEC-LABEL: func.func @layernorm_rows_fills_first
// VEC-NOT:     memref.alloc
// VEC:         gpu.launch
// VEC:           %[[S:.*]] = gpu.all_reduce add
// VEC:           %[[MEAN_SUM:.*]] = arith.addf %[[S]], %cst
// VEC-NOT:       gpu.barrier
// VEC:           arith.divf %[[MEAN_SUM]]
// VEC:           %[[V:.*]] = gpu.all_reduce add
// VEC:           %[[VAR_SUM:.*]] = arith.addf %[[V]], %cst
// VEC-NOT:       gpu.barrier
// VEC:           arith.divf %[[VAR_SUM]]
// VEC:           gpu.terminator
// VEC-NOT:     gpu.launch
// VEC:         return
func.func @layernorm_rows_fills_first(%x: memref<?x?xf32>, %y: memref<?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %nf0 = arith.index_cast %n : index to i64
  %nf = arith.sitofp %nf0 : i64 to f32
  %sum = memref.alloc(%m) : memref<?x1xf32>
  %sq = memref.alloc(%m) : memref<?x1xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %sq[%i, %c0] : memref<?x1xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %sum[%i, %c0] : memref<?x1xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %acc = memref.load %sum[%i, %c0] : memref<?x1xf32>
      %r = arith.addf %v, %acc : f32
      memref.store %r, %sum[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %s = memref.load %sum[%i, %c0] : memref<?x1xf32>
      %acc = memref.load %sq[%i, %c0] : memref<?x1xf32>
      %mean = arith.divf %s, %nf : f32
      %d = arith.subf %v, %mean : f32
      %d2 = arith.mulf %d, %d : f32
      %r = arith.addf %d2, %acc : f32
      memref.store %r, %sq[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %s = memref.load %sum[%i, %c0] : memref<?x1xf32>
    %q = memref.load %sq[%i, %c0] : memref<?x1xf32>
    %mean = arith.divf %s, %nf : f32
    %var = arith.divf %q, %nf : f32
    %d = arith.subf %v, %mean : f32
    %r = arith.divf %d, %var : f32
    memref.store %r, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// argmax along rows (torch-mlir's loop: v = maximumf(x, v); i = x > v ? j : i) is a block per row,
// not a thread per row: three block reductions over the row (the first NaN position, the maximum
// before it, the first position of that maximum), then thread 0 combines with the accumulators: a
// larger maximum takes its position, as the loop does; a NaN wins at its first position, as in eager
// PyTorch (the loop would keep the position of the maximum before it).
// VEC-LABEL: func.func @argmax_rows
// Positions are i32: a reduction of 2^31 - 1 elements or more runs the loop as written in thread 0.
// VEC:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[M:.*]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in
// VEC:           %[[FITS:.*]] = arith.cmpi ult, %{{.*}}, %c2147483647
// VEC:           scf.if %[[FITS]] {
// VEC:           scf.for
// VEC:             arith.cmpf uno
// VEC:           %[[F:.*]] = gpu.all_reduce minsi
// VEC:           %[[MX:.*]] = gpu.all_reduce maximumf
// VEC:           scf.for
// VEC:             arith.cmpf oeq, %{{.*}}, %[[MX]]
// VEC:           %[[AT:.*]] = gpu.all_reduce minsi
// VEC:           scf.if
// VEC:             %[[V0:.*]] = memref.load %arg1[%[[BX]]]
// VEC:             %[[I0:.*]] = memref.load %arg2[%[[BX]]]
// VEC:             %[[BETTER:.*]] = arith.cmpf ogt, %[[MX]], %[[V0]]
// VEC:             %[[BY_MAX:.*]] = arith.select %{{.*}}, %{{.*}}, %[[I0]] : i64
// VEC:             arith.cmpf ord, %[[V0]], %[[V0]]
// VEC:             arith.select %{{.*}}, %{{.*}}, %[[BY_MAX]] : i64
// VEC:             memref.store %{{.*}}, %arg1[%[[BX]]]
// VEC:             memref.store %{{.*}}, %arg2[%[[BX]]]
// VEC:           } else {
// VEC:             scf.if
// VEC:               scf.for
// VEC:                 arith.cmpf ogt
// VEC-NOT:     gpu.launch
// VEC:         return
func.func @argmax_rows(%x: memref<?x?xf32>, %v: memref<?xf32>, %ix: memref<?xi64>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %a = memref.load %x[%i, %j] : memref<?x?xf32>
      %b = memref.load %v[%i] : memref<?xf32>
      %k = memref.load %ix[%i] : memref<?xi64>
      %jj = arith.index_cast %j : index to i64
      %mx = arith.maximumf %a, %b : f32
      %gt = arith.cmpf ogt, %a, %b : f32
      %sel = arith.select %gt, %jj, %k : i64
      memref.store %mx, %v[%i] : memref<?xf32>
      memref.store %sel, %ix[%i] : memref<?xi64>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// Not an arg-reduction the block form reproduces (oge keeps the last position of a tie): a thread
// per row runs the loop as written.
// VEC-LABEL: func.func @argmax_last_of_ties
// VEC-NOT:       gpu.all_reduce
// VEC:           scf.for
// VEC:             arith.cmpf oge
// VEC:         return
func.func @argmax_last_of_ties(%x: memref<?x?xf32>, %v: memref<?xf32>, %ix: memref<?xi64>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %a = memref.load %x[%i, %j] : memref<?x?xf32>
      %b = memref.load %v[%i] : memref<?xf32>
      %k = memref.load %ix[%i] : memref<?xi64>
      %jj = arith.index_cast %j : index to i64
      %mx = arith.maximumf %a, %b : f32
      %ge = arith.cmpf oge, %a, %b : f32
      %sel = arith.select %ge, %jj, %k : i64
      memref.store %mx, %v[%i] : memref<?xf32>
      memref.store %sel, %ix[%i] : memref<?xi64>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// `(x + arange(n)).argmax(-1)` after CSE: the value and the position share `index_cast %j`; each
// pass recomputes it. A value computed from the accumulator itself is not an arg-reduction: a thread
// per row runs that loop.
// VEC-LABEL: func.func @argmax_shares_j
// VEC:         gpu.all_reduce minsi
// VEC:         gpu.all_reduce maximumf
// VEC:         gpu.all_reduce minsi
// VEC-LABEL: func.func @argmax_value_reads_acc
// VEC-NOT:     gpu.all_reduce
// VEC:         return
func.func @argmax_shares_j(%x: memref<?x?xf32>, %v: memref<?xf32>, %ix: memref<?xi64>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %a = memref.load %x[%i, %j] : memref<?x?xf32>
      %b = memref.load %v[%i] : memref<?xf32>
      %k = memref.load %ix[%i] : memref<?xi64>
      %jj = arith.index_cast %j : index to i64
      %jf = arith.sitofp %jj : i64 to f32
      %xa = arith.addf %a, %jf : f32
      %mx = arith.maximumf %xa, %b : f32
      %gt = arith.cmpf ogt, %xa, %b : f32
      %sel = arith.select %gt, %jj, %k : i64
      memref.store %mx, %v[%i] : memref<?xf32>
      memref.store %sel, %ix[%i] : memref<?xi64>
    }
    scf.reduce
  }
  return %ok : i32
}
func.func @argmax_value_reads_acc(%x: memref<?x?xf32>, %v: memref<?xf32>, %ix: memref<?xi64>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %a = memref.load %x[%i, %j] : memref<?x?xf32>
      %b = memref.load %v[%i] : memref<?xf32>
      %k = memref.load %ix[%i] : memref<?xi64>
      %jj = arith.index_cast %j : index to i64
      %xa = arith.addf %a, %b : f32
      %mx = arith.maximumf %xa, %b : f32
      %gt = arith.cmpf ogt, %xa, %b : f32
      %sel = arith.select %gt, %jj, %k : i64
      memref.store %mx, %v[%i] : memref<?xf32>
      memref.store %sel, %ix[%i] : memref<?xi64>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// A reduction over the rows (`x.sum(0)`: the load's innermost index is the output's) in two coalesced
// launches: thread t takes column t % n and the t / n-th chunk of rows (chunks: about 2^18 threads
// in all, at least 16 rows each), 4 rows in flight per step, its partial stored at t; then L lanes
// per column (L by the chunks, up to 32; blocks of (L, 256 / L)) each combine every L-th partial,
// then each other's by xor shuffles; lane 0 adds the folded fill. No block reduction.
// CHECK-LABEL: func.func @col_sum
// CHECK:         %[[M:.*]] = memref.dim %arg0, %c0
// CHECK:         %[[N:.*]] = memref.dim %arg0, %c1
// CHECK:         arith.ceildivui %[[M]], %c16 : index
// CHECK:         %[[ROWS:.*]] = arith.ceildivui %[[M]], %{{.*}} : index
// CHECK:         %[[CHUNKS:.*]] = arith.ceildivui %[[M]], %{{.*}} : index
// CHECK:         %[[PART:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         gpu.launch
// CHECK:           %[[T:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:           %[[COL:.*]] = arith.remui %[[T]], %[[N]] : index
// CHECK:           %[[K:.*]] = arith.divui %[[T]], %[[N]] : index
// CHECK:           %[[LO:.*]] = arith.muli %[[K]], %[[ROWS]] : index
// CHECK:           %[[SUM:.*]] = scf.for %[[R:.*]] = %[[LO]] to %{{.*}} step %c4
// CHECK:             memref.load %arg0[%[[R]], %[[COL]]]
// CHECK-COUNT-3:     memref.load %arg0[%{{.*}}, %[[COL]]]
// CHECK:           memref.store %[[SUM]], %[[PART]][%[[T]]]
// CHECK:         %[[L:.*]] = arith.select %{{.*}}, %c32{{.*}}, %{{.*}} : index
// CHECK:         %[[PER:.*]] = arith.divui %c256{{.*}}, %[[L]] : index
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}}) threads(%[[LANE:.*]], %{{.*}}, %{{.*}}) in (%[[LX:.*]] = %[[L]], %{{.*}} = %[[PER]], %{{.*}} = %{{.*}})
// CHECK:           %[[C0:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[C0]], %[[N]] : index
// CHECK:           %[[C:.*]] = arith.select %[[IN]], %[[C0]], %{{.*}} : index
// CHECK:           %[[NC:.*]] = arith.select %[[IN]], %[[CHUNKS]], %{{.*}} : index
// CHECK:           %[[STEP:.*]] = arith.muli %c4{{.*}}, %[[LX]] : index
// CHECK:           %[[MINE:.*]] = scf.for %[[J:.*]] = %[[LANE]] to %[[NC]] step %[[STEP]]
// CHECK:             %[[JN:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK:             %[[AT:.*]] = arith.addi %[[JN]], %[[C]] : index
// CHECK:             memref.load %[[PART]][%[[AT]]]
// CHECK-COUNT-3:     memref.load %[[PART]]
// CHECK:           gpu.shuffle xor %[[MINE]], %c16_i32, %c32_i32 : f32
// CHECK-COUNT-4:   gpu.shuffle xor
// CHECK:           %[[TOT:.*]] = arith.select %{{.*}} : f32
// CHECK:           scf.if
// CHECK:             %[[OUT:.*]] = arith.addf %[[TOT]], %cst
// CHECK:             memref.store %[[OUT]], %arg1[%[[C]]]
// CHECK-NOT:     gpu.all_reduce
// CHECK-NOT:     gpu.launch
// With column-reductions=0: a block per column, threads striding over its rows.
// COL0-LABEL: func.func @col_sum
// COL0:         gpu.launch
// COL0:           gpu.all_reduce add
// COL0-NOT:     gpu.launch
func.func @col_sum(%x: memref<?x?xf32>, %s: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %s[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %x[%j, %i] : memref<?x?xf32>
      %acc = memref.load %s[%i] : memref<?xf32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// A layer norm's weight and bias grads: two column reductions over the same rows and columns, each
// after a fill of its own output (the second fill would pass for an epilogue of the first). They
// run as one pair of launches: each thread folds both elements of its column and chunk into two
// partials buffers (the gradient loaded once per element), and the lanes of the second launch fold
// and shuffle both, storing both outputs with their folded fills.
// CHECK-LABEL: func.func @sibling_col_sums(
// CHECK:         %[[PW:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         %[[PB:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         gpu.launch
// CHECK:           %[[T:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:           %[[COL:.*]] = arith.remui %[[T]], %{{.*}} : index
// CHECK:           %[[BOTH:.*]]:2 = scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %c4{{.*}} iter_args
// CHECK:             memref.load %arg0[%[[R]], %[[COL]]]
// CHECK:             memref.load %arg1[%[[R]], %[[COL]]]
// CHECK:           memref.store %[[BOTH]]#0, %[[PW]][%[[T]]]
// CHECK-NEXT:      memref.store %[[BOTH]]#1, %[[PB]][%[[T]]]
// CHECK:         gpu.launch
// CHECK:           %[[MINE:.*]]:2 = scf.for
// CHECK:             memref.load %[[PW]]
// CHECK:             memref.load %[[PB]]
// CHECK:           gpu.shuffle xor %[[MINE]]#0, %c16_i32, %c32_i32 : f32
// CHECK:           gpu.shuffle xor %[[MINE]]#1, %c16_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}}, %arg2[%{{.*}}]
// CHECK:             memref.store %{{.*}}, %arg3[%{{.*}}]
// CHECK-NOT:     gpu.launch
// With column-reductions=0: a block per column for each, not fused.
// COL0-LABEL: func.func @sibling_col_sums(
// COL0-COUNT-2: gpu.all_reduce add
func.func @sibling_col_sums(%g: memref<?x?xf32>, %xh: memref<?x?xf32>, %dw: memref<?xf32>, %db: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %g, %c0 : memref<?x?xf32>
  %n = memref.dim %g, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %dw[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %g[%j, %i] : memref<?x?xf32>
      %h = memref.load %xh[%j, %i] : memref<?x?xf32>
      %p = arith.mulf %v, %h : f32
      %acc = memref.load %dw[%i] : memref<?xf32>
      %t = arith.addf %p, %acc : f32
      memref.store %t, %dw[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %db[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %g[%j, %i] : memref<?x?xf32>
      %acc = memref.load %db[%i] : memref<?xf32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %db[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// A sibling pair whose second reduction has an epilogue (a mean's division): it runs in the pair's
// second launch, as for a reduction alone. One reading the first reduction's output (whose other
// outputs are not done when an output's lane runs it) stays a launch of its own.
// CHECK-LABEL: func.func @sibling_col_sums_epilogue(
// CHECK:         gpu.launch
// CHECK:         gpu.launch
// CHECK-NOT:     gpu.launch
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}}, %arg1[%[[C:.*]]]
// CHECK:             memref.store %{{.*}}, %arg2[%[[C]]]
// CHECK-NOT:     gpu.launch
// CHECK:             %[[M:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:             memref.store %[[M]], %arg3[%[[C]]]
// CHECK-NOT:     gpu.launch
// COL0-LABEL: func.func @sibling_col_sums_epilogue(
// CHECK-LABEL: func.func @sibling_col_sums_epilogue_reading_the_first
// CHECK-COUNT-3: gpu.launch
// CHECK-NOT:     gpu.launch
// COL0-LABEL: func.func @sibling_col_sums_epilogue_reading_the_first
func.func @sibling_col_sums_epilogue(%g: memref<?x?xf32>, %a: memref<?xf32>, %b: memref<?xf32>, %mean: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %g, %c0 : memref<?x?xf32>
  %n = memref.dim %g, %c1 : memref<?x?xf32>
  %mi = arith.index_cast %m : index to i64
  %mf = arith.sitofp %mi : i64 to f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %g[%j, %i] : memref<?x?xf32>
      %acc = memref.load %a[%i] : memref<?xf32>
      %t = arith.maximumf %v, %acc : f32
      memref.store %t, %a[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %g[%j, %i] : memref<?x?xf32>
      %acc = memref.load %b[%i] : memref<?xf32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %b[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %s = memref.load %b[%i] : memref<?xf32>
    %d = arith.divf %s, %mf : f32
    memref.store %d, %mean[%i] : memref<?xf32>
    scf.reduce
  }
  return %ok : i32
}

func.func @sibling_col_sums_epilogue_reading_the_first(%g: memref<?x?xf32>, %a: memref<?xf32>, %b: memref<?xf32>, %r: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %g, %c0 : memref<?x?xf32>
  %n = memref.dim %g, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %g[%j, %i] : memref<?x?xf32>
      %acc = memref.load %a[%i] : memref<?xf32>
      %t = arith.maximumf %v, %acc : f32
      memref.store %t, %a[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %g[%j, %i] : memref<?x?xf32>
      %acc = memref.load %b[%i] : memref<?xf32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %b[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %s = memref.load %b[%i] : memref<?xf32>
    %x = memref.load %a[%c0] : memref<?xf32>
    %d = arith.divf %s, %x : f32
    memref.store %d, %r[%i] : memref<?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// Left as two pairs of launches: the second column reduction reads the first one's result.
// CHECK-LABEL: func.func @dependent_col_sums
// CHECK-COUNT-4: gpu.launch
// CHECK-NOT:     gpu.launch
// COL0-LABEL: func.func @dependent_col_sums
func.func @dependent_col_sums(%g: memref<?x?xf32>, %a: memref<?xf32>, %b: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %g, %c0 : memref<?x?xf32>
  %n = memref.dim %g, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %g[%j, %i] : memref<?x?xf32>
      %acc = memref.load %a[%i] : memref<?xf32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %a[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %g[%j, %i] : memref<?x?xf32>
      %w = memref.load %a[%i] : memref<?xf32>
      %p = arith.mulf %v, %w : f32
      %acc = memref.load %b[%i] : memref<?xf32>
      %t = arith.addf %p, %acc : f32
      memref.store %t, %b[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// argmax over the rows (torch-mlir's loop, after sym-parallel-dims-first): two coalesced launches
// of (value, position) pairs, combined by eager's rule whatever their order: a NaN wins, the first
// of several; else the larger value, the earlier position of equals. A thread per column and chunk
// of rows runs the loop's rule in order from the chunk's first element, 4 rows loaded per step, and
// writes its pair to two buffers of partials; then lanes per column fold every L-th chunk's pair and each other's (shuffles, the i64
// positions in two halves), and lane 0 takes the total over the accumulators when it is larger or a
// NaN while the accumulator is not one.
// CHECK-LABEL: func.func @col_argmax
// CHECK:         %[[PV:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         %[[PJ:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK:         gpu.launch
// CHECK:           %[[X0:.*]] = memref.load %arg0[%[[LO:.*]], %[[COL:.*]]]
// CHECK:           %[[J0:.*]] = arith.index_cast %[[LO]] : index to i64
// CHECK:           %[[R:.*]]:2 = scf.for %[[ROW:.*]] = %{{.*}} step %c4{{.*}} iter_args(%[[V:.*]] = %[[X0]], %[[I:.*]] = %[[J0]]) -> (f32, i64)
// CHECK:             %[[X1:.*]] = memref.load %arg0[%[[ROW]], %[[COL]]]
// CHECK:             %[[J1:.*]] = arith.index_cast %[[ROW]] : index to i64
// CHECK-COUNT-3:     memref.load %arg0[%{{.*}}, %[[COL]]]
// CHECK:             arith.cmpf ord, %[[V]], %[[V]]
// CHECK:             arith.cmpf uno, %[[X1]], %[[X1]]
// CHECK:             arith.cmpf ogt, %[[X1]], %[[V]]
// CHECK:             %[[T1:.*]] = arith.andi
// CHECK:             arith.select %[[T1]], %[[X1]], %[[V]] : f32
// CHECK:             arith.select %[[T1]], %[[J1]], %[[I]] : i64
// CHECK:           memref.store %[[R]]#0, %[[PV]]
// CHECK:           memref.store %[[R]]#1, %[[PJ]]
// CHECK:         gpu.launch
// CHECK:           %[[F:.*]]:2 = scf.for %{{.*}} iter_args(%{{.*}} = %cst{{.*}}, %{{.*}} = %c9223372036854775807_i64) -> (f32, i64)
// CHECK:             memref.load %[[PV]]
// CHECK:             memref.load %[[PJ]]
// CHECK-COUNT-3:     arith.cmpi slt
// CHECK:           gpu.shuffle xor %[[F]]#0, %c16_i32, %c32_i32 : f32
// CHECK:           arith.trunci %[[F]]#1 : i64 to i32
// CHECK:           gpu.shuffle xor
// CHECK:           arith.shrui %[[F]]#1
// CHECK:           gpu.shuffle xor
// CHECK:           scf.if
// CHECK:             %[[A:.*]] = memref.load %arg1[%[[C:.*]]] : memref<?xf32>
// CHECK:             %[[B:.*]] = memref.load %arg2[%[[C]]] : memref<?xi64>
// CHECK:             %[[OK:.*]] = arith.cmpf ord, %[[A]], %[[A]]
// CHECK:             %[[TAKE:.*]] = arith.andi %[[OK]], %{{.*}} : i1
// CHECK:             %[[NV:.*]] = arith.select %[[TAKE]], %{{.*}}, %[[A]] : f32
// CHECK:             %[[NP:.*]] = arith.select %[[TAKE]], %{{.*}}, %[[B]] : i64
// CHECK:             memref.store %[[NV]], %arg1[%[[C]]]
// CHECK:             memref.store %[[NP]], %arg2[%[[C]]]
// CHECK-NOT:     gpu.all_reduce
// COL0-LABEL: func.func @col_argmax
// COL0:         gpu.all_reduce minsi
func.func @col_argmax(%x: memref<?x?xf32>, %v: memref<?xf32>, %p: memref<?xi64>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %e = memref.load %x[%j, %i] : memref<?x?xf32>
      %acc = memref.load %v[%i] : memref<?xf32>
      %pos = memref.load %p[%i] : memref<?xi64>
      %nv = arith.maximumf %e, %acc : f32
      %gt = arith.cmpf ogt, %e, %acc : f32
      %jj = arith.index_cast %j : index to i64
      %np = arith.select %gt, %jj, %pos : i64
      memref.store %nv, %v[%i] : memref<?xf32>
      memref.store %np, %p[%i] : memref<?xi64>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// The same reduction over a transposed view (inner stride not 1: consecutive outputs are far apart
// in memory, each output's elements contiguous) stays a block per output.
// CHECK-LABEL: func.func @col_sum_of_transposed_view
// CHECK:         gpu.launch
// CHECK:           gpu.all_reduce add
func.func @col_sum_of_transposed_view(%x: memref<?x?xf32, strided<[1, ?], offset: ?>>, %s: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %m = memref.dim %x, %c0 : memref<?x?xf32, strided<[1, ?], offset: ?>>
  %n = memref.dim %x, %c1 : memref<?x?xf32, strided<[1, ?], offset: ?>>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %x[%j, %i] : memref<?x?xf32, strided<[1, ?], offset: ?>>
      %acc = memref.load %s[%i] : memref<?xf32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// An index op the output's store and the value's load share (not hoisted: `%z`): each element
// recomputes it for its load, and the original moves to where the accumulator is combined (moving
// the only copy left the loads with an operand that did not dominate them). Both mappings.
// CHECK-LABEL: func.func @shared_index_op
// CHECK:         scf.for
// CHECK:           %[[Z:.*]] = arith.muli %c0, %c1
// CHECK:           memref.load %arg0[%{{.*}}, %[[Z]], %{{.*}}]
// COL0-LABEL: func.func @shared_index_op
// COL0:         gpu.all_reduce add
// COL0:         %[[Z:.*]] = arith.muli %c0, %c1
// COL0:         memref.store %{{.*}}, %arg1[%[[Z]],
func.func @shared_index_op(%x: memref<?x1x?xf32>, %out: memref<1x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %m = memref.dim %x, %c0 : memref<?x1x?xf32>
  %n = memref.dim %x, %c2 : memref<?x1x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %z = arith.muli %c0, %c1 : index
      %v = memref.load %x[%j, %z, %i] : memref<?x1x?xf32>
      %a = memref.load %out[%z, %i] : memref<1x?xf32>
      %s = arith.addf %v, %a : f32
      memref.store %s, %out[%z, %i] : memref<1x?xf32>
    }
    scf.reduce
  }
  return
}

// -----

// An elementwise nest over a column reduction's outputs that reads the result at its own index (a
// bf16 sum's conversion of the f32 accumulator) runs in the second launch, after lane 0's store:
// two launches, not three.
// CHECK-LABEL: func.func @col_sum_epilogue
// CHECK:         gpu.launch
// CHECK:         gpu.launch
// CHECK:           scf.if
// CHECK:             %[[OUT:.*]] = arith.addf
// CHECK:             memref.store %[[OUT]], %[[ACC:.*]][%[[C:.*]]] : memref<?xf32>
// CHECK-NEXT:        %[[R:.*]] = memref.load %[[ACC]][%[[C]]] : memref<?xf32>
// CHECK-NEXT:        %[[B:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT:        memref.store %[[B]], %arg1[%[[C]]] : memref<?xbf16>
// CHECK-NOT:     gpu.launch
// CHECK-NOT:     scf.parallel
// COL0-LABEL: func.func @col_sum_epilogue
// COL0-COUNT-2:   gpu.launch
func.func @col_sum_epilogue(%x: memref<?x?xf32>, %out: memref<?xbf16>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %s = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %s[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %x[%j, %i] : memref<?x?xf32>
      %acc = memref.load %s[%i] : memref<?xf32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  %n2 = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n2) step (%c1) {
    %r = memref.load %s[%i] : memref<?xf32>
    %b = arith.truncf %r : f32 to bf16
    memref.store %b, %out[%i] : memref<?xbf16>
    scf.reduce
  }
  return %ok : i32
}

// -----

// ... but not one that reads another output's result (not ready in this thread): its own launch.
// CHECK-LABEL: func.func @col_sum_no_epilogue
// CHECK-COUNT-3: gpu.launch
// CHECK-NOT:     scf.parallel
func.func @col_sum_no_epilogue(%x: memref<?x?xf32>, %out: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %s = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %s[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %x[%j, %i] : memref<?x?xf32>
      %acc = memref.load %s[%i] : memref<?xf32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %last = arith.subi %n, %c1 : index
    %k = arith.subi %last, %i : index
    %r = memref.load %s[%k] : memref<?xf32>
    memref.store %r, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// The fills of a column arg-reduction's value and position buffers right before it are its start
// values: lane 0 compares the total with the fill values, no fill launches and no loads of them.
// CHECK-LABEL: func.func @col_argmax_fills
// CHECK-DAG:     %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         gpu.launch
// CHECK:         gpu.launch
// CHECK:           scf.if
// CHECK-NOT:         memref.load %arg1
// CHECK:             arith.cmpf ord, %[[NINF]], %[[NINF]]
// CHECK:             %[[NV:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NINF]] : f32
// CHECK:             %[[NP:.*]] = arith.select %{{.*}}, %{{.*}}, %[[ZERO]] : i64
// CHECK:             memref.store %[[NV]], %arg1
// CHECK:             memref.store %[[NP]], %arg2
// CHECK-NOT:     gpu.launch
func.func @col_argmax_fills(%x: memref<?x?xf32>, %v: memref<?xf32>, %p: memref<?xi64>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %ninf = arith.constant 0xFF800000 : f32
  %z = arith.constant 0 : i64
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %z, %p[%i] : memref<?xi64>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %ninf, %v[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %e = memref.load %x[%j, %i] : memref<?x?xf32>
      %acc = memref.load %v[%i] : memref<?xf32>
      %pos = memref.load %p[%i] : memref<?xi64>
      %nv = arith.maximumf %e, %acc : f32
      %gt = arith.cmpf ogt, %e, %acc : f32
      %jj = arith.index_cast %j : index to i64
      %np = arith.select %gt, %jj, %pos : i64
      memref.store %nv, %v[%i] : memref<?xf32>
      memref.store %np, %p[%i] : memref<?xi64>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// Two fills of the accumulator before a column sum: the last one (1.0) is its start value; the
// earlier one stays a launch before it.
// CHECK-LABEL: func.func @two_fills
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-COUNT-3: gpu.launch
// CHECK:           scf.if
// CHECK:             arith.addf %{{.*}}, %[[ONE]] : f32
// CHECK-NOT:     gpu.launch
func.func @two_fills(%x: memref<?x?xf32>, %s: memref<?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %s[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %one, %s[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %x[%j, %i] : memref<?x?xf32>
      %acc = memref.load %s[%i] : memref<?xf32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// The reduction stores output (i, j) at s[j, i]; a nest that reads s[a, b] for output (a, b) reads
// another thread's result: not an epilogue (three launches, the last one its own).
// CHECK-LABEL: func.func @perm_epi
// CHECK-COUNT-3: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @perm_epi(%x: memref<?x?x?xf32>, %o: memref<?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?x?xf32>
  %s = memref.alloc(%n, %n) : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    scf.for %r = %c0 to %m step %c1 {
      %v = memref.load %x[%r, %i, %j] : memref<?x?x?xf32>
      %acc = memref.load %s[%j, %i] : memref<?x?xf32>
      %t = arith.addf %v, %acc : f32
      memref.store %t, %s[%j, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%a, %b) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    %r = memref.load %s[%a, %b] : memref<?x?xf32>
    %w = arith.mulf %r, %two : f32
    memref.store %w, %o[%a, %b] : memref<?x?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// Fills over more outputs than the arg-reduction writes (2 of n): not folded, they stay launches.
// CHECK-LABEL: func.func @col_argmax_partial_fills
// CHECK-COUNT-4: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @col_argmax_partial_fills(%x: memref<?x?xf32>, %v: memref<?xf32>, %p: memref<?xi64>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ok = arith.constant 0 : i32
  %ninf = arith.constant 0xFF800000 : f32
  %z = arith.constant 0 : i64
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %z, %p[%i] : memref<?xi64>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %ninf, %v[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    scf.for %j = %c0 to %m step %c1 {
      %e = memref.load %x[%j, %i] : memref<?x?xf32>
      %acc = memref.load %v[%i] : memref<?xf32>
      %pos = memref.load %p[%i] : memref<?xi64>
      %nv = arith.maximumf %e, %acc : f32
      %gt = arith.cmpf ogt, %e, %acc : f32
      %jj = arith.index_cast %j : index to i64
      %np = arith.select %gt, %jj, %pos : i64
      memref.store %nv, %v[%i] : memref<?xf32>
      memref.store %np, %p[%i] : memref<?xi64>
    }
    scf.reduce
  }
  return %ok : i32
}

// -----

// A branch of the host program (sym-gpu-attention's split by size: a library call, or a kernel of
// its own) is host control flow: each branch's loops become launches inside that branch.
// CHECK-LABEL: func.func @host_branches
// CHECK:       scf.if %{{.+}} {
// CHECK-NEXT:    %[[B:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK:         gpu.launch
// CHECK:           memref.store %{{.+}}, %[[B]]
// CHECK:         func.call @__sym_lib_0(%[[B]], %arg1)
// CHECK-NEXT:  } else {
// CHECK:         gpu.launch
// CHECK:           memref.store %{{.+}}, %arg1
// CHECK:           gpu.terminator
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  return
func.func private @__sym_lib_0(memref<?xf32>, memref<?xf32>) attributes {sym.library_call = "lib"}
func.func @host_branches(%x: memref<?xf32>, %y: memref<?xf32>, %big: i1) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %two = arith.constant 2.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.if %big {
    %b = memref.alloc(%n) : memref<?xf32>
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %e = memref.load %x[%i] : memref<?xf32>
      %d = arith.mulf %e, %two : f32
      memref.store %d, %b[%i] : memref<?xf32>
      scf.reduce
    }
    func.call @__sym_lib_0(%b, %y) : (memref<?xf32>, memref<?xf32>) -> ()
  } else {
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %e = memref.load %x[%i] : memref<?xf32>
      %d = arith.addf %e, %two : f32
      memref.store %d, %y[%i] : memref<?xf32>
      scf.reduce
    }
  }
  return %ok : i32
}

// -----

// An elementwise nest over the rows (and more dims) right before a row group leads it: GPT-2's
// residual sum `h = x + y`, written once, then a layer norm's row sum and its use of the sum. One
// launch, the nest first. With the row in registers, the later loops take the vectors the nest
// stored (no load of %h) and the stores of %h happen once; in memory (MEM), the later loops re-read
// %h after a barrier. With fuse-rows=0: a launch per nest.
// REG-LABEL: func.func @elementwise_leads_rows
// REG-SAME:      (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>, %[[H:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?x?xf32>)
// REG:         gpu.launch
// REG:           scf.if %{{.*}} {
// REG-COUNT-4:     vector.load %[[X]]
// REG-NOT:         vector.load %[[H]]
// REG-COUNT-4:     vector.store %{{.*}}, %[[H]]
// REG-NOT:         vector.load %[[H]]
// REG:             gpu.all_reduce add
// REG-NOT:         vector.load %[[H]]
// REG-COUNT-4:     vector.store %{{.*}}, %[[OUT]]
// REG:           } else {
// REG:           gpu.terminator
// REG-NOT:     gpu.launch
// REG:         return
// MEM-LABEL: func.func @elementwise_leads_rows
// MEM-SAME:      (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>, %[[H:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?x?xf32>)
// MEM:         gpu.launch
// MEM:           memref.store %{{.*}}, %[[H]]
// MEM:           gpu.barrier
// MEM:           memref.load %[[H]]
// MEM:           gpu.all_reduce add
// MEM:           memref.load %[[H]]
// MEM:           memref.store %{{.*}}, %[[OUT]]
// MEM:           gpu.terminator
// MEM-NOT:     gpu.launch
// MEM:         return
// ROWS0-LABEL: func.func @elementwise_leads_rows
// ROWS0-COUNT-3: gpu.launch
func.func @elementwise_leads_rows(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %h: memref<?x?xf32>, %out: memref<?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %a = memref.load %x[%i, %j] : memref<?x?xf32>
    %b = memref.load %y[%i, %j] : memref<?x?xf32>
    %r = arith.addf %a, %b : f32
    memref.store %r, %h[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  %s = memref.alloc(%m) : memref<?x1xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %s[%i, %c0] : memref<?x1xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %h[%i, %j] : memref<?x?xf32>
      %acc = memref.load %s[%i, %c0] : memref<?x1xf32>
      %r = arith.addf %v, %acc : f32
      memref.store %r, %s[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %h[%i, %j] : memref<?x?xf32>
    %ss = memref.load %s[%i, %c0] : memref<?x1xf32>
    %r = arith.subf %v, %ss : f32
    memref.store %r, %out[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return %ok : i32
}

// -----

// An elementwise nest whose rows are not the group's (it reads %x at another row) runs alone.
// CHECK-LABEL: func.func @elementwise_not_leading_rows
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @elementwise_not_leading_rows(%x: memref<?x?xf32>, %h: memref<?x?xf32>, %out: memref<?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %a = memref.load %x[%i, %j] : memref<?x?xf32>
    %r = arith.addf %a, %a : f32
    memref.store %r, %h[%j, %i] : memref<?x?xf32>
    scf.reduce
  }
  %s = memref.alloc(%m) : memref<?x1xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    memref.store %zero, %s[%i, %c0] : memref<?x1xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %h[%i, %j] : memref<?x?xf32>
      %acc = memref.load %s[%i, %c0] : memref<?x1xf32>
      %r = arith.addf %v, %acc : f32
      memref.store %r, %s[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %h[%i, %j] : memref<?x?xf32>
    %ss = memref.load %s[%i, %c0] : memref<?x1xf32>
    %r = arith.subf %v, %ss : f32
    memref.store %r, %out[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return %ok : i32
}
