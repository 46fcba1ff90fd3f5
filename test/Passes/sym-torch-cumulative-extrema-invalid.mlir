// RUN: symopt %s --split-input-file --sym-torch-cumulative-extrema --verify-diagnostics

func.func @dim_not_constant(%x: !torch.vtensor<[?,?],f32>, %d: !torch.int) -> (!torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>) {
  // expected-error @+1 {{cummax: the dim is not a constant}}
  %0:2 = torch.operator "torch.aten.cummax"(%x, %d) : (!torch.vtensor<[?,?],f32>, !torch.int) -> (!torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>)
  return %0#0, %0#1 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>
}

// -----

func.func @dim_out_of_range(%x: !torch.vtensor<[?,?],f32>) -> (!torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>) {
  %int = torch.constant.int 2
  // expected-error @+1 {{cummin: dim 2 out of range for rank 2}}
  %0:2 = torch.operator "torch.aten.cummin"(%x, %int) : (!torch.vtensor<[?,?],f32>, !torch.int) -> (!torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>)
  return %0#0, %0#1 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],si64>
}

// -----

func.func @bool(%x: !torch.vtensor<[?],i1>) -> (!torch.vtensor<[?],i1>, !torch.vtensor<[?],si64>) {
  %int = torch.constant.int 0
  // expected-error @+1 {{cummax of a bool tensor is not supported}}
  %0:2 = torch.operator "torch.aten.cummax"(%x, %int) : (!torch.vtensor<[?],i1>, !torch.int) -> (!torch.vtensor<[?],i1>, !torch.vtensor<[?],si64>)
  return %0#0, %0#1 : !torch.vtensor<[?],i1>, !torch.vtensor<[?],si64>
}
