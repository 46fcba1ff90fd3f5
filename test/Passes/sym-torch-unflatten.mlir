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

// A group whose result dims are static (2, 2) from a dim typed dynamic (guarded to 4), and the mirror
// case, a static 6 unflattened into two dynamic dims: the source is cast first, so that each group's
// source dim is static exactly when all its result dims are (expand_shape rejected both).
// CHECK-LABEL: func.func @static_group_of_a_dynamic_dim
// CHECK:       %[[B:.+]] = torch_c.to_builtin_tensor %arg2 : !torch.vtensor<[?,?,?],f32> -> tensor<?x?x?xf32>
// CHECK:       %[[C:.+]] = tensor.cast %[[B]] : tensor<?x?x?xf32> to tensor<?x?x4xf32>
// CHECK:       tensor.expand_shape %[[C]] {{\[}}[0], [1], [2, 3]] output_shape [%{{.+}}, %{{.+}}, 2, 2] : tensor<?x?x4xf32> into tensor<?x?x2x2xf32>
// CHECK-LABEL: func.func @dynamic_group_of_a_static_dim
// CHECK:       %[[B:.+]] = torch_c.to_builtin_tensor %arg2 : !torch.vtensor<[?,6],f32> -> tensor<?x6xf32>
// CHECK:       %[[C:.+]] = tensor.cast %[[B]] : tensor<?x6xf32> to tensor<?x?xf32>
// CHECK:       tensor.expand_shape %[[C]] {{\[}}[0], [1, 2]] output_shape [%{{.+}}, %{{.+}}, %{{.+}}] : tensor<?x?xf32> into tensor<?x?x?xf32>
func.func @static_group_of_a_dynamic_dim(%s0: !torch.int, %s1: !torch.int, %x: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,2,2],f32> {
  %int2 = torch.constant.int 2
  %two = torch.constant.int 2
  %l = torch.prim.ListConstruct %two, %two : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.unflatten.int %x, %int2, %l : !torch.vtensor<[?,?,?],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,2,2],f32>
  return %y : !torch.vtensor<[?,?,2,2],f32>
}
func.func @dynamic_group_of_a_static_dim(%s0: !torch.int, %s1: !torch.int, %x: !torch.vtensor<[?,6],f32>) -> !torch.vtensor<[?,?,?],f32> {
  %int1 = torch.constant.int 1
  %l = torch.prim.ListConstruct %s0, %s1 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.unflatten.int %x, %int1, %l : !torch.vtensor<[?,6],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,?],f32>
  return %y : !torch.vtensor<[?,?,?],f32>
}

// -----

// A result with one dynamic dim, or a -1: left to torch-mlir.
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

// -----

// The heads split beside a dynamic batch and length: constant sizes in the group, the input's dims
// outside it.
// CHECK-LABEL: func.func @heads_split
// CHECK:       %[[B:.+]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,?,256],f32> -> tensor<?x?x256xf32>
// CHECK:       %[[D0:.+]] = tensor.dim %[[B]], %{{.+}} : tensor<?x?x256xf32>
// CHECK:       %[[D1:.+]] = tensor.dim %[[B]], %{{.+}} : tensor<?x?x256xf32>
// CHECK:       tensor.expand_shape %[[B]] {{\[}}[0], [1], [2, 3]] output_shape [%[[D0]], %[[D1]], 4, 64] : tensor<?x?x256xf32> into tensor<?x?x4x64xf32>
// CHECK-NOT:   torch.aten.unflatten.int
func.func @heads_split(%x: !torch.vtensor<[?,?,256],f32>) -> !torch.vtensor<[?,?,4,64],f32> {
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %int64 = torch.constant.int 64
  %l = torch.prim.ListConstruct %int4, %int64 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.unflatten.int %x, %int2, %l : !torch.vtensor<[?,?,256],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,4,64],f32>
  return %y : !torch.vtensor<[?,?,4,64],f32>
}
