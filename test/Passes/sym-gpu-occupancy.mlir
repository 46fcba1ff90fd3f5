// RUN: symopt %s --split-input-file --sym-gpu-occupancy='elementwise-blocks=6' | filecheck %s
// RUN: symopt %s --split-input-file --sym-gpu-occupancy | filecheck %s --check-prefix=DEF
// RUN: symopt %s --split-input-file --sym-gpu-occupancy='elementwise-blocks=0' | filecheck %s --check-prefix=OFF
// RUN: symopt %s --split-input-file --sym-gpu-occupancy='elementwise-blocks=33' --verify-diagnostics

// An elementwise kernel of 256 threads asks for 6 resident blocks per SM (8 by default); a kernel
// with a block reduction (threads wait for each other), one of 512 threads (6 blocks would not fit)
// and those loading 80 bytes per thread (five 128-bit loads; twenty scalar f32 loads, no 128-bit
// path) do not. An scf.if's regions are alternatives: a kernel whose 128-bit, flat and scalar paths
// load 48 bytes each is hinted (the path that loads most counts, not their sum); loads in sequence
// with a path add up (16 + 64 bytes: not hinted).
// CHECK-LABEL: gpu.module @ew
// CHECK:         gpu.func @ew{{.*}}nvvm.minctasm = 6 : i32
// CHECK-LABEL: gpu.module @red
// CHECK-NOT:     nvvm.minctasm
// CHECK-LABEL: gpu.module @big
// CHECK-NOT:     nvvm.minctasm
// CHECK-LABEL: gpu.module @wide
// CHECK-NOT:     nvvm.minctasm
// CHECK-LABEL: gpu.module @wide_scalar
// CHECK-NOT:     nvvm.minctasm
// CHECK-LABEL: gpu.module @paths
// CHECK:         gpu.func @paths{{.*}}nvvm.minctasm = 6 : i32
// CHECK-LABEL: gpu.module @before_paths
// CHECK-NOT:     nvvm.minctasm
// DEF-LABEL: gpu.module @ew
// DEF:         gpu.func @ew{{.*}}nvvm.minctasm = 8 : i32
// DEF-LABEL: gpu.module @red
// DEF-NOT:     nvvm.minctasm
// DEF-LABEL: gpu.module @paths
// DEF:         gpu.func @paths{{.*}}nvvm.minctasm = 8 : i32
// DEF-LABEL: gpu.module @before_paths
// DEF-NOT:     nvvm.minctasm
// OFF-NOT:     nvvm.minctasm
// expected-error@+1 {{elementwise-blocks must be in 0..32, not 33}}
module attributes {gpu.container_module} {
  gpu.module @ew {
    gpu.func @ew(%a: memref<?xbf16>, %b: memref<?xbf16>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %v = vector.load %a[%c0] : memref<?xbf16>, vector<8xbf16>
      %w = vector.load %b[%c0] : memref<?xbf16>, vector<8xbf16>
      %s = arith.addf %v, %w : vector<8xbf16>
      vector.store %s, %a[%c0] : memref<?xbf16>, vector<8xbf16>
      gpu.return
    }
  }
  gpu.module @red {
    gpu.func @red(%a: memref<?xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<?xf32>
      %s = gpu.all_reduce add %v uniform {} : (f32) -> f32
      memref.store %s, %a[%c0] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @big {
    gpu.func @big(%a: memref<?xf32>) kernel attributes {known_block_size = array<i32: 512, 1, 1>} {
      gpu.return
    }
  }
  gpu.module @wide {
    gpu.func @wide(%a: memref<?xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c12 = arith.constant 12 : index
      %c16 = arith.constant 16 : index
      %v0 = vector.load %a[%c0] : memref<?xf32>, vector<4xf32>
      %v1 = vector.load %a[%c4] : memref<?xf32>, vector<4xf32>
      %v2 = vector.load %a[%c8] : memref<?xf32>, vector<4xf32>
      %v3 = vector.load %a[%c12] : memref<?xf32>, vector<4xf32>
      %true = arith.constant true
      scf.if %true {
        %v4 = vector.load %a[%c16] : memref<?xf32>, vector<4xf32>
      }
      gpu.return
    }
  }
  gpu.module @wide_scalar {
    gpu.func @wide_scalar(%a: memref<?xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %c6 = arith.constant 6 : index
      %c7 = arith.constant 7 : index
      %c8 = arith.constant 8 : index
      %c9 = arith.constant 9 : index
      %c10 = arith.constant 10 : index
      %c11 = arith.constant 11 : index
      %c12 = arith.constant 12 : index
      %c13 = arith.constant 13 : index
      %c14 = arith.constant 14 : index
      %c15 = arith.constant 15 : index
      %c16 = arith.constant 16 : index
      %c17 = arith.constant 17 : index
      %c18 = arith.constant 18 : index
      %c19 = arith.constant 19 : index
      %v0 = memref.load %a[%c0] : memref<?xf32>
      %v1 = memref.load %a[%c1] : memref<?xf32>
      %v2 = memref.load %a[%c2] : memref<?xf32>
      %v3 = memref.load %a[%c3] : memref<?xf32>
      %v4 = memref.load %a[%c4] : memref<?xf32>
      %v5 = memref.load %a[%c5] : memref<?xf32>
      %v6 = memref.load %a[%c6] : memref<?xf32>
      %v7 = memref.load %a[%c7] : memref<?xf32>
      %v8 = memref.load %a[%c8] : memref<?xf32>
      %v9 = memref.load %a[%c9] : memref<?xf32>
      %v10 = memref.load %a[%c10] : memref<?xf32>
      %v11 = memref.load %a[%c11] : memref<?xf32>
      %v12 = memref.load %a[%c12] : memref<?xf32>
      %v13 = memref.load %a[%c13] : memref<?xf32>
      %v14 = memref.load %a[%c14] : memref<?xf32>
      %v15 = memref.load %a[%c15] : memref<?xf32>
      %v16 = memref.load %a[%c16] : memref<?xf32>
      %v17 = memref.load %a[%c17] : memref<?xf32>
      %v18 = memref.load %a[%c18] : memref<?xf32>
      %v19 = memref.load %a[%c19] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @paths {
    gpu.func @paths(%a: memref<?xf32>, %p: i1, %q: i1) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      scf.if %p {
        %v0 = vector.load %a[%c0] : memref<?xf32>, vector<4xf32>
        %v1 = vector.load %a[%c4] : memref<?xf32>, vector<4xf32>
        %v2 = vector.load %a[%c8] : memref<?xf32>, vector<4xf32>
      } else {
        scf.if %q {
          %v0 = vector.load %a[%c0] : memref<?xf32>, vector<4xf32>
          %v1 = vector.load %a[%c4] : memref<?xf32>, vector<4xf32>
          %s0 = memref.load %a[%c0] : memref<?xf32>
          %s1 = memref.load %a[%c4] : memref<?xf32>
          %s2 = memref.load %a[%c8] : memref<?xf32>
          %s3 = memref.load %a[%c8] : memref<?xf32>
        } else {
          %v0 = vector.load %a[%c0] : memref<?xf32>, vector<4xf32>
          %v1 = vector.load %a[%c4] : memref<?xf32>, vector<4xf32>
          %v2 = vector.load %a[%c8] : memref<?xf32>, vector<4xf32>
        }
      }
      gpu.return
    }
  }
  gpu.module @before_paths {
    gpu.func @before_paths(%a: memref<?xf32>, %p: i1) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c12 = arith.constant 12 : index
      %u = vector.load %a[%c0] : memref<?xf32>, vector<4xf32>
      scf.if %p {
        %v0 = vector.load %a[%c0] : memref<?xf32>, vector<4xf32>
        %v1 = vector.load %a[%c4] : memref<?xf32>, vector<4xf32>
        %v2 = vector.load %a[%c8] : memref<?xf32>, vector<4xf32>
        %v3 = vector.load %a[%c12] : memref<?xf32>, vector<4xf32>
      }
      gpu.return
    }
  }
}
