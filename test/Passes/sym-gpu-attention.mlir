// RUN: symopt %s --split-input-file --verify-diagnostics --sym-gpu-attention | filecheck %s
// RUN: symopt %s --split-input-file --verify-diagnostics --sym-gpu-attention='library-above=-1 library-above-half=-1' | filecheck %s --check-prefix=KERNEL

// The heads split of one qkv buffer (three transposed copies) and a float mask made from a bool
// [B, 1, 1, S] input: one warp-synchronous launch of 32 x 16 threads over (batch * heads * row blocks),
// k and v staged in shared memory per chunk of 32 keys (the next chunk's tiles loaded while this one
// is computed), the chunk's max and sum by xor shuffles, each
// key's probability by an idx shuffle. q, k and v are read in place through memref.transpose views
// (no copies), the mask's generic is computed in the kernel from the bool input (no scores-sized
// buffer), and the output goes to a buffer of its own in the order its reader (an elementwise generic
// that read it transposed) loops over, [B, L, H, E], written through a transposed view.
// CHECK-LABEL: func.func @heads_split_float_mask
// CHECK-DAG:   %[[OB:.+]] = memref.alloc(%{{.+}}, %{{.+}}) : memref<?x?x4x16xf32>
// CHECK-DAG:   %[[O:.+]] = memref.transpose %[[OB]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<?x?x4x16xf32> to memref<?x4x?x16xf32, strided<[?, 16, 64, 1]>>
// CHECK-DAG:   %[[Q:.+]] = memref.transpose %{{.+}} (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<?x?x4x16xf32, strided<[?, 192, 16, 1]>> to memref<?x4x?x16xf32, strided<[?, 16, 192, 1]>>
// CHECK-DAG:   %[[K:.+]] = memref.transpose %{{.+}} (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<?x?x4x16xf32, strided<[?, 192, 16, 1], offset: 64>> to memref<?x4x?x16xf32, strided<[?, 16, 192, 1], offset: 64>>
// CHECK-DAG:   %[[V:.+]] = memref.transpose %{{.+}} (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<?x?x4x16xf32, strided<[?, 192, 16, 1], offset: 128>> to memref<?x4x?x16xf32, strided<[?, 16, 192, 1], offset: 128>>
// CHECK-NOT:   linalg.transpose
// Past 2^21 scores (float32) the runtime calls PyTorch's attention on the same views instead, with
// the mask computed at its broadcast shape [B, 1, 1, S] (the generic's input reads dims 0 and 3).
// CHECK:       %[[BIG:.+]] = arith.cmpi ugt, %{{.+}}, %c2097152 : index
// The branch's result is the output's buffer: the call may give PyTorch's own result in its place
// (no copy, when laid out alike), the kernel's branch yields the buffer; its reader reads the result.
// CHECK:       %[[RES:.+]] = scf.if %[[BIG]] -> (memref<?x?x4x16xf32>) {
// CHECK-NEXT:    %[[MB:.+]] = memref.alloc(%{{.+}}, %{{.+}}) : memref<?x1x1x?xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%arg1 : memref<?x1x1x?xi1>) outs(%[[MB]] : memref<?x1x1x?xf32>)
// CHECK:         %[[R:.+]] = func.call @__sym_attention_0(%[[Q]], %[[K]], %[[V]], %[[MB]], %[[O]], %[[OB]]) {sym.causal = false, sym.scale = 3.000000e-01 : f64}
// CHECK-NEXT:    scf.yield %[[R]]
// CHECK-NEXT:  } else {
// KERNEL-LABEL: func.func @heads_split_float_mask
// KERNEL-NOT:  @__sym_attention
// KERNEL:      gpu.launch
// KERNEL-NOT:  @__sym_attention
// KERNEL-LABEL: func.func @output_is_the_out_param
// KERNEL:      %[[E:.+]] = memref.expand_shape %arg3
// KERNEL-NEXT: %[[OV:.+]] = memref.transpose %[[E]]
// KERNEL:      gpu.launch
// KERNEL:        memref.store %{{.+}}, %[[OV]]
// KERNEL-NOT:  linalg.transpose
// KERNEL-LABEL: func.func @causal_bf16_output_transposed
// CHECK:       gpu.launch blocks({{.*}}) threads({{.*}}) in (%{{.+}} = %c32{{.*}}, %{{.+}} = %c16{{.*}}, %{{.+}} = %c1{{.*}}) workgroup(%[[KS:.+]] : memref<544xf32, #gpu.address_space<workgroup>>, %[[VS:.+]] : memref<512xf32, #gpu.address_space<workgroup>>)
// CHECK:         memref.load %[[Q]]
// CHECK:         memref.load %[[K]]
// CHECK:         memref.load %[[V]]
// CHECK:         scf.for
// CHECK:           gpu.barrier
// CHECK:           memref.store %{{.+}}, %[[KS]]
// CHECK:           memref.store %{{.+}}, %[[VS]]
// CHECK:           gpu.barrier
// CHECK:           memref.load %[[K]]
// CHECK:           memref.load %[[V]]
// CHECK:           memref.load %[[KS]]
// CHECK:           %[[MV:.+]] = memref.load %arg1[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<?x1x1x?xi1>
// CHECK-NEXT:      arith.uitofp %[[MV]] : i1 to f32
// CHECK:           gpu.shuffle xor
// CHECK:           math.exp
// CHECK:           gpu.shuffle idx
// CHECK:           memref.load %[[VS]]
// CHECK:           math.fma
// CHECK:           scf.yield
// CHECK:         memref.store %{{.+}}, %[[O]]
// CHECK:       } {sym.warp_synchronous}
// CHECK-NEXT:    scf.yield %[[OB]]
// CHECK-NEXT:  }
// CHECK-NOT:   tm_tensor.attention
// CHECK:       linalg.generic {{.*}} ins(%[[RES]], %{{.+}} : memref<?x?x4x16xf32>, memref<?x?x4x16xf32, strided<[?, 192, 16, 1]>>)
// CHECK:       func.func private @__sym_attention_0(memref<?x4x?x16xf32, strided<[?, 16, 192, 1]>>, {{.*}}, memref<?x1x1x?xf32>, memref<?x4x?x16xf32, strided<[?, 16, 64, 1]>>, memref<?x?x4x16xf32>) -> memref<?x?x4x16xf32> attributes {sym.library_call = "attention"}
#map = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
func.func @heads_split_float_mask(%arg2: memref<?x?x192xf32>, %arg3: memref<?x1x1x?xi1>, %arg4: memref<?x?x64xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg2, %c0 : memref<?x?x192xf32>
  %dim_0 = memref.dim %arg2, %c1 : memref<?x?x192xf32>
  %subview = memref.subview %arg2[0, 0, 0] [%dim, %dim_0, 64] [1, 1, 1] : memref<?x?x192xf32> to memref<?x?x64xf32, strided<[?, 192, 1]>>
  %subview_1 = memref.subview %arg2[0, 0, 64] [%dim, %dim_0, 64] [1, 1, 1] : memref<?x?x192xf32> to memref<?x?x64xf32, strided<[?, 192, 1], offset: 64>>
  %subview_2 = memref.subview %arg2[0, 0, 128] [%dim, %dim_0, 64] [1, 1, 1] : memref<?x?x192xf32> to memref<?x?x64xf32, strided<[?, 192, 1], offset: 128>>
  %expand_shape = memref.expand_shape %subview [[0], [1], [2, 3]] output_shape [%dim, %dim_0, 4, 16] : memref<?x?x64xf32, strided<[?, 192, 1]>> into memref<?x?x4x16xf32, strided<[?, 192, 16, 1]>>
  %alloc = memref.alloc(%dim, %dim_0) {alignment = 64 : i64} : memref<?x4x?x16xf32>
  linalg.transpose ins(%expand_shape : memref<?x?x4x16xf32, strided<[?, 192, 16, 1]>>) outs(%alloc : memref<?x4x?x16xf32>) permutation = [0, 2, 1, 3]
  %expand_shape_3 = memref.expand_shape %subview_1 [[0], [1], [2, 3]] output_shape [%dim, %dim_0, 4, 16] : memref<?x?x64xf32, strided<[?, 192, 1], offset: 64>> into memref<?x?x4x16xf32, strided<[?, 192, 16, 1], offset: 64>>
  %alloc_4 = memref.alloc(%dim, %dim_0) {alignment = 64 : i64} : memref<?x4x?x16xf32>
  linalg.transpose ins(%expand_shape_3 : memref<?x?x4x16xf32, strided<[?, 192, 16, 1], offset: 64>>) outs(%alloc_4 : memref<?x4x?x16xf32>) permutation = [0, 2, 1, 3]
  %expand_shape_5 = memref.expand_shape %subview_2 [[0], [1], [2, 3]] output_shape [%dim, %dim_0, 4, 16] : memref<?x?x64xf32, strided<[?, 192, 1], offset: 128>> into memref<?x?x4x16xf32, strided<[?, 192, 16, 1], offset: 128>>
  %alloc_6 = memref.alloc(%dim, %dim_0) {alignment = 64 : i64} : memref<?x4x?x16xf32>
  linalg.transpose ins(%expand_shape_5 : memref<?x?x4x16xf32, strided<[?, 192, 16, 1], offset: 128>>) outs(%alloc_6 : memref<?x4x?x16xf32>) permutation = [0, 2, 1, 3]
  %alloc_7 = memref.alloc(%dim, %dim_0, %dim_0) {alignment = 64 : i64} : memref<?x4x?x?xf32>
  linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg3 : memref<?x1x1x?xi1>) outs(%alloc_7 : memref<?x4x?x?xf32>) {
  ^bb0(%in: i1, %out: f32):
    %0 = arith.uitofp %in : i1 to f32
    linalg.yield %0 : f32
  }
  %alloc_8 = memref.alloc(%dim, %dim_0) : memref<?x4x?x16xf32>
  tm_tensor.attention {sym.causal = false, sym.scale = 3.000000e-01 : f64} ins(%alloc, %alloc_4, %alloc_6, %alloc_7 : memref<?x4x?x16xf32>, memref<?x4x?x16xf32>, memref<?x4x?x16xf32>, memref<?x4x?x?xf32>) outs(%alloc_8 : memref<?x4x?x16xf32>)
  %alloc_9 = memref.alloc(%dim, %dim_0) {alignment = 64 : i64} : memref<?x?x4x16xf32>
  linalg.generic {indexing_maps = [#map2, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc_8, %expand_shape : memref<?x4x?x16xf32>, memref<?x?x4x16xf32, strided<[?, 192, 16, 1]>>) outs(%alloc_9 : memref<?x?x4x16xf32>) {
  ^bb0(%in: f32, %in_10: f32, %out: f32):
    %0 = arith.addf %in, %in_10 : f32
    linalg.yield %0 : f32
  }
  %collapse_shape = memref.collapse_shape %alloc_9 [[0], [1], [2, 3]] : memref<?x?x4x16xf32> into memref<?x?x64xf32>
  memref.copy %collapse_shape, %arg4 : memref<?x?x64xf32> to memref<?x?x64xf32>
  return
}

