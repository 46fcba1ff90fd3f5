// RUN: symopt %s --split-input-file --sym-nested-assert-to-status | filecheck %s

// The embedding's bounds checks after bufferization, convert-linalg-to-loops and convert-scf-to-cf
// (reduced to one loop): each marker call splits its block into "go on" and "return -k". The
// messages are appended after sym-assert-to-status's, so the codes continue from them; the marker
// declaration goes.
// CHECK-LABEL: func.func @embedding_bounds_checks
// CHECK-SAME: sym.assert_msgs = ["shape check", "index must be smaller than dim size (at model.py:18)", "index must be larger or equal to 0 (at model.py:18)"]
// CHECK: ^bb2:
// CHECK: %[[IDX:.*]] = memref.load %arg1[%{{.*}}] : memref<?xi64>
// CHECK: %[[I:.*]] = arith.index_cast %[[IDX]] : i64 to index
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[I]], %c50 : index
// CHECK-NEXT: cf.cond_br %[[LT]], ^[[OK1:bb[0-9]+]], ^[[FAIL1:bb[0-9]+]]
// CHECK-NEXT: ^[[OK1]]:
// CHECK-NEXT: %[[GE:.*]] = arith.cmpi sge, %[[IDX]], %c0_i64 : i64
// CHECK-NEXT: cf.cond_br %[[GE]], ^[[OK2:bb[0-9]+]], ^[[FAIL2:bb[0-9]+]]
// CHECK-NEXT: ^[[OK2]]:
// CHECK-NEXT: memref.load %arg0
// CHECK-NEXT: memref.store
// CHECK: ^[[FAIL2]]:
// CHECK-NEXT: %[[C3:.*]] = arith.constant -3 : i32
// CHECK-NEXT: return %[[C3]] : i32
// CHECK: ^[[FAIL1]]:
// CHECK-NEXT: %[[C2:.*]] = arith.constant -2 : i32
// CHECK-NEXT: return %[[C2]] : i32
// CHECK-NOT: call
// CHECK-NOT: __mlir_sym_nested_assert
func.func @embedding_bounds_checks(%w: memref<50x8xf32>, %idx: memref<?xi64>, %out: memref<?x8xf32>) -> i32 attributes {sym.assert_msgs = ["shape check"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c50 = arith.constant 50 : index
  %c0_i64 = arith.constant 0 : i64
  %c0_i32 = arith.constant 0 : i32
  %n = memref.dim %idx, %c0 : memref<?xi64>
  cf.br ^bb1(%c0 : index)
^bb1(%k: index):
  %more = arith.cmpi slt, %k, %n : index
  cf.cond_br %more, ^bb2, ^bb3
^bb2:
  %v = memref.load %idx[%k] : memref<?xi64>
  %i = arith.index_cast %v : i64 to index
  %lt = arith.cmpi slt, %i, %c50 : index
  func.call @__mlir_sym_nested_assert(%lt) {sym.assert_msg = "index must be smaller than dim size (at model.py:18)"} : (i1) -> ()
  %ge = arith.cmpi sge, %v, %c0_i64 : i64
  func.call @__mlir_sym_nested_assert(%ge) {sym.assert_msg = "index must be larger or equal to 0 (at model.py:18)"} : (i1) -> ()
  %x = memref.load %w[%i, %c0] : memref<50x8xf32>
  memref.store %x, %out[%k, %c0] : memref<?x8xf32>
  %next = arith.addi %k, %c1 : index
  cf.br ^bb1(%next : index)
^bb3:
  return %c0_i32 : i32
}
func.func private @__mlir_sym_nested_assert(i1)

// -----

// Without earlier messages the codes start at -1; the attribute is created.
// CHECK-LABEL: func.func @first_message
// CHECK-SAME: attributes {sym.assert_msgs = ["only"]}
// CHECK: cf.cond_br %arg0, ^[[OK:bb[0-9]+]], ^[[FAIL:bb[0-9]+]]
// CHECK: ^[[OK]]:
// CHECK-NEXT: return %{{.*}} : i32
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: %[[C1:.*]] = arith.constant -1 : i32
// CHECK-NEXT: return %[[C1]] : i32
func.func @first_message(%a: i1) -> i32 {
  %z = arith.constant 0 : i32
  func.call @__mlir_sym_nested_assert(%a) {sym.assert_msg = "only"} : (i1) -> ()
  return %z : i32
}
func.func private @__mlir_sym_nested_assert(i1)

// -----

// Calls without the message attribute are not deferred checks; a function without marker calls
// gets no message list. The (unused) marker declaration is still erased.
// CHECK-LABEL: func.func @no_rewrite_when_no_marker_call
// CHECK-NOT: sym.assert_msgs
// CHECK: call @other(%arg0) : (i1) -> ()
// CHECK-NEXT: return
// CHECK-NOT: cf.cond_br
// CHECK-NOT: __mlir_sym_nested_assert
func.func @no_rewrite_when_no_marker_call(%a: i1) -> i32 {
  %z = arith.constant 0 : i32
  func.call @other(%a) : (i1) -> ()
  return %z : i32
}
func.func private @other(i1)
func.func private @__mlir_sym_nested_assert(i1)
