// RUN: symopt %s --split-input-file --sym-mask-to-where | filecheck %s
// RUN: symopt %s --split-input-file --sym-mask-to-where='debug=1' 2>&1 >/dev/null | filecheck %s --check-prefix=DEBUG

// x[m] = 0.5: the value is a 0-d tensor of x's dtype. The mask's dims must be the indexed ones (where
// would broadcast a size-1 mask; eager raises IndexError).
// CHECK-LABEL: func.func @index_put_scalar
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[?],f32>, %[[M:[^:]*]]: !torch.vtensor<[?],i1>)
// CHECK: %[[V:.*]] = torch.vtensor.literal
// CHECK-NOT: index_put
// CHECK: %[[N:.*]] = torch.aten.size.int %[[M]], %int0
// CHECK: %[[XN:.*]] = torch.aten.size.int %[[X]], %int0
// CHECK: %[[EQ:.*]] = torch.aten.eq.int %[[N]], %[[XN]]
// CHECK: torch.runtime.assert %[[EQ]], "IndexError: The shape of the mask at index 0 does not match the shape of the indexed tensor at index 0"
// CHECK: %[[R:.*]] = torch.aten.where.self %[[M]], %[[V]], %[[X]] : !torch.vtensor<[?],i1>, !torch.vtensor<[],f32>, !torch.vtensor<[?],f32> -> !torch.vtensor<[?],f32>
// CHECK-NOT: ListConstruct
// CHECK: return %[[R]]
func.func @index_put_scalar(%x: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>) -> !torch.vtensor<[?],f32> {
  %v = torch.vtensor.literal(dense<5.000000e-01> : tensor<f32>) : !torch.vtensor<[],f32>
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %false = torch.constant.bool false
  %r = torch.aten.index_put %x, %l, %v, %false : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[],f32>, !torch.bool -> !torch.vtensor<[?],f32>
  return %r : !torch.vtensor<[?],f32>
}

// -----

// The value has one entry per selected element: no where can express it.
// CHECK-LABEL: func.func @no_rewrite_when_value_is_data_dependent
// CHECK: torch.aten.index_put
// CHECK-NOT: where
// DEBUG: left 'torch.aten.index_put' alone: the value !torch.vtensor<[?],f32> has one entry per selected element
func.func @no_rewrite_when_value_is_data_dependent(%x: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>, %v: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %false = torch.constant.bool false
  %r = torch.aten.index_put %x, %l, %v, %false : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[?],f32>, !torch.bool -> !torch.vtensor<[?],f32>
  return %r : !torch.vtensor<[?],f32>
}

// -----

// A row mask over a [?,4] tensor: the mask is unsqueezed to [?,1], the f64 row converted to f32.
// CHECK-LABEL: func.func @index_put_row_mask_converts_value
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[?,4],f32>, %[[M:[^:]*]]: !torch.vtensor<[?],i1>, %[[V:[^:]*]]: !torch.vtensor<[4],f64>)
// CHECK: %[[C:.*]] = torch.aten.to.dtype %[[V]], %int6, {{.*}} -> !torch.vtensor<[4],f32>
// CHECK: %[[MB:.*]] = torch.aten.unsqueeze %[[M]], %int1 : !torch.vtensor<[?],i1>, !torch.int -> !torch.vtensor<[?,1],i1>
// CHECK: torch.aten.where.self %[[MB]], %[[C]], %[[X]] : !torch.vtensor<[?,1],i1>, !torch.vtensor<[4],f32>, !torch.vtensor<[?,4],f32> -> !torch.vtensor<[?,4],f32>
func.func @index_put_row_mask_converts_value(%x: !torch.vtensor<[?,4],f32>, %m: !torch.vtensor<[?],i1>, %v: !torch.vtensor<[4],f64>) -> !torch.vtensor<[?,4],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %false = torch.constant.bool false
  %r = torch.aten.index_put %x, %l, %v, %false : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[4],f64>, !torch.bool -> !torch.vtensor<[?,4],f32>
  return %r : !torch.vtensor<[?,4],f32>
}

// -----

