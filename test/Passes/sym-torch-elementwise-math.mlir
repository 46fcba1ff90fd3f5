// RUN: symopt %s --split-input-file --sym-torch-elementwise-math | filecheck %s

// erfc (imported as an opaque torch.operator): a generic over the result shape, dynamic dims taken
// from the operand.
// CHECK-LABEL: func.func @erfc
// CHECK-SAME:  (%[[X:.*]]: !torch.vtensor<[?,4],f32>)
// CHECK:       %[[B:.*]] = torch_c.to_builtin_tensor %[[X]] : !torch.vtensor<[?,4],f32> -> tensor<?x4xf32>
// CHECK:       %[[D:.*]] = tensor.dim %[[B]], %c0
// CHECK:       %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?x4xf32>
// CHECK:       %[[G:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<?x4xf32>) outs(%[[E]] : tensor<?x4xf32>)
// CHECK:         math.erfc %{{.*}} : f32
// CHECK:       %[[R:.*]] = torch_c.from_builtin_tensor %[[G]] : tensor<?x4xf32> -> !torch.vtensor<[?,4],f32>
// CHECK-NOT:   torch.operator
// CHECK:       return %[[R]]
func.func @erfc(%x: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32> {
  %0 = torch.operator "torch.aten.erfc"(%x) : (!torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32>
  return %0 : !torch.vtensor<[?,4],f32>
}

// -----

// Half types compute in float32 and round once.
// CHECK-LABEL: func.func @erfc_bf16
// CHECK:       ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:    %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:    %[[E:.*]] = math.erfc %[[W]] : f32
// CHECK-NEXT:    %[[T:.*]] = arith.truncf %[[E]] : f32 to bf16
// CHECK-NEXT:    linalg.yield %[[T]] : bf16
func.func @erfc_bf16(%x: !torch.vtensor<[?],bf16>) -> !torch.vtensor<[?],bf16> {
  %0 = torch.operator "torch.aten.erfc"(%x) : (!torch.vtensor<[?],bf16>) -> !torch.vtensor<[?],bf16>
  return %0 : !torch.vtensor<[?],bf16>
}

// -----

// copysign with broadcasting (a size-1 dim and a lower rank) and an integer operand converted.
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW0:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @copysign_broadcast
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ROW0]], #[[ID]]]
// CHECK:       ^bb0(%[[A:.*]]: f32, %[[B:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:    %[[F:.*]] = arith.sitofp %[[B]] : i64 to f32
// CHECK-NEXT:    math.copysign %[[A]], %[[F]] : f32
func.func @copysign_broadcast(%a: !torch.vtensor<[?,?],f32>, %b: !torch.vtensor<[1,?],si64>) -> !torch.vtensor<[?,?],f32> {
  %0 = torch.aten.copysign.Tensor %a, %b : !torch.vtensor<[?,?],f32>, !torch.vtensor<[1,?],si64> -> !torch.vtensor<[?,?],f32>
  return %0 : !torch.vtensor<[?,?],f32>
}

// -----

// signbit of a float reads the sign bit (negative zero, negative NaN); of an integer, x < 0.
// CHECK-LABEL: func.func @signbit
// CHECK:         %[[I:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:         arith.cmpi slt, %[[I]], %{{.*}} : i32
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : i64
func.func @signbit(%x: !torch.vtensor<[?],f32>, %n: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?],i1>, !torch.vtensor<[?],i1>) {
  %0 = torch.aten.signbit %x : !torch.vtensor<[?],f32> -> !torch.vtensor<[?],i1>
  %1 = torch.aten.signbit %n : !torch.vtensor<[?],si64> -> !torch.vtensor<[?],i1>
  return %0, %1 : !torch.vtensor<[?],i1>, !torch.vtensor<[?],i1>
}

// -----

