// RUN: symopt %s --split-input-file --sym-gpu-gemm-bias-epilogue | filecheck %s
// RUN: symopt %s --split-input-file --sym-gpu-gemm-bias-epilogue --sym-gpu-library-half-results | filecheck %s --check-prefix=HALF

// A bf16 linear layer: the product into float32, a kernel adding the bias and rounding into the
// output. The call adds the bias; the kernel only rounds (and sym-gpu-library-half-results then lets
// the call write the output itself: no kernel left).
// CHECK-LABEL: func.func @bf16_linear
// CHECK:       %[[C:.*]] = memref.alloc(%{{.*}}) : memref<?x768xf32>
// CHECK-NEXT:  call @__sym_einsum_bias_ab_cb_ac_[[N:[0-9]+]](%arg0, %arg1, %arg2, %[[C]]) : (memref<?x256xbf16>, memref<768x256xbf16>, memref<768xbf16>, memref<?x768xf32>) -> ()
// CHECK-NEXT:  linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]]], iterator_types = {{.*}}} ins(%[[C]] : memref<?x768xf32>) outs(%arg3 : memref<?x768xbf16>)
// CHECK-NEXT:  ^bb0(%[[P:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT:    %[[R:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT:    linalg.yield %[[R]] : bf16
// CHECK:       func.func private @__sym_einsum_bias_ab_cb_ac_[[N]]({{.*}}) attributes {sym.library_call = "einsum_bias_ab_cb_ac"}
// CHECK-NOT:   @__sym_einsum_init_ab_cb_ac_0(
// HALF-LABEL:  func.func @bf16_linear
// HALF-NEXT:     %{{.*}} = arith.constant 0 : index
// HALF-NEXT:     %{{.*}} = memref.dim
// HALF-NEXT:     call @__sym_einsum_bias_ab_cb_ac_{{[0-9]+}}(%arg0, %arg1, %arg2, %arg3) : (memref<?x256xbf16>, memref<768x256xbf16>, memref<768xbf16>, memref<?x768xbf16>) -> ()
// HALF-NEXT:     return
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @bf16_linear(%x: memref<?x256xbf16>, %w: memref<768x256xbf16>, %b: memref<768xbf16>, %y: memref<?x768xbf16>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x256xbf16>
  %c = memref.alloc(%n) : memref<?x768xf32>
  call @__sym_einsum_init_ab_cb_ac_0(%x, %w, %c) : (memref<?x256xbf16>, memref<768x256xbf16>, memref<?x768xf32>) -> ()
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %b : memref<?x768xf32>, memref<768xbf16>) outs(%y : memref<?x768xbf16>) {
  ^bb0(%p: f32, %bb: bf16, %o: bf16):
    %e = arith.extf %bb : bf16 to f32
    %s = arith.addf %p, %e : f32
    %r = arith.truncf %s : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}
func.func private @__sym_einsum_init_ab_cb_ac_0(memref<?x256xbf16>, memref<768x256xbf16>, memref<?x768xf32>) attributes {sym.library_call = "einsum_init_ab_cb_ac"}

// -----