// x[:, m] += v: the mask lines up with dim 1 by broadcasting; accumulate adds before selecting.
// CHECK-LABEL: func.func @index_put_mask_after_none_accumulate
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[2,?],si64>, %[[M:[^:]*]]: !torch.vtensor<[?],i1>, %[[V:[^:]*]]: !torch.vtensor<[],si64>)
// CHECK: %[[A:.*]] = torch.aten.add.Tensor %[[X]], %[[V]], %int1
// CHECK: torch.aten.where.self %[[M]], %[[A]], %[[X]] : !torch.vtensor<[?],i1>, !torch.vtensor<[2,?],si64>, !torch.vtensor<[2,?],si64> -> !torch.vtensor<[2,?],si64>
func.func @index_put_mask_after_none_accumulate(%x: !torch.vtensor<[2,?],si64>, %m: !torch.vtensor<[?],i1>, %v: !torch.vtensor<[],si64>) -> !torch.vtensor<[2,?],si64> {
  %none = torch.constant.none
  %l = torch.prim.ListConstruct %none, %m : (!torch.none, !torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %true = torch.constant.bool true
  %r = torch.aten.index_put %x, %l, %v, %true : !torch.vtensor<[2,?],si64>, !torch.list<optional<vtensor>>, !torch.vtensor<[],si64>, !torch.bool -> !torch.vtensor<[2,?],si64>
  return %r : !torch.vtensor<[2,?],si64>
}

// -----

// CHECK-LABEL: func.func @no_rewrite_when_index_is_not_boolean
// CHECK: torch.aten.index_put
// DEBUG: left 'torch.aten.index_put' alone: the index is not a boolean tensor
func.func @no_rewrite_when_index_is_not_boolean(%x: !torch.vtensor<[?],f32>, %i: !torch.vtensor<[?],si64>, %v: !torch.vtensor<[],f32>) -> !torch.vtensor<[?],f32> {
  %l = torch.prim.ListConstruct %i : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %false = torch.constant.bool false
  %r = torch.aten.index_put %x, %l, %v, %false : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[],f32>, !torch.bool -> !torch.vtensor<[?],f32>
  return %r : !torch.vtensor<[?],f32>
}

// -----

// x[m] += 1: the value is the selection of x + 1 through the same mask.
// CHECK-LABEL: func.func @index_put_same_mask_selection
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[?],f32>, %[[M:[^:]*]]: !torch.vtensor<[?],i1>)
// CHECK-NOT: index.Tensor
// CHECK: %[[A:.*]] = torch.aten.add.Scalar %[[X]], %int1, %int1 : !torch.vtensor<[?],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
// CHECK: %[[R:.*]] = torch.aten.where.self %[[M]], %[[A]], %[[X]]
// CHECK-NOT: index
// CHECK: return %[[R]]
func.func @index_put_same_mask_selection(%x: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>) -> !torch.vtensor<[?],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %int1 = torch.constant.int 1
  %v = torch.aten.add.Scalar %s, %int1, %int1 : !torch.vtensor<[?],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
  %false = torch.constant.bool false
  %r = torch.aten.index_put %x, %l, %v, %false : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[?],f32>, !torch.bool -> !torch.vtensor<[?],f32>
  return %r : !torch.vtensor<[?],f32>
}

// -----

// CHECK-LABEL: func.func @no_rewrite_when_value_uses_another_mask
// CHECK: torch.aten.index.Tensor
// CHECK: torch.aten.index_put
// DEBUG: left 'torch.aten.index.Tensor' alone: the selection escapes with its data-dependent size: 'torch.aten.index_put' writes it through another index than the selection's mask
func.func @no_rewrite_when_value_uses_another_mask(%x: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>, %n: !torch.vtensor<[?],i1>) -> !torch.vtensor<[?],f32> {
  %ln = torch.prim.ListConstruct %n : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %ln : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %false = torch.constant.bool false
  %r = torch.aten.index_put %x, %l, %s, %false : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[?],f32>, !torch.bool -> !torch.vtensor<[?],f32>
  return %r : !torch.vtensor<[?],f32>
}

// -----