// hypot of float32 in float64; an infinite operand gives inf.
// CHECK-LABEL: func.func @hypot
// CHECK:         arith.extf %{{.*}} : f32 to f64
// CHECK:         math.sqrt %{{.*}} : f64
// CHECK:         arith.cmpf oeq
// CHECK:         arith.select
// CHECK:         arith.truncf %{{.*}} : f64 to f32
func.func @hypot(%a: !torch.vtensor<[?],f32>, %b: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.hypot"(%a, %b) : (!torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// nextafter steps the bits; view(dtype) is a bitcast.
// CHECK-LABEL: func.func @nextafter_and_view
// CHECK:         arith.bitcast %{{.*}} : f64 to i64
// CHECK:         arith.addi
// CHECK:         arith.subi
// CHECK:         arith.cmpf uno
// CHECK:       linalg.generic
// CHECK:         arith.bitcast %{{.*}} : f64 to i64
// CHECK-NOT:   torch.operator
// CHECK-NOT:   torch.aten.view.dtype
func.func @nextafter_and_view(%a: !torch.vtensor<[?],f64>, %b: !torch.vtensor<[?],f64>) -> (!torch.vtensor<[?],f64>, !torch.vtensor<[?],si64>) {
  %0 = torch.operator "torch.aten.nextafter"(%a, %b) : (!torch.vtensor<[?],f64>, !torch.vtensor<[?],f64>) -> !torch.vtensor<[?],f64>
  %int4 = torch.constant.int 4
  %1 = torch.aten.view.dtype %a, %int4 : !torch.vtensor<[?],f64>, !torch.int -> !torch.vtensor<[?],si64>
  return %0, %1 : !torch.vtensor<[?],f64>, !torch.vtensor<[?],si64>
}

// -----

// Left to torch-mlir: view(dtype) between widths (a different shape) and unsigned signbit.
// CHECK-LABEL: func.func @left_alone
// CHECK:       torch.aten.view.dtype
// CHECK:       torch.aten.signbit
// CHECK-NOT:   linalg.generic
func.func @left_alone(%a: !torch.vtensor<[4],f32>, %u: !torch.vtensor<[4],ui8>) -> (!torch.vtensor<[8],bf16>, !torch.vtensor<[4],i1>) {
  %int15 = torch.constant.int 15
  %0 = torch.aten.view.dtype %a, %int15 : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[8],bf16>
  %1 = torch.aten.signbit %u : !torch.vtensor<[4],ui8> -> !torch.vtensor<[4],i1>
  return %0, %1 : !torch.vtensor<[8],bf16>, !torch.vtensor<[4],i1>
}

// -----

// Scalar operands are read in the body: fmod by a float (C's fmod), | by an int (truncated to the
// element type).
// CHECK-LABEL: func.func @scalars
// CHECK-SAME:  (%[[X:.*]]: !torch.vtensor<[?],f32>, %[[N:.*]]: !torch.vtensor<[?],si32>, %[[S:.*]]: !torch.float)
// CHECK:       %[[SF:.*]] = torch_c.to_f64 %[[S]]
// CHECK:       linalg.generic
// CHECK:       ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[T:.*]] = arith.truncf %[[SF]] : f64 to f32
// CHECK-NEXT:    arith.remf %[[A]], %[[T]] : f32
// CHECK:       %[[I:.*]] = torch_c.to_i64 %{{.*}}
// CHECK:       linalg.generic
// CHECK:       ^bb0(%[[B:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:    %[[J:.*]] = arith.trunci %[[I]] : i64 to i32
// CHECK-NEXT:    arith.ori %[[B]], %[[J]] : i32
func.func @scalars(%x: !torch.vtensor<[?],f32>, %n: !torch.vtensor<[?],si32>, %s: !torch.float) -> (!torch.vtensor<[?],f32>, !torch.vtensor<[?],si32>) {
  %0 = torch.aten.fmod.Scalar %x, %s : !torch.vtensor<[?],f32>, !torch.float -> !torch.vtensor<[?],f32>
  %int8 = torch.constant.int 8
  %1 = torch.operator "torch.aten.bitwise_or.Scalar"(%n, %int8) : (!torch.vtensor<[?],si32>, !torch.int) -> !torch.vtensor<[?],si32>
  return %0, %1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],si32>
}

// -----

// Shifts by tensors of amounts: << gives 0 outside [0, 64), >> shifts by at most 63.
// CHECK-LABEL: func.func @shifts
// CHECK:         %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c64_i64 : i64
// CHECK:         %[[L:.*]] = arith.shli
// CHECK:         arith.select %[[IN]], %[[L]], %{{.*}} : i64
// CHECK:       linalg.generic
// CHECK:         %[[M:.*]] = arith.minui %{{.*}}, %{{.*}} : i64
// CHECK:         arith.shrsi %{{.*}}, %[[M]] : i64
// CHECK-NOT:   torch.operator
func.func @shifts(%a: !torch.vtensor<[?],si64>, %b: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) {
  %0 = torch.operator "torch.aten.__lshift__.Tensor"(%a, %b) : (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],si64>
  %1 = torch.operator "torch.aten.__rshift__.Tensor"(%a, %b) : (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],si64>
  return %0, %1 : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>
}

// -----

