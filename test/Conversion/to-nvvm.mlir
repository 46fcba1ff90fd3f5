// sym-lower-to-nvvm: linalg on tensors -> host function launching outlined kernels + gpu.modules in
// the NVVM/LLVM dialects. Runs on the CPU (no GPU needed); the PTX line needs llvmlite's NVPTX backend.
// RUN: %PYTHON -m mlir_sym.gpu_compile %s | filecheck %s
// RUN: %PYTHON -m mlir_sym.gpu_compile %s --emit=host | filecheck %s --check-prefix=HOST
// RUN: %PYTHON -m mlir_sym.gpu_compile %s --emit=ptx | filecheck %s --check-prefix=PTX

// The fused pointwise chain is one launch over the linearized [m, n] space: blocks of 256 threads,
// 4 elements per thread (ceil(m*n/1024) blocks). The row sum is one block per row (32..256 threads:
// the fewest that give each at most 16 elements of the row, chosen at run time) that reduces with xor shuffles and a value per warp in shared
// memory (sym-gpu-warp-reduce) and combines with the fill's value
// (the fill itself is folded into the reduction: no launch, no read back).
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    memref<?x?xf32>
// CHECK-SAME:    -> i32
// CHECK:         %[[M:.*]] = memref.dim %{{.*}}, %c0
// CHECK:         %[[N:.*]] = memref.dim %{{.*}}, %c1
// CHECK:         %[[T:.*]] = arith.muli %[[M]], %[[N]] : index
// CHECK:         %[[G:.*]] = arith.ceildivui %[[T]], %c1024
// CHECK:         gpu.launch_func  @main_kernel::@main_kernel blocks in (%[[G]], %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK:         %[[B:.*]] = arith.select %{{.*}}, %c32, %{{.*}} : index
// CHECK:         gpu.launch_func  @main_kernel_0::@main_kernel_0 blocks in (%[[M]], %c1, %c1) threads in (%[[B]], %c1, %c1)
// CHECK-NOT:     gpu.launch_func
// CHECK:         return %{{.*}} : i32
// CHECK:       gpu.module @main_kernel
// CHECK:         llvm.func @main_kernel(
// CHECK-SAME:      nvvm.kernel
// CHECK:           nvvm.read.ptx.sreg.ctaid.x
// CHECK:           nvvm.read.ptx.sreg.tid.x
// CHECK:           llvm.urem
// CHECK:           llvm.load
// CHECK:           llvm.fmul
// CHECK:           llvm.store
// CHECK:       gpu.module @main_kernel_0
// CHECK:         llvm.mlir.global internal @{{.*}}() {addr_space = 3 : i32}
// CHECK:         nvvm.shfl.sync bfly
// CHECK:         nvvm.barrier
// CHECK-NOT:   scf.parallel

// HOST:      def host(v0, v1, v2):
// HOST:        rt.launch(K_main_kernel, {{.*}}*rt.desc(v0){{.*}}*rt.desc(v1)
// HOST:        rt.launch(K_main_kernel_0,
// HOST-NOT:    rt.launch(
// HOST:        return
// Constants and sizes are sunk into the kernels (gpu-launch-sink-index-computations): only buffers
// and the element count travel as parameters.
// HOST: # kernel main_kernel: memref/2, memref/2, index
// HOST: # kernel main_kernel_0: memref/2, memref/1

// PTX: .target sm_90
// The pointwise kernel has a 128-bit path (taken when the row length is a multiple of 4 and the
// buffers are 16-byte aligned) and the scalar one.
// PTX: .visible .entry main_kernel(
// PTX-DAG: ld.global.v4.b32
// PTX-DAG: st.global.v4.b32
// PTX-DAG: ld.global.b32
// PTX-DAG: st.global.b32
// PTX: .visible .entry main_kernel_0(
// PTX: shfl.sync.bfly

func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %in, %two : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %one : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  %r0 = tensor.empty(%m) : tensor<?xf32>
  %r1 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<?xf32>) -> tensor<?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%r1 : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %b, %s : tensor<?x?xf32>, tensor<?xf32>
}