// CHECK-LABEL: func.func @sum_of_selection
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[?],f32>, %[[M:[^:]*]]: !torch.vtensor<[?],i1>)
// CHECK: %[[Z:.*]] = torch.constant.float 0.000000e+00
// CHECK: %[[W:.*]] = torch.aten.where.ScalarOther %[[M]], %[[X]], %[[Z]] : !torch.vtensor<[?],i1>, !torch.vtensor<[?],f32>, !torch.float -> !torch.vtensor<[?],f32>
// CHECK: %[[R:.*]] = torch.aten.sum.dim_IntList %[[W]], {{.*}} -> !torch.vtensor<[],f32>
// CHECK-NOT: index.Tensor
// CHECK: return %[[R]]
func.func @sum_of_selection(%x: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>) -> !torch.vtensor<[],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %dims = torch.prim.ListConstruct  : () -> !torch.list<int>
  %false = torch.constant.bool false
  %none = torch.constant.none
  %r = torch.aten.sum.dim_IntList %s, %dims, %false, %none : !torch.vtensor<[?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[],f32>
  return %r : !torch.vtensor<[],f32>
}

// -----

// CHECK-LABEL: func.func @no_rewrite_when_selection_is_returned
// CHECK: %[[S:.*]] = torch.aten.index.Tensor
// CHECK: torch.aten.sum %[[S]]
// CHECK-NOT: where
// DEBUG: left 'torch.aten.index.Tensor' alone: the selection escapes with its data-dependent size: returned from the function
func.func @no_rewrite_when_selection_is_returned(%x: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>) -> (!torch.vtensor<[],f32>, !torch.vtensor<[?],f32>) {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %none = torch.constant.none
  %r = torch.aten.sum %s, %none : !torch.vtensor<[?],f32>, !torch.none -> !torch.vtensor<[],f32>
  return %r, %s : !torch.vtensor<[],f32>, !torch.vtensor<[?],f32>
}

// -----

// x[m].mean(): sum over the masked tensor divided by the number of selected elements.
// CHECK-LABEL: func.func @mean_of_selection
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[?,?],f32>, %[[M:[^:]*]]: !torch.vtensor<[?,?],i1>)
// CHECK: %[[W:.*]] = torch.aten.where.ScalarOther %[[M]], %[[X]], %{{.*}} -> !torch.vtensor<[?,?],f32>
// CHECK: %[[S:.*]] = torch.aten.sum %[[W]], %{{.*}} -> !torch.vtensor<[],f32>
// CHECK: %[[N:.*]] = torch.aten.sum.dim_IntList %[[M]], {{.*}} : !torch.vtensor<[?,?],i1>, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[],si64>
// CHECK: %[[R:.*]] = torch.aten.div.Tensor %[[S]], %[[N]] : !torch.vtensor<[],f32>, !torch.vtensor<[],si64> -> !torch.vtensor<[],f32>
// CHECK: return %[[R]]
func.func @mean_of_selection(%x: !torch.vtensor<[?,?],f32>, %m: !torch.vtensor<[?,?],i1>) -> !torch.vtensor<[],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?,?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?,?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %none = torch.constant.none
  %r = torch.aten.mean %s, %none : !torch.vtensor<[?],f32>, !torch.none -> !torch.vtensor<[],f32>
  return %r : !torch.vtensor<[],f32>
}

// -----

// amax of a selection: -inf for unselected elements, and eager's error for an empty selection.
// CHECK-LABEL: func.func @amax_of_selection
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[?],f32>, %[[M:[^:]*]]: !torch.vtensor<[?],i1>)
// CHECK: %[[N:.*]] = torch.aten.sum.dim_IntList %[[M]]
// CHECK: %[[NI:.*]] = torch.aten.Int.Tensor %[[N]]
// CHECK: %[[OK:.*]] = torch.aten.gt.int %[[NI]], %{{.*}}
// CHECK: torch.runtime.assert %[[OK]], "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
// CHECK: %[[I:.*]] = torch.constant.float 0xFFF0000000000000
// CHECK: %[[W:.*]] = torch.aten.where.ScalarOther %[[M]], %[[X]], %[[I]]
// CHECK: torch.aten.amax %[[W]], {{.*}} -> !torch.vtensor<[],f32>
func.func @amax_of_selection(%x: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>) -> !torch.vtensor<[],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %dims = torch.prim.ListConstruct  : () -> !torch.list<int>
  %false = torch.constant.bool false
  %r = torch.aten.amax %s, %dims, %false : !torch.vtensor<[?],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[],f32>
  return %r : !torch.vtensor<[],f32>
}

