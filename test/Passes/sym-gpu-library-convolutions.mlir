// RUN: symopt %s --split-input-file --sym-gpu-library-convolutions | filecheck %s

// Runs on the bufferized compute function (sym-lower-to-nvvm: after one-shot-bufferize, before
// sym-gpu-library-calls and convert-linalg-to-parallel-loops).

// nn.Conv2d(3, 16, 3, padding=1) as torch-mlir lowers it: the zero-padded copy of the input and the
// bias broadcast fold into the call; the padded buffer, its fill and its copy go.
// CHECK-LABEL: func.func @padded_with_bias
// CHECK-NOT:   linalg.map
// CHECK-NOT:   memref.copy
// CHECK-NOT:   linalg.broadcast
// CHECK:       call @__sym_conv_init_plain_s1x1_p1x1_d1x1_b_0(%arg0, %arg1, %arg2, %arg3) : (memref<?x3x?x?xf32>, memref<16x3x3x3xf32>, memref<16xf32>, memref<?x16x?x?xf32>) -> ()
// CHECK-NOT:   linalg.conv_2d_nchw_fchw
// CHECK:       func.func private @__sym_conv_init_plain_s1x1_p1x1_d1x1_b_0({{.*}}) attributes {sym.library_call = "conv_init_plain_s1x1_p1x1_d1x1_b"}
#grow = affine_map<()[s0] -> (s0 + 2)>
func.func @padded_with_bias(%x: memref<?x3x?x?xf32>, %w: memref<16x3x3x3xf32>, %b: memref<16xf32>, %out: memref<?x16x?x?xf32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x3x?x?xf32>
  %h = memref.dim %x, %c2 : memref<?x3x?x?xf32>
  %h2 = affine.apply #grow()[%h]
  %wd = memref.dim %x, %c3 : memref<?x3x?x?xf32>
  %wd2 = affine.apply #grow()[%wd]
  %p = memref.alloc(%n, %h2, %wd2) : memref<?x3x?x?xf32>
  linalg.map outs(%p : memref<?x3x?x?xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %sv = memref.subview %p[0, 0, 1, 1] [%n, 3, %h, %wd] [1, 1, 1, 1] : memref<?x3x?x?xf32> to memref<?x3x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>
  memref.copy %x, %sv : memref<?x3x?x?xf32> to memref<?x3x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>
  linalg.broadcast ins(%b : memref<16xf32>) outs(%out : memref<?x16x?x?xf32>) dimensions = [0, 2, 3]
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : memref<?x3x?x?xf32>, memref<16x3x3x3xf32>) outs(%out : memref<?x16x?x?xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// A padding larger on one side (F.pad before the conv) is not the call's: the padded buffer stays,
// the conv reads it with padding 0. Without a bias, a zero fill initializes the output.
// CHECK-LABEL: func.func @asymmetric_padding_zero_fill
// CHECK:       linalg.fill
// CHECK:       memref.copy
// CHECK-NOT:   linalg.fill
// CHECK:       call @__sym_conv_init_plain_s2x1_p0x0_d1x1_nb_0(%{{.*}}, %arg1, %arg2)
#grow3 = affine_map<()[s0] -> (s0 + 3)>
func.func @asymmetric_padding_zero_fill(%x: memref<1x4x?x9xbf16>, %w: memref<4x4x3x3xbf16>, %out: memref<1x4x?x7xbf16>) -> i32 {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : bf16
  %h = memref.dim %x, %c2 : memref<1x4x?x9xbf16>
  %h3 = affine.apply #grow3()[%h]
  %p = memref.alloc(%h3) : memref<1x4x?x9xbf16>
  linalg.fill ins(%zero : bf16) outs(%p : memref<1x4x?x9xbf16>)
  %sv = memref.subview %p[0, 0, 1, 0] [1, 4, %h, 9] [1, 1, 1, 1] : memref<1x4x?x9xbf16> to memref<1x4x?x9xbf16, strided<[?, ?, 9, 1], offset: 9>>
  memref.copy %x, %sv : memref<1x4x?x9xbf16> to memref<1x4x?x9xbf16, strided<[?, ?, 9, 1], offset: 9>>
  linalg.fill ins(%zero : bf16) outs(%out : memref<1x4x?x7xbf16>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<[2, 1]> : vector<2xi64>} ins(%p, %w : memref<1x4x?x9xbf16>, memref<4x4x3x3xbf16>) outs(%out : memref<1x4x?x7xbf16>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// nn.Conv2d(16, 8, 3, stride=2, groups=2): linalg's grouped layout over [G, C/G] views; the bias
// reaches the output through a generic reading its [G, F/G] view. Dilations are kept.
// CHECK-LABEL: func.func @grouped_with_bias
// CHECK:       %[[O:.*]] = memref.expand_shape %arg3
// CHECK-NOT:   linalg.generic
// CHECK:       %[[W:.*]] = memref.expand_shape %arg1
// CHECK:       call @__sym_conv_init_grouped_s2x2_p0x0_d1x2_b_0(%arg0, %[[W]], %arg2, %[[O]])
// CHECK-NOT:   linalg.conv_2d_ngchw_gfchw
#bias = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @grouped_with_bias(%x: memref<2x2x8x9x9xf32>, %w: memref<8x8x3x3xf32>, %b: memref<8xf32>, %out: memref<2x8x4x3xf32>) -> i32 {
  %b2 = memref.expand_shape %b [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  %o5 = memref.expand_shape %out [[0], [1, 2], [3], [4]] output_shape [2, 2, 4, 4, 3] : memref<2x8x4x3xf32> into memref<2x2x4x4x3xf32>
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%b2 : memref<2x4xf32>) outs(%o5 : memref<2x2x4x4x3xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %w5 = memref.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 4, 8, 3, 3] : memref<8x8x3x3xf32> into memref<2x4x8x3x3xf32>
  linalg.conv_2d_ngchw_gfchw {dilations = dense<[1, 2]> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w5 : memref<2x2x8x9x9xf32>, memref<2x4x8x3x3xf32>) outs(%o5 : memref<2x2x4x4x3xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// Depthwise (groups = channels): torch-mlir's weight [C, KH, KW]. Without an initialization right
// before it the call accumulates (linalg's out += conv).
// CHECK-LABEL: func.func @depthwise_accumulates
// CHECK:       linalg.broadcast
// CHECK:       memref.store
// CHECK:       call @__sym_conv_acc_depthwise_s1x1_p0x0_d1x1_nb_0(%arg0, %arg1, %arg3)
func.func @depthwise_accumulates(%x: memref<1x8x6x6xf16>, %w: memref<8x3x3xf16>, %b: memref<8xf16>, %out: memref<1x8x4x4xf16>) -> i32 {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f16
  linalg.broadcast ins(%b : memref<8xf16>) outs(%out : memref<1x8x4x4xf16>) dimensions = [0, 2, 3]
  memref.store %one, %out[%c0, %c0, %c0, %c0] : memref<1x8x4x4xf16>
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : memref<1x8x6x6xf16>, memref<8x3x3xf16>) outs(%out : memref<1x8x4x4xf16>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// The source is written between its padded copy and the conv: the conv must read the copy, so the
// padding stays a buffer of its own.
// CHECK-LABEL: func.func @source_written_after_copy
// CHECK:       memref.copy
// CHECK:       linalg.fill
// CHECK:       call @__sym_conv_acc_plain_s1x1x1_p0x0x0_d1x1x1_nb_0(%alloc, %arg1, %arg2)
func.func @source_written_after_copy(%x: memref<1x2x4x4x4xf32>, %w: memref<4x2x3x3x3xf32>, %out: memref<1x4x4x4x4xf32>) -> i32 {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<1x2x6x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<1x2x6x6x6xf32>)
  %sv = memref.subview %p[0, 0, 1, 1, 1] [1, 2, 4, 4, 4] [1, 1, 1, 1, 1] : memref<1x2x6x6x6xf32> to memref<1x2x4x4x4xf32, strided<[432, 216, 36, 6, 1], offset: 43>>
  memref.copy %x, %sv : memref<1x2x4x4x4xf32> to memref<1x2x4x4x4xf32, strided<[432, 216, 36, 6, 1], offset: 43>>
  linalg.fill ins(%zero : f32) outs(%x : memref<1x2x4x4x4xf32>)
  linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>} ins(%p, %w : memref<1x2x6x6x6xf32>, memref<4x2x3x3x3xf32>) outs(%out : memref<1x4x4x4x4xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// Integer convolutions, and tensors, stay loops.
// CHECK-LABEL: func.func @left_alone
// CHECK:       linalg.conv_2d_nchw_fchw
// CHECK:       linalg.conv_2d_nchw_fchw
// CHECK-NOT:   call
func.func @left_alone(%x: memref<1x1x4x4xi32>, %w: memref<1x1x3x3xi32>, %out: memref<1x1x2x2xi32>,
                      %t: tensor<1x1x4x4xf32>, %tw: tensor<1x1x3x3xf32>, %to: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<1x1x4x4xi32>, memref<1x1x3x3xi32>) outs(%out : memref<1x1x2x2xi32>)
  %r = linalg.conv_2d_nchw_fchw ins(%t, %tw : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) outs(%to : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %r : tensor<1x1x2x2xf32>
}

// -----

// The padded buffer under a reshape of its channels: a grouped conv reads the [N, G, C/G, ...] view of
// a padded [N, C, ...] buffer (the call reads the flat source), a depthwise one the [N, C, ...]
// collapse of a padded grouped-layout buffer (the call reads the same collapse of the source).
// CHECK-LABEL: func.func @padding_under_reshapes
// CHECK-NOT:   linalg.fill
// CHECK:       call @__sym_conv_acc_grouped_s1x1_p1x1_d1x1_nb_0(%arg0, %{{.*}}, %arg2)
// CHECK:       %[[C:.*]] = memref.collapse_shape %arg3 {{\[}}[0], [1, 2], [3], [4]]
// CHECK:       call @__sym_conv_acc_depthwise_s1x1_p2x2_d2x2_nb_1(%[[C]], %arg4, %arg5)
func.func @padding_under_reshapes(%x: memref<1x8x5x5xf32>, %w: memref<8x4x3x3xf32>, %out: memref<1x2x4x5x5xf32>,
                                  %y: memref<1x2x4x5x5xf32>, %dw: memref<8x3x3xf32>, %out2: memref<1x8x5x5xf32>) -> i32 {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<1x8x7x7xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<1x8x7x7xf32>)
  %sv = memref.subview %p[0, 0, 1, 1] [1, 8, 5, 5] [1, 1, 1, 1] : memref<1x8x7x7xf32> to memref<1x8x5x5xf32, strided<[392, 49, 7, 1], offset: 8>>
  memref.copy %x, %sv : memref<1x8x5x5xf32> to memref<1x8x5x5xf32, strided<[392, 49, 7, 1], offset: 8>>
  %p5 = memref.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 7, 7] : memref<1x8x7x7xf32> into memref<1x2x4x7x7xf32>
  %w5 = memref.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 4, 4, 3, 3] : memref<8x4x3x3xf32> into memref<2x4x4x3x3xf32>
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p5, %w5 : memref<1x2x4x7x7xf32>, memref<2x4x4x3x3xf32>) outs(%out : memref<1x2x4x5x5xf32>)
  %q = memref.alloc() : memref<1x2x4x9x9xf32>
  linalg.fill ins(%zero : f32) outs(%q : memref<1x2x4x9x9xf32>)
  %sq = memref.subview %q[0, 0, 0, 2, 2] [1, 2, 4, 5, 5] [1, 1, 1, 1, 1] : memref<1x2x4x9x9xf32> to memref<1x2x4x5x5xf32, strided<[648, 324, 81, 9, 1], offset: 20>>
  memref.copy %y, %sq : memref<1x2x4x5x5xf32> to memref<1x2x4x5x5xf32, strided<[648, 324, 81, 9, 1], offset: 20>>
  %q4 = memref.collapse_shape %q [[0], [1, 2], [3], [4]] : memref<1x2x4x9x9xf32> into memref<1x8x9x9xf32>
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%q4, %dw : memref<1x8x9x9xf32>, memref<8x3x3xf32>) outs(%out2 : memref<1x8x5x5xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// bf16 inputs with a float32 accumulator (torch-mlir's half conv): the call computes in bf16 as eager
// (its result converts exactly into the float32 buffer); the float32 copy of the bias goes, the call
// takes the bf16 one. The buffer is fresh: the call may hand its result out as it (`_r`).
// CHECK-LABEL: func.func @half_inputs
// CHECK-NOT:   arith.extf
// CHECK-NOT:   linalg.broadcast
// CHECK:       %[[R:.*]] = call @__sym_conv_init_plain_s1x1_p0x0_d1x1_b_r_0(%arg0, %arg1, %arg2, %[[A:.*]], %[[A]]) : ({{.*}}) -> memref<2x8x4x4xf32>
// CHECK:       linalg.generic {{.*}} ins(%[[R]] : memref<2x8x4x4xf32>)
#id1 = affine_map<(d0) -> (d0)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @half_inputs(%x: memref<2x4x6x6xbf16>, %w: memref<8x4x3x3xbf16>, %b: memref<8xbf16>, %out: memref<2x8x4x4xbf16>) -> i32 {
  %acc = memref.alloc() : memref<2x8x4x4xf32>
  %b32 = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%b : memref<8xbf16>) outs(%b32 : memref<8xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  }
  linalg.broadcast ins(%b32 : memref<8xf32>) outs(%acc : memref<2x8x4x4xf32>) dimensions = [0, 2, 3]
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x4x6x6xbf16>, memref<8x4x3x3xbf16>) outs(%acc : memref<2x8x4x4xf32>)
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%acc : memref<2x8x4x4xf32>) outs(%out : memref<2x8x4x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// Review regressions. The buffer is read in another block (sym-assert-to-status' branches): no
// hand-out (it crashed walking up past the function).
// CHECK-LABEL: func.func @multiblock
// CHECK:       call @__sym_conv_init_plain_s1x1_p0x0_d1x1_nb_0(%arg0, %arg1, %alloc) :
// CHECK:       memref.copy %alloc, %arg2
func.func @multiblock(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %res: memref<1x4x4x4xf32>, %c: i1) -> i32 {
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() : memref<1x4x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<1x4x4x4xf32>)
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<1x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%out : memref<1x4x4x4xf32>)
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  memref.copy %out, %res : memref<1x4x4x4xf32> to memref<1x4x4x4xf32>
  cf.br ^bb2
