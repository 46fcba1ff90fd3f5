// RUN: symopt %s --split-input-file --sym-gpu-gemm-bias-grad | filecheck %s

// A bf16 linear layer's weight and bias gradients: the weight gradient's call also writes the bias
// gradient, rounded once into the output's view (which moves before the call); the fill, the
// column sum, its float32 buffer and the rounding go.
// CHECK-LABEL: func.func @bf16
// CHECK:       %[[D:.*]] = memref.expand_shape %arg3 {{\[\[}}0, 1]] output_shape [1, 256] : memref<256xbf16> into memref<1x256xbf16>
// CHECK-NEXT:  call @__sym_einsum_bgrad_ca_cb_ab_[[N:[0-9]+]](%arg0, %arg1, %arg2, %[[D]]) : (memref<?x256xbf16>, memref<?x1024xbf16>, memref<256x1024xbf16>, memref<1x256xbf16>) -> ()
// CHECK-NEXT:  return
// CHECK:       func.func private @__sym_einsum_bgrad_ca_cb_ab_[[N]]({{.*}}) attributes {sym.library_call = "einsum_bgrad_ca_cb_ab"}
// CHECK-NOT:   @__sym_einsum_init_ca_cb_ab_0(
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (0, d1)>
func.func @bf16(%dy: memref<?x256xbf16>, %x: memref<?x1024xbf16>, %dw: memref<256x1024xbf16>, %db: memref<256xbf16>) {
  %zero = arith.constant 0.0 : f32
  call @__sym_einsum_init_ca_cb_ab_0(%dy, %x, %dw) : (memref<?x256xbf16>, memref<?x1024xbf16>, memref<256x1024xbf16>) -> ()
  %r = memref.alloc() : memref<1x256xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x256xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<?x256xbf16>) outs(%r : memref<1x256xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %s = arith.addf %e, %out : f32
    linalg.yield %s : f32
  }
  %d = memref.expand_shape %db [[0, 1]] output_shape [1, 256] : memref<256xbf16> into memref<1x256xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%r : memref<1x256xf32>) outs(%d : memref<1x256xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
func.func private @__sym_einsum_init_ca_cb_ab_0(memref<?x256xbf16>, memref<?x1024xbf16>, memref<256x1024xbf16>) attributes {sym.library_call = "einsum_init_ca_cb_ab"}

// -----

// float32, the column sum before the product, into a [N] buffer that a later kernel reads: the call
// writes that buffer (its allocation moves before the call).
// CHECK-LABEL: func.func @float32
// CHECK:       %[[R:.*]] = memref.alloc() : memref<64xf32>
// CHECK-NEXT:  call @__sym_einsum_bgrad_ca_cb_ab_{{[0-9]+}}(%arg0, %arg1, %arg2, %[[R]]) : (memref<?x64xf32>, memref<?x32xf32>, memref<64x32xf32>, memref<64xf32>) -> ()
// CHECK-NEXT:  linalg.generic {{.*}} ins(%[[R]] : memref<64xf32>) outs(%arg3 : memref<64xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>
func.func @float32(%dy: memref<?x64xf32>, %x: memref<?x32xf32>, %dw: memref<64x32xf32>, %db: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %r = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<64xf32>)
  linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<?x64xf32>) outs(%r : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  call @__sym_einsum_init_ca_cb_ab_0(%dy, %x, %dw) : (memref<?x64xf32>, memref<?x32xf32>, memref<64x32xf32>) -> ()
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%r : memref<64xf32>) outs(%db : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  }
  return
}
func.func private @__sym_einsum_init_ca_cb_ab_0(memref<?x64xf32>, memref<?x32xf32>, memref<64x32xf32>) attributes {sym.library_call = "einsum_init_ca_cb_ab"}

// -----