// -----

// The output read only by a transpose into the function's output seen in heads form (an expand_shape
// of the out-param that sym-forward-copies made the transpose's buffer): the kernel writes the
// out-param through a transposed view of that expand_shape, moved before the attention; the library
// branch writes the same view (no buffer of its own: nothing to yield).
// CHECK-LABEL: func.func @output_is_the_out_param
// CHECK:       %[[E:.+]] = memref.expand_shape %arg3 {{\[}}[0], [1], [2, 3]] output_shape [1, %{{.+}}, 2, 64] : memref<1x?x128xbf16> into memref<1x?x2x64xbf16>
// CHECK-NEXT:  %[[OV:.+]] = memref.transpose %[[E]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK:       scf.if %{{.+}} {
// CHECK-NEXT:    func.call @__sym_attention_0(%arg0, %arg1, %arg2, %[[OV]]) {sym.causal = true, sym.scale = 1.250000e-01 : f64}
// CHECK:       gpu.launch
// CHECK:         memref.store %{{.+}}, %[[OV]]
// CHECK-NOT:   linalg.transpose
// CHECK-NOT:   memref.alloc
// CHECK:       return
func.func @output_is_the_out_param(%q: memref<1x2x?x64xbf16>, %k: memref<1x2x?x64xbf16>, %v: memref<1x2x?x64xbf16>, %out: memref<1x?x128xbf16>) {
  %c2 = arith.constant 2 : index
  %l = memref.dim %q, %c2 : memref<1x2x?x64xbf16>
  %o = memref.alloc(%l) : memref<1x2x?x64xbf16>
  tm_tensor.attention {sym.causal = true, sym.scale = 1.250000e-01 : f64} ins(%q, %k, %v : memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>) outs(%o : memref<1x2x?x64xbf16>)
  %e = memref.expand_shape %out [[0], [1], [2, 3]] output_shape [1, %l, 2, 64] : memref<1x?x128xbf16> into memref<1x?x2x64xbf16>
  linalg.transpose ins(%o : memref<1x2x?x64xbf16>) outs(%e : memref<1x?x2x64xbf16>) permutation = [0, 2, 1, 3]
  return
}

