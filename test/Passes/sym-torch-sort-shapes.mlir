// RUN: symopt %s --split-input-file --sym-torch-sort-shapes | filecheck %s

// A specialized variant's sort: its input is static, its results are not (torch-mlir's shape
// refinement leaves them). Both results get the input's sizes; their users read them through casts
// back to the old types.
// CHECK-LABEL: func.func @static_input
// CHECK:       %[[V:.+]], %[[I:.+]] = torch.aten.sort %arg0, %{{.+}}, %{{.+}} : !torch.vtensor<[3,5],f32>, !torch.int, !torch.bool -> !torch.vtensor<[3,5],f32>, !torch.vtensor<[3,5],si64>
// CHECK-DAG:   %[[CV:.+]] = torch.tensor_static_info_cast %[[V]] : !torch.vtensor<[3,5],f32> to !torch.vtensor<[?,?],f32>
// CHECK-DAG:   %[[CI:.+]] = torch.tensor_static_info_cast %[[I]] : !torch.vtensor<[3,5],si64> to !torch.vtensor<[?,?],si64>
// CHECK:       return %[[CV]], %[[CI]]
func.func @static_input(%x: !torch.vtensor<[3,5],f32>) -> (!torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>) {
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %v, %i = torch.aten.sort %x, %int-1, %false : !torch.vtensor<[3,5],f32>, !torch.int, !torch.bool -> !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>
  return %v, %i : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>
}

// -----

// Known sizes of the input and of a result merge; a result that has them already is left alone.
// CHECK-LABEL: func.func @partly_known
// CHECK:       torch.aten.sort %arg0, {{.+}} -> !torch.vtensor<[3,5],f32>, !torch.vtensor<[3,5],si64>
// CHECK:       %[[CV:.+]] = torch.tensor_static_info_cast %{{.+}} : !torch.vtensor<[3,5],f32> to !torch.vtensor<[?,5],f32>
// CHECK-NOT:   torch.tensor_static_info_cast
// CHECK:       torch.aten.mul.Tensor %[[CV]], %[[CV]]
func.func @partly_known(%x: !torch.vtensor<[3,?],f32>) -> (!torch.vtensor<[?,5],f32>, !torch.vtensor<[3,5],si64>) {
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %v, %i = torch.aten.sort %x, %int0, %false : !torch.vtensor<[3,?],f32>, !torch.int, !torch.bool -> !torch.vtensor<[?,5],f32>, !torch.vtensor<[3,5],si64>
  %m = torch.aten.mul.Tensor %v, %v : !torch.vtensor<[?,5],f32>, !torch.vtensor<[?,5],f32> -> !torch.vtensor<[?,5],f32>
  return %m, %i : !torch.vtensor<[?,5],f32>, !torch.vtensor<[3,5],si64>
}

// -----

// Left alone: a dynamic input (nothing to give), sizes that disagree with the input's.
// CHECK-LABEL: func.func @left_alone
// CHECK:       torch.aten.sort %arg0, {{.+}} -> !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>
// CHECK:       torch.aten.sort %arg1, {{.+}} -> !torch.vtensor<[4,?],f32>, !torch.vtensor<[?,?],si64>
// CHECK-NOT:   torch.tensor_static_info_cast
func.func @left_alone(%x: !torch.vtensor<[?,?],f32>, %y: !torch.vtensor<[3,5],f32>) -> (!torch.vtensor<[?,?],f32>, !torch.vtensor<[4,?],f32>) {
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %v, %i = torch.aten.sort %x, %int0, %false : !torch.vtensor<[?,?],f32>, !torch.int, !torch.bool -> !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>
  %w, %j = torch.aten.sort %y, %int0, %false : !torch.vtensor<[3,5],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4,?],f32>, !torch.vtensor<[?,?],si64>
  return %v, %w : !torch.vtensor<[?,?],f32>, !torch.vtensor<[4,?],f32>
}