// A [B, L, D] bf16 projection whose bias add is fused into the residual add that reads it (the
// layer norm's input): the rounded sum becomes the rounded product, the bias input goes.
// CHECK-LABEL: func.func @bf16_residual
// CHECK:       call @__sym_einsum_bias_abd_cd_abc_{{[0-9]+}}(%arg0, %arg1, %arg2, %[[C:.*]]) :
// CHECK-NEXT:  linalg.generic {{.*}} ins(%arg3, %[[C]] : memref<?x?x256xbf16>, memref<?x?x256xf32>) outs(%arg4 : memref<?x?x256xbf16>)
// CHECK-NEXT:  ^bb0(%[[X:.*]]: bf16, %[[P:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT:    %[[R:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[X]], %[[R]] : bf16
// CHECK-NEXT:    linalg.yield %[[S]] : bf16
// HALF-LABEL:  func.func @bf16_residual
// HALF:        %[[H:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x256xbf16>
// HALF-NEXT:   call @__sym_einsum_bias_abd_cd_abc_{{[0-9]+}}(%arg0, %arg1, %arg2, %[[H]])
// HALF-NEXT:   linalg.generic {{.*}} ins(%arg3, %[[H]] : memref<?x?x256xbf16>, memref<?x?x256xbf16>)
// HALF-NEXT:   ^bb0(%[[X:.*]]: bf16, %[[P:.*]]: bf16, %{{.*}}: bf16):
// HALF-NEXT:     arith.addf %[[X]], %[[P]] : bf16
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#last = affine_map<(d0, d1, d2) -> (d2)>
func.func @bf16_residual(%x: memref<?x?x256xbf16>, %w: memref<256x256xbf16>, %b: memref<256xbf16>, %res: memref<?x?x256xbf16>, %y: memref<?x?x256xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?x256xbf16>
  %l = memref.dim %x, %c1 : memref<?x?x256xbf16>
  %c = memref.alloc(%n, %l) : memref<?x?x256xf32>
  call @__sym_einsum_init_abd_cd_abc_0(%x, %w, %c) : (memref<?x?x256xbf16>, memref<256x256xbf16>, memref<?x?x256xf32>) -> ()
  linalg.generic {indexing_maps = [#id3, #id3, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%res, %c, %b : memref<?x?x256xbf16>, memref<?x?x256xf32>, memref<256xbf16>) outs(%y : memref<?x?x256xbf16>) {
  ^bb0(%r: bf16, %p: f32, %bb: bf16, %o: bf16):
    %e = arith.extf %bb : bf16 to f32
    %s = arith.addf %p, %e : f32
    %t = arith.truncf %s : f32 to bf16
    %z = arith.addf %r, %t : bf16
    linalg.yield %z : bf16
  }
  return
}
func.func private @__sym_einsum_init_abd_cd_abc_0(memref<?x?x256xbf16>, memref<256x256xbf16>, memref<?x?x256xf32>) attributes {sym.library_call = "einsum_init_abd_cd_abc"}

// -----

// float32 (bias first in the sum), the kernel a copy into the output afterwards: the call writes
// the output, the copy and the buffer go.
// CHECK-LABEL: func.func @float32_copy
// CHECK-NEXT:    call @__sym_einsum_bias_ik_kj_ij_{{[0-9]+}}(%arg0, %arg1, %arg2, %arg3) : (memref<16x32xf32>, memref<32x64xf32>, memref<64xf32>, memref<16x64xf32>) -> ()
// CHECK-NEXT:    return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col2 = affine_map<(d0, d1) -> (d1)>
func.func @float32_copy(%a: memref<16x32xf32>, %w: memref<32x64xf32>, %b: memref<64xf32>, %y: memref<16x64xf32>) {
  %c = memref.alloc() : memref<16x64xf32>
  call @__sym_matmul_init_0(%a, %w, %c) : (memref<16x32xf32>, memref<32x64xf32>, memref<16x64xf32>) -> ()
  linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]} ins(%c, %b : memref<16x64xf32>, memref<64xf32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%p: f32, %bb: f32, %o: f32):
    %s = arith.addf %bb, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<16x64xf32>
  return
}
func.func private @__sym_matmul_init_0(memref<16x32xf32>, memref<32x64xf32>, memref<16x64xf32>) attributes {sym.library_call = "matmul_init"}

// -----

