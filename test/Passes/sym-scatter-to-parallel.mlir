// RUN: symopt %s --split-input-file --sym-scatter-to-parallel | filecheck %s
// RUN: symopt %s --split-input-file --pass-pipeline='builtin.module(sym-scatter-to-parallel{atomics=0})' | filecheck %s --check-prefix=SEQ

// An overwrite with unique indices (index_put): one scf.parallel over the update elements. Each index
// is wrapped (i < 0: i + size), the update's slice dims address the original's last dims (dim 2 is
// both: index + slice position), the in-range check is a deferred assert before the store.
// CHECK-LABEL: func.func @set_unique
// CHECK-DAG:     %[[N:.*]] = memref.dim %arg0, %c0
// CHECK-DAG:     %[[S0:.*]] = memref.dim %arg2, %c0
// CHECK-DAG:     %[[S2:.*]] = memref.dim %arg2, %c2
// CHECK:         scf.parallel (%[[K:.*]], %[[J1:.*]], %[[J2:.*]]) = {{.*}} to (%[[N]], %{{.*}}, %{{.*}})
// CHECK:           %[[V:.*]] = memref.load %arg0[%[[K]], %[[J1]], %[[J2]]]
// CHECK:           %[[R0:.*]] = memref.load %arg1[%[[K]], %c0{{.*}}] : memref<?x2xi64>
// CHECK:           %[[I0:.*]] = arith.index_cast %[[R0]] : i64 to index
// CHECK:           %[[NEG0:.*]] = arith.cmpi slt, %[[I0]], %c0
// CHECK:           %[[UP0:.*]] = arith.addi %[[I0]], %[[S0]]
// CHECK:           %[[W0:.*]] = arith.select %[[NEG0]], %[[UP0]], %[[I0]]
// CHECK:           arith.cmpi slt, %[[W0]], %[[S0]]
// CHECK:           %[[R1:.*]] = memref.load %arg1[%[[K]], %c1{{.*}}] : memref<?x2xi64>
// CHECK:           %[[W1:.*]] = arith.select
// CHECK:           %[[P2:.*]] = arith.addi %[[W1]], %[[J2]]
// CHECK:           arith.cmpi slt, %[[P2]], %[[S2]]
// CHECK:           arith.andi
// CHECK:           %[[OK:.*]] = arith.andi
// CHECK-NEXT:      call @__mlir_sym_nested_assert(%[[OK]]) {sym.assert_msg = "IndexError: index out of bounds in index_put / scatter{{.*}}"}
// CHECK:           memref.store %[[V]], %arg2[%[[W0]], %[[J1]], %[[P2]]]
// CHECK-NOT:     tm_tensor.scatter
// CHECK:       func.func private @__mlir_sym_nested_assert(i1)
func.func @set_unique(%u: memref<?x1x?xf32>, %i: memref<?x2xi64>, %o: memref<?x?x?xf32>) {
  tm_tensor.scatter {dimension_map = array<i64: 0, 2>} unique_indices(true) ins(%u, %i : memref<?x1x?xf32>, memref<?x2xi64>) outs(%o : memref<?x?x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  }
  return
}

// -----

