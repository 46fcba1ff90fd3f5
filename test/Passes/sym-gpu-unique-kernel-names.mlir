// RUN: symopt %s --split-input-file --sym-gpu-unique-kernel-names | filecheck %s

// Runs right after gpu-kernel-outlining (sym-lower-to-nvvm), which names each gpu.module uniquely but
// the kernel in each after the launching function.

// CHECK-LABEL: func.func @main
// CHECK:       gpu.launch_func @main_kernel::@main_kernel blocks
// CHECK:       gpu.launch_func @main_kernel_0::@main_kernel_0 blocks
// CHECK:       gpu.module @main_kernel {
// CHECK-NEXT:    gpu.func @main_kernel(
// CHECK:       gpu.module @main_kernel_0 {
// CHECK-NEXT:    gpu.func @main_kernel_0(
module attributes {gpu.container_module} {
  func.func @main(%x: memref<?xf32>) -> i32 {
    %c1 = arith.constant 1 : index
    %ok = arith.constant 0 : i32
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @main_kernel_0::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return %ok : i32
  }
  gpu.module @main_kernel {
    gpu.func @main_kernel(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @main_kernel_0 {
    gpu.func @main_kernel(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A launch nested in host control flow is renamed as well.
// CHECK-LABEL: func.func @nested_launch
// CHECK:       scf.if
// CHECK-NEXT:    gpu.launch_func @nested_launch_kernel_1::@nested_launch_kernel_1 blocks
module attributes {gpu.container_module} {
  func.func @nested_launch(%x: memref<?xf32>, %c: i1) -> i32 {
    %c1 = arith.constant 1 : index
    %ok = arith.constant 0 : i32
    scf.if %c {
      gpu.launch_func @nested_launch_kernel_1::@nested_launch_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    }
    return %ok : i32
  }
  gpu.module @nested_launch_kernel_1 {
    gpu.func @nested_launch_kernel(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A gpu.module with two kernels: no single name to give, left alone.
// CHECK-LABEL: func.func @no_rewrite_when_module_has_two_kernels
// CHECK:       gpu.launch_func @two_kernels::@first blocks
// CHECK:       gpu.launch_func @two_kernels::@second blocks
// CHECK:       gpu.func @first(
// CHECK:       gpu.func @second(
module attributes {gpu.container_module} {
  func.func @no_rewrite_when_module_has_two_kernels(%x: memref<?xf32>) -> i32 {
    %c1 = arith.constant 1 : index
    %ok = arith.constant 0 : i32
    gpu.launch_func @two_kernels::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @two_kernels::@second blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return %ok : i32
  }
  gpu.module @two_kernels {
    gpu.func @first(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
    gpu.func @second(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