// -----

// Integer identities: the dtype's max for min, 1 for prod (int scalars keep si32 under promotion).
// CHECK-LABEL: func.func @amin_prod_of_integer_selection
// CHECK: torch.runtime.assert %{{.*}}, "min(): Expected reduction dim to be specified
// CHECK: %[[MAX:.*]] = torch.constant.int 2147483647
// CHECK: %[[W:.*]] = torch.aten.where.ScalarOther %{{.*}}, %{{.*}}, %[[MAX]] {{.*}} -> !torch.vtensor<[?],si32>
// CHECK: torch.aten.min %[[W]] : !torch.vtensor<[?],si32> -> !torch.vtensor<[],si32>
// CHECK: %[[W2:.*]] = torch.aten.where.ScalarOther %{{.*}}, %{{.*}}, %int1 {{.*}} -> !torch.vtensor<[?],si32>
// CHECK: torch.aten.prod %[[W2]], %{{.*}} -> !torch.vtensor<[],si64>
func.func @amin_prod_of_integer_selection(%x: !torch.vtensor<[?],si32>, %m: !torch.vtensor<[?],i1>) -> (!torch.vtensor<[],si32>, !torch.vtensor<[],si64>) {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?],si32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],si32>
  %r = torch.aten.min %s : !torch.vtensor<[?],si32> -> !torch.vtensor<[],si32>
  %none = torch.constant.none
  %p = torch.aten.prod %s, %none : !torch.vtensor<[?],si32>, !torch.none -> !torch.vtensor<[],si64>
  return %r, %p : !torch.vtensor<[],si32>, !torch.vtensor<[],si64>
}

// -----

// Rows selected by a mask over dim 0, summed over the selected dim: one sum per column.
// CHECK-LABEL: func.func @sum_over_selected_dim
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[?,4],f32>, %[[M:[^:]*]]: !torch.vtensor<[?],i1>)
// CHECK: %[[MB:.*]] = torch.aten.unsqueeze %[[M]], %int1 {{.*}} -> !torch.vtensor<[?,1],i1>
// CHECK: %[[W:.*]] = torch.aten.where.ScalarOther %[[MB]], %[[X]], {{.*}} -> !torch.vtensor<[?,4],f32>
// CHECK: %[[D:.*]] = torch.prim.ListConstruct %int0
// CHECK: torch.aten.sum.dim_IntList %[[W]], %[[D]], %false, %none {{.*}} -> !torch.vtensor<[4],f32>
func.func @sum_over_selected_dim(%x: !torch.vtensor<[?,4],f32>, %m: !torch.vtensor<[?],i1>) -> !torch.vtensor<[4],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,4],f32>
  %int0 = torch.constant.int 0
  %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %none = torch.constant.none
  %r = torch.aten.sum.dim_IntList %s, %dims, %false, %none : !torch.vtensor<[?,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4],f32>
  return %r : !torch.vtensor<[4],f32>
}

// -----

// CHECK-LABEL: func.func @no_rewrite_when_reduction_keeps_selected_dim
// CHECK: torch.aten.index.Tensor
// DEBUG: left 'torch.aten.index.Tensor' alone: the selection escapes with its data-dependent size: 'torch.aten.sum.dim_IntList' keeps the selected dimension 0
func.func @no_rewrite_when_reduction_keeps_selected_dim(%x: !torch.vtensor<[?,4],f32>, %m: !torch.vtensor<[?],i1>) -> !torch.vtensor<[?],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,4],f32>
  %int1 = torch.constant.int 1
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %none = torch.constant.none
  %r = torch.aten.sum.dim_IntList %s, %dims, %false, %none : !torch.vtensor<[?,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
  return %r : !torch.vtensor<[?],f32>
}

// -----