// Adds (index_put with accumulate, the counts of unique / repeat_interleave) become atomic adds,
// floats and wide integers alike; i32 indices are cast.
// CHECK-LABEL: func.func @adds
// CHECK:         scf.parallel
// CHECK:           arith.index_cast %{{.*}} : i32 to index
// CHECK:           memref.atomic_rmw addf %{{.*}}, %arg2[%{{.*}}] : (f32, memref<?xf32>) -> f32
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw addi %{{.*}}, %arg4[%{{.*}}] : (i64, memref<?xi64>) -> i64
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw addf %{{.*}}, %arg6[%{{.*}}] : (bf16, memref<?xbf16>) -> bf16
// CHECK-NOT:     tm_tensor.scatter
// With atomics=0 (the CPU pipeline: parallel loops run in order) an add is a load, an add, a store;
// a bf16 add is done in f32 (x86 has no bf16 arithmetic the JIT can call).
// SEQ-LABEL:   func.func @adds
// SEQ-NOT:       atomic_rmw
// SEQ:           %[[O:.*]] = memref.load %arg2[%[[P:.*]]] : memref<?xf32>
// SEQ:           %[[S:.*]] = arith.addf %[[O]], %{{.*}} : f32
// SEQ:           memref.store %[[S]], %arg2[%[[P]]]
// SEQ:           arith.addi
// SEQ:           arith.extf %{{.*}} : bf16 to f32
// SEQ:           arith.addf %{{.*}} : f32
// SEQ:           arith.truncf %{{.*}} : f32 to bf16
// SEQ:           memref.store
func.func @adds(%v: memref<?x1xf32>, %j: memref<?x1xi32>, %p: memref<?xf32>, %w: memref<?x1xi64>, %q: memref<?xi64>,
                %vb: memref<?x1xbf16>, %pb: memref<?xbf16>) {
  tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%v, %j : memref<?x1xf32>, memref<?x1xi32>) outs(%p : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    tm_tensor.yield %s : f32
  }
  tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%w, %j : memref<?x1xi64>, memref<?x1xi32>) outs(%q : memref<?xi64>) {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    tm_tensor.yield %s : i64
  }
  tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%vb, %j : memref<?x1xbf16>, memref<?x1xi32>) outs(%pb : memref<?xbf16>) {
  ^bb0(%a: bf16, %b: bf16):
    %s = arith.addf %b, %a : bf16
    tm_tensor.yield %s : bf16
  }
  return
}

// -----

// An overwrite whose indices may repeat: a loop nest in the updates' order (the last writer of an
// element decides, as in the loop lowering's form), with the indices wrapped and checked like the
// parallel form's (tm-tensor-to-loops used them unchecked: an index past the end wrote past the buffer).
// CHECK-LABEL: func.func @in_order
// CHECK-NOT:     scf.parallel
// CHECK:         %[[N:.*]] = memref.dim %arg0, %c0
// CHECK:         %[[SIZE:.*]] = memref.dim %arg2, %c0
// CHECK:         scf.for %[[K:.*]] = %c0{{.*}} to %[[N]]
// CHECK:           scf.for %[[C:.*]] = %c0{{.*}} to %{{.*}}
// CHECK:             %[[V:.*]] = memref.load %arg0[%[[K]], %[[C]]]
// CHECK:             %[[RAW:.*]] = memref.load %arg1[%[[K]], %{{.*}}]
// CHECK:             arith.cmpi slt, %{{.*}}, %[[SIZE]]
// CHECK:             call @__mlir_sym_nested_assert(%{{.*}}) {sym.assert_msg = "IndexError: index out of bounds in index_put / scatter{{.*}}"}
// CHECK:             memref.store %[[V]], %arg2[%{{.*}}]
// CHECK-NOT:     tm_tensor.scatter
func.func @in_order(%v: memref<?x1xf32>, %j: memref<?x1xi64>, %p: memref<?xf32>) {
  tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%v, %j : memref<?x1xf32>, memref<?x1xi64>) outs(%p : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  }
  return
}

// -----

// Left for the loop lowering: an add of a type without hardware atomics, another combiner.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     scf.parallel
// CHECK-COUNT-2: tm_tensor.scatter
// CHECK-NOT:     scf.parallel
// CHECK-NOT:   __mlir_sym_nested_assert
func.func @kept(%v: memref<?x1xf32>, %j: memref<?x1xi64>, %p: memref<?xf32>, %b8: memref<?x1xi8>, %q8: memref<?xi8>) {
  tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%b8, %j : memref<?x1xi8>, memref<?x1xi64>) outs(%q8 : memref<?xi8>) {
  ^bb0(%a: i8, %b: i8):
    %s = arith.addi %a, %b : i8
    tm_tensor.yield %s : i8
  }
  tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%v, %j : memref<?x1xf32>, memref<?x1xi64>) outs(%p : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b : f32
    tm_tensor.yield %s : f32
  }
  return
}
