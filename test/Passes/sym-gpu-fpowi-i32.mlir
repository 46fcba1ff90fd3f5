// RUN: symopt %s --split-input-file --sym-gpu-fpowi-i32 | filecheck %s

// Runs after gpu-kernel-outlining, before convert-gpu-to-nvvm lowers math.fpowi to libdevice's
// __nv_powif / __nv_powi (sym-lower-to-nvvm); torch-mlir gives `x ** 2` an i64 exponent.

// CHECK-LABEL: gpu.func @square
// CHECK-SAME:    (%[[X:[a-z0-9]+]]: f32, %[[E:[a-z0-9]+]]: i64,
// CHECK-DAG:     %[[LO:.*]] = arith.constant -2147483648 : i64
// CHECK-DAG:     %[[HI:.*]] = arith.constant 2147483647 : i64
// CHECK:         %[[A:.*]] = arith.maxsi %[[E]], %[[LO]] : i64
// CHECK-NEXT:    %[[B:.*]] = arith.minsi %[[A]], %[[HI]] : i64
// CHECK-NEXT:    %[[E32:.*]] = arith.trunci %[[B]] : i64 to i32
// CHECK-NEXT:    %[[Y:.*]] = math.fpowi %[[X]], %[[E32]] : f32, i32
// CHECK-NEXT:    memref.store %[[Y]]
// CHECK-NOT:     : f32, i64
module attributes {gpu.container_module} {
  gpu.module @square_kernel {
    gpu.func @square(%x: f32, %e: i64, %out: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      %y = math.fpowi %x, %e : f32, i64
      memref.store %y, %out[%c0] : memref<1xf32>
      gpu.return
    }
  }
}

// -----

// Every math.fpowi of the module, nested or not, of any float type.
// CHECK-LABEL: func.func @nested_f64
// CHECK:         scf.if
// CHECK:           %[[E32:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK-NEXT:      math.fpowi %arg0, %[[E32]] : f64, i32
// CHECK-NOT:     : f64, i64
func.func @nested_f64(%x: f64, %e: i64, %c: i1) -> f64 {
  %r = scf.if %c -> f64 {
    %y = math.fpowi %x, %e : f64, i64
    scf.yield %y : f64
  } else {
    scf.yield %x : f64
  }
  return %r : f64
}

// -----

// CHECK-LABEL: func.func @no_rewrite_when_exponent_is_i32
// CHECK-NEXT:    %[[Y:.*]] = math.fpowi %arg0, %arg1 : f32, i32
// CHECK-NEXT:    return %[[Y]]
func.func @no_rewrite_when_exponent_is_i32(%x: f32, %e: i32) -> f32 {
  %y = math.fpowi %x, %e : f32, i32
  return %y : f32
}