// A two-dim mask, keepdim: the full tensor's reduction keeps one dim too many, squeezed away.
// CHECK-LABEL: func.func @sum_keepdim_two_dim_mask
// CHECK: %[[MB:.*]] = torch.aten.unsqueeze %{{.*}}, %int2 {{.*}} -> !torch.vtensor<[?,?,1],i1>
// CHECK: %[[W:.*]] = torch.aten.where.ScalarOther %[[MB]]
// CHECK: %[[D:.*]] = torch.prim.ListConstruct %{{.*}}, %{{.*}} : (!torch.int, !torch.int)
// CHECK: %[[S:.*]] = torch.aten.sum.dim_IntList %[[W]], %[[D]], %true, %none {{.*}} -> !torch.vtensor<[1,1,8],f32>
// CHECK: torch.aten.squeeze.dim %[[S]], %{{.*}} : !torch.vtensor<[1,1,8],f32>, !torch.int -> !torch.vtensor<[1,8],f32>
func.func @sum_keepdim_two_dim_mask(%x: !torch.vtensor<[?,?,8],f32>, %m: !torch.vtensor<[?,?],i1>) -> !torch.vtensor<[1,8],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?,?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?,?,8],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,8],f32>
  %int0 = torch.constant.int 0
  %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %none = torch.constant.none
  %r = torch.aten.sum.dim_IntList %s, %dims, %true, %none : !torch.vtensor<[?,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,8],f32>
  return %r : !torch.vtensor<[1,8],f32>
}

// -----

// Masked MSE: (a[m] - b[m])**2 .mean(): the elementwise chain runs on the full tensors.
// CHECK-LABEL: func.func @mean_of_elementwise_chain
// CHECK-SAME: (%[[A:[^:]*]]: !torch.vtensor<[?],f32>, %[[B:[^:]*]]: !torch.vtensor<[?],f32>, %[[M:[^:]*]]: !torch.vtensor<[?],i1>)
// CHECK-NOT: index.Tensor
// CHECK: %[[D:.*]] = torch.aten.sub.Tensor %[[A]], %[[B]], %int1 : {{.*}} -> !torch.vtensor<[?],f32>
// CHECK: %[[P:.*]] = torch.aten.pow.Tensor_Scalar %[[D]], %int2
// CHECK: %[[W:.*]] = torch.aten.where.ScalarOther %[[M]], %[[P]]
// CHECK: %[[S:.*]] = torch.aten.sum %[[W]]
// CHECK: %[[N:.*]] = torch.aten.sum.dim_IntList %[[M]]
// CHECK: torch.aten.div.Tensor %[[S]], %[[N]]
// CHECK-NOT: index.Tensor
func.func @mean_of_elementwise_chain(%a: !torch.vtensor<[?],f32>, %b: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>) -> !torch.vtensor<[],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %sa = torch.aten.index.Tensor %a, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %sb = torch.aten.index.Tensor %b, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %int1 = torch.constant.int 1
  %d = torch.aten.sub.Tensor %sa, %sb, %int1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.int -> !torch.vtensor<[?],f32>
  %int2 = torch.constant.int 2
  %p = torch.aten.pow.Tensor_Scalar %d, %int2 : !torch.vtensor<[?],f32>, !torch.int -> !torch.vtensor<[?],f32>
  %none = torch.constant.none
  %r = torch.aten.mean %p, %none : !torch.vtensor<[?],f32>, !torch.none -> !torch.vtensor<[],f32>
  return %r : !torch.vtensor<[],f32>
}

// -----

// CHECK-LABEL: func.func @no_rewrite_when_selection_feeds_a_scan
// CHECK: torch.aten.index.Tensor
// CHECK: torch.aten.cumsum
// DEBUG: left 'torch.aten.index.Tensor' alone: the selection escapes with its data-dependent size: used by 'torch.aten.cumsum'
func.func @no_rewrite_when_selection_feeds_a_scan(%x: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>) -> !torch.vtensor<[],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %int0 = torch.constant.int 0
  %none = torch.constant.none
  %c = torch.aten.cumsum %s, %int0, %none : !torch.vtensor<[?],f32>, !torch.int, !torch.none -> !torch.vtensor<[?],f32>
  %r = torch.aten.sum %c, %none : !torch.vtensor<[?],f32>, !torch.none -> !torch.vtensor<[],f32>
  return %r : !torch.vtensor<[],f32>
}

// -----

