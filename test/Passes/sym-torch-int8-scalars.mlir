// RUN: symopt %s --split-input-file --sym-torch-int8-scalars | filecheck %s

// int8 * int: the scalar as a 0-d int8 tensor (NumToTensor, then a conversion), and mul.Tensor.
// CHECK-LABEL: func.func @mul_int8
// CHECK:       %[[T:.+]] = torch.prim.NumToTensor.Scalar %arg1 : !torch.int -> !torch.vtensor<[],si64>
// CHECK-NEXT:  %[[CODE:.+]] = torch.constant.int 1
// CHECK-NEXT:  %[[F:.+]] = torch.constant.bool false
// CHECK-NEXT:  %[[N:.+]] = torch.constant.none
// CHECK-NEXT:  %[[T8:.+]] = torch.aten.to.dtype %[[T]], %[[CODE]], %[[F]], %[[F]], %[[N]] : !torch.vtensor<[],si64>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[],si8>
// CHECK-NEXT:  %[[Y:.+]] = torch.aten.mul.Tensor %arg0, %[[T8]] : !torch.vtensor<[?,?],si8>, !torch.vtensor<[],si8> -> !torch.vtensor<[?,?],si8>
// CHECK-NOT:   torch.aten.mul.Scalar
// CHECK:       return %[[Y]]
func.func @mul_int8(%x: !torch.vtensor<[?,?],si8>, %s: !torch.int) -> !torch.vtensor<[?,?],si8> {
  %y = torch.aten.mul.Scalar %x, %s : !torch.vtensor<[?,?],si8>, !torch.int -> !torch.vtensor<[?,?],si8>
  return %y : !torch.vtensor<[?,?],si8>
}

// -----

// uint8 - int keeps its alpha; rsub (s - alpha * x) swaps the operands of sub.Tensor.
// CHECK-LABEL: func.func @sub_rsub_uint8
// CHECK:       torch.constant.int 0
// CHECK:       %[[T8:.+]] = torch.aten.to.dtype {{.+}} -> !torch.vtensor<[],ui8>
// CHECK:       %[[A:.+]] = torch.aten.sub.Tensor %arg0, %[[T8]], %arg1 : !torch.vtensor<[?],ui8>, !torch.vtensor<[],ui8>, !torch.int -> !torch.vtensor<[?],ui8>
// CHECK:       %[[U8:.+]] = torch.aten.to.dtype {{.+}} -> !torch.vtensor<[],ui8>
// CHECK:       %[[B:.+]] = torch.aten.sub.Tensor %[[U8]], %[[A]], %arg1 : !torch.vtensor<[],ui8>, !torch.vtensor<[?],ui8>, !torch.int -> !torch.vtensor<[?],ui8>
// CHECK-NOT:   torch.aten.sub.Scalar
// CHECK-NOT:   torch.aten.rsub.Scalar
// CHECK:       return %[[B]]
func.func @sub_rsub_uint8(%x: !torch.vtensor<[?],ui8>, %alpha: !torch.int) -> !torch.vtensor<[?],ui8> {
  %int200 = torch.constant.int 200
  %int250 = torch.constant.int 250
  %a = torch.aten.sub.Scalar %x, %int200, %alpha : !torch.vtensor<[?],ui8>, !torch.int, !torch.int -> !torch.vtensor<[?],ui8>
  %b = torch.aten.rsub.Scalar %a, %int250, %alpha : !torch.vtensor<[?],ui8>, !torch.int, !torch.int -> !torch.vtensor<[?],ui8>
  return %b : !torch.vtensor<[?],ui8>
}

// -----

// Left alone: 16-bit integers, float scalars, and an int8 tensor whose result is another dtype.
// CHECK-LABEL: func.func @untouched
// CHECK:       torch.aten.mul.Scalar %arg0, %arg2 : !torch.vtensor<[?],si16>
// CHECK:       torch.aten.mul.Scalar %arg1, %{{.+}} : !torch.vtensor<[?],si8>, !torch.float -> !torch.vtensor<[?],f32>
// CHECK-NOT:   torch.aten.to.dtype
func.func @untouched(%x: !torch.vtensor<[?],si16>, %y: !torch.vtensor<[?],si8>, %s: !torch.int) -> (!torch.vtensor<[?],si16>, !torch.vtensor<[?],f32>) {
  %f = torch.constant.float 2.5
  %a = torch.aten.mul.Scalar %x, %s : !torch.vtensor<[?],si16>, !torch.int -> !torch.vtensor<[?],si16>
  %b = torch.aten.mul.Scalar %y, %f : !torch.vtensor<[?],si8>, !torch.float -> !torch.vtensor<[?],f32>
  return %a, %b : !torch.vtensor<[?],si16>, !torch.vtensor<[?],f32>
}

// -----

// The divisions run on int32 copies of both operands (torch-mlir cannot divide int8 tensors), the
// scalar wrapped to int8 first (x // 300 is x // 44 as in eager); the result is truncated back.
// CHECK-LABEL: func.func @divisions
// CHECK:       %[[T:.+]] = torch.aten.to.dtype {{.+}} -> !torch.vtensor<[],si8>
// CHECK:       %[[XW:.+]] = torch.aten.to.dtype %arg0, {{.+}} -> !torch.vtensor<[?],si32>
// CHECK:       %[[TW:.+]] = torch.aten.to.dtype %[[T]], {{.+}} -> !torch.vtensor<[],si32>
// CHECK:       %[[AW:.+]] = torch.aten.floor_divide %[[XW]], %[[TW]] : !torch.vtensor<[?],si32>, !torch.vtensor<[],si32> -> !torch.vtensor<[?],si32>
// CHECK:       %[[A:.+]] = torch.aten.to.dtype %[[AW]], {{.+}} -> !torch.vtensor<[?],si8>
// CHECK:       torch.aten.remainder.Tensor {{.+}} -> !torch.vtensor<[?],si32>
// CHECK:       %[[CW:.+]] = torch.aten.div.Tensor_mode {{.+}}, %{{.+}} : !torch.vtensor<[?],si32>, !torch.vtensor<[],si32>, !torch.str -> !torch.vtensor<[?],si32>
// CHECK:       %[[C:.+]] = torch.aten.to.dtype %[[CW]], {{.+}} -> !torch.vtensor<[?],si8>
// CHECK-NOT:   .Scalar
// CHECK:       return %[[C]]
func.func @divisions(%x: !torch.vtensor<[?],si8>, %s: !torch.int) -> !torch.vtensor<[?],si8> {
  %int300 = torch.constant.int 300
  %str = torch.constant.str "trunc"
  %a = torch.aten.floor_divide.Scalar %x, %int300 : !torch.vtensor<[?],si8>, !torch.int -> !torch.vtensor<[?],si8>
  %b = torch.aten.remainder.Scalar %a, %s : !torch.vtensor<[?],si8>, !torch.int -> !torch.vtensor<[?],si8>
  %c = torch.aten.div.Scalar_mode %b, %s, %str : !torch.vtensor<[?],si8>, !torch.int, !torch.str -> !torch.vtensor<[?],si8>
  return %c : !torch.vtensor<[?],si8>
}
