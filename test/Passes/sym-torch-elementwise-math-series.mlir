// RUN: symopt %s --sym-torch-elementwise-math --split-input-file | filecheck %s

// Chebyshev's T (an opaque torch.operator): n converted to an integer (NaN and values past int64 give
// INT64_MIN, as x86's conversion), the trigonometric form cos(n acos x), and the recurrence
// r = 2x q - p as an scf.while (as eager's contracted build: an FMA) that runs only where it is used,
// up to n and while q is not NaN.
// CHECK-LABEL: func.func @chebyshev_t
// CHECK:       linalg.generic
// CHECK:       ^bb0(%[[X:.*]]: f32, %[[N:.*]]: f32, %{{.*}}: f32):
// CHECK:         %[[FITS:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK:         %[[I:.*]] = arith.fptosi %{{.*}} : f32 to i64
// CHECK:         %[[K:.*]] = arith.select %[[FITS]], %[[I]], %c-9223372036854775808_i64 : i64
// CHECK:         %[[TWO_X:.*]] = arith.addf %[[X]], %[[X]] : f32
// CHECK:         %[[THETA:.*]] = math.acos %[[X]] : f32
// CHECK:         %[[NF:.*]] = arith.sitofp %[[K]] : i64 to f32
// CHECK:         %[[NT:.*]] = arith.mulf %[[NF]], %[[THETA]] : f32
// CHECK:         %[[COS:.*]] = math.cos %[[NT]] : f32
// CHECK:         %[[BOUND:.*]] = arith.select %{{.*}}, %c1_i64{{.*}}, %[[K]] : i64
// CHECK:         %[[LOOP:.*]]:3 = scf.while (%{{.*}} = %c2_i64, %{{.*}} = %cst{{.*}}, %{{.*}} = %[[X]]) : (i64, f32, f32) -> (i64, f32, f32) {
// CHECK:           arith.cmpi sle, %{{.*}}, %[[BOUND]] : i64
// CHECK:           arith.cmpf ord
// CHECK:         } do {
// CHECK:           %[[NEG:.*]] = arith.negf
// CHECK:           math.fma %[[TWO_X]], %{{.*}}, %[[NEG]] : f32
// CHECK:         }
// CHECK:         arith.select %{{.*}}, %[[COS]], %{{.*}} : f32
// CHECK:         linalg.yield
// CHECK-NOT:   torch.operator
func.func @chebyshev_t(%x: !torch.vtensor<[?,4],f32>, %n: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32> {
  %0 = torch.operator "torch.aten.special_chebyshev_polynomial_t"(%x, %n) : (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32>
  return %0 : !torch.vtensor<[?,4],f32>
}

// -----

// A scalar x (`.x_scalar`) and an int64 n: x rounded to the result's type, n through it (eager's common
// dtype); the shifted W's trigonometric form sin((n + 1/2) t) / sin(t/2), t = acos(2x - 1).
// CHECK-LABEL: func.func @shifted_chebyshev_w_x_scalar
// CHECK:       %[[S:.*]] = torch_c.to_f64
// CHECK:       linalg.generic
// CHECK:       ^bb0(%[[N:.*]]: i64, %{{.*}}: f32):
// CHECK:         %[[X:.*]] = arith.truncf %[[S]] : f64 to f32
// CHECK:         arith.sitofp %[[N]] : i64 to f32
// CHECK:         arith.fptosi
// CHECK:         %[[Y2:.*]] = arith.addf %[[X]], %[[X]] : f32
// CHECK:         %[[Y:.*]] = arith.subf %[[Y2]], %{{.*}} : f32
// CHECK:         %[[T:.*]] = math.acos %[[Y]] : f32
// CHECK:         math.sin
// CHECK:         math.sin
// CHECK:         scf.while
// CHECK:         linalg.yield
// CHECK:       -> !torch.vtensor<[?],f32>
func.func @shifted_chebyshev_w_x_scalar(%n: !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],f32> {
  %float = torch.constant.float 7.500000e-01
  %0 = torch.operator "torch.aten.special_shifted_chebyshev_polynomial_w.x_scalar"(%float, %n) : (!torch.float, !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// Hermite's H with a scalar n (`.n_scalar`): r = 2x q - k p for k = 2, 4, .. < 2n; NaN past n = 128 (float).
// CHECK-LABEL: func.func @hermite_h_n_scalar
// CHECK:       linalg.generic
// CHECK:         arith.truncf %{{.*}} : f64 to f32
// CHECK:         arith.fptosi
// CHECK:         %[[TWO_X:.*]] = arith.addf
// CHECK:         arith.cmpi sle, %{{.*}}, %c128_i64 : i64
// CHECK:         scf.while
// CHECK:         } do {
// CHECK:           arith.addi %{{.*}}, %c2_i64{{.*}} : i64
// CHECK:           %[[KF:.*]] = arith.sitofp
// CHECK:           %[[KP:.*]] = arith.mulf %[[KF]]
// CHECK:           %[[NEG:.*]] = arith.negf %[[KP]]
// CHECK:           math.fma %[[TWO_X]], %{{.*}}, %[[NEG]] : f32
// CHECK:         arith.cmpi sgt, %{{.*}}, %c128_i64{{.*}} : i64
// CHECK:         arith.constant 0x7FC00000 : f32
func.func @hermite_h_n_scalar(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %float = torch.constant.float 3.700000e+00
  %0 = torch.operator "torch.aten.special_hermite_polynomial_h.n_scalar"(%x, %float) : (!torch.vtensor<[?],f32>, !torch.float) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// Laguerre (r = ((2k + 1 - x) q - k p) / (k + 1)) and Legendre (r = ((2k + 1) x q - k p) / (k + 1)) in
// float64, n an integer scalar.
// CHECK-LABEL: func.func @laguerre_legendre
// CHECK:       linalg.generic
// CHECK:         scf.while
// CHECK:           math.fma %{{.*}} : f64
// CHECK:           arith.divf %{{.*}} : f64
// CHECK:       linalg.generic
// CHECK:         scf.while
// CHECK:           math.fma %{{.*}} : f64
// CHECK:           arith.divf %{{.*}} : f64
// CHECK-NOT:   torch.operator
func.func @laguerre_legendre(%x: !torch.vtensor<[?],f64>) -> (!torch.vtensor<[?],f64>, !torch.vtensor<[?],f64>) {
  %int5 = torch.constant.int 5
  %0 = torch.operator "torch.aten.special_laguerre_polynomial_l.n_scalar"(%x, %int5) : (!torch.vtensor<[?],f64>, !torch.int) -> !torch.vtensor<[?],f64>
  %1 = torch.operator "torch.aten.special_legendre_polynomial_p.n_scalar"(%x, %int5) : (!torch.vtensor<[?],f64>, !torch.int) -> !torch.vtensor<[?],f64>
  return %0, %1 : !torch.vtensor<[?],f64>, !torch.vtensor<[?],f64>
}

// -----

// Hurwitz zeta of float32 in double (eager's acc_type), its first term q^-x in float32: the sum as an
// scf.while, the Euler-Maclaurin tail unrolled, the result rounded once.
// CHECK-LABEL: func.func @zeta
// CHECK:       linalg.generic
// CHECK:       ^bb0(%[[X:.*]]: f32, %[[Q:.*]]: f32, %{{.*}}: f32):
// CHECK:         %[[XD:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK:         %[[QD:.*]] = arith.extf %[[Q]] : f32 to f64
// CHECK:         %[[NX:.*]] = arith.negf %[[X]] : f32
// CHECK:         %[[P:.*]] = math.powf %[[Q]], %[[NX]] : f32
// CHECK:         %[[S0:.*]] = arith.extf %[[P]] : f32 to f64
// CHECK:         scf.while (%{{.*}} = %c0_i32, %{{.*}} = %[[QD]], %{{.*}} = %{{.*}}, %{{.*}} = %[[S0]], %{{.*}} = %{{.*}}) : (i32, f64, f64, f64, i1)
// CHECK:           math.powf %{{.*}} : f64
// CHECK:         arith.constant 1.200000e+01 : f64
// CHECK:         arith.constant -7.1661652561756672E+18 : f64
// CHECK:         %[[R:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT:    linalg.yield %[[R]] : f32
func.func @zeta(%x: !torch.vtensor<[?],f32>, %q: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_zeta"(%x, %q) : (!torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// zeta(x, 2.5) (`.other_scalar`): the scalar rounded to the result's type before widening.
// CHECK-LABEL: func.func @zeta_other_scalar
// CHECK:       %[[S:.*]] = torch_c.to_f64
// CHECK:       linalg.generic
// CHECK:         %[[Q:.*]] = arith.truncf %[[S]] : f64 to f32
// CHECK:         arith.extf %[[Q]] : f32 to f64
// CHECK:         scf.while
func.func @zeta_other_scalar(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %float = torch.constant.float 2.500000e+00
  %0 = torch.operator "torch.aten.special_zeta.other_scalar"(%x, %float) : (!torch.vtensor<[?],f32>, !torch.float) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// polygamma by a constant n: n = 3 is 3! zeta(4, x) (the factorial exp(lgamma(4)) a constant, as the C
// library computes it), n = 1 trigamma (no loop), n = 0 digamma; a symbolic n computes all three and
// selects.
// CHECK-LABEL: func.func @polygamma
// CHECK:       linalg.generic
// CHECK:         %[[F:.*]] = arith.constant 6.000000e+00 : f32
// CHECK:         scf.while
// CHECK:         %[[Z:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK:         %[[R:.*]] = arith.mulf %[[F]], %[[Z]] : f32
// CHECK-NEXT:    linalg.yield %[[R]] : f32
// CHECK:       linalg.generic
// CHECK-NOT:     scf.while
// CHECK:         math.sin %{{.*}} : f32
// CHECK-NOT:     scf.while
// CHECK:         linalg.yield
// CHECK:       linalg.generic
// CHECK-NOT:     scf.while
// CHECK:         math.log %{{.*}} : f64
// CHECK-NOT:     scf.while
// CHECK:         linalg.yield
// CHECK:       %[[N:.*]] = torch_c.to_i64 %arg1
// CHECK:       linalg.generic
// CHECK:         arith.cmpi eq, %[[N]], %c0_i64
// CHECK:         arith.cmpi eq, %[[N]], %c1_i64
// CHECK:         scf.while
// CHECK:         %[[G:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[S:.*]] = arith.select %{{.*}}, %{{.*}}, %[[G]] : f32
// CHECK-NEXT:    %[[R:.*]] = arith.select %{{.*}}, %{{.*}}, %[[S]] : f32
// CHECK-NEXT:    linalg.yield %[[R]] : f32
func.func @polygamma(%x: !torch.vtensor<[?],f32>, %n: !torch.int) -> (!torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>) {
  %int3 = torch.constant.int 3
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %0 = torch.operator "torch.aten.polygamma"(%int3, %x) : (!torch.int, !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  %1 = torch.operator "torch.aten.polygamma"(%int1, %x) : (!torch.int, !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  %2 = torch.operator "torch.aten.polygamma"(%int0, %x) : (!torch.int, !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  %3 = torch.operator "torch.aten.polygamma"(%n, %x) : (!torch.int, !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0, %1, %2, %3 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>
}

// -----

// The lower incomplete gamma: the asymptotic series' 25 x 25 coefficients as a constant at the
// function's entry, read by index in two nested scf.while loops; the series, the complement's series
// and the continued fraction as loops of their own (each runs only where its method is selected).
// CHECK-LABEL: func.func @igamma
// CHECK:       %[[D:.*]] = arith.constant dense<{{.*}}> : tensor<25x25xf32>
// CHECK:       linalg.generic
// CHECK:         math.log1p %{{.*}} : f32
// CHECK:         scf.while ({{.*}}) : (i32, f32, f32, f32, i1)
// CHECK:         scf.while ({{.*}}) : (f32, f32, f32, i1)
// CHECK:         math.expm1 %{{.*}} : f32
// CHECK:         scf.while ({{.*}}) : (i32, f32, f32, f32, f32, f32, f32, f32, f32, i1)
// CHECK:         math.erfc %{{.*}} : f32
// CHECK:         scf.while ({{.*}}) : (i64, f32, f32, f32, i1)
// CHECK:         } do {
// CHECK:           tensor.extract %[[D]][
// CHECK:           scf.while
// CHECK:             tensor.extract %[[D]][
// CHECK:         linalg.yield
// CHECK-NOT:   torch.operator
func.func @igamma(%a: !torch.vtensor<[?],f32>, %x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.igamma"(%a, %x) : (!torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// The upper one of bf16: computed in float32 (eager's calc_igammac<float>) and rounded once.
// CHECK-LABEL: func.func @igammac_bf16
// CHECK:       arith.constant dense<{{.*}}> : tensor<25x25xf32>
// CHECK:       ^bb0(%[[A:.*]]: bf16, %[[X:.*]]: bf16, %{{.*}}: bf16):
// CHECK:         arith.extf %[[A]] : bf16 to f32
// CHECK:         arith.extf %[[X]] : bf16 to f32
// CHECK:         %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT:    linalg.yield %[[R]] : bf16
func.func @igammac_bf16(%a: !torch.vtensor<[?],bf16>, %x: !torch.vtensor<[?],bf16>) -> !torch.vtensor<[?],bf16> {
  %0 = torch.operator "torch.aten.igammac"(%a, %x) : (!torch.vtensor<[?],bf16>, !torch.vtensor<[?],bf16>) -> !torch.vtensor<[?],bf16>
  return %0 : !torch.vtensor<[?],bf16>
}
