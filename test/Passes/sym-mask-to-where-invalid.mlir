// RUN: not symopt %s --split-input-file --sym-mask-to-where='strict=1' 2>&1 | filecheck %s

// strict=1 (the compile pipeline): a selection whose data-dependent size stays in the compute is an
// error at its location, naming the op and why it could not become a where.
func.func @selection_feeds_a_scan(%x: !torch.vtensor<[?],f32>, %m: !torch.vtensor<[?],i1>) -> !torch.vtensor<[],f32> {
  %l = torch.prim.ListConstruct %m : (!torch.vtensor<[?],i1>) -> !torch.list<optional<vtensor>>
  // CHECK: sym-mask-to-where-invalid.mlir:[[# @LINE + 1]]:8: error: 'torch.aten.index.Tensor' has a result of data-dependent size (used by 'torch.aten.cumsum', which is neither elementwise nor a reduction over the selected dim (at {{.*}})); mlir_sym compiles only code whose sizes follow from input sizes
  %s = torch.aten.index.Tensor %x, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %int0 = torch.constant.int 0
  %none = torch.constant.none
  %c = torch.aten.cumsum %s, %int0, %none : !torch.vtensor<[?],f32>, !torch.int, !torch.none -> !torch.vtensor<[?],f32>
  %r = torch.aten.sum %c, %none : !torch.vtensor<[?],f32>, !torch.none -> !torch.vtensor<[],f32>
  return %r : !torch.vtensor<[],f32>
}

// -----

func.func @nonzero_escapes(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?,1],si64> {
  // CHECK: sym-mask-to-where-invalid.mlir:[[# @LINE + 1]]:8: error: 'torch.aten.nonzero' has a result of data-dependent size
  %n = torch.aten.nonzero %x : !torch.vtensor<[?],f32> -> !torch.vtensor<[?,1],si64>
  return %n : !torch.vtensor<[?,1],si64>
}