// float32, the column sum written straight into a view of the gradient output (what bufferization
// leaves when nothing else reads the sum): the view moves before the call, which writes it.
// CHECK-LABEL: func.func @float32_into_an_output_view
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    %[[D:.*]] = memref.expand_shape %arg3
// CHECK-NEXT:    call @__sym_einsum_bgrad_ca_cb_ab_{{[0-9]+}}(%arg0, %arg1, %arg2, %[[D]]) : (memref<?x24xf32>, memref<?x16xf32>, memref<24x16xf32>, memref<1x24xf32>) -> ()
// CHECK-NEXT:    return
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#m3 = affine_map<(d0, d1) -> (0, d1)>
func.func @float32_into_an_output_view(%dy: memref<?x24xf32>, %x: memref<?x16xf32>, %dw: memref<24x16xf32>, %db: memref<24xf32>) {
  %zero = arith.constant 0.0 : f32
  call @__sym_einsum_init_ca_cb_ab_0(%dy, %x, %dw) : (memref<?x24xf32>, memref<?x16xf32>, memref<24x16xf32>) -> ()
  %d = memref.expand_shape %db [[0, 1]] output_shape [1, 24] : memref<24xf32> into memref<1x24xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<1x24xf32>)
  linalg.generic {indexing_maps = [#m2, #m3], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<?x24xf32>) outs(%d : memref<1x24xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  return
}
func.func private @__sym_einsum_init_ca_cb_ab_0(memref<?x24xf32>, memref<?x16xf32>, memref<24x16xf32>) attributes {sym.library_call = "einsum_init_ca_cb_ab"}

// -----

// Left alone, each in a function of its own:
// - the column sum of another buffer than the product's first operand (the product's b);
// - a bf16 sum rounded after another op (its square);
// - dY written between the product and the sum;
// - the sum read between the reduction and a product that comes after it;
// - a float32 sum of a product written in bf16 (cuBLASLt's bias gradient has the product's type).
#i = affine_map<(d0, d1) -> (d0, d1)>
#r1 = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @sum_of_b
// CHECK-NOT:   __sym_einsum_bgrad
// CHECK:       return
func.func @sum_of_b(%dy: memref<?x16xbf16>, %x: memref<?x16xbf16>, %dw: memref<16x16xbf16>, %o: memref<1x16xbf16>) {
  %zero = arith.constant 0.0 : f32
  call @__sym_einsum_init_ca_cb_ab_0(%dy, %x, %dw) : (memref<?x16xbf16>, memref<?x16xbf16>, memref<16x16xbf16>) -> ()
  %r = memref.alloc() : memref<1x16xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#i, #r1], iterator_types = ["reduction", "parallel"]} ins(%x : memref<?x16xbf16>) outs(%r : memref<1x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %s = arith.addf %e, %out : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel", "parallel"]} ins(%r : memref<1x16xf32>) outs(%o : memref<1x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
// CHECK-LABEL: func.func @rounded_after_a_square
// CHECK-NOT:   __sym_einsum_bgrad
// CHECK:       return
func.func @rounded_after_a_square(%dy: memref<?x16xbf16>, %x: memref<?x16xbf16>, %dw: memref<16x16xbf16>, %o: memref<1x16xbf16>) {
  %zero = arith.constant 0.0 : f32
  call @__sym_einsum_init_ca_cb_ab_0(%dy, %x, %dw) : (memref<?x16xbf16>, memref<?x16xbf16>, memref<16x16xbf16>) -> ()
  %r = memref.alloc() : memref<1x16xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#i, #r1], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<?x16xbf16>) outs(%r : memref<1x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %s = arith.addf %e, %out : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel", "parallel"]} ins(%r : memref<1x16xf32>) outs(%o : memref<1x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %m = arith.mulf %in, %in : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
// CHECK-LABEL: func.func @dy_written_between
// CHECK-NOT:   __sym_einsum_bgrad
// CHECK:       return
func.func @dy_written_between(%dy: memref<?x16xbf16>, %x: memref<?x16xbf16>, %dw: memref<16x16xbf16>, %o: memref<1x16xbf16>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : bf16
  call @__sym_einsum_init_ca_cb_ab_0(%dy, %x, %dw) : (memref<?x16xbf16>, memref<?x16xbf16>, memref<16x16xbf16>) -> ()
  linalg.fill ins(%one : bf16) outs(%dy : memref<?x16xbf16>)
  %r = memref.alloc() : memref<1x16xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#i, #r1], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<?x16xbf16>) outs(%r : memref<1x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %s = arith.addf %e, %out : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel", "parallel"]} ins(%r : memref<1x16xf32>) outs(%o : memref<1x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
// CHECK-LABEL: func.func @read_before_the_product
// CHECK-NOT:   __sym_einsum_bgrad
// CHECK:       return
func.func @read_before_the_product(%dy: memref<?x16xf32>, %x: memref<?x8xf32>, %dw: memref<16x8xf32>, %o: memref<1x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %r = memref.alloc() : memref<1x16xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#i, #r1], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<?x16xf32>) outs(%r : memref<1x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel", "parallel"]} ins(%r : memref<1x16xf32>) outs(%o : memref<1x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  call @__sym_einsum_init_ca_cb_ab_1(%dy, %x, %dw) : (memref<?x16xf32>, memref<?x8xf32>, memref<16x8xf32>) -> ()
  return
}
// CHECK-LABEL: func.func @float32_sum_of_a_bf16_product
// CHECK-NOT:   __sym_einsum_bgrad
// CHECK:       return
func.func @float32_sum_of_a_bf16_product(%dy: memref<?x16xf32>, %x: memref<?x8xf32>, %dw: memref<16x8xbf16>, %o: memref<1x16xf32>) {
  %zero = arith.constant 0.0 : f32
  call @__sym_einsum_init_ca_cb_ab_2(%dy, %x, %dw) : (memref<?x16xf32>, memref<?x8xf32>, memref<16x8xbf16>) -> ()
  %r = memref.alloc() : memref<1x16xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#i, #r1], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<?x16xf32>) outs(%r : memref<1x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel", "parallel"]} ins(%r : memref<1x16xf32>) outs(%o : memref<1x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}
func.func private @__sym_einsum_init_ca_cb_ab_0(memref<?x16xbf16>, memref<?x16xbf16>, memref<16x16xbf16>) attributes {sym.library_call = "einsum_init_ca_cb_ab"}
func.func private @__sym_einsum_init_ca_cb_ab_1(memref<?x16xf32>, memref<?x8xf32>, memref<16x8xf32>) attributes {sym.library_call = "einsum_init_ca_cb_ab"}
func.func private @__sym_einsum_init_ca_cb_ab_2(memref<?x16xf32>, memref<?x8xf32>, memref<16x8xbf16>) attributes {sym.library_call = "einsum_init_ca_cb_ab"}

// -----

// Left alone (review): the gradient output read (through another value of its buffer) between the
// zero fill and the call; written between the fill and the sum.
// CHECK-LABEL: func.func @read_between_fill_and_call
// CHECK-NOT:   __sym_einsum_bgrad
// CHECK:       return
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#m3 = affine_map<(d0, d1) -> (0, d1)>
#v = affine_map<(d0) -> (d0)>
func.func @read_between_fill_and_call(%dy: memref<?x24xf32>, %x: memref<?x16xf32>, %dw: memref<24x16xf32>, %db: memref<24xf32>, %o: memref<24xf32>) {
  %zero = arith.constant 0.0 : f32
  %d = memref.expand_shape %db [[0, 1]] output_shape [1, 24] : memref<24xf32> into memref<1x24xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<1x24xf32>)
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%db : memref<24xf32>) outs(%o : memref<24xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  call @__sym_einsum_init_ca_cb_ab_0(%dy, %x, %dw) : (memref<?x24xf32>, memref<?x16xf32>, memref<24x16xf32>) -> ()
  linalg.generic {indexing_maps = [#m2, #m3], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<?x24xf32>) outs(%d : memref<1x24xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  return
}
func.func private @__sym_einsum_init_ca_cb_ab_0(memref<?x24xf32>, memref<?x16xf32>, memref<24x16xf32>) attributes {sym.library_call = "einsum_init_ca_cb_ab"}


// -----

// CHECK-LABEL: func.func @written_between_fill_and_sum
// CHECK-NOT:   __sym_einsum_bgrad
// CHECK:       return

// Same, the product after the sum, and %db written (set to one) between the fill and the sum:
// before the pass %db = 1 + sum, after it %db = sum.
func.func @written_between_fill_and_sum(%dy: memref<?x24xf32>, %x: memref<?x16xf32>, %dw: memref<24x16xf32>, %db: memref<24xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %d = memref.expand_shape %db [[0, 1]] output_shape [1, 24] : memref<24xf32> into memref<1x24xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<1x24xf32>)
  linalg.fill ins(%one : f32) outs(%db : memref<24xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<?x24xf32>) outs(%d : memref<1x24xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  call @__sym_einsum_init_ca_cb_ab_0(%dy, %x, %dw) : (memref<?x24xf32>, memref<?x16xf32>, memref<24x16xf32>) -> ()
  return
}
func.func private @__sym_einsum_init_ca_cb_ab_0(memref<?x24xf32>, memref<?x16xf32>, memref<24x16xf32>) attributes {sym.library_call = "einsum_init_ca_cb_ab"}

// -----

// Left alone (review): a [2, N] sum buffer whose row 0 alone the reduction writes (a bf16 one
// rounded whole; a float32 output with rows of its own).
// CHECK-LABEL: func.func @two_rows
// CHECK-NOT:   __sym_einsum_bgrad
// CHECK:       return
#i = affine_map<(d0, d1) -> (d0, d1)>
#r1 = affine_map<(d0, d1) -> (0, d1)>
func.func @two_rows(%dy: memref<?x16xbf16>, %x: memref<?x8xbf16>, %dw: memref<16x8xbf16>, %o: memref<2x16xbf16>) {
  %zero = arith.constant 0.0 : f32
  call @__sym_einsum_init_ca_cb_ab_0(%dy, %x, %dw) : (memref<?x16xbf16>, memref<?x8xbf16>, memref<16x8xbf16>) -> ()
  %r = memref.alloc() : memref<2x16xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<2x16xf32>)
  linalg.generic {indexing_maps = [#i, #r1], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<?x16xbf16>) outs(%r : memref<2x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %s = arith.addf %e, %out : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel", "parallel"]} ins(%r : memref<2x16xf32>) outs(%o : memref<2x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
func.func private @__sym_einsum_init_ca_cb_ab_0(memref<?x16xbf16>, memref<?x8xbf16>, memref<16x8xbf16>) attributes {sym.library_call = "einsum_init_ca_cb_ab"}


// -----

// CHECK-LABEL: func.func @dyn_rows
// CHECK-NOT:   __sym_einsum_bgrad
// CHECK:       return
#i = affine_map<(d0, d1) -> (d0, d1)>
#r1 = affine_map<(d0, d1) -> (0, d1)>

// float32, dynamic leading dim of the sum buffer (a view of an output of ? rows).
func.func @dyn_rows(%dy: memref<?x16xf32>, %x: memref<?x8xf32>, %dw: memref<16x8xf32>, %o: memref<?x16xf32>) {
  %zero = arith.constant 0.0 : f32
  call @__sym_einsum_init_ca_cb_ab_0(%dy, %x, %dw) : (memref<?x16xf32>, memref<?x8xf32>, memref<16x8xf32>) -> ()
  linalg.fill ins(%zero : f32) outs(%o : memref<?x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<?x16xf32>) outs(%o : memref<?x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  return
}
func.func private @__sym_einsum_init_ca_cb_ab_0(memref<?x16xf32>, memref<?x8xf32>, memref<16x8xf32>) attributes {sym.library_call = "einsum_init_ca_cb_ab"}
