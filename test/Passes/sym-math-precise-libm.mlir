// RUN: symopt %s --split-input-file --sym-math-precise-libm | filecheck %s
// RUN: symopt %s --split-input-file --sym-math-precise-libm --convert-math-to-llvm | filecheck %s --check-prefix=LLVM

// Scalar f32 / f64 log1p and expm1 become calls of libm's accurate functions, each declared once;
// other math ops and vectors stay for the upstream lowering (which would compute log(1 + x) and
// exp(x) - 1, losing small x).
// CHECK-DAG:   func.func private @log1pf(f32) -> f32 attributes {llvm.readnone}
// CHECK-DAG:   func.func private @expm1(f64) -> f64 attributes {llvm.readnone}
// CHECK-LABEL: func.func @small_x
// CHECK:         %[[A:.*]] = call @log1pf(%arg0) : (f32) -> f32
// CHECK:         %[[B:.*]] = call @log1pf(%[[A]]) : (f32) -> f32
// CHECK:         %[[C:.*]] = call @expm1(%arg1) : (f64) -> f64
// CHECK:         math.exp %arg0
// CHECK:         math.log1p %arg2 : vector<4xf32>
// LLVM-LABEL: func.func @small_x
// LLVM-NOT:     llvm.fadd
// LLVM:         llvm.intr.exp
func.func @small_x(%x: f32, %y: f64, %v: vector<4xf32>) -> (f32, f64, f32, vector<4xf32>) {
  %a = math.log1p %x : f32
  %b = math.log1p %a : f32
  %c = math.expm1 %y : f64
  %d = math.exp %x : f32
  %e = math.log1p %v : vector<4xf32>
  return %b, %c, %d, %e : f32, f64, f32, vector<4xf32>
}