// x[m].sum() / x[m].numel() and the deferred assert on the selection's size: counts of the mask.
// CHECK-LABEL: func.func @size_of_selection
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[?],f32>, %[[M:[^:]*]]: !torch.vtensor<[?],i1>)
// CHECK: %[[C:.*]] = torch.aten.sum.dim_IntList %[[M]], {{.*}} -> !torch.vtensor<[],si64>
// CHECK: %[[N:.*]] = torch.aten.Int.Tensor %[[C]]
// CHECK: torch.aten.ge.int %[[N]], %int1
// CHECK: torch.aten._assert_scalar
// CHECK: %[[W:.*]] = torch.aten.where.ScalarOther %[[M]], %[[X]]
// CHECK: %[[S:.*]] = torch.aten.sum %[[W]]
// CHECK: torch.aten.div.Scalar %[[S]], %[[N]]
// CHECK-NOT: index.Tensor
func.func @size_of_selection(%x: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>) -> !torch.vtensor<[],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %int0 = torch.constant.int 0
  %n = torch.aten.size.int %s, %int0 : !torch.vtensor<[?],f32>, !torch.int -> !torch.int
  %int1 = torch.constant.int 1
  %ge = torch.aten.ge.int %n, %int1 : !torch.int, !torch.int -> !torch.bool
  %gi = torch.aten.Int.bool %ge : !torch.bool -> !torch.int
  %msg = torch.constant.str "Runtime assertion failed for expression u0 >= 1"
  torch.aten._assert_scalar %gi, %msg : !torch.int, !torch.str
  %none = torch.constant.none
  %t = torch.aten.sum %s, %none : !torch.vtensor<[?],f32>, !torch.none -> !torch.vtensor<[],f32>
  %r = torch.aten.div.Scalar %t, %n : !torch.vtensor<[],f32>, !torch.int -> !torch.vtensor<[],f32>
  return %r : !torch.vtensor<[],f32>
}

// -----

// CHECK-LABEL: func.func @masked_select_sum
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[?,?],f32>, %[[M:[^:]*]]: !torch.vtensor<[?,?],i1>)
// CHECK-NOT: masked_select
// CHECK: %[[W:.*]] = torch.aten.where.ScalarOther %[[M]], %[[X]], {{.*}} -> !torch.vtensor<[?,?],f32>
// CHECK: torch.aten.sum %[[W]]
func.func @masked_select_sum(%x: !torch.vtensor<[?,?],f32>, %m: !torch.vtensor<[?,?],i1>) -> !torch.vtensor<[],f32> {
  %s = torch.aten.masked_select %x, %m : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],i1> -> !torch.vtensor<[?],f32>
  %none = torch.constant.none
  %r = torch.aten.sum %s, %none : !torch.vtensor<[?],f32>, !torch.none -> !torch.vtensor<[],f32>
  return %r : !torch.vtensor<[],f32>
}

// -----

// masked_scatter: source element cumsum(mask)-1 goes to each selected position.
// CHECK-LABEL: func.func @masked_scatter
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[?,4],f32>, %[[M:[^:]*]]: !torch.vtensor<[?,1],i1>, %[[S:[^:]*]]: !torch.vtensor<[?],f32>)
// CHECK: %[[MB:.*]] = torch.aten.expand_as %[[M]], %[[X]] {{.*}} -> !torch.vtensor<[?,4],i1>
// CHECK: %[[FM:.*]] = torch.aten.flatten.using_ints %[[MB]]
// CHECK: %[[POS:.*]] = torch.aten.cumsum %[[FM]], %{{.*}}, %int4 {{.*}} -> !torch.vtensor<[?],si64>
// CHECK: torch.runtime.assert %{{.*}}, "Number of elements of source < number of ones in mask"
// CHECK: %[[PAD:.*]] = torch.aten.cat
// CHECK: %[[IDX:.*]] = torch.aten.clamp
// CHECK: %[[G:.*]] = torch.aten.index_select %[[PAD]], %{{.*}}, %[[IDX]]
// CHECK: %[[U:.*]] = torch.aten.unflatten.int %[[G]], {{.*}} -> !torch.vtensor<[?,4],f32>
// CHECK: torch.aten.where.self %[[MB]], %[[U]], %[[X]] {{.*}} -> !torch.vtensor<[?,4],f32>
// CHECK-NOT: masked_scatter
func.func @masked_scatter(%x: !torch.vtensor<[?,4],f32>, %m: !torch.vtensor<[?,1],i1>, %src: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?,4],f32> {
  %r = torch.aten.masked_scatter %x, %m, %src : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,1],i1>, !torch.vtensor<[?],f32> -> !torch.vtensor<[?,4],f32>
  return %r : !torch.vtensor<[?,4],f32>
}