// Left alone:
// - the bf16 sum used before it is rounded (cuBLASLt would round it);
// - a bias along the rows (d0), not the product's last dim;
// - two readers adding different biases;
// - the bias written between the call and its reader;
// - a batched product (attention's p @ v: the batch letters a, b);
// - a float32 bias of a bf16 product (cuBLASLt's bias has the result's type).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:   __sym_einsum_bias
// CHECK:       return
#i = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
#r = affine_map<(d0, d1) -> (d0)>
#i4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#c4 = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @left_alone(%x: memref<16x32xbf16>, %w: memref<64x32xbf16>, %b: memref<64xbf16>, %b16: memref<16xbf16>,
                      %b2: memref<64xbf16>, %y: memref<16x64xbf16>, %z: memref<16x64xf32>, %y2: memref<16x64xbf16>,
                      %p: memref<2x4x8x8xbf16>, %v: memref<2x4x8x64xbf16>, %o4: memref<2x4x8x64xbf16>, %bf: memref<64xf32>) {
  %cst = arith.constant 1.0 : bf16
  %c1 = memref.alloc() : memref<16x64xf32>
  call @__sym_einsum_init_ab_cb_ac_0(%x, %w, %c1) : (memref<16x32xbf16>, memref<64x32xbf16>, memref<16x64xf32>) -> ()
  linalg.generic {indexing_maps = [#i, #c, #i], iterator_types = ["parallel", "parallel"]} ins(%c1, %b : memref<16x64xf32>, memref<64xbf16>) outs(%z : memref<16x64xf32>) {
  ^bb0(%q: f32, %bb: bf16, %o: f32):
    %e = arith.extf %bb : bf16 to f32
    %s = arith.addf %q, %e : f32
    %g = math.erf %s : f32
    linalg.yield %g : f32
  }
  %c2 = memref.alloc() : memref<16x64xf32>
  call @__sym_einsum_init_ab_cb_ac_0(%x, %w, %c2) : (memref<16x32xbf16>, memref<64x32xbf16>, memref<16x64xf32>) -> ()
  linalg.generic {indexing_maps = [#i, #r, #i], iterator_types = ["parallel", "parallel"]} ins(%c2, %b16 : memref<16x64xf32>, memref<16xbf16>) outs(%y : memref<16x64xbf16>) {
  ^bb0(%q: f32, %bb: bf16, %o: bf16):
    %e = arith.extf %bb : bf16 to f32
    %s = arith.addf %q, %e : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  %c3 = memref.alloc() : memref<16x64xf32>
  call @__sym_einsum_init_ab_cb_ac_0(%x, %w, %c3) : (memref<16x32xbf16>, memref<64x32xbf16>, memref<16x64xf32>) -> ()
  linalg.generic {indexing_maps = [#i, #c, #i], iterator_types = ["parallel", "parallel"]} ins(%c3, %b : memref<16x64xf32>, memref<64xbf16>) outs(%y : memref<16x64xbf16>) {
  ^bb0(%q: f32, %bb: bf16, %o: bf16):
    %e = arith.extf %bb : bf16 to f32
    %s = arith.addf %q, %e : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  linalg.generic {indexing_maps = [#i, #c, #i], iterator_types = ["parallel", "parallel"]} ins(%c3, %b2 : memref<16x64xf32>, memref<64xbf16>) outs(%y2 : memref<16x64xbf16>) {
  ^bb0(%q: f32, %bb: bf16, %o: bf16):
    %e = arith.extf %bb : bf16 to f32
    %s = arith.addf %q, %e : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  %c4 = memref.alloc() : memref<16x64xf32>
  call @__sym_einsum_init_ab_cb_ac_0(%x, %w, %c4) : (memref<16x32xbf16>, memref<64x32xbf16>, memref<16x64xf32>) -> ()
  linalg.fill ins(%cst : bf16) outs(%b : memref<64xbf16>)
  linalg.generic {indexing_maps = [#i, #c, #i], iterator_types = ["parallel", "parallel"]} ins(%c4, %b : memref<16x64xf32>, memref<64xbf16>) outs(%y : memref<16x64xbf16>) {
  ^bb0(%q: f32, %bb: bf16, %o: bf16):
    %e = arith.extf %bb : bf16 to f32
    %s = arith.addf %q, %e : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  %c5 = memref.alloc() : memref<2x4x8x64xf32>
  call @__sym_einsum_init_abce_abed_abcd_1(%p, %v, %c5) : (memref<2x4x8x8xbf16>, memref<2x4x8x64xbf16>, memref<2x4x8x64xf32>) -> ()
  linalg.generic {indexing_maps = [#i4, #c4, #i4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c5, %b : memref<2x4x8x64xf32>, memref<64xbf16>) outs(%o4 : memref<2x4x8x64xbf16>) {
  ^bb0(%q: f32, %bb: bf16, %o: bf16):
    %e = arith.extf %bb : bf16 to f32
    %s = arith.addf %q, %e : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  %c6 = memref.alloc() : memref<16x64xf32>
  call @__sym_einsum_init_ab_cb_ac_0(%x, %w, %c6) : (memref<16x32xbf16>, memref<64x32xbf16>, memref<16x64xf32>) -> ()
  linalg.generic {indexing_maps = [#i, #c, #i], iterator_types = ["parallel", "parallel"]} ins(%c6, %bf : memref<16x64xf32>, memref<64xf32>) outs(%y : memref<16x64xbf16>) {
  ^bb0(%q: f32, %bb: f32, %o: bf16):
    %s = arith.addf %q, %bb : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
func.func private @__sym_einsum_init_ab_cb_ac_0(memref<16x32xbf16>, memref<64x32xbf16>, memref<16x64xf32>) attributes {sym.library_call = "einsum_init_ab_cb_ac"}
func.func private @__sym_einsum_init_abce_abed_abcd_1(memref<2x4x8x8xbf16>, memref<2x4x8x64xbf16>, memref<2x4x8x64xf32>) attributes {sym.library_call = "einsum_init_abce_abed_abcd"}

// -----

// Left alone (review): the bias written between two readers (the uses are in no particular order,
// each reader is checked); the product added to itself (read twice as its own "bias").
// CHECK-LABEL: func.func @two_readers
// CHECK-NOT:   __sym_einsum_bias
// CHECK-LABEL: func.func @self_bias
// CHECK-NOT:   __sym_einsum_bias
// CHECK:       return
#i = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
func.func @two_readers(%x: memref<16x32xbf16>, %w: memref<64x32xbf16>, %b: memref<64xbf16>, %y: memref<16x64xbf16>, %y2: memref<16x64xbf16>) {
  %cst = arith.constant 1.0 : bf16
  %c = memref.alloc() : memref<16x64xf32>
  call @__sym_einsum_init_ab_cb_ac_0(%x, %w, %c) : (memref<16x32xbf16>, memref<64x32xbf16>, memref<16x64xf32>) -> ()
  linalg.generic {indexing_maps = [#i, #c, #i], iterator_types = ["parallel", "parallel"]} ins(%c, %b : memref<16x64xf32>, memref<64xbf16>) outs(%y : memref<16x64xbf16>) {
  ^bb0(%q: f32, %bb: bf16, %o: bf16):
    %e = arith.extf %bb : bf16 to f32
    %s = arith.addf %q, %e : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  linalg.fill ins(%cst : bf16) outs(%b : memref<64xbf16>)
  linalg.generic {indexing_maps = [#i, #c, #i], iterator_types = ["parallel", "parallel"]} ins(%c, %b : memref<16x64xf32>, memref<64xbf16>) outs(%y2 : memref<16x64xbf16>) {
  ^bb0(%q: f32, %bb: bf16, %o: bf16):
    %e = arith.extf %bb : bf16 to f32
    %s = arith.addf %q, %e : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c : memref<16x64xf32>
  return
}
func.func private @__sym_einsum_init_ab_cb_ac_0(memref<16x32xbf16>, memref<64x32xbf16>, memref<16x64xf32>) attributes {sym.library_call = "einsum_init_ab_cb_ac"}
#m = affine_map<(d0) -> (d0)>
func.func @self_bias(%x: memref<32xf32>, %w: memref<32x64xf32>, %y: memref<64xf32>) {
  %c = memref.alloc() : memref<64xf32>
  call @__sym_einsum_init_k_kj_j_0(%x, %w, %c) : (memref<32xf32>, memref<32x64xf32>, memref<64xf32>) -> ()
  linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel"]} ins(%c, %c : memref<64xf32>, memref<64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  return
}
func.func private @__sym_einsum_init_k_kj_j_0(memref<32xf32>, memref<32x64xf32>, memref<64xf32>) attributes {sym.library_call = "einsum_init_k_kj_j"}
