// RUN: symopt %s --torch-to-linalg-specialized | filecheck %s
// RUN: not symopt %s --torch-to-linalg 2>&1 | filecheck %s --check-prefix=PLAIN

// A backward graph's variant specialized to [3, 4] (sym-specialize: static arguments cast back to
// `?`). Canonicalization folds the casts into their users, whose result types stay dynamic
// (`aten.unsqueeze` of a [4] typed [1,?]); torch-mlir's lowering then makes a tensor<1x4xf32> that
// the conversion cannot cast back. The specialized pipeline refines the shapes again first.
// CHECK-LABEL: func.func @main(%arg0: tensor<3x4xf32>, %arg1: tensor<4xf32>) -> tensor<?x?xf32>
// CHECK-NOT:     torch.
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK:         %[[M:.*]] = linalg.generic {{.*}} ins(%[[B]], %arg0 : tensor<3x4xf32>, tensor<3x4xf32>)
// CHECK:           arith.mulf
// CHECK:         %[[C:.*]] = tensor.cast %[[M]] : tensor<3x4xf32> to tensor<?x?xf32>
// CHECK-NEXT:    return %[[C]]
// PLAIN: torch-to-linalg-specialized.mlir:{{[0-9]+}}:8: error: failed to legalize unresolved target materialization from ('tensor<1x4xf32>') to ('tensor<1x?xf32>')
func.func @main(%arg0: !torch.vtensor<[3,4],f32>, %arg1: !torch.vtensor<[4],f32>) -> !torch.vtensor<[?,?],f32> {
  %0 = torch.tensor_static_info_cast %arg1 : !torch.vtensor<[4],f32> to !torch.vtensor<[?],f32>
  %1 = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[3,4],f32> to !torch.vtensor<[?,?],f32>
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %int0 = torch.constant.int 0
  %2 = torch.aten.unsqueeze %0, %int0 : !torch.vtensor<[?],f32>, !torch.int -> !torch.vtensor<[1,?],f32>
  %3 = torch.prim.ListConstruct %int3, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %4 = torch.aten.expand %2, %3, %false : !torch.vtensor<[1,?],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,?],f32>
  %5 = torch.aten.mul.Tensor %4, %1 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32> -> !torch.vtensor<[?,?],f32>
  return %5 : !torch.vtensor<[?,?],f32>
}