// -----

// Causal bf16 with q in its own buffer, the output read only by a transpose back to [B, L, H, E]:
// the kernel writes that transposed buffer directly; a row's keys end at min(i + 1, S); each
// probability is rounded to bf16 before its product with v, the output once.
// CHECK-LABEL: func.func @causal_bf16_output_transposed
// CHECK:       %[[OUT:.+]] = memref.alloc(%{{.+}}) : memref<1x?x2x64xbf16>
// CHECK:       %[[OV:.+]] = memref.transpose %[[OUT]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<1x?x2x64xbf16> to memref<1x2x?x64xbf16, strided<[?, 64, 128, 1]>>
// Half types take PyTorch's (flash) attention past 2^16 scores: the call writes the transposed view.
// CHECK:       arith.cmpi ugt, %{{.+}}, %c65536 : index
// CHECK:       func.call @__sym_attention_0(%arg0, %arg1, %arg2, %[[OV]], %[[OUT]]) {sym.causal = true, sym.scale = 1.250000e-01 : f64}
// CHECK:       gpu.launch
// CHECK:         arith.minui
// CHECK:         arith.extf %{{.+}} : bf16 to f32
// CHECK:         scf.for
// CHECK:           %[[P:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK-NEXT:      arith.extf %[[P]] : bf16 to f32
// CHECK:         %[[Y:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK-NEXT:    memref.store %[[Y]], %[[OV]]
// CHECK-NOT:   linalg.transpose
// CHECK:       return %{{.+}} : memref<1x?x2x64xbf16>
func.func @causal_bf16_output_transposed(%q: memref<1x2x?x64xbf16>, %k: memref<1x2x?x64xbf16>, %v: memref<1x2x?x64xbf16>) -> memref<1x?x2x64xbf16> {
  %c2 = arith.constant 2 : index
  %l = memref.dim %q, %c2 : memref<1x2x?x64xbf16>
  %o = memref.alloc(%l) : memref<1x2x?x64xbf16>
  tm_tensor.attention {sym.causal = true, sym.scale = 1.250000e-01 : f64} ins(%q, %k, %v : memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>) outs(%o : memref<1x2x?x64xbf16>)
  %t = memref.alloc(%l) : memref<1x?x2x64xbf16>
  linalg.transpose ins(%o : memref<1x2x?x64xbf16>) outs(%t : memref<1x?x2x64xbf16>) permutation = [0, 2, 1, 3]
  return %t : memref<1x?x2x64xbf16>
}

