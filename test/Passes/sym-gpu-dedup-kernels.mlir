// RUN: symopt %s --split-input-file --sym-gpu-dedup-kernels | filecheck %s

// Runs in sym-lower-to-nvvm after the kernels are final (before the gpu.module lowering): modules whose
// text is the same but for the kernel's name are one kernel, launched from every site.

// CHECK-LABEL: func.func @main
// CHECK:       gpu.launch_func @main_kernel::@main_kernel blocks in (%{{.*}}) threads in (%{{.*}}) args(%arg0 : memref<?xf32>)
// CHECK-NEXT:  gpu.launch_func @main_kernel::@main_kernel blocks in (%{{.*}}) threads in (%{{.*}}) args(%arg1 : memref<?xf32>)
// CHECK-NEXT:  gpu.launch_func @main_kernel_1::@main_kernel_1 blocks
// CHECK:       scf.if
// CHECK-NEXT:    gpu.launch_func @main_kernel::@main_kernel blocks
// CHECK:       gpu.module @main_kernel {
// CHECK-NOT:   gpu.module @main_kernel_0
// CHECK:       gpu.module @main_kernel_1 {
// CHECK-NOT:   gpu.module @main_kernel_2
module attributes {gpu.container_module} {
  func.func @main(%x: memref<?xf32>, %y: memref<?xf32>, %c: i1) -> i32 {
    %c1 = arith.constant 1 : index
    %ok = arith.constant 0 : i32
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @main_kernel_0::@main_kernel_0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<?xf32>)
    gpu.launch_func @main_kernel_1::@main_kernel_1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    scf.if %c {
      gpu.launch_func @main_kernel_2::@main_kernel_2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<?xf32>)
    }
    return %ok : i32
  }
  gpu.module @main_kernel {
    gpu.func @main_kernel(%arg0: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %arg0[%c0] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @main_kernel_0 {
    gpu.func @main_kernel_0(%arg0: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %arg0[%c0] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @main_kernel_1 {
    gpu.func @main_kernel_1(%arg0: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 2.0 : f32
      memref.store %v, %arg0[%c0] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @main_kernel_2 {
    gpu.func @main_kernel_2(%arg0: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %arg0[%c0] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// Same body, other parameter types: two kernels. A module with two kernels is left alone.
// CHECK-LABEL: func.func @types
// CHECK:       gpu.launch_func @types_kernel::@types_kernel
// CHECK-NEXT:  gpu.launch_func @types_kernel_0::@types_kernel_0
// CHECK-NEXT:  gpu.launch_func @two::@a
// CHECK-NEXT:  gpu.launch_func @two_0::@a
// CHECK:       gpu.module @types_kernel {
// CHECK:       gpu.module @types_kernel_0 {
// CHECK:       gpu.module @two {
// CHECK:       gpu.module @two_0 {
module attributes {gpu.container_module} {
  func.func @types(%x: memref<?xf32>, %y: memref<?xi32>) -> i32 {
    %c1 = arith.constant 1 : index
    %ok = arith.constant 0 : i32
    gpu.launch_func @types_kernel::@types_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @types_kernel_0::@types_kernel_0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<?xi32>)
    gpu.launch_func @two::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @two_0::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return %ok : i32
  }
  gpu.module @types_kernel {
    gpu.func @types_kernel(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @types_kernel_0 {
    gpu.func @types_kernel_0(%arg0: memref<?xi32>) kernel {
      gpu.return
    }
  }
  gpu.module @two {
    gpu.func @a(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
    gpu.func @b(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @two_0 {
    gpu.func @a(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
    gpu.func @b(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
