// RUN: symopt %s --split-input-file --sym-erase-dead-checks | filecheck %s

// An embedding that elementwise fusion wrote into its consumer: the unused original only checked
// indices that the consumer checks too; it goes.
#id2 = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @fused_copy_checks
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
func.func @fused_copy_checks(%idx: tensor<?xindex>, %table: tensor<50x8xf32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c50 = arith.constant 50 : index
  %n = tensor.dim %idx, %c0 : tensor<?xindex>
  %e0 = tensor.empty(%n) : tensor<?x8xf32>
  %dead = linalg.generic {indexing_maps = [#id2, #id], iterator_types = ["parallel", "parallel"]}
      ins(%idx : tensor<?xindex>) outs(%e0 : tensor<?x8xf32>) {
  ^bb0(%i: index, %o: f32):
    %ok = arith.cmpi slt, %i, %c50 : index
    func.call @__mlir_sym_nested_assert(%ok) {sym.assert_msg = "index out of range (at m.py:3)"} : (i1) -> ()
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%i, %j] : tensor<50x8xf32>
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %e1 = tensor.empty(%n) : tensor<?x8xf32>
  %live = linalg.generic {indexing_maps = [#id2, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%idx, %x : tensor<?xindex>, tensor<?x8xf32>) outs(%e1 : tensor<?x8xf32>) {
  ^bb0(%i: index, %a: f32, %o: f32):
    %ok = arith.cmpi slt, %i, %c50 : index
    func.call @__mlir_sym_nested_assert(%ok) {sym.assert_msg = "index out of range (at m.py:3)"} : (i1) -> ()
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%i, %j] : tensor<50x8xf32>
    %s = arith.addf %v, %a : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  return %live : tensor<?x8xf32>
}
func.func private @__mlir_sym_nested_assert(i1)

// -----

// An unused gather whose checks no live op makes: its checks are the only ones; it stays.
#id2 = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @only_checks_stay
// CHECK: linalg.generic
// CHECK: func.call @__mlir_sym_nested_assert
func.func @only_checks_stay(%idx: tensor<?xindex>, %table: tensor<50x8xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c50 = arith.constant 50 : index
  %n = tensor.dim %idx, %c0 : tensor<?xindex>
  %e0 = tensor.empty(%n) : tensor<?x8xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #id], iterator_types = ["parallel", "parallel"]}
      ins(%idx : tensor<?xindex>) outs(%e0 : tensor<?x8xf32>) {
  ^bb0(%i: index, %o: f32):
    %ok = arith.cmpi slt, %i, %c50 : index
    func.call @__mlir_sym_nested_assert(%ok) {sym.assert_msg = "index out of range (at m.py:7)"} : (i1) -> ()
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%i, %j] : tensor<50x8xf32>
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  return %n : index
}
func.func private @__mlir_sym_nested_assert(i1)

// -----

// An unused op that also calls something else stays (and its checks, which it runs, let a dead
// copy of them go).
#id2 = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @other_calls_stay
// CHECK: linalg.generic
// CHECK: func.call @other
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @other_calls_stay(%idx: tensor<?xindex>) -> index {
  %c0 = arith.constant 0 : index
  %c50 = arith.constant 50 : index
  %n = tensor.dim %idx, %c0 : tensor<?xindex>
  %e0 = tensor.empty(%n) : tensor<?x8xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #id], iterator_types = ["parallel", "parallel"]}
      ins(%idx : tensor<?xindex>) outs(%e0 : tensor<?x8xf32>) {
  ^bb0(%i: index, %o: f32):
    func.call @other() : () -> ()
    %ok = arith.cmpi slt, %i, %c50 : index
    func.call @__mlir_sym_nested_assert(%ok) {sym.assert_msg = "index out of range (at m.py:9)"} : (i1) -> ()
    %f = arith.constant 0.0 : f32
    linalg.yield %f : f32
  } -> tensor<?x8xf32>
  %1 = linalg.generic {indexing_maps = [#id2, #id], iterator_types = ["parallel", "parallel"]}
      ins(%idx : tensor<?xindex>) outs(%e0 : tensor<?x8xf32>) {
  ^bb0(%i: index, %o: f32):
    %ok = arith.cmpi slt, %i, %c50 : index
    func.call @__mlir_sym_nested_assert(%ok) {sym.assert_msg = "index out of range (at m.py:9)"} : (i1) -> ()
    %f = arith.constant 0.0 : f32
    linalg.yield %f : f32
  } -> tensor<?x8xf32>
  return %n : index
}
func.func private @__mlir_sym_nested_assert(i1)
func.func private @other()