// -----

// A buffer written between the copy and the attention is not read in place. Static sizes under the
// threshold: no branch.
// CHECK-LABEL: func.func @written_between
// CHECK-NOT:   scf.if
// CHECK:       memref.copy %arg0, %[[A:.+]] :
// CHECK:       linalg.fill
// CHECK:       gpu.launch
// CHECK:         memref.load %[[A]]
func.func @written_between(%q: memref<2x8x32xf32>, %o: memref<2x8x32xf32>) {
  %a = memref.alloc() : memref<2x8x32xf32>
  memref.copy %q, %a : memref<2x8x32xf32> to memref<2x8x32xf32>
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%q : memref<2x8x32xf32>)
  tm_tensor.attention {sym.causal = false, sym.scale = 1.0 : f64} ins(%a, %a, %a : memref<2x8x32xf32>, memref<2x8x32xf32>, memref<2x8x32xf32>) outs(%o : memref<2x8x32xf32>)
  return
}

// -----

func.func @not_ours(%q: memref<2x8x32xf32>, %o: memref<2x8x32xf32>) {
  // expected-error @+1 {{tm_tensor.attention without sym.causal / sym.scale: only sym-torch-attention's are lowered}}
  tm_tensor.attention ins(%q, %q, %q : memref<2x8x32xf32>, memref<2x8x32xf32>, memref<2x8x32xf32>) outs(%o : memref<2x8x32xf32>)
  return
}

