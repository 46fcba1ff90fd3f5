// RUN: symopt %s --split-input-file --sym-gpu-library-half-results | filecheck %s

// Runs after sym-gpu-library-calls on the bufferized compute function. A contraction that replaces
// its float32 output, read only by a truncf into a half buffer, writes the half buffer itself.

// Attention's probs @ v in bf16: the half buffer's allocation moves before the call, the rounding
// kernel and the float32 buffer go, and the call's declaration has the bf16 output type.
// CHECK-LABEL: func.func @probs_times_v
// CHECK:       %[[D:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<1x4x?x64xbf16>
// CHECK-NEXT:  call @__sym_einsum_init_abce_abed_abcd_1(%arg0, %arg1, %[[D]]) : (memref<1x4x?x?xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>) -> ()
// CHECK-NOT:   linalg.generic
// CHECK-NOT:   xf32>
// CHECK:       return %[[D]]
// CHECK-NOT:   func.func private @__sym_einsum_init_abce_abed_abcd_0
// CHECK:       func.func private @__sym_einsum_init_abce_abed_abcd_1(memref<1x4x?x?xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16>) attributes {sym.library_call = "einsum_init_abce_abed_abcd"}
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @probs_times_v(%p: memref<1x4x?x?xbf16>, %v: memref<1x4x?x64xbf16>) -> memref<1x4x?x64xbf16> {
  %c2 = arith.constant 2 : index
  %n = memref.dim %v, %c2 : memref<1x4x?x64xbf16>
  %c = memref.alloc(%n) {alignment = 64 : i64} : memref<1x4x?x64xf32>
  call @__sym_einsum_init_abce_abed_abcd_0(%p, %v, %c) : (memref<1x4x?x?xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xf32>) -> ()
  %d = memref.alloc(%n) {alignment = 64 : i64} : memref<1x4x?x64xbf16>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : memref<1x4x?x64xf32>) outs(%d : memref<1x4x?x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  return %d : memref<1x4x?x64xbf16>
}
func.func private @__sym_einsum_init_abce_abed_abcd_0(memref<1x4x?x?xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xf32>) attributes {sym.library_call = "einsum_init_abce_abed_abcd"}

// -----

// A matmul into a result buffer allocated before it (an out-param); two calls of one signature share
// the new declaration, and its deallocation goes with the float32 buffer.
// CHECK-LABEL: func.func @two_linears
// CHECK:       call @__sym_matmul_init_1(%arg0, %arg1, %arg2) : (memref<?x256xf16>, memref<256x64xf16>, memref<?x64xf16>) -> ()
// CHECK-NEXT:  call @__sym_matmul_init_1(%arg0, %arg1, %arg3) : (memref<?x256xf16>, memref<256x64xf16>, memref<?x64xf16>) -> ()
// CHECK-NEXT:  return
// CHECK:       func.func private @__sym_matmul_init_1(memref<?x256xf16>, memref<256x64xf16>, memref<?x64xf16>) attributes {sym.library_call = "matmul_init"}
// CHECK-NOT:   func.func private @__sym_matmul_init_{{[02]}}
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_linears(%x: memref<?x256xf16>, %w: memref<256x64xf16>, %out0: memref<?x64xf16>, %out1: memref<?x64xf16>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x256xf16>
  %c = memref.alloc(%n) : memref<?x64xf32>
  call @__sym_matmul_init_0(%x, %w, %c) : (memref<?x256xf16>, memref<256x64xf16>, memref<?x64xf32>) -> ()
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%c : memref<?x64xf32>) outs(%out0 : memref<?x64xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  memref.dealloc %c : memref<?x64xf32>
  %e = memref.alloc(%n) : memref<?x64xf32>
  call @__sym_matmul_init_0(%x, %w, %e) : (memref<?x256xf16>, memref<256x64xf16>, memref<?x64xf32>) -> ()
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%e : memref<?x64xf32>) outs(%out1 : memref<?x64xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  return
}
func.func private @__sym_matmul_init_0(memref<?x256xf16>, memref<256x64xf16>, memref<?x64xf32>) attributes {sym.library_call = "matmul_init"}

// -----

