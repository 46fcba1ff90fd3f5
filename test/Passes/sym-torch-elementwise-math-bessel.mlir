// RUN: symopt %s --sym-torch-elementwise-math --split-input-file | filecheck %s

// Bessel functions of the first and second kind, modified Bessel functions, spherical j0 and Airy
// Ai (passes/_special_bessel.py): one linalg.generic per op, every branch computed and one selected,
// eager's contracted products as math.fma.

// j0: the asymptotic form (25 / x^2, cos and sin of x - pi/4, fused a*b - c) and the rational one,
// selected at |x| <= 5 (1 - x^2 / 4 below 1e-5).
// CHECK-LABEL: func.func @bessel_j0
// CHECK-SAME:  (%[[X:.*]]: !torch.vtensor<[?,3],f32>)
// CHECK:       %[[B:.*]] = torch_c.to_builtin_tensor %[[X]] : !torch.vtensor<[?,3],f32> -> tensor<?x3xf32>
// CHECK:       %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x3xf32>
// CHECK:       linalg.generic {{.*}} ins(%[[B]] : tensor<?x3xf32>) outs(%[[E]] : tensor<?x3xf32>)
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[A:.*]] = math.absf %[[IN]] : f32
// CHECK:         %[[W:.*]] = arith.divf %cst, %{{.*}} : f32
// CHECK:         math.fma %{{.*}}, %[[W]], %{{.*}} : f32
// CHECK:         math.cos
// CHECK:         math.sin
// CHECK:         %[[N:.*]] = arith.negf
// CHECK-NEXT:    math.fma %{{.*}}, %{{.*}}, %[[N]] : f32
// CHECK:         math.sqrt %[[A]] : f32
// CHECK:         %[[SMALL:.*]] = arith.cmpf ole, %[[A]], %{{.*}} : f32
// CHECK:         %[[TINY:.*]] = arith.cmpf olt, %[[A]], %{{.*}} : f32
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[TINY]]
// CHECK-NEXT:    %[[S:.*]] = arith.select %[[SMALL]], %[[R]], %{{.*}} : f32
// CHECK-NEXT:    linalg.yield %[[S]] : f32
// CHECK-NOT:   torch.operator
func.func @bessel_j0(%x: !torch.vtensor<[?,3],f32>) -> !torch.vtensor<[?,3],f32> {
  %0 = torch.operator "torch.aten.special_bessel_j0"(%x) : (!torch.vtensor<[?,3],f32>) -> !torch.vtensor<[?,3],f32>
  return %0 : !torch.vtensor<[?,3],f32>
}

// -----