^bb2:
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// The bias buffer is overwritten between its broadcast and the conv: no fold, the call accumulates.
// CHECK-LABEL: func.func @bias_written
// CHECK:       linalg.broadcast
// CHECK:       call @__sym_conv_acc_plain_s1x1_p0x0_d1x1_nb_0
func.func @bias_written(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %b: memref<4xf32>, %out: memref<1x4x4x4xf32>) -> i32 {
  %zero = arith.constant 0.0 : f32
  %b2 = memref.alloc() : memref<4xf32>
  memref.copy %b, %b2 : memref<4xf32> to memref<4xf32>
  linalg.broadcast ins(%b2 : memref<4xf32>) outs(%out : memref<1x4x4x4xf32>) dimensions = [0, 2, 3]
  linalg.fill ins(%zero : f32) outs(%b2 : memref<4xf32>)
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<1x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%out : memref<1x4x4x4xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// A per-group vector broadcast into the grouped view is not a per-channel bias: no fold.
// CHECK-LABEL: func.func @group_bias
// CHECK:       linalg.broadcast
// CHECK:       call @__sym_conv_acc_grouped_s1x1_p0x0_d1x1_nb_0
func.func @group_bias(%x: memref<1x2x4x5x5xf32>, %w: memref<2x3x4x3x3xf32>, %b: memref<2xf32>, %out: memref<1x2x3x3x3xf32>) -> i32 {
  linalg.broadcast ins(%b : memref<2xf32>) outs(%out : memref<1x2x3x3x3xf32>) dimensions = [0, 2, 3, 4]
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : memref<1x2x4x5x5xf32>, memref<2x3x4x3x3xf32>) outs(%out : memref<1x2x3x3x3xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// A view of the padded buffer that splits the batch dim, not the channels: the padding stays.
// CHECK-LABEL: func.func @batch_split
// CHECK:       linalg.fill
// CHECK:       call @__sym_conv_acc_grouped_s1x1_p0x0_d1x1_nb_0(%expand_shape, %arg1, %arg2)
func.func @batch_split(%x: memref<4x4x5x5xf32>, %w: memref<2x3x4x3x3xf32>, %out: memref<2x2x3x5x5xf32>) -> i32 {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<4x4x7x7xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<4x4x7x7xf32>)
  %sv = memref.subview %p[0, 0, 1, 1] [4, 4, 5, 5] [1, 1, 1, 1] : memref<4x4x7x7xf32> to memref<4x4x5x5xf32, strided<[196, 49, 7, 1], offset: 8>>
  memref.copy %x, %sv : memref<4x4x5x5xf32> to memref<4x4x5x5xf32, strided<[196, 49, 7, 1], offset: 8>>
  %p5 = memref.expand_shape %p [[0, 1], [2], [3], [4]] output_shape [2, 2, 4, 7, 7] : memref<4x4x7x7xf32> into memref<2x2x4x7x7xf32>
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p5, %w : memref<2x2x4x7x7xf32>, memref<2x3x4x3x3xf32>) outs(%out : memref<2x2x3x5x5xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// The bf16 source of the bias is overwritten after its float32 copy: the call takes the copy.
// CHECK-LABEL: func.func @half_bias_written
// CHECK:       arith.extf
// CHECK:       call @__sym_conv_init_plain_s1x1_p0x0_d1x1_b_0(%arg0, %arg1, %[[B32:.*]], %arg3) : ({{.*}}, memref<8xf32>, memref<2x8x4x4xf32>)
#idh = affine_map<(d0) -> (d0)>
func.func @half_bias_written(%x: memref<2x4x6x6xbf16>, %w: memref<8x4x3x3xbf16>, %b: memref<8xbf16>, %out: memref<2x8x4x4xf32>) -> i32 {
  %z = arith.constant 0.0 : bf16
  %bb = memref.alloc() : memref<8xbf16>
  memref.copy %b, %bb : memref<8xbf16> to memref<8xbf16>
  %b32 = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#idh, #idh], iterator_types = ["parallel"]} ins(%bb : memref<8xbf16>) outs(%b32 : memref<8xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  }
  linalg.fill ins(%z : bf16) outs(%bb : memref<8xbf16>)
  linalg.broadcast ins(%b32 : memref<8xf32>) outs(%out : memref<2x8x4x4xf32>) dimensions = [0, 2, 3]
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x4x6x6xbf16>, memref<8x4x3x3xbf16>) outs(%out : memref<2x8x4x4xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// A float32 bias converted from a permuted bf16 vector is not that vector: the call takes the copy.
// CHECK-LABEL: func.func @half_bias_reversed
// CHECK:       arith.extf
// CHECK:       call @__sym_conv_init_plain_s1x1_p0x0_d1x1_b_0(%arg0, %arg1, %alloc, %arg3)
#rev = affine_map<(d0) -> (-d0 + 7)>
#idr = affine_map<(d0) -> (d0)>
func.func @half_bias_reversed(%x: memref<2x4x6x6xbf16>, %w: memref<8x4x3x3xbf16>, %b: memref<8xbf16>, %out: memref<2x8x4x4xf32>) -> i32 {
  %b32 = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#rev, #idr], iterator_types = ["parallel"]} ins(%b : memref<8xbf16>) outs(%b32 : memref<8xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  }
  linalg.broadcast ins(%b32 : memref<8xf32>) outs(%out : memref<2x8x4x4xf32>) dimensions = [0, 2, 3]
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x4x6x6xbf16>, memref<8x4x3x3xbf16>) outs(%out : memref<2x8x4x4xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}

// -----

// A grouped bf16 conv whose bf16 bias the initializing generic converts into the float32
// accumulator (through its [G, F/G] view): the call takes the bf16 bias. An f16 bias converted for
// bf16 inputs is not folded (the runtime would round it to bf16): that call accumulates.
// CHECK-LABEL: func.func @grouped_half_bias
// CHECK:       call @__sym_conv_init_grouped_s1x1_p0x0_d1x1_b_0(%arg0, %{{.*}}, %arg2, %{{.*}}) : (memref<1x2x4x7x7xbf16>, memref<2x4x4x3x3xbf16>, memref<8xbf16>, memref<1x2x4x5x5xf32>) -> ()
// CHECK:       linalg.generic
// CHECK:       call @__sym_conv_acc_grouped_s1x1_p0x0_d1x1_nb_1(
#gbias = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>
#gid = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @grouped_half_bias(%x: memref<1x2x4x7x7xbf16>, %w: memref<8x4x3x3xbf16>, %b: memref<8xbf16>, %out: memref<1x8x5x5xf32>, %bh: memref<8xf16>, %out2: memref<1x8x5x5xf32>) -> i32 {
  %b2 = memref.expand_shape %b [[0, 1]] output_shape [2, 4] : memref<8xbf16> into memref<2x4xbf16>
  %o5 = memref.expand_shape %out [[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 5, 5] : memref<1x8x5x5xf32> into memref<1x2x4x5x5xf32>
  linalg.generic {indexing_maps = [#gbias, #gid], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%b2 : memref<2x4xbf16>) outs(%o5 : memref<1x2x4x5x5xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  }
  %w5 = memref.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 4, 4, 3, 3] : memref<8x4x3x3xbf16> into memref<2x4x4x3x3xbf16>
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w5 : memref<1x2x4x7x7xbf16>, memref<2x4x4x3x3xbf16>) outs(%o5 : memref<1x2x4x5x5xf32>)
  %bh2 = memref.expand_shape %bh [[0, 1]] output_shape [2, 4] : memref<8xf16> into memref<2x4xf16>
  %p5 = memref.expand_shape %out2 [[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 5, 5] : memref<1x8x5x5xf32> into memref<1x2x4x5x5xf32>
  linalg.generic {indexing_maps = [#gbias, #gid], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%bh2 : memref<2x4xf16>) outs(%p5 : memref<1x2x4x5x5xf32>) {
  ^bb0(%in: f16, %o: f32):
    %e = arith.extf %in : f16 to f32
    linalg.yield %e : f32
  }
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w5 : memref<1x2x4x7x7xbf16>, memref<2x4x4x3x3xbf16>) outs(%p5 : memref<1x2x4x5x5xf32>)
  %ok = arith.constant 0 : i32
  return %ok : i32
}