// -----

// CHECK-LABEL: func.func @no_rewrite_when_masked_scatter_dtypes_differ
// CHECK: torch.aten.masked_scatter
// DEBUG: left 'torch.aten.masked_scatter' alone: source and self have different dtypes
func.func @no_rewrite_when_masked_scatter_dtypes_differ(%x: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>, %src: !torch.vtensor<[?],f64>) -> !torch.vtensor<[?],f32> {
  %r = torch.aten.masked_scatter %x, %m, %src : !torch.vtensor<[?],f32>, !torch.vtensor<[?],i1>, !torch.vtensor<[?],f64> -> !torch.vtensor<[?],f32>
  return %r : !torch.vtensor<[?],f32>
}

// -----

// A floating-point index always raises in eager: the compiled code raises the same IndexError.
// CHECK-LABEL: func.func @index_put_float_index_raises
// CHECK-SAME: (%[[X:[^:]*]]: !torch.vtensor<[?],f32>
// CHECK: %[[F:.*]] = torch.constant.bool false
// CHECK: torch.runtime.assert %[[F]], "IndexError: tensors used as indices must be long, int, byte or bool tensors"
// CHECK-NOT: index_put
// CHECK: return %[[X]]
func.func @index_put_float_index_raises(%x: !torch.vtensor<[?],f32>, %i: !torch.vtensor<[?],f32>, %v: !torch.vtensor<[],f32>) -> !torch.vtensor<[?],f32> {
  %l = torch.prim.ListConstruct %i : (!torch.vtensor<[?],f32>) -> !torch.list<optional<vtensor>>
  %false = torch.constant.bool false
  %r = torch.aten.index_put %x, %l, %v, %false : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[],f32>, !torch.bool -> !torch.vtensor<[?],f32>
  return %r : !torch.vtensor<[?],f32>
}

// -----

// Boolean selections (x[m] > 0).sum(): the identity is a 0-d boolean tensor (no bool scalar in
// where.ScalarOther, and an int one would promote to si64). amax over an explicit dim fails like
// eager: IndexError.
// CHECK-LABEL: func.func @bool_selection_and_explicit_dim_amax
// CHECK: torch.runtime.assert %{{.*}}, "IndexError: amax(): Expected reduction dim 0 to have non-zero size."
// CHECK: %[[GT:.*]] = torch.aten.gt.Scalar
// CHECK: %[[F:.*]] = torch.vtensor.literal(dense<false> : tensor<i1>) : !torch.vtensor<[],i1>
// CHECK: %[[W:.*]] = torch.aten.where.self %{{.*}}, %[[GT]], %[[F]] : {{.*}} -> !torch.vtensor<[?,3],i1>
// CHECK: torch.aten.sum %[[W]], %{{.*}} : !torch.vtensor<[?,3],i1>, !torch.none -> !torch.vtensor<[],si64>
// CHECK: torch.aten.amax %{{.*}} -> !torch.vtensor<[3],f32>
func.func @bool_selection_and_explicit_dim_amax(%x: !torch.vtensor<[?,3],f32>, %m: !torch.vtensor<[?],i1>) -> (!torch.vtensor<[],si64>, !torch.vtensor<[3],f32>) {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?,3],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,3],f32>
  %int0 = torch.constant.int 0
  %gt = torch.aten.gt.Scalar %s, %int0 : !torch.vtensor<[?,3],f32>, !torch.int -> !torch.vtensor<[?,3],i1>
  %none = torch.constant.none
  %c = torch.aten.sum %gt, %none : !torch.vtensor<[?,3],i1>, !torch.none -> !torch.vtensor<[],si64>
  %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %a = torch.aten.amax %s, %dims, %false : !torch.vtensor<[?,3],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[3],f32>
  return %c, %a : !torch.vtensor<[],si64>, !torch.vtensor<[3],f32>
}
