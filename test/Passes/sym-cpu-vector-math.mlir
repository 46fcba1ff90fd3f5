// RUN: symopt %s --split-input-file --sym-cpu-vector-math | filecheck %s

// A float32 exp becomes Cephes' expf in arithmetic: clamp, k = floor(x log2 e + 1/2), the
// polynomial, two powers of two from exponent bits, NaN selected back.
// CHECK-LABEL: func.func @exp_f32
// CHECK-NOT: math.exp
// CHECK: arith.maxnumf
// CHECK: arith.minnumf
// CHECK: math.floor
// CHECK: arith.fptosi
// CHECK: arith.shrsi
// CHECK: arith.bitcast
// CHECK: arith.bitcast
// CHECK: arith.cmpf uno
// CHECK: arith.select
func.func @exp_f32(%x: f32) -> f32 {
  %y = math.exp %x : f32
  return %y : f32
}

// -----

// A float32 tanh: the small branch's polynomial, the large one's exp, one selected, x's sign.
// CHECK-LABEL: func.func @tanh_f32
// CHECK-NOT: math.tanh
// CHECK: math.absf
// CHECK: math.floor
// CHECK: arith.cmpf ole
// CHECK: arith.select
// CHECK: math.copysign
func.func @tanh_f32(%x: f32) -> f32 {
  %y = math.tanh %x : f32
  return %y : f32
}

// -----

// A float32 log: subnormals scaled, exponent and mantissa from the bits, the mantissa folded into
// [sqrt(1/2), sqrt(2)), the polynomial, e * ln2 in two parts, the special values selected.
// CHECK-LABEL: func.func @log_f32
// CHECK-NOT: math.log
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.ori
// CHECK: arith.sitofp
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf uno
// CHECK: return
func.func @log_f32(%x: f32) -> f32 {
  %y = math.log %x : f32
  return %y : f32
}

// -----

// A float32 erf: the small branch's polynomial in x^2, the large one's exp(-x^2) times a polynomial
// in (|x| - 2.5) / 1.5, selected by |x| < 1 and |x| < 4, x's sign, NaN selected back.
// CHECK-LABEL: func.func @erf_f32
// CHECK-NOT: math.erf
// CHECK: math.absf
// CHECK: arith.negf
// CHECK: math.floor
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf olt
// CHECK: math.copysign
// CHECK: arith.cmpf uno
func.func @erf_f32(%x: f32) -> f32 {
  %y = math.erf %x : f32
  return %y : f32
}

// -----

// float64 and vectors keep the upstream lowering (libm's exp / tanh / log).
// CHECK-LABEL: func.func @kept
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.tanh %{{.*}} : f64
// CHECK: math.exp %{{.*}} : vector<4xf32>
// CHECK: math.log %{{.*}} : f64
func.func @kept(%x: f64, %v: vector<4xf32>) -> (f64, f64, vector<4xf32>, f64) {
  %y = math.exp %x : f64
  %t = math.tanh %x : f64
  %w = math.exp %v : vector<4xf32>
  %l = math.log %x : f64
  return %y, %t, %w, %l : f64, f64, vector<4xf32>, f64
}