// j1: odd: computed at -x below 0 (-0.0 kept) and negated; the asymptotic form at x - 3pi/4 with
// w = (5 / x)^2.
// CHECK-LABEL: func.func @bessel_j1
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:         %[[NEG:.*]] = arith.cmpf olt, %[[IN]], %{{.*}} : f32
// CHECK-NEXT:    %[[M:.*]] = arith.negf %[[IN]] : f32
// CHECK-NEXT:    %[[X:.*]] = arith.select %[[NEG]], %[[M]], %[[IN]] : f32
// CHECK:         %[[F:.*]] = arith.divf %{{.*}}, %[[X]] : f32
// CHECK-NEXT:    %[[W:.*]] = arith.mulf %[[F]], %[[F]] : f32
// CHECK:         arith.constant 2.3561945 : f32
// CHECK:         math.cos
// CHECK:         math.sin
// CHECK:         arith.cmpf ole, %[[X]], %{{.*}} : f32
// CHECK:         %[[R:.*]] = arith.negf %{{.*}} : f32
// CHECK-NEXT:    %[[S:.*]] = arith.select %[[NEG]], %[[R]], %{{.*}} : f32
// CHECK-NEXT:    linalg.yield %[[S]] : f32
func.func @bessel_j1(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_bessel_j1"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// y0: YP/YQ(x^2) + 2/pi log(x) j0(x) (fused) for x <= 5, NaN below 0, -inf at 0; the asymptotic
// form with sin and cos exchanged beyond 5.
// CHECK-LABEL: func.func @bessel_y0
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:         %[[L:.*]] = math.log %[[IN]] : f32
// CHECK-NEXT:    %[[LC:.*]] = arith.mulf %{{.*}}, %[[L]] : f32
// CHECK:         math.fma %[[LC]], %{{.*}}, %{{.*}} : f32
// CHECK:         math.cos
// CHECK:         math.sin
// CHECK:         %[[SMALL:.*]] = arith.cmpf ole, %[[IN]], %{{.*}} : f32
// CHECK:         arith.cmpf olt, %[[IN]]
// CHECK:         arith.constant 0x7FC00000 : f32
// CHECK:         arith.cmpf oeq, %[[IN]]
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         %[[S:.*]] = arith.select %[[SMALL]]
// CHECK-NEXT:    linalg.yield %[[S]] : f32
func.func @bessel_y0(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_bessel_y0"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// y1: x YP/YQ(x^2) + 2/pi (j1(x) log(x) - 1/x), both products fused.
// CHECK-LABEL: func.func @bessel_y1
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:         %[[L:.*]] = math.log %[[IN]] : f32
// CHECK:         %[[INV:.*]] = arith.divf %{{.*}}, %[[IN]] : f32
// CHECK-NEXT:    %[[NINV:.*]] = arith.negf %[[INV]] : f32
// CHECK-NEXT:    %[[D:.*]] = math.fma %{{.*}}, %[[L]], %[[NINV]] : f32
// CHECK-NEXT:    arith.constant 0.636619746 : f32
// CHECK-NEXT:    %[[C:.*]] = arith.mulf %{{.*}}, %[[D]] : f32
// CHECK-NEXT:    math.fma %[[IN]], %{{.*}}, %[[C]] : f32
// CHECK:         arith.constant 0xFF800000 : f32
func.func @bessel_y1(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_bessel_y1"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// i0: Clenshaw's recurrence (x * b1 - b2 fused, + c) on 32 / |x| - 2 (25 terms) and on |x| / 2 - 2
// (30 terms in float32 too), selected at |x| <= 8.
// CHECK-LABEL: func.func @modified_bessel_i0
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:         %[[A:.*]] = math.absf %[[IN]] : f32
// CHECK-NEXT:    arith.constant 3.200000e+01 : f32
// CHECK-NEXT:    %[[R:.*]] = arith.divf %{{.*}}, %[[A]] : f32
// CHECK:         %[[T:.*]] = arith.subf %[[R]], %{{.*}} : f32
// CHECK-COUNT-24: math.fma %[[T]], %{{.*}}, %{{.*}} : f32
// CHECK:         math.exp %[[A]] : f32
// CHECK:         math.sqrt %[[A]] : f32
// CHECK:         %[[LE:.*]] = arith.cmpf ole, %[[A]], %{{.*}} : f32
// CHECK:         %[[H:.*]] = arith.divf %[[A]], %{{.*}} : f32
// CHECK:         %[[U:.*]] = arith.subf %[[H]], %{{.*}} : f32
// CHECK-COUNT-29: math.fma %[[U]], %{{.*}}, %{{.*}} : f32
// CHECK:         %[[E:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:    %[[NEAR:.*]] = arith.mulf %[[E]], %{{.*}} : f32
// CHECK-NEXT:    %[[S:.*]] = arith.select %[[LE]], %[[NEAR]], %{{.*}} : f32
// CHECK-NEXT:    linalg.yield %[[S]] : f32
func.func @modified_bessel_i0(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_modified_bessel_i0"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// i1: x's sign on the result.
// CHECK-LABEL: func.func @modified_bessel_i1
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:         %[[A:.*]] = math.absf %[[IN]] : f32
// CHECK:         arith.cmpf ole, %[[A]], %{{.*}} : f32
// CHECK:         %[[NEG:.*]] = arith.cmpf olt, %[[IN]], %{{.*}} : f32
// CHECK-NEXT:    %[[R:.*]] = arith.negf
// CHECK-NEXT:    %[[S:.*]] = arith.select %[[NEG]], %[[R]], %{{.*}} : f32
// CHECK-NEXT:    linalg.yield %[[S]] : f32
func.func @modified_bessel_i1(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_modified_bessel_i1"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// k0 of float32: x * x - 2 fused; chbevl(x^2 - 2, A) - log(x / 2) i0(x) in float64 (eager's
// `std::log(0.5 * x)` is a double), rounded once; inf at 0, NaN below 0.
// CHECK-LABEL: func.func @modified_bessel_k0
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:         math.fma %[[IN]], %[[IN]], %{{.*}} : f32
// CHECK:         %[[W:.*]] = arith.extf %[[IN]] : f32 to f64
// CHECK-NEXT:    %[[H:.*]] = arith.mulf %{{.*}}, %[[W]] : f64
// CHECK-NEXT:    math.log %[[H]] : f64
// CHECK:         math.fma %{{.*}}, %{{.*}}, %{{.*}} : f64
// CHECK-NEXT:    arith.truncf %{{.*}} : f64 to f32
// CHECK:         %[[N:.*]] = arith.negf %[[IN]] : f32
// CHECK-NEXT:    math.exp %[[N]] : f32
// CHECK:         arith.cmpf ole, %[[IN]], %{{.*}} : f32
// CHECK:         arith.constant 0x7FC00000 : f32
// CHECK:         arith.constant 0x7F800000 : f32
func.func @modified_bessel_k0(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_modified_bessel_k0"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// k0 of float64: the same formula without conversions.
// CHECK-LABEL: func.func @modified_bessel_k0_f64
// CHECK-NOT:     arith.extf
// CHECK-NOT:     arith.truncf
// CHECK:         math.log %{{.*}} : f64
// CHECK:         linalg.yield %{{.*}} : f64
func.func @modified_bessel_k0_f64(%x: !torch.vtensor<[?],f64>) -> !torch.vtensor<[?],f64> {
  %0 = torch.operator "torch.aten.special_modified_bessel_k0"(%x) : (!torch.vtensor<[?],f64>) -> !torch.vtensor<[?],f64>
  return %0 : !torch.vtensor<[?],f64>
}

// -----

// k1: log(x / 2) i1(x) + chbevl(x^2 - 2, A) / x, fused, in the element type.
// CHECK-LABEL: func.func @modified_bessel_k1
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NOT:     arith.extf
// CHECK:         %[[H:.*]] = arith.mulf %{{.*}}, %[[IN]] : f32
// CHECK-NEXT:    %[[L:.*]] = math.log %[[H]] : f32
// CHECK:         %[[Q:.*]] = arith.divf %{{.*}}, %[[IN]] : f32
// CHECK-NEXT:    math.fma %[[L]], %{{.*}}, %[[Q]] : f32
// CHECK:         arith.constant 0x7F800000 : f32
func.func @modified_bessel_k1(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_modified_bessel_k1"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// scaled k0: the small branch times exp(x), the large one without exp(-x).
// CHECK-LABEL: func.func @scaled_modified_bessel_k0
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NOT:     arith.extf
// CHECK:         math.log %{{.*}} : f32
// CHECK-COUNT-2: math.exp %[[IN]] : f32
// CHECK-NOT:     arith.negf %[[IN]]
// CHECK:         math.sqrt %[[IN]] : f32
// CHECK:         arith.constant 0x7F800000 : f32
func.func @scaled_modified_bessel_k0(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_scaled_modified_bessel_k0"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// scaled k1.
// CHECK-LABEL: func.func @scaled_modified_bessel_k1
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:         math.log %{{.*}} : f32
// CHECK-COUNT-2: math.exp %[[IN]] : f32
// CHECK-NOT:     arith.negf %[[IN]]
// CHECK:         math.sqrt %[[IN]] : f32
// CHECK:         linalg.yield
func.func @scaled_modified_bessel_k1(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_scaled_modified_bessel_k1"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// spherical j0: the Taylor series in x^2 (float32 constants 1/6, ... as eager's T(1) / T(6)) below
// |x| = 0.5, sin(x) / x, 0 at +-inf.
// CHECK-LABEL: func.func @spherical_bessel_j0
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:         %[[XX:.*]] = arith.mulf %[[IN]], %[[IN]] : f32
// CHECK:         arith.constant -0.166666672 : f32
// CHECK:         math.fma %[[XX]], %{{.*}}, %{{.*}} : f32
// CHECK:         arith.cmpf olt
// CHECK:         %[[SIN:.*]] = math.sin %[[IN]] : f32
// CHECK-NEXT:    arith.divf %[[SIN]], %[[IN]] : f32
// CHECK:         arith.constant 0x7F800000 : f32
// CHECK-NEXT:    arith.cmpf oeq
func.func @spherical_bessel_j0(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_spherical_bessel_j0"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// Airy Ai: the modulus-phase form below -2.09, the exp-decaying one from 2.09, Maclaurin's series
// between, eager's `while (|m / f| > eps)` unrolled to 12 float32 steps (each after the first
// selected while the test holds); 0 above 103.892, NaN at +-inf.
// CHECK-LABEL: func.func @airy_ai
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:         math.sin
// CHECK:         math.cos
// CHECK:         math.exp
// CHECK-COUNT-12: arith.cmpf ogt, %{{.*}}, %cst{{.*}} : f32
// CHECK:         arith.cmpf olt, %[[IN]]
// CHECK:         arith.cmpf olt, %[[IN]]
// CHECK:         arith.cmpf ogt, %[[IN]]
// CHECK:         arith.constant 0x7FC00000 : f32
// CHECK:         linalg.yield
func.func @airy_ai(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_airy_ai"(%x) : (!torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// bf16 (eager's kernels take float and double only): computed in float32, rounded once.
// CHECK-LABEL: func.func @bessel_j0_bf16
// CHECK:       ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:    %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:    math.absf %[[W]] : f32
// CHECK:         %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT:    linalg.yield %[[T]] : bf16
func.func @bessel_j0_bf16(%x: !torch.vtensor<[?],bf16>) -> !torch.vtensor<[?],bf16> {
  %0 = torch.operator "torch.aten.special_bessel_j0"(%x) : (!torch.vtensor<[?],bf16>) -> !torch.vtensor<[?],bf16>
  return %0 : !torch.vtensor<[?],bf16>
}

// -----

// Integer operands: converted to the float result.
// CHECK-LABEL: func.func @airy_ai_int
// CHECK:       ^bb0(%[[IN:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:    arith.sitofp %[[IN]] : i64 to f32
func.func @airy_ai_int(%x: !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],f32> {
  %0 = torch.operator "torch.aten.special_airy_ai"(%x) : (!torch.vtensor<[?],si64>) -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}
