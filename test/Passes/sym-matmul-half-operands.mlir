// sym-matmul-half-operands: a float32 matmul of extf copies of half tensors reads the half tensors.
// RUN: symopt %s --split-input-file --sym-matmul-half-operands | filecheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
// bf16 input and weight, float32 accumulator: the matmul reads both bf16 tensors.
// CHECK-LABEL: func.func @linear
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<?x256xbf16>, tensor<256x64xbf16>) outs(%arg2 : tensor<?x64xf32>)
// CHECK-NEXT:    return %[[MM]]
func.func @linear(%x: tensor<?x256xbf16>, %w: tensor<256x64xbf16>, %acc: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e = tensor.empty(%n) : tensor<?x256xf32>
  %xa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x256xbf16>) outs(%e : tensor<?x256xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  } -> tensor<?x256xf32>
  %f = tensor.empty() : tensor<256x64xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<256x64xbf16>) outs(%f : tensor<256x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  } -> tensor<256x64xf32>
  %y = linalg.matmul ins(%xa, %wa : tensor<?x256xf32>, tensor<256x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// Batches (attention scores of f16 heads) too.
// CHECK-LABEL: func.func @scores
// CHECK:         linalg.batch_matmul ins(%arg0, %arg1 : tensor<4x8x16xf16>, tensor<4x16x8xf16>) outs(%arg2 : tensor<4x8x8xf32>)
func.func @scores(%q: tensor<4x8x16xf16>, %k: tensor<4x16x8xf16>, %acc: tensor<4x8x8xf32>) -> tensor<4x8x8xf32> {
  %e = tensor.empty() : tensor<4x8x16xf32>
  %qa = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<4x8x16xf16>) outs(%e : tensor<4x8x16xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<4x8x16xf32>
  %f = tensor.empty() : tensor<4x16x8xf32>
  %ka = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%k : tensor<4x16x8xf16>) outs(%f : tensor<4x16x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<4x16x8xf32>
  %y = linalg.batch_matmul ins(%qa, %ka : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%acc : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  return %y : tensor<4x8x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
// Left alone: one operand is float32 data (not a copy of a half tensor).
// CHECK-LABEL: func.func @no_fold_when_one_operand_is_float32
// CHECK:         linalg.generic
// CHECK:         linalg.matmul ins(%{{.*}}, %arg1 : tensor<8x256xf32>, tensor<256x64xf32>)
func.func @no_fold_when_one_operand_is_float32(%x: tensor<8x256xbf16>, %w: tensor<256x64xf32>, %acc: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x256xf32>
  %xa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x256xbf16>) outs(%e : tensor<8x256xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  } -> tensor<8x256xf32>
  %y = linalg.matmul ins(%xa, %w : tensor<8x256xf32>, tensor<256x64xf32>) outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
// Left alone: a copy that also transposes, and a conversion that computes more than the extension.
// CHECK-LABEL: func.func @no_fold_when_the_copy_does_more
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>)
func.func @no_fold_when_the_copy_does_more(%x: tensor<8x8xbf16>, %w: tensor<8x8xbf16>, %acc: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %xa = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xbf16>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    linalg.yield %0 : f32
  } -> tensor<8x8xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<8x8xbf16>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.mulf %0, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<8x8xf32>
  %y = linalg.matmul ins(%xa, %wa : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