// -----

// A bool mask (BERT's padding mask as a bool [B, 1, 1, S]) broadcast by a generic: the library
// branch writes it at its broadcast shape as the additive mask PyTorch would make of it (0 / -inf,
// q's element type). Rank 5 with a mask: no library branch (PyTorch's fused kernels take rank 4).
// CHECK-LABEL: func.func @bool_mask_additive
// CHECK:       scf.if
// CHECK-NEXT:    %[[MB:.+]] = memref.alloc(%{{.+}}, %{{.+}}) : memref<?x1x1x?xbf16>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%arg3 : memref<?x1x1x?xi1>) outs(%[[MB]] : memref<?x1x1x?xbf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.+]]: i1, %{{.+}}: bf16):
// CHECK-DAG:       %[[Z:.+]] = arith.constant 0.000000e+00 : bf16
// CHECK-DAG:       %[[NINF:.+]] = arith.constant 0xFF80 : bf16
// CHECK:           %[[S:.+]] = arith.select %[[IN]], %[[Z]], %[[NINF]] : bf16
// CHECK-NEXT:      linalg.yield %[[S]] : bf16
// CHECK:         func.call @__sym_attention_0(%arg0, %arg1, %arg2, %[[MB]], %arg4) {sym.causal = false
// CHECK:       } else {
// CHECK:         gpu.launch
// CHECK-LABEL: func.func @rank5_mask_no_branch
// CHECK-NOT:   @__sym_attention
// CHECK:       gpu.launch
#bmap = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
#imap = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @bool_mask_additive(%q: memref<?x2x?x32xbf16>, %k: memref<?x2x?x32xbf16>, %v: memref<?x2x?x32xbf16>, %keep: memref<?x1x1x?xi1>, %o: memref<?x2x?x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = memref.dim %q, %c0 : memref<?x2x?x32xbf16>
  %l = memref.dim %q, %c2 : memref<?x2x?x32xbf16>
  %s = memref.dim %k, %c2 : memref<?x2x?x32xbf16>
  %m = memref.alloc(%b, %l, %s) : memref<?x2x?x?xi1>
  linalg.generic {indexing_maps = [#bmap, #imap], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%keep : memref<?x1x1x?xi1>) outs(%m : memref<?x2x?x?xi1>) {
  ^bb0(%in: i1, %out: i1):
    linalg.yield %in : i1
  }
  tm_tensor.attention {sym.causal = false, sym.scale = 0.125 : f64} ins(%q, %k, %v, %m : memref<?x2x?x32xbf16>, memref<?x2x?x32xbf16>, memref<?x2x?x32xbf16>, memref<?x2x?x?xi1>) outs(%o : memref<?x2x?x32xbf16>)
  return
}

