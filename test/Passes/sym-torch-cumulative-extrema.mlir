// RUN: symopt %s --split-input-file --sym-torch-cumulative-extrema | filecheck %s

// cummax along dim 1 (imported as an opaque torch.operator): the values are an inclusive max-scan
// (NaN-propagating maximumf); the positions taken (x[j] == values[j], or x[j] NaN) become j (else
// 0), and their inclusive max-scan is the indices, as eager's loop keeps them.
// CHECK-LABEL: func.func @cummax
// CHECK-SAME:  (%[[X:.*]]: !torch.vtensor<[?,?],f32>)
// CHECK:       %[[B:.*]] = torch_c.to_builtin_tensor %[[X]] : !torch.vtensor<[?,?],f32> -> tensor<?x?xf32>
// CHECK:       %[[V:.*]]:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%[[B]] : tensor<?x?xf32>)
// CHECK:         arith.maximumf
// CHECK:       %[[P:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[V]]#0 : tensor<?x?xf32>, tensor<?x?xf32>) outs(%{{.*}} : tensor<?x?xi64>)
// CHECK:         %[[SAME:.*]] = arith.cmpf oeq
// CHECK:         %[[NAN:.*]] = arith.cmpf uno
// CHECK:         %[[TAKEN:.*]] = arith.ori %[[SAME]], %[[NAN]]
// CHECK:         %[[J:.*]] = linalg.index 1
// CHECK:         %[[JI:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK:         arith.select %[[TAKEN]], %[[JI]], %{{.*}} : i64
// CHECK:       %[[I:.*]]:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%[[P]] : tensor<?x?xi64>)
// CHECK:         arith.maxsi
// CHECK:       %[[RV:.*]] = torch_c.from_builtin_tensor %[[V]]#0 : tensor<?x?xf32> -> !torch.vtensor<[?,?],f32>
// CHECK:       %[[RI:.*]] = torch_c.from_builtin_tensor %[[I]]#0 : tensor<?x?xi64> -> !torch.vtensor<[?,?],si64>
// CHECK-NOT:   torch.operator
// CHECK:       return %[[RV]], %[[RI]]
func.func @cummax(%x: !torch.vtensor<[?,?],f32>) -> (!torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>) {
  %int1 = torch.constant.int 1
  %0:2 = torch.operator "torch.aten.cummax"(%x, %int1) : (!torch.vtensor<[?,?],f32>, !torch.int) -> (!torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>)
  return %0#0, %0#1 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>
}

// -----

// cummin of integers along a negative dim: minsi, and only equality marks a position taken.
// CHECK-LABEL: func.func @cummin_int
// CHECK:       tm_tensor.scan dimension(0) inclusive(true) ins(%{{.*}} : tensor<?x3xi64>)
// CHECK:         arith.minsi
// CHECK:       linalg.generic
// CHECK:         arith.cmpi eq
// CHECK-NOT:     arith.cmpf
// CHECK:         linalg.index 0
// CHECK:       tm_tensor.scan dimension(0) inclusive(true)
// CHECK:         arith.maxsi
func.func @cummin_int(%x: !torch.vtensor<[?,3],si64>) -> (!torch.vtensor<[?,3],si64>, !torch.vtensor<[?,3],si64>) {
  %int = torch.constant.int -2
  %0:2 = torch.operator "torch.aten.cummin"(%x, %int) : (!torch.vtensor<[?,3],si64>, !torch.int) -> (!torch.vtensor<[?,3],si64>, !torch.vtensor<[?,3],si64>)
  return %0#0, %0#1 : !torch.vtensor<[?,3],si64>, !torch.vtensor<[?,3],si64>
}

// -----

// A 0-d tensor: scanned as one element.
// CHECK-LABEL: func.func @cummax_0d
// CHECK:       tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK:       tm_tensor.scan dimension(0)
// CHECK:       tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
// CHECK:       tensor.collapse_shape %{{.*}} [] : tensor<1xi64> into tensor<i64>
func.func @cummax_0d(%x: !torch.vtensor<[],f32>) -> (!torch.vtensor<[],f32>, !torch.vtensor<[],si64>) {
  %int = torch.constant.int 0
  %0:2 = torch.operator "torch.aten.cummax"(%x, %int) : (!torch.vtensor<[],f32>, !torch.int) -> (!torch.vtensor<[],f32>, !torch.vtensor<[],si64>)
  return %0#0, %0#1 : !torch.vtensor<[],f32>, !torch.vtensor<[],si64>
}
