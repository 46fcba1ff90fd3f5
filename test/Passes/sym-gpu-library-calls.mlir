// RUN: symopt %s --split-input-file --sym-gpu-library-calls | filecheck %s

// Runs on the bufferized compute function (sym-lower-to-nvvm: after one-shot-bufferize, before
// convert-linalg-to-parallel-loops).

// A zero fill right before the matmul goes into the call: C = A*B.
// CHECK-LABEL: func.func @matmul_after_zero_fill
// CHECK-NOT:   linalg.fill
// CHECK:       call @__sym_matmul_init_0(%arg0, %arg1, %arg2) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
// CHECK-NOT:   linalg.matmul
// CHECK:       func.func private @__sym_matmul_init_0(memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) attributes {sym.library_call = "matmul_init"}
func.func @matmul_after_zero_fill(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) -> i32 {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x?xf32>)
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// Without a fill the call accumulates: C += A*B. Calls of one kind and signature share a declaration.
// CHECK-LABEL: func.func @matmuls_accumulate
// CHECK:       call @__sym_matmul_0(%arg0, %arg1, %arg2)
// CHECK:       call @__sym_matmul_0(%arg1, %arg0, %arg2)
// CHECK-NOT:   linalg.matmul
// CHECK:       func.func private @__sym_matmul_0(memref<4x4xf16>, memref<4x4xf16>, memref<4x4xf16>) attributes {sym.library_call = "matmul"}
// CHECK-NOT:   func.func private
func.func @matmuls_accumulate(%a: memref<4x4xf16>, %b: memref<4x4xf16>, %c: memref<4x4xf16>) -> i32 {
  linalg.matmul ins(%a, %b : memref<4x4xf16>, memref<4x4xf16>) outs(%c : memref<4x4xf16>)
  linalg.matmul ins(%b, %a : memref<4x4xf16>, memref<4x4xf16>) outs(%c : memref<4x4xf16>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// CHECK-LABEL: func.func @batch_matmul_after_zero_fill
// CHECK-NOT:   linalg.fill
// CHECK:       call @__sym_batch_matmul_init_0(%arg0, %arg1, %arg2) : (memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>) -> ()
// CHECK-NOT:   linalg.batch_matmul
// CHECK:       func.func private @__sym_batch_matmul_init_0({{.*}}) attributes {sym.library_call = "batch_matmul_init"}
func.func @batch_matmul_after_zero_fill(%a: memref<?x?x?xf32>, %b: memref<?x?x?xf32>, %c: memref<?x?x?xf32>) -> i32 {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x?x?xf32>)
  linalg.batch_matmul ins(%a, %b : memref<?x?x?xf32>, memref<?x?x?xf32>) outs(%c : memref<?x?x?xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// The fill writes a value other than zero: it stays, and the matmul accumulates onto it.
// CHECK-LABEL: func.func @no_rewrite_of_fill_when_not_zero
// CHECK:       linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<?x?xf32>)
// CHECK-NEXT:  call @__sym_matmul_0(%arg0, %arg1, %arg2)
// CHECK-NOT:   matmul_init
func.func @no_rewrite_of_fill_when_not_zero(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) -> i32 {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<?x?xf32>)
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// The zero fill is of another buffer: it stays.
// CHECK-LABEL: func.func @no_rewrite_of_fill_when_another_buffer
// CHECK:       linalg.fill ins(%{{.*}} : f32) outs(%arg3 : memref<?x?xf32>)
// CHECK-NEXT:  call @__sym_matmul_0(%arg0, %arg1, %arg2)
// CHECK-NOT:   matmul_init
func.func @no_rewrite_of_fill_when_another_buffer(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %d: memref<?x?xf32>) -> i32 {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%d : memref<?x?xf32>)
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// Before bufferization (tensor results) there is no buffer to hand to cuBLAS.
// CHECK-LABEL: func.func @no_rewrite_when_on_tensors
// CHECK:       linalg.matmul
// CHECK-NOT:   call
func.func @no_rewrite_when_on_tensors(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// Half inputs with a float32 accumulator (what sym-matmul-half-operands makes of a bf16 nn.Linear):
// the runtime multiplies the half buffers into float32 (cuBLAS accumulates in float32).
// CHECK-LABEL: func.func @half_inputs_float32_accumulator
// CHECK:       call @__sym_matmul_0(%arg0, %arg1, %arg2) : (memref<?x?xf16>, memref<?x?xf16>, memref<?x?xf32>) -> ()
func.func @half_inputs_float32_accumulator(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>) -> i32 {
  linalg.matmul ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// Mixed element types otherwise (bf16 times f16, half accumulator of float32 inputs): left to the
// loop lowering.
// CHECK-LABEL: func.func @no_rewrite_when_element_types_differ
// CHECK-COUNT-2: linalg.matmul
// CHECK-NOT:   call
func.func @no_rewrite_when_element_types_differ(%a: memref<?x?xbf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>,
                                                %d: memref<?x?xf32>, %e: memref<?x?xbf16>) -> i32 {
  linalg.matmul ins(%a, %b : memref<?x?xbf16>, memref<?x?xf16>) outs(%c : memref<?x?xf32>)
  linalg.matmul ins(%d, %d : memref<?x?xf32>, memref<?x?xf32>) outs(%e : memref<?x?xbf16>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// Integer matmuls: cuBLAS (torch.mm on CUDA) does not serve them.
// CHECK-LABEL: func.func @no_rewrite_when_integer
// CHECK:       linalg.matmul
// CHECK-NOT:   call
func.func @no_rewrite_when_integer(%a: memref<?x?xi32>, %b: memref<?x?xi32>, %c: memref<?x?xi32>) -> i32 {
  linalg.matmul ins(%a, %b : memref<?x?xi32>, memref<?x?xi32>) outs(%c : memref<?x?xi32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// Explicit indexing maps (here B transposed): the runtime's call assumes row-major A*B.
// CHECK-LABEL: func.func @no_rewrite_when_indexing_maps_are_not_the_default
// CHECK:       linalg.matmul
// CHECK-NOT:   call
func.func @no_rewrite_when_indexing_maps_are_not_the_default(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) -> i32 {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// nn.Linear's weight.t(): a buffer filled by a transpose of a function argument only for the matmul
// becomes a transposed view of the argument (no copy per call; cuBLAS reads it transposed).
// CHECK-LABEL: func.func @linear_weight_transposed
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     memref.alloc() {{.*}} : memref<16x8xf32>
// CHECK:         %[[T:.*]] = memref.transpose %arg1 (d0, d1) -> (d1, d0) : memref<8x16xf32> to memref<16x8xf32, strided<[1, 16]>>
// CHECK:         call @__sym_matmul_init_{{[0-9]+}}(%arg0, %[[T]], %arg2) : (memref<?x16xf32>, memref<16x8xf32, strided<[1, 16]>>, memref<?x8xf32>) -> ()
func.func @linear_weight_transposed(%x: memref<?x16xf32>, %w: memref<8x16xf32>, %y: memref<?x8xf32>) -> i32 {
  %ok = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %wt = memref.alloc() : memref<16x8xf32>
  linalg.transpose ins(%w : memref<8x16xf32>) outs(%wt : memref<16x8xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%y : memref<?x8xf32>)
  linalg.matmul ins(%x, %wt : memref<?x16xf32>, memref<16x8xf32>) outs(%y : memref<?x8xf32>)
  return %ok : i32
}

// -----

// The transposed buffer is read by something else too: the copy stays.
// CHECK-LABEL: func.func @no_rewrite_when_transpose_has_other_readers
// CHECK:         linalg.transpose
// CHECK:         call @__sym_matmul
func.func @no_rewrite_when_transpose_has_other_readers(%x: memref<?x16xf32>, %w: memref<8x16xf32>, %y: memref<?x8xf32>, %z: memref<16x8xf32>) -> i32 {
  %ok = arith.constant 0 : i32
  %wt = memref.alloc() : memref<16x8xf32>
  linalg.transpose ins(%w : memref<8x16xf32>) outs(%wt : memref<16x8xf32>) permutation = [1, 0]
  linalg.matmul ins(%x, %wt : memref<?x16xf32>, memref<16x8xf32>) outs(%y : memref<?x8xf32>)
  memref.copy %wt, %z : memref<16x8xf32> to memref<16x8xf32>
  return %ok : i32
}

// -----

// Sorts (torch.sort, topk) become calls the runtime serves with a stable torch.sort along the
// dimension; the indices move with the keys. `oge` of (a, b) sorts descending, `ole` ascending, and a
// comparator with swapped operands flips the direction. One declaration per kind and signature.
// CHECK-LABEL: func.func @sorts
// CHECK:         call @__sym_sort_desc_d1_0(%arg0, %arg1) : (memref<?x?xf32>, memref<?x?xi64>) -> ()
// CHECK:         call @__sym_sort_asc_d0_1(%arg2) : (memref<?xi64>) -> ()
// CHECK:         call @__sym_sort_asc_d0_1(%arg2) : (memref<?xi64>) -> ()
// CHECK-NOT:     tm_tensor.sort
// CHECK:       func.func private @__sym_sort_desc_d1_0(memref<?x?xf32>, memref<?x?xi64>) attributes {sym.library_call = "sort_desc_d1"}
// CHECK:       func.func private @__sym_sort_asc_d0_1(memref<?xi64>) attributes {sym.library_call = "sort_asc_d0"}
func.func @sorts(%k: memref<?x?xf32>, %i: memref<?x?xi64>, %u: memref<?xi64>) {
  tm_tensor.sort dimension(1) outs(%k, %i : memref<?x?xf32>, memref<?x?xi64>) {
  ^bb0(%a: f32, %b: f32, %x: i64, %y: i64):
    %c = arith.cmpf oge, %a, %b : f32
    tm_tensor.yield %c : i1
  }
  tm_tensor.sort dimension(0) outs(%u : memref<?xi64>) {
  ^bb0(%a: i64, %b: i64):
    %c = arith.cmpi sle, %a, %b : i64
    tm_tensor.yield %c : i1
  }
  tm_tensor.sort dimension(0) outs(%u : memref<?xi64>) {
  ^bb0(%a: i64, %b: i64):
    %c = arith.cmpi sge, %b, %a : i64
    tm_tensor.yield %c : i1
  }
  return
}

// -----

// Left to the loop lowering: a comparator that is more than one compare of the keys, or compares
// the second operand (not the keys).
// CHECK-LABEL: func.func @sorts_left_alone
// CHECK-COUNT-2: tm_tensor.sort
// CHECK-NOT:     call @__sym_sort
func.func @sorts_left_alone(%k: memref<?xf32>, %i: memref<?xi64>) {
  tm_tensor.sort dimension(0) outs(%k : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %na = arith.negf %a : f32
    %c = arith.cmpf ole, %na, %b : f32
    tm_tensor.yield %c : i1
  }
  tm_tensor.sort dimension(0) outs(%k, %i : memref<?xf32>, memref<?xi64>) {
  ^bb0(%a: f32, %b: f32, %x: i64, %y: i64):
    %c = arith.cmpi sle, %x, %y : i64
    tm_tensor.yield %c : i1
  }
  return
}

// -----

// Scans (cumsum, cumprod, and cummax / cummin's max / min scans) become calls the runtime serves
// with torch.cumsum / cumprod / cummax / cummin.
// CHECK-LABEL: func.func @scans
// CHECK:         call @__sym_scan_add_inc_d1_0(%arg0, %arg1, %arg2) : (memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>) -> ()
// CHECK:         call @__sym_scan_mul_exc_d0_1(%arg3, %arg4, %arg5) : (memref<?xi64>, memref<?xi64>, memref<i64>) -> ()
// CHECK:         call @__sym_scan_max_inc_d0_2(%arg3, %arg4, %arg5) : (memref<?xi64>, memref<?xi64>, memref<i64>) -> ()
// CHECK:         call @__sym_scan_min_inc_d1_3(%arg0, %arg1, %arg2) : (memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>) -> ()
// CHECK:         tm_tensor.scan
// CHECK:       func.func private @__sym_scan_add_inc_d1_0({{.*}}) attributes {sym.library_call = "scan_add_inc_d1"}
func.func @scans(%x: memref<?x?xf32>, %o: memref<?x?xf32>, %a: memref<?xf32>, %y: memref<?xi64>, %p: memref<?xi64>, %b: memref<i64>) {
  tm_tensor.scan dimension(1) inclusive(true) ins(%x : memref<?x?xf32>) outs(%o, %a : memref<?x?xf32>, memref<?xf32>) {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    tm_tensor.yield %s : f32
  }
  tm_tensor.scan dimension(0) inclusive(false) ins(%y : memref<?xi64>) outs(%p, %b : memref<?xi64>, memref<i64>) {
  ^bb0(%u: i64, %v: i64):
    %s = arith.muli %v, %u : i64
    tm_tensor.yield %s : i64
  }
  tm_tensor.scan dimension(0) inclusive(true) ins(%y : memref<?xi64>) outs(%p, %b : memref<?xi64>, memref<i64>) {
  ^bb0(%u: i64, %v: i64):
    %s = arith.maxsi %u, %v : i64
    tm_tensor.yield %s : i64
  }
  tm_tensor.scan dimension(1) inclusive(true) ins(%x : memref<?x?xf32>) outs(%o, %a : memref<?x?xf32>, memref<?xf32>) {
  ^bb0(%u: f32, %v: f32):
    %s = arith.minimumf %u, %v : f32
    tm_tensor.yield %s : f32
  }
  // left alone: not a single add/mul/max/min of the two arguments
  tm_tensor.scan dimension(0) inclusive(true) ins(%y : memref<?xi64>) outs(%p, %b : memref<?xi64>, memref<i64>) {
  ^bb0(%u: i64, %v: i64):
    %s = arith.subi %u, %v : i64
    tm_tensor.yield %s : i64
  }
  return
}

// -----

// cumsum(mask.to(int64)): the conversion kernel that only feeds the scan goes, the call reads the mask
// (torch.cumsum converts it to the output's dtype). Kept: a source written between the conversion
// and the scan, and an extui of i8 (uint8 data: torch would sign-extend an int8 buffer).
// CHECK-LABEL: func.func @scan_casts
// CHECK-NOT:     linalg.generic
// CHECK:         call @__sym_scan_add_inc_d0_0(%arg0, %arg1, %arg2) : (memref<?xi1>, memref<?xi64>, memref<i64>) -> ()
// CHECK:         linalg.generic
// CHECK:         linalg.fill
// CHECK:         call @__sym_scan_add_inc_d0_1(%{{.*}}, %arg1, %arg2) : (memref<?xi64>, memref<?xi64>, memref<i64>) -> ()
// CHECK:         arith.extui %{{.*}} : i8 to i64
// CHECK:         call @__sym_scan_add_inc_d0_1(%{{.*}}, %arg1, %arg2) : (memref<?xi64>, memref<?xi64>, memref<i64>) -> ()
#id1 = affine_map<(d0) -> (d0)>
func.func @scan_casts(%m: memref<?xi1>, %o: memref<?xi64>, %a: memref<i64>, %u: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?xi1>
  %t = memref.alloc(%n) : memref<?xi64>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%m : memref<?xi1>) outs(%t : memref<?xi64>) {
  ^bb0(%x: i1, %y: i64):
    %e = arith.extui %x : i1 to i64
    linalg.yield %e : i64
  }
  tm_tensor.scan dimension(0) inclusive(true) ins(%t : memref<?xi64>) outs(%o, %a : memref<?xi64>, memref<i64>) {
  ^bb0(%p: i64, %q: i64):
    %s = arith.addi %p, %q : i64
    tm_tensor.yield %s : i64
  }
  %t2 = memref.alloc(%n) : memref<?xi64>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%m : memref<?xi1>) outs(%t2 : memref<?xi64>) {
  ^bb0(%x: i1, %y: i64):
    %e = arith.extui %x : i1 to i64
    linalg.yield %e : i64
  }
  %false = arith.constant false
  linalg.fill ins(%false : i1) outs(%m : memref<?xi1>)
  tm_tensor.scan dimension(0) inclusive(true) ins(%t2 : memref<?xi64>) outs(%o, %a : memref<?xi64>, memref<i64>) {
  ^bb0(%p: i64, %q: i64):
    %s = arith.addi %p, %q : i64
    tm_tensor.yield %s : i64
  }
  %t3 = memref.alloc(%n) : memref<?xi64>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%u : memref<?xi8>) outs(%t3 : memref<?xi64>) {
  ^bb0(%x: i8, %y: i64):
    %e = arith.extui %x : i8 to i64
    linalg.yield %e : i64
  }
  tm_tensor.scan dimension(0) inclusive(true) ins(%t3 : memref<?xi64>) outs(%o, %a : memref<?xi64>, memref<i64>) {
  ^bb0(%p: i64, %q: i64):
    %s = arith.addi %p, %q : i64
    tm_tensor.yield %s : i64
  }
  return
}

// -----

// Kept: the mask is written through a view made before the conversion (m[1:] = ...) between the
// conversion and the scan: the scan must read the converted values.
// CHECK-LABEL: func.func @scan_cast_view_written
// CHECK:         arith.extui
// CHECK:         call @__sym_scan_add_inc_d0_{{[0-9]+}}(%{{.*}}, %arg1, %arg2) : (memref<?xi64>, memref<?xi64>, memref<i64>) -> ()
#id2 = affine_map<(d0) -> (d0)>
func.func @scan_cast_view_written(%m: memref<?xi1>, %o: memref<?xi64>, %a: memref<i64>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?xi1>
  %sv = memref.subview %m[0] [%n] [1] : memref<?xi1> to memref<?xi1, strided<[1]>>
  %t = memref.alloc(%n) : memref<?xi64>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]} ins(%m : memref<?xi1>) outs(%t : memref<?xi64>) {
  ^bb0(%x: i1, %y: i64):
    %e = arith.extui %x : i1 to i64
    linalg.yield %e : i64
  }
  %false = arith.constant false
  linalg.fill ins(%false : i1) outs(%sv : memref<?xi1, strided<[1]>>)
  tm_tensor.scan dimension(0) inclusive(true) ins(%t : memref<?xi64>) outs(%o, %a : memref<?xi64>, memref<i64>) {
  ^bb0(%p: i64, %q: i64):
    %s = arith.addi %p, %q : i64
    tm_tensor.yield %s : i64
  }
  return
}

// -----

// Scatters (index_put; the fill of data-dependent sizes) become index_put_ calls: an overwrite with
// unique indices, or an add. An overwrite whose indices may repeat keeps the loop (its order decides).
// CHECK-LABEL: func.func @scatters
// CHECK:         call @__sym_scatter_set_m0_0(%arg0, %arg1, %arg2) : (memref<?x1x?xf32>, memref<?x1xi64>, memref<?x?xf32>) -> ()
// CHECK:         call @__sym_scatter_add_m0_1(%arg3, %arg1, %arg4) : (memref<?x1xf32>, memref<?x1xi64>, memref<?xf32>) -> ()
// CHECK:         tm_tensor.scatter
// CHECK:       func.func private @__sym_scatter_set_m0_0({{.*}}) attributes {sym.library_call = "scatter_set_m0"}
func.func @scatters(%u: memref<?x1x?xf32>, %i: memref<?x1xi64>, %o: memref<?x?xf32>, %v: memref<?x1xf32>, %p: memref<?xf32>) {
  tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%u, %i : memref<?x1x?xf32>, memref<?x1xi64>) outs(%o : memref<?x?xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  }
  tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%v, %i : memref<?x1xf32>, memref<?x1xi64>) outs(%p : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    tm_tensor.yield %s : f32
  }
  tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%v, %i : memref<?x1xf32>, memref<?x1xi64>) outs(%p : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  }
  return
}

// -----

// Contractions that elementwise fusion generalized (GPT-2's x.view(-1, C) @ W with the reshape folded
// through it) become einsum calls; a zero fill of the output just before (views and sizes in
// between) makes it an `_init` call and goes.
// CHECK-LABEL: func.func @contractions
// CHECK-NOT:     linalg.fill
// CHECK:         call @__sym_einsum_init_abd_dc_abc_0(%arg0, %arg1, %[[C:.*]]) : (memref<?x?x256xf32>, memref<256x768xf32>, memref<?x?x768xf32>) -> ()
// CHECK:         call @__sym_einsum_abce_abde_abcd_1(%arg3, %arg4, %arg5)
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:       func.func private @__sym_einsum_init_abd_dc_abc_0({{.*}}) attributes {sym.library_call = "einsum_init_abd_dc_abc"}
func.func @contractions(%x: memref<?x?x256xf32>, %w: memref<256x768xf32>, %flat: memref<?x768xf32>,
                        %q: memref<?x4x?x64xf32>, %k: memref<?x4x?x64xf32>, %s: memref<?x4x?x?xf32>, %o: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %d0 = memref.dim %x, %c0 : memref<?x?x256xf32>
  %d1 = memref.dim %x, %c1 : memref<?x?x256xf32>
  linalg.fill ins(%zero : f32) outs(%flat : memref<?x768xf32>)
  %c = memref.expand_shape %flat [[0, 1], [2]] output_shape [%d0, %d1, 768] : memref<?x768xf32> into memref<?x?x768xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>,
                                   affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x256xf32>, memref<256x768xf32>) outs(%c : memref<?x?x768xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  // q @ k^T per batch and head, accumulating (no fill)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<?x4x?x64xf32>, memref<?x4x?x64xf32>) outs(%s : memref<?x4x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %b, %a : f32
    %r = arith.addf %m, %acc : f32
    linalg.yield %r : f32
  }
  // left alone: the body is not out + a * b
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%o, %o : memref<?x?xf32>, memref<?x?xf32>) outs(%o : memref<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.maximumf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A generalized contraction of bf16 inputs into float32 (each input converted once in the body) is an
// einsum call on the bf16 buffers; one that converts only one input is left alone.
// CHECK-LABEL: func.func @half_contractions
// CHECK:         call @__sym_einsum_abd_dc_abc_0(%arg0, %arg1, %arg2) : (memref<?x?x256xbf16>, memref<256x768xbf16>, memref<?x?x768xf32>) -> ()
// CHECK:         linalg.generic
func.func @half_contractions(%x: memref<?x?x256xbf16>, %w: memref<256x768xbf16>, %c: memref<?x?x768xf32>, %wf: memref<256x768xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>,
                                   affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x256xbf16>, memref<256x768xbf16>) outs(%c : memref<?x?x768xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>,
                                   affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wf : memref<?x?x256xbf16>, memref<256x768xf32>) outs(%c : memref<?x?x768xf32>) {
  ^bb0(%a: bf16, %b: f32, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %m = arith.mulf %ea, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// nn.Linear's weight.t() copied into a buffer only the contraction reads: the einsum reads a
// transposed view of the argument instead (no copy kernel a call), with the same subscripts.
// CHECK-LABEL: func.func @contraction_of_transposed_weight
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[T:.*]] = memref.transpose %arg1 (d0, d1) -> (d1, d0) : memref<768x256xf32> to memref<256x768xf32, strided<[1, 256]>>
// CHECK:         call @__sym_einsum_abd_dc_abc_0(%arg0, %[[T]], %arg2) : (memref<?x?x256xf32>, memref<256x768xf32, strided<[1, 256]>>, memref<?x?x768xf32>) -> ()
func.func @contraction_of_transposed_weight(%x: memref<?x?x256xf32>, %w: memref<768x256xf32>, %c: memref<?x?x768xf32>) {
  %wt = memref.alloc() : memref<256x768xf32>
  linalg.transpose ins(%w : memref<768x256xf32>) outs(%wt : memref<256x768xf32>) permutation = [1, 0]
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>,
                                   affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wt : memref<?x?x256xf32>, memref<256x768xf32>) outs(%c : memref<?x?x768xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}
