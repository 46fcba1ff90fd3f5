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

// -----

// The logits of a tied output head read by cross entropy's kernels through a collapse of the
// [B, T, V] product to [N, V] and an expansion of that to [N, 1, V], each rounding them first: the
// call writes the bf16 logits, which both reshapes view.
// CHECK-LABEL: func.func @logits_through_reshapes
// CHECK:       %[[L:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x64xbf16>
// CHECK-NEXT:  call @__sym_einsum_init_abd_cd_abc_1(%arg0, %arg1, %[[L]]) : (memref<?x?x16xbf16>, memref<64x16xbf16>, memref<?x?x64xbf16>) -> ()
// CHECK-NEXT:  %[[C:.*]] = memref.collapse_shape %[[L]] {{\[}}[0, 1], [2]] : memref<?x?x64xbf16> into memref<?x64xbf16>
// CHECK-NEXT:  %[[E:.*]] = memref.expand_shape %[[C]] {{\[}}[0, 1], [2]] output_shape [%{{.*}}, 1, 64] : memref<?x64xbf16> into memref<?x1x64xbf16>
// CHECK:       linalg.generic {{.*}} ins(%[[E]] : memref<?x1x64xbf16>) outs(%arg2 : memref<?x1xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: bf16, %[[OUT:.*]]: f32):
// CHECK-NEXT:    %[[X:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:    arith.maximumf %[[X]], %[[OUT]]
// CHECK:       linalg.generic {{.*}} ins(%[[C]], %arg2 : memref<?x64xbf16>, memref<?x1xf32>) outs(%arg3 : memref<?x64xbf16>)
// CHECK-NEXT:  ^bb0(%[[IN2:.*]]: bf16, %{{.*}}: f32, %{{.*}}: bf16):
// CHECK-NEXT:    arith.extf %[[IN2]] : bf16 to f32
// CHECK:       memref.dealloc %[[L]] : memref<?x?x64xbf16>
#r3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#m3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#i2 = affine_map<(d0, d1) -> (d0, d1)>
#b2 = affine_map<(d0, d1) -> (d0, 0)>
func.func @logits_through_reshapes(%h: memref<?x?x16xbf16>, %w: memref<64x16xbf16>, %mx: memref<?x1xf32>, %o: memref<?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.dim %h, %c0 : memref<?x?x16xbf16>
  %t = memref.dim %h, %c1 : memref<?x?x16xbf16>
  %n = arith.muli %b, %t : index
  %l = memref.alloc(%b, %t) : memref<?x?x64xf32>
  call @__sym_einsum_init_abd_cd_abc_0(%h, %w, %l) : (memref<?x?x16xbf16>, memref<64x16xbf16>, memref<?x?x64xf32>) -> ()
  %c = memref.collapse_shape %l [[0, 1], [2]] : memref<?x?x64xf32> into memref<?x64xf32>
  %e = memref.expand_shape %c [[0, 1], [2]] output_shape [%n, 1, 64] : memref<?x64xf32> into memref<?x1x64xf32>
  linalg.generic {indexing_maps = [#r3, #m3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%e : memref<?x1x64xf32>) outs(%mx : memref<?x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.truncf %in : f32 to bf16
    %x = arith.extf %r : bf16 to f32
    %m = arith.maximumf %x, %out : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#i2, #b2, #i2], iterator_types = ["parallel", "parallel"]} ins(%c, %mx : memref<?x64xf32>, memref<?x1xf32>) outs(%o : memref<?x64xbf16>) {
  ^bb0(%in: f32, %m: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    %x = arith.extf %r : bf16 to f32
    %d = arith.subf %x, %m : f32
    %y = arith.truncf %d : f32 to bf16
    linalg.yield %y : bf16
  }
  memref.dealloc %l : memref<?x?x64xf32>
  return
}
func.func private @__sym_einsum_init_abd_cd_abc_0(memref<?x?x16xbf16>, memref<64x16xbf16>, memref<?x?x64xf32>) attributes {sym.library_call = "einsum_init_abd_cd_abc"}

// -----

// Convolutions (sym-gpu-library-convolutions' calls). A bf16 conv handed out as its float32 buffer
// that a batch norm + ReLU kernel reads, rounding it first: the call hands its bf16 result out as a
// new bf16 buffer, the kernel reads that, the truncf goes with the float32 buffer.
// CHECK-LABEL: func.func @conv_then_norm
// CHECK:       %[[H:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x8x4x4xbf16>
// CHECK-NEXT:  %[[R:.*]] = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_1(%arg0, %arg1, %[[H]], %[[H]]) : (memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<?x8x4x4xbf16>, memref<?x8x4x4xbf16>) -> memref<?x8x4x4xbf16>
// CHECK:       linalg.generic {{.*}} ins(%[[R]], %arg2 : memref<?x8x4x4xbf16>, memref<8xbf16>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16, %{{.*}}: bf16):
// CHECK-NEXT:    arith.extf %[[IN]] : bf16 to f32
// CHECK-NOT:   xf32>
// CHECK:       func.func private @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_1({{.*}}) -> memref<?x8x4x4xbf16> attributes {sym.library_call = "conv_init_plain_s1x1_p0x0_d1x1_nb_r"}
// CHECK-NOT:   func.func private @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_0
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv_then_norm(%x: memref<?x4x6x6xbf16>, %w: memref<8x4x3x3xbf16>, %scale: memref<8xbf16>, %out: memref<?x8x4x4xbf16>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x4x6x6xbf16>
  %acc = memref.alloc(%n) {alignment = 64 : i64} : memref<?x8x4x4xf32>
  %r = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_0(%x, %w, %acc, %acc) : (memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32>
  %zero = arith.constant 0.0 : bf16
  linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %scale : memref<?x8x4x4xf32>, memref<8xbf16>) outs(%out : memref<?x8x4x4xbf16>) {
  ^bb0(%in: f32, %s: bf16, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    %e = arith.extf %t : bf16 to f32
    %se = arith.extf %s : bf16 to f32
    %m = arith.mulf %e, %se : f32
    %mt = arith.truncf %m : f32 to bf16
    %gt = arith.cmpf ugt, %mt, %zero : bf16
    %relu = arith.select %gt, %mt, %zero : bf16
    linalg.yield %relu : bf16
  }
  return
}
func.func private @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_0(memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32> attributes {sym.library_call = "conv_init_plain_s1x1_p0x0_d1x1_nb_r"}

// -----

// A conv with a bias rounded by its own kernel into a fresh bf16 buffer: the call hands its result out
// as that buffer (what reads the buffer after it reads the call's result). Rounded into a function
// argument instead, the call copies into it (no result).
// CHECK-LABEL: func.func @conv_rounded
// CHECK:       %[[D:.*]] = memref.alloc(%{{.*}}) : memref<?x8x4x4xbf16>
// CHECK-NEXT:  %[[R:.*]] = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_b_r_[[N:[0-9]+]](%arg0, %arg1, %arg2, %[[D]], %[[D]]) : ({{.*}}) -> memref<?x8x4x4xbf16>
// CHECK-NEXT:  memref.copy %[[R]], %arg3
// CHECK-NEXT:  call @__sym_conv_init_plain_s1x1_p0x0_d1x1_b_[[M:[0-9]+]](%arg0, %arg1, %arg2, %arg3) : (memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<8xbf16>, memref<?x8x4x4xbf16>) -> ()
// CHECK-NEXT:  return
// CHECK-DAG:   func.func private @__sym_conv_init_plain_s1x1_p0x0_d1x1_b_r_[[N]]({{.*}}) -> memref<?x8x4x4xbf16> attributes {sym.library_call = "conv_init_plain_s1x1_p0x0_d1x1_b_r"}
// CHECK-DAG:   func.func private @__sym_conv_init_plain_s1x1_p0x0_d1x1_b_[[M]]({{.*}}memref<?x8x4x4xbf16>) attributes {sym.library_call = "conv_init_plain_s1x1_p0x0_d1x1_b"}
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @conv_rounded(%x: memref<?x4x6x6xbf16>, %w: memref<8x4x3x3xbf16>, %b: memref<8xbf16>, %out: memref<?x8x4x4xbf16>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x4x6x6xbf16>
  %acc = memref.alloc(%n) : memref<?x8x4x4xf32>
  %r = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_b_r_0(%x, %w, %b, %acc, %acc) : (memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<8xbf16>, memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32>
  %d = memref.alloc(%n) : memref<?x8x4x4xbf16>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : memref<?x8x4x4xf32>) outs(%d : memref<?x8x4x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.copy %d, %out : memref<?x8x4x4xbf16> to memref<?x8x4x4xbf16>
  %acc2 = memref.alloc(%n) : memref<?x8x4x4xf32>
  %r2 = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_b_r_0(%x, %w, %b, %acc2, %acc2) : (memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<8xbf16>, memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r2 : memref<?x8x4x4xf32>) outs(%out : memref<?x8x4x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
func.func private @__sym_conv_init_plain_s1x1_p0x0_d1x1_b_r_0(memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<8xbf16>, memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32> attributes {sym.library_call = "conv_init_plain_s1x1_p0x0_d1x1_b_r"}

// -----

// Left alone: an accumulating conv (a half buffer cannot hold out += conv in float32), a result read
// in float32 (no truncf first), and a grouped conv handed out through a view of its buffer.
// CHECK-LABEL: func.func @conv_left_alone
// CHECK:       call @__sym_conv_acc_plain_s1x1_p0x0_d1x1_nb_0(%arg0, %arg1, %{{.*}}) : ({{.*}}memref<?x8x4x4xf32>) -> ()
// CHECK:       %[[R:.*]] = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_1({{.*}}) -> memref<?x8x4x4xf32>
// CHECK:       arith.addf
// CHECK:       call @__sym_conv_init_grouped_s1x1_p0x0_d1x1_nb_r_2({{.*}}) -> memref<?x8x4x4xf32>
// CHECK-NOT:   bf16 to f32
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @conv_left_alone(%x: memref<?x4x6x6xbf16>, %w: memref<8x4x3x3xbf16>, %xg: memref<?x2x2x6x6xbf16>, %wg: memref<2x4x2x3x3xbf16>, %out: memref<?x8x4x4xbf16>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x4x6x6xbf16>
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc(%n) : memref<?x8x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<?x8x4x4xf32>)
  call @__sym_conv_acc_plain_s1x1_p0x0_d1x1_nb_0(%x, %w, %acc) : (memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<?x8x4x4xf32>) -> ()
  %acc2 = memref.alloc(%n) : memref<?x8x4x4xf32>
  %r2 = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_1(%x, %w, %acc2, %acc2) : (memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32>
  linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%acc, %r2 : memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) outs(%out : memref<?x8x4x4xbf16>) {
  ^bb0(%a: f32, %in: f32, %o: bf16):
    %s = arith.addf %a, %in : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  %acc3 = memref.alloc(%n) : memref<?x8x4x4xf32>
  %g = memref.expand_shape %acc3 [[0], [1, 2], [3], [4]] output_shape [%n, 2, 4, 4, 4] : memref<?x8x4x4xf32> into memref<?x2x4x4x4xf32>
  %r3 = call @__sym_conv_init_grouped_s1x1_p0x0_d1x1_nb_r_2(%xg, %wg, %g, %acc3) : (memref<?x2x2x6x6xbf16>, memref<2x4x2x3x3xbf16>, memref<?x2x4x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r3 : memref<?x8x4x4xf32>) outs(%out : memref<?x8x4x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
func.func private @__sym_conv_acc_plain_s1x1_p0x0_d1x1_nb_0(memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<?x8x4x4xf32>) attributes {sym.library_call = "conv_acc_plain_s1x1_p0x0_d1x1_nb"}
func.func private @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_1(memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32> attributes {sym.library_call = "conv_init_plain_s1x1_p0x0_d1x1_nb_r"}
func.func private @__sym_conv_init_grouped_s1x1_p0x0_d1x1_nb_r_2(memref<?x2x2x6x6xbf16>, memref<2x4x2x3x3xbf16>, memref<?x2x4x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32> attributes {sym.library_call = "conv_init_grouped_s1x1_p0x0_d1x1_nb_r"}

// -----

// The conv's result reaches its rounding reader through a reshape (the grouped view a grouped conv
// reads it as): the reshape views the bf16 result.
// CHECK-LABEL: func.func @conv_through_reshape
// CHECK:       %[[R:.*]] = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_1({{.*}}) -> memref<?x8x4x4xbf16>
// CHECK-NEXT:  %[[V:.*]] = memref.expand_shape %[[R]] {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.*}}, 2, 4, 4, 4] : memref<?x8x4x4xbf16> into memref<?x2x4x4x4xbf16>
// CHECK:       linalg.generic {{.*}} ins(%[[V]] : memref<?x2x4x4x4xbf16>)
// CHECK-NOT:   truncf
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @conv_through_reshape(%x: memref<?x4x6x6xbf16>, %w: memref<8x4x3x3xbf16>, %out: memref<?x2x4x4x4xbf16>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x4x6x6xbf16>
  %acc = memref.alloc(%n) : memref<?x8x4x4xf32>
  %r = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_0(%x, %w, %acc, %acc) : (memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32>
  %v = memref.expand_shape %r [[0], [1, 2], [3], [4]] output_shape [%n, 2, 4, 4, 4] : memref<?x8x4x4xf32> into memref<?x2x4x4x4xf32>
  %zero = arith.constant 0.0 : bf16
  linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v : memref<?x2x4x4x4xf32>) outs(%out : memref<?x2x4x4x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    %gt = arith.cmpf ugt, %t, %zero : bf16
    %relu = arith.select %gt, %t, %zero : bf16
    linalg.yield %relu : bf16
  }
  return
}
func.func private @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_0(memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32> attributes {sym.library_call = "conv_init_plain_s1x1_p0x0_d1x1_nb_r"}

// -----

// Review regressions. The fresh bf16 buffer is read through a view made before the call: the call
// writes the buffer (a handed-out result would leave the view reading unwritten memory).
// CHECK-LABEL: func.func @view_before
// CHECK:       call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_{{[0-9]+}}(%arg0, %arg1, %[[D:.*]]) : ({{.*}}memref<2x8x4x4xbf16>) -> ()
// CHECK:       memref.copy
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @view_before(%x: memref<2x4x6x6xbf16>, %w: memref<8x4x3x3xbf16>, %out: memref<2x8x16xbf16>) {
  %acc = memref.alloc() : memref<2x8x4x4xf32>
  %d = memref.alloc() : memref<2x8x4x4xbf16>
  %dv = memref.collapse_shape %d [[0], [1], [2, 3]] : memref<2x8x4x4xbf16> into memref<2x8x16xbf16>
  %r = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_0(%x, %w, %acc, %acc) : (memref<2x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<2x8x4x4xf32>, memref<2x8x4x4xf32>) -> memref<2x8x4x4xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : memref<2x8x4x4xf32>) outs(%d : memref<2x8x4x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.copy %dv, %out : memref<2x8x16xbf16> to memref<2x8x16xbf16>
  return
}
func.func private @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_0(memref<2x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<2x8x4x4xf32>, memref<2x8x4x4xf32>) -> memref<2x8x4x4xf32> attributes {sym.library_call = "conv_init_plain_s1x1_p0x0_d1x1_nb_r"}

// -----

// The handed-out float32 buffer is also read (its size) before the call: left alone (it crashed).
// CHECK-LABEL: func.func @other_use
// CHECK:       call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_0(%arg0, %arg1, %[[A:.*]], %[[A]]) : ({{.*}}) -> memref<?x8x4x4xf32>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @other_use(%x: memref<?x4x6x6xbf16>, %w: memref<8x4x3x3xbf16>, %out: memref<?x8x4x4xbf16>, %o2: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x4x6x6xbf16>
  %acc = memref.alloc(%n) : memref<?x8x4x4xf32>
  %m = memref.dim %acc, %c0 : memref<?x8x4x4xf32>
  %tmp = memref.alloc(%m) : memref<?xf32>
  memref.copy %tmp, %o2 : memref<?xf32> to memref<?xf32>
  %r = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_0(%x, %w, %acc, %acc) : (memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : memref<?x8x4x4xf32>) outs(%out : memref<?x8x4x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    %e = arith.extf %t : bf16 to f32
    %u = arith.truncf %e : f32 to bf16
    linalg.yield %u : bf16
  }
  return
}
func.func private @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_r_0(memref<?x4x6x6xbf16>, memref<8x4x3x3xbf16>, memref<?x8x4x4xf32>, memref<?x8x4x4xf32>) -> memref<?x8x4x4xf32> attributes {sym.library_call = "conv_init_plain_s1x1_p0x0_d1x1_nb_r"}
