// RUN: symopt %s --split-input-file --sym-gpu-div-by-constant | filecheck %s

// In a kernel, x / c becomes x * (1/c): gelu's x / sqrt(2) is x * 0.707106769.
// CHECK-LABEL: gpu.func @gelu_scale
// CHECK:         %[[R:.*]] = arith.constant 0.707106769 : f32
// CHECK:         arith.mulf %arg0, %[[R]] : f32
// CHECK-NOT:     arith.divf
gpu.module @k {
  gpu.func @gelu_scale(%x: f32, %out: memref<f32>) kernel {
    %c = arith.constant 1.41421354 : f32
    %y = arith.divf %x, %c : f32
    memref.store %y, %out[] : memref<f32>
    gpu.return
  }
}

// -----

// A divisor computed from constants is evaluated in its own type: torch-mlir's bf16 gelu divides by
// sqrt(2) computed in bf16 (1.4140625), which MLIR does not fold; 1/1.4140625 rounds to 0.70703125.
// CHECK-LABEL: gpu.func @bf16_divide_by_sqrt_two
// CHECK:         %[[R:.*]] = arith.constant 7.070310e-01 : bf16
// CHECK:         arith.mulf %arg0, %[[R]] : bf16
// CHECK-NOT:     arith.divf
gpu.module @k {
  gpu.func @bf16_divide_by_sqrt_two(%x: bf16, %out: memref<bf16>) kernel {
    %two = arith.constant 2.0 : bf16
    %s = math.sqrt %two : bf16
    %y = arith.divf %x, %s : bf16
    memref.store %y, %out[] : memref<bf16>
    gpu.return
  }
}

// -----

// Not rewritten: a divisor that is not a constant, a zero divisor, a divisor whose reciprocal is not a
// normal number (also when computed: sqrt(-1) is NaN), and division outside kernels (host and CPU code
// keep IEEE division).
// CHECK-LABEL: gpu.func @no_rewrite_when_not_constant_or_not_normal
// CHECK-COUNT-4: arith.divf
// CHECK-LABEL: func.func @no_rewrite_on_host
// CHECK:         arith.divf
gpu.module @k {
  gpu.func @no_rewrite_when_not_constant_or_not_normal(%x: f32, %d: f32, %out: memref<3xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %zero = arith.constant 0.0 : f32
    %huge = arith.constant 1.0e38 : f32
    %a = arith.divf %x, %d : f32
    %b = arith.divf %x, %zero : f32
    %e = arith.divf %x, %huge : f32
    %m1 = arith.constant -1.0 : f32
    %nan = math.sqrt %m1 : f32
    %f = arith.divf %x, %nan : f32
    memref.store %f, %out[%c0] : memref<3xf32>
    memref.store %a, %out[%c0] : memref<3xf32>
    memref.store %b, %out[%c1] : memref<3xf32>
    memref.store %e, %out[%c2] : memref<3xf32>
    gpu.return
  }
}
func.func @no_rewrite_on_host(%x: f32) -> f32 {
  %c = arith.constant 4.0 : f32
  %y = arith.divf %x, %c : f32
  return %y : f32
}