// lgamma and digamma in float64 (Lanczos; PyTorch's psi), rounded to the result type.
// CHECK-LABEL: func.func @gamma
// CHECK:         arith.extf %{{.*}} : f32 to f64
// CHECK:         math.sin
// CHECK:         math.log
// CHECK:         arith.truncf %{{.*}} : f64 to f32
// CHECK:       linalg.generic
// CHECK:         math.tan
// CHECK:         math.copysign
// CHECK:         arith.truncf %{{.*}} : f64 to f32
// CHECK-NOT:   torch.operator
func.func @gamma(%x: !torch.vtensor<[?],f32>) -> (!torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>) {
  %0 = torch.operator "torch.aten.lgamma"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  %1 = torch.operator "torch.aten.digamma"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0, %1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>
}

// -----

// gcd and lcm: Euclid's algorithm as an scf.while in the body (unsigned remainders of |a|, |b|);
// integer pow by a tensor: squaring in an scf.while, negative exponents selected after; a float
// pow is left to torch-mlir.
// CHECK-LABEL: func.func @integer_loops
// CHECK:       linalg.generic
// CHECK:         math.absi
// CHECK:         scf.while
// CHECK:           arith.cmpi ne
// CHECK:           scf.condition
// CHECK:         } do {
// CHECK:           arith.remui
// CHECK:           scf.yield
// CHECK:       linalg.generic
// CHECK:         scf.while
// CHECK:         arith.divsi
// CHECK:       linalg.generic
// CHECK:         arith.maxsi
// CHECK:         scf.while
// CHECK:         } do {
// CHECK:           arith.muli
// CHECK:           arith.muli
// CHECK:           arith.shrsi
// CHECK:           scf.yield
// CHECK:         arith.cmpi slt
// CHECK:       torch.aten.pow.Tensor_Tensor %arg2, %arg2 : !torch.vtensor<[?],f32>
// CHECK-NOT:   torch.operator
func.func @integer_loops(%a: !torch.vtensor<[?],si64>, %b: !torch.vtensor<[?],si64>, %x: !torch.vtensor<[?],f32>) -> (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],f32>) {
  %0 = torch.operator "torch.aten.gcd"(%a, %b) : (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],si64>
  %1 = torch.operator "torch.aten.lcm"(%a, %b) : (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],si64>
  %2 = torch.aten.pow.Tensor_Tensor %a, %b : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64> -> !torch.vtensor<[?],si64>
  %3 = torch.aten.pow.Tensor_Tensor %x, %x : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32> -> !torch.vtensor<[?],f32>
  return %0, %1, %2, %3 : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],f32>
}

// -----

// Modified Bessel functions and ndtri (passes/_special_math.py): both Chebyshev branches selected at
// |x| <= 8; i1 takes x's sign; ndtri's tails through float64 log and sqrt, 0 and 1 mapped to -inf /
// inf and values outside [0, 1] to NaN.
// CHECK-LABEL: func.func @special_functions
// CHECK:       linalg.generic
// CHECK:         math.absf
// CHECK:         math.exp
// CHECK:         math.sqrt
// CHECK:         arith.cmpf ole, %{{.*}}, %cst{{.*}} : f32
// CHECK:       linalg.generic
// CHECK-NOT:     math.exp
// CHECK:         arith.cmpf olt
// CHECK:         arith.negf
// CHECK:       linalg.generic
// CHECK:         arith.extf %{{.*}} : f32 to f64
// CHECK:         math.log %{{.*}} : f64
// CHECK:         math.sqrt %{{.*}} : f64
// CHECK:         arith.constant 0x7F800000 : f32
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         arith.constant 0x7FC00000 : f32
// CHECK-NOT:   torch.operator
func.func @special_functions(%x: !torch.vtensor<[?],f32>) -> (!torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>) {
  %0 = torch.operator "torch.aten.i0"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  %1 = torch.operator "torch.aten.special_i1e"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  %2 = torch.operator "torch.aten.special_ndtri"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0, %1, %2 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>
}

// -----

// erfcx: ATen's 100 Chebyshev pieces as an f64 table at the function's entry, the piece int(y100)
// read in the body (7 coefficients), evaluated in float64 as eager's double literals make it.
// CHECK-LABEL: func.func @erfcx
// CHECK:       %[[TAB:.*]] = arith.constant dense<{{.*}}> : tensor<100x7xf64>
// CHECK:       linalg.generic
// CHECK:         arith.fptosi
// CHECK-COUNT-7: tensor.extract %[[TAB]][%{{.*}}, %{{.*}}] : tensor<100x7xf64>
// CHECK:         math.exp
// CHECK:       torch_c.from_builtin_tensor
func.func @erfcx(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_erfcx"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}
