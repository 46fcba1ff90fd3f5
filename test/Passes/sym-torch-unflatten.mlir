// RUN: symopt %s --split-input-file --sym-torch-unflatten | filecheck %s

// A linear layer's result back from [b*s, 12] to [b, s, 12] with b and s symbolic: an exact
// expand_shape whose output sizes are the two symbols (torch-mlir made it a runtime reshape).
// CHECK-LABEL: func.func @two_dynamic_sizes
// CHECK:       %[[B:.+]] = torch_c.to_builtin_tensor %arg2 : !torch.vtensor<[?,12],f32> -> tensor<?x12xf32>
// CHECK:       %[[S0:.+]] = torch_c.to_i64 %arg0
// CHECK-NEXT:  %[[I0:.+]] = arith.index_cast %[[S0]] : i64 to index
// CHECK-NEXT:  %[[S1:.+]] = torch_c.to_i64 %arg1
// CHECK-NEXT:  %[[I1:.+]] = arith.index_cast %[[S1]] : i64 to index
// CHECK-NEXT:  %[[E:.+]] = tensor.expand_shape %[[B]] {{\[}}[0, 1], [2]] output_shape [%[[I0]], %[[I1]], 12] : tensor<?x12xf32> into tensor<?x?x12xf32>
// CHECK-NEXT:  %[[R:.+]] = torch_c.from_builtin_tensor %[[E]] : tensor<?x?x12xf32> -> !torch.vtensor<[?,?,12],f32>
// CHECK-NOT:   torch.aten.unflatten.int
// CHECK:       return %[[R]]
func.func @two_dynamic_sizes(%s0: !torch.int, %s1: !torch.int, %x: !torch.vtensor<[?,12],f32>) -> !torch.vtensor<[?,?,12],f32> {
  %int0 = torch.constant.int 0
  %l = torch.prim.ListConstruct %s0, %s1 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.unflatten.int %x, %int0, %l : !torch.vtensor<[?,12],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,12],f32>
  return %y : !torch.vtensor<[?,?,12],f32>
}

// -----

// A negative dim counts from the end; a dynamic dim outside the group takes the input's size.
// CHECK-LABEL: func.func @negative_dim
// CHECK:       %[[B:.+]] = torch_c.to_builtin_tensor %arg2
// CHECK:       %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:  %[[D0:.+]] = tensor.dim %[[B]], %[[C0]] : tensor<?x?xf32>
// CHECK:       tensor.expand_shape %[[B]] {{\[}}[0], [1, 2]] output_shape [%[[D0]], %{{.+}}, %{{.+}}] : tensor<?x?xf32> into tensor<?x?x?xf32>
func.func @negative_dim(%s0: !torch.int, %s1: !torch.int, %x: !torch.vtensor<[?,?],f32>) -> !torch.vtensor<[?,?,?],f32> {
  %intm1 = torch.constant.int -1
  %l = torch.prim.ListConstruct %s0, %s1 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.unflatten.int %x, %intm1, %l : !torch.vtensor<[?,?],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,?],f32>
  return %y : !torch.vtensor<[?,?,?],f32>
}

// -----

// One dynamic size, or a -1: left to torch-mlir.
// CHECK-LABEL: func.func @left_to_torch_mlir
// CHECK-COUNT-2: torch.aten.unflatten.int
// CHECK-NOT:   tensor.expand_shape
func.func @left_to_torch_mlir(%s0: !torch.int, %x: !torch.vtensor<[?,12],f32>) -> (!torch.vtensor<[?,3,4],f32>, !torch.vtensor<[?,?,12],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %intm1 = torch.constant.int -1
  %l = torch.prim.ListConstruct %int3, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.unflatten.int %x, %int1, %l : !torch.vtensor<[?,12],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,3,4],f32>
  %l2 = torch.prim.ListConstruct %s0, %intm1 : (!torch.int, !torch.int) -> !torch.list<int>
  %z = torch.aten.unflatten.int %x, %int0, %l2 : !torch.vtensor<[?,12],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,12],f32>
  return %y, %z : !torch.vtensor<[?,3,4],f32>, !torch.vtensor<[?,?,12],f32>
}