// Left alone: an accumulating call (C += A*B needs the float32 values), a float32 result read by
// another op too, and one read by a kernel that uses the float32 value itself.
// CHECK-LABEL: func.func @left_alone
// CHECK:       call @__sym_matmul_0(%arg0, %arg1, %[[A:.*]]) : (memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[A]] : memref<8x8xf32>)
// CHECK:       call @__sym_matmul_init_1(%arg0, %arg1, %[[B:.*]]) : (memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[B]] : memref<8x8xf32>)
// CHECK:       memref.copy %[[B]], %arg4
// CHECK:       call @__sym_matmul_init_1(%arg0, %arg1, %[[C:.*]]) : (memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[C]] : memref<8x8xf32>)
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:   xbf16>) -> ()
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @left_alone(%a: memref<8x8xbf16>, %b: memref<8x8xbf16>, %o0: memref<8x8xbf16>, %o1: memref<8x8xbf16>, %f: memref<8x8xf32>, %o2: memref<8x8xbf16>) {
  %acc = memref.alloc() : memref<8x8xf32>
  call @__sym_matmul_0(%a, %b, %acc) : (memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>) -> ()
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : memref<8x8xf32>) outs(%o0 : memref<8x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  %c = memref.alloc() : memref<8x8xf32>
  call @__sym_matmul_init_1(%a, %b, %c) : (memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>) -> ()
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<8x8xf32>) outs(%o1 : memref<8x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.copy %c, %f : memref<8x8xf32> to memref<8x8xf32>
  %e = memref.alloc() : memref<8x8xf32>
  call @__sym_matmul_init_1(%a, %b, %e) : (memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>) -> ()
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%e : memref<8x8xf32>) outs(%o2 : memref<8x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %sq = arith.mulf %in, %in : f32
    %t = arith.truncf %sq : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
func.func private @__sym_matmul_0(memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>) attributes {sym.library_call = "matmul"}
func.func private @__sym_matmul_init_1(memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>) attributes {sym.library_call = "matmul_init"}

// -----

// Left alone: the half buffer is read between the call and the rounding (writing it earlier would
// change what that read sees), and the half buffer is an operand of the call.
// CHECK-LABEL: func.func @half_buffer_busy
// CHECK:       call @__sym_matmul_init_0(%arg0, %arg1, %[[A:.*]]) : (memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>)
// CHECK-NEXT:  memref.copy %arg2, %arg3
// CHECK-NEXT:  linalg.generic {{.*}} ins(%[[A]] : memref<8x8xf32>) outs(%arg2 : memref<8x8xbf16>)
// CHECK:       call @__sym_matmul_init_0(%arg0, %arg2, %[[B:.*]]) : (memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>)
// CHECK-NEXT:  linalg.generic {{.*}} ins(%[[B]] : memref<8x8xf32>) outs(%arg2 : memref<8x8xbf16>)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @half_buffer_busy(%a: memref<8x8xbf16>, %b: memref<8x8xbf16>, %o: memref<8x8xbf16>, %keep: memref<8x8xbf16>) {
  %c = memref.alloc() : memref<8x8xf32>
  call @__sym_matmul_init_0(%a, %b, %c) : (memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>) -> ()
  memref.copy %o, %keep : memref<8x8xbf16> to memref<8x8xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<8x8xf32>) outs(%o : memref<8x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  %e = memref.alloc() : memref<8x8xf32>
  call @__sym_matmul_init_0(%a, %o, %e) : (memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>) -> ()
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%e : memref<8x8xf32>) outs(%o : memref<8x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
func.func private @__sym_matmul_init_0(memref<8x8xbf16>, memref<8x8xbf16>, memref<8x8xf32>) attributes {sym.library_call = "matmul_init"}

// -----

// Products read only by kernels that round them first (PyTorch's rounding after a bf16 linear, fused
// into its consumer: a SiLU-gated product, a transposed read): each call writes a new bf16 buffer
// that the kernels read, their truncf of it go, and its deallocation follows.
// CHECK-LABEL: func.func @rounded_by_consumers
// CHECK:       %[[G:.*]] = memref.alloc(%{{.*}}) : memref<?x8xbf16>
// CHECK-NEXT:  call @__sym_matmul_init_1(%arg0, %arg1, %[[G]]) : (memref<?x8xbf16>, memref<8x8xbf16>, memref<?x8xbf16>) -> ()
// CHECK:       %[[U:.*]] = memref.alloc(%{{.*}}) : memref<?x8xbf16>
// CHECK-NEXT:  call @__sym_matmul_init_1(%arg0, %arg2, %[[U]])
// CHECK:       linalg.generic {{.*}} ins(%[[G]], %[[U]] : memref<?x8xbf16>, memref<?x8xbf16>) outs(%arg3 : memref<?x8xbf16>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: bf16, %[[IN2:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NOT:     arith.truncf %[[IN]]
// CHECK:         %[[E:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK:         arith.mulf %{{.*}}, %[[IN2]] : bf16
// CHECK:       linalg.generic {{.*}} ins(%[[G]] : memref<?x8xbf16>) outs(%arg4 : memref<8x?xbf16>)
// CHECK-NEXT:  ^bb0(%[[T:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:    linalg.yield %[[T]] : bf16
// CHECK:       memref.dealloc %[[G]] : memref<?x8xbf16>
// CHECK-NOT:   xf32>) -> ()
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @rounded_by_consumers(%x: memref<?x8xbf16>, %w1: memref<8x8xbf16>, %w2: memref<8x8xbf16>, %o: memref<?x8xbf16>, %ot: memref<8x?xbf16>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %n = memref.dim %x, %c0 : memref<?x8xbf16>
  %g = memref.alloc(%n) : memref<?x8xf32>
  call @__sym_matmul_init_0(%x, %w1, %g) : (memref<?x8xbf16>, memref<8x8xbf16>, memref<?x8xf32>) -> ()
  %u = memref.alloc(%n) : memref<?x8xf32>
  call @__sym_matmul_init_0(%x, %w2, %u) : (memref<?x8xbf16>, memref<8x8xbf16>, memref<?x8xf32>) -> ()
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g, %u : memref<?x8xf32>, memref<?x8xf32>) outs(%o : memref<?x8xbf16>) {
  ^bb0(%in: f32, %in2: f32, %out: bf16):
    %t2 = arith.truncf %in2 : f32 to bf16
    %t = arith.truncf %in : f32 to bf16
    %e = arith.extf %t : bf16 to f32
    %ng = arith.negf %e : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %ex, %one : f32
    %sg = arith.divf %e, %den : f32
    %r = arith.truncf %sg : f32 to bf16
    %m = arith.mulf %r, %t2 : bf16
    linalg.yield %m : bf16
  }
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%g : memref<?x8xf32>) outs(%ot : memref<8x?xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %g : memref<?x8xf32>
  memref.dealloc %u : memref<?x8xf32>
  return
}
func.func private @__sym_matmul_init_0(memref<?x8xbf16>, memref<8x8xbf16>, memref<?x8xf32>) attributes {sym.library_call = "matmul_init"}