func.func @rank5_mask_no_branch(%q: memref<2x?x2x?x32xf32>, %m: memref<2x?x2x?x?xi1>, %o: memref<2x?x2x?x32xf32>) {
  tm_tensor.attention {sym.causal = false, sym.scale = 0.125 : f64} ins(%q, %q, %q, %m : memref<2x?x2x?x32xf32>, memref<2x?x2x?x32xf32>, memref<2x?x2x?x32xf32>, memref<2x?x2x?x?xi1>) outs(%o : memref<2x?x2x?x32xf32>)
  return
}

// -----

// The output read only by a contraction that reads it heads first ((b, h, l, e) -> its loops
// (b, l, c, h, e): GPT-2's output projection once fusion folded the transpose back into it): the
// buffer is allocated in the reader's loop order [B, L, H, E], the kernel writes it through a
// transposed view, and the contraction reads it in order (one GEMM, heads and head dims collapsed).
// CHECK-LABEL: func.func @output_in_reader_order
// CHECK:       %[[NB:.+]] = memref.alloc(%{{.+}}) : memref<2x?x4x16xf32>
// CHECK-NOT:   memref<2x4x?x16xf32>)
// CHECK:       %[[OV:.+]] = memref.transpose %[[NB]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<2x?x4x16xf32> to memref<2x4x?x16xf32, strided<[?, 16, 64, 1]>>
// CHECK:       %[[NR:.+]] = scf.if
// CHECK:       gpu.launch
// CHECK:         memref.store %{{.+}}, %[[OV]]
// CHECK:       linalg.generic {{.*}} ins(%[[NR]], %arg3 : memref<2x?x4x16xf32>, memref<4x16x32xf32>) outs(%arg4 : memref<2x?x32xf32>)
#om0 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
#om1 = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d2)>
#om2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
func.func @output_in_reader_order(%q: memref<2x4x?x16xf32>, %k: memref<2x4x?x16xf32>, %v: memref<2x4x?x16xf32>, %w: memref<4x16x32xf32>, %y: memref<2x?x32xf32>) {
  %c2 = arith.constant 2 : index
  %l = memref.dim %q, %c2 : memref<2x4x?x16xf32>
  %o = memref.alloc(%l) : memref<2x4x?x16xf32>
  tm_tensor.attention {sym.causal = true, sym.scale = 0.25 : f64} ins(%q, %k, %v : memref<2x4x?x16xf32>, memref<2x4x?x16xf32>, memref<2x4x?x16xf32>) outs(%o : memref<2x4x?x16xf32>)
  linalg.generic {indexing_maps = [#om0, #om1, #om2], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%o, %w : memref<2x4x?x16xf32>, memref<4x16x32xf32>) outs(%y : memref<2x?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The query written by a generic (GPT-2's qkv bias add, the heads split) into a [B, H, L, E] buffer
// only the attention reads: with a library branch, a [B, L, H, E] buffer seen through a transposed
// view (cuDNN gives its output the query's memory order, and the output is [B, L, H, E] here: no
// copy of PyTorch's result). Without the branch (KERNEL) the buffer stays.
// CHECK-LABEL: func.func @query_in_key_order
// CHECK:       %[[QB:.+]] = memref.alloc(%{{.+}}) : memref<1x?x2x64xbf16>
// CHECK-NEXT:  %[[QV:.+]] = memref.transpose %[[QB]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<1x?x2x64xbf16> to memref<1x2x?x64xbf16, strided<[?, 64, 128, 1]>>
// CHECK-NEXT:  linalg.generic {{.*}} outs(%[[QV]] : memref<1x2x?x64xbf16, strided<[?, 64, 128, 1]>>)
// CHECK:       func.call @__sym_attention_0(%[[QV]], %arg1, %arg1,
// CHECK:       memref.dealloc %[[QB]]
// KERNEL-LABEL: func.func @query_in_key_order
// KERNEL:       %[[QB:.+]] = memref.alloc(%{{.+}}) : memref<1x2x?x64xbf16>
// KERNEL-NOT:   memref.transpose %[[QB]] (
func.func @query_in_key_order(%x: memref<1x2x?x64xbf16>, %k: memref<1x2x?x64xbf16>) -> memref<1x?x2x64xbf16> {
  %c2 = arith.constant 2 : index
  %l = memref.dim %x, %c2 : memref<1x2x?x64xbf16>
  %q = memref.alloc(%l) : memref<1x2x?x64xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x?x64xbf16>) outs(%q : memref<1x2x?x64xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %s = arith.addf %in, %in : bf16
    linalg.yield %s : bf16
  }
  %o = memref.alloc(%l) : memref<1x2x?x64xbf16>
  tm_tensor.attention {sym.causal = true, sym.scale = 1.250000e-01 : f64} ins(%q, %k, %k : memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>) outs(%o : memref<1x2x?x64xbf16>)
  memref.dealloc %q : memref<1x2x?x64xbf16>
  %t = memref.alloc(%l) : memref<1x?x2x64xbf16>
  linalg.transpose ins(%o : memref<1x2x?x64xbf16>) outs(%t : memref<1x?x2x64xbf16>) permutation = [0, 2, 1, 3]
  return %t : memref<1x?x2x64xbf16>
}

// -----

// A query buffer something else reads too keeps its layout.
// CHECK-LABEL: func.func @query_read_elsewhere
// CHECK:       %[[QB:.+]] = memref.alloc(%{{.+}}) : memref<1x2x?x64xbf16>
// CHECK-NOT:   memref.transpose %[[QB]] (
// CHECK:       func.call @__sym_attention_0(%[[QB]],
func.func @query_read_elsewhere(%x: memref<1x2x?x64xbf16>, %o: memref<1x2x?x64xbf16>, %y: memref<1x2x?x64xbf16>) {
  %c2 = arith.constant 2 : index
  %l = memref.dim %x, %c2 : memref<1x2x?x64xbf16>
  %q = memref.alloc(%l) : memref<1x2x?x64xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x?x64xbf16>) outs(%q : memref<1x2x?x64xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %s = arith.addf %in, %in : bf16
    linalg.yield %s : bf16
  }
  tm_tensor.attention {sym.causal = true, sym.scale = 1.250000e-01 : f64} ins(%q, %x, %x : memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>) outs(%o : memref<1x2x?x64xbf16>)
  memref.copy %q, %y : memref<1x2x?x64xbf16> to memref<1x2x?x64xbf16>
  return
}

// -----

// The query buffer is also the keys and values (self-attention of one computed tensor): it keeps
// its layout (the other operands would still name the replaced buffer).
// CHECK-LABEL: func.func @query_is_key_and_value
// CHECK:       %[[QB:.+]] = memref.alloc(%{{.+}}) : memref<1x2x?x64xbf16>
// CHECK-NOT:   memref.transpose %[[QB]] (
// CHECK:       func.call @__sym_attention_0(%[[QB]], %[[QB]], %[[QB]],
func.func @query_is_key_and_value(%x: memref<1x2x?x64xbf16>, %o: memref<1x2x?x64xbf16>) {
  %c2 = arith.constant 2 : index
  %l = memref.dim %x, %c2 : memref<1x2x?x64xbf16>
  %q = memref.alloc(%l) : memref<1x2x?x64xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x?x64xbf16>) outs(%q : memref<1x2x?x64xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %s = arith.addf %in, %in : bf16
    linalg.yield %s : bf16
  }
  tm_tensor.attention {sym.causal = false, sym.scale = 1.250000e-01 : f64} ins(%q, %q, %q : memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>) outs(%o : memref<1x2x?x64xbf16>)
  return
}
