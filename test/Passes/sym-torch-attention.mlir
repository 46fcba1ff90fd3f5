// RUN: symopt %s --split-input-file --verify-diagnostics --sym-torch-attention | filecheck %s

// Causal attention without a scale: a tm_tensor.attention on builtin tensors, is_causal and
// 1/sqrt(64) as attributes, the output's dynamic length from q.
// CHECK-LABEL: func.func @causal
// CHECK-DAG:   %[[Q:.+]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[1,4,?,64],f32> -> tensor<1x4x?x64xf32>
// CHECK-DAG:   %[[K:.+]] = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[1,4,?,64],f32> -> tensor<1x4x?x64xf32>
// CHECK-DAG:   %[[V:.+]] = torch_c.to_builtin_tensor %arg2 : !torch.vtensor<[1,4,?,64],f32> -> tensor<1x4x?x64xf32>
// CHECK:       %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT:  %[[L:.+]] = tensor.dim %[[Q]], %[[C2]] : tensor<1x4x?x64xf32>
// CHECK-NEXT:  %[[E:.+]] = tensor.empty(%[[L]]) : tensor<1x4x?x64xf32>
// CHECK-NEXT:  %[[A:.+]] = tm_tensor.attention {sym.causal = true, sym.scale = 1.250000e-01 : f64} ins(%[[Q]], %[[K]], %[[V]] : tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>) outs(%[[E]] : tensor<1x4x?x64xf32>) -> tensor<1x4x?x64xf32>
// CHECK-NEXT:  %[[R:.+]] = torch_c.from_builtin_tensor %[[A]] : tensor<1x4x?x64xf32> -> !torch.vtensor<[1,4,?,64],f32>
// CHECK-NOT:   torch.operator
// CHECK:       return %[[R]]
func.func @causal(%q: !torch.vtensor<[1,4,?,64],f32>, %k: !torch.vtensor<[1,4,?,64],f32>, %v: !torch.vtensor<[1,4,?,64],f32>) -> !torch.vtensor<[1,4,?,64],f32> {
  %none = torch.constant.none
  %true = torch.constant.bool true
  %0 = torch.operator "torch.mlir_sym.attention"(%q, %k, %v, %none, %true, %none) : (!torch.vtensor<[1,4,?,64],f32>, !torch.vtensor<[1,4,?,64],f32>, !torch.vtensor<[1,4,?,64],f32>, !torch.none, !torch.bool, !torch.none) -> !torch.vtensor<[1,4,?,64],f32>
  return %0 : !torch.vtensor<[1,4,?,64],f32>
}

// -----

// A bool mask [?, 1, 1, S] becomes a linalg.generic broadcasting it to the scores' shape
// [B, 2, L, S] (tm_tensor's verifier compares a mask's dims with q's literally): its unit dims read
// index 0. A given scale is kept; the output has v's head dim.
// CHECK-DAG:   #[[BCAST:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @bool_mask
// CHECK:       %[[M:.+]] = torch_c.to_builtin_tensor %arg3 : !torch.vtensor<[?,1,1,?],i1> -> tensor<?x1x1x?xi1>
// CHECK:       %[[ME:.+]] = tensor.empty(%{{.+}}, %{{.+}}, %{{.+}}) : tensor<?x2x?x?xi1>
// CHECK-NEXT:  %[[MB:.+]] = linalg.generic {indexing_maps = [#[[BCAST]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[M]] : tensor<?x1x1x?xi1>) outs(%[[ME]] : tensor<?x2x?x?xi1>)
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: i1, %{{.+}}: i1):
// CHECK-NEXT:    linalg.yield %[[IN]] : i1
// CHECK:       %[[OE:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<?x2x?x32xbf16>
// CHECK-NEXT:  tm_tensor.attention {sym.causal = false, sym.scale = 3.000000e-01 : f64} ins(%{{.+}}, %{{.+}}, %{{.+}}, %[[MB]] : tensor<?x2x?x16xbf16>, tensor<?x2x?x16xbf16>, tensor<?x2x?x32xbf16>, tensor<?x2x?x?xi1>) outs(%[[OE]] : tensor<?x2x?x32xbf16>)
func.func @bool_mask(%q: !torch.vtensor<[?,2,?,16],bf16>, %k: !torch.vtensor<[?,2,?,16],bf16>, %v: !torch.vtensor<[?,2,?,32],bf16>, %m: !torch.vtensor<[?,1,1,?],i1>) -> !torch.vtensor<[?,2,?,32],bf16> {
  %false = torch.constant.bool false
  %scale = torch.constant.float 3.000000e-01
  %0 = torch.operator "torch.mlir_sym.attention"(%q, %k, %v, %m, %false, %scale) : (!torch.vtensor<[?,2,?,16],bf16>, !torch.vtensor<[?,2,?,16],bf16>, !torch.vtensor<[?,2,?,32],bf16>, !torch.vtensor<[?,1,1,?],i1>, !torch.bool, !torch.float) -> !torch.vtensor<[?,2,?,32],bf16>
  return %0 : !torch.vtensor<[?,2,?,32],bf16>
}

// -----

// Other operators are left alone.
// CHECK-LABEL: func.func @other_operator
// CHECK:       torch.operator "torch.aten.something"
// CHECK-NOT:   tm_tensor.attention
func.func @other_operator(%x: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.operator "torch.aten.something"(%x) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}

// -----

func.func @causal_not_constant(%q: !torch.vtensor<[1,4,?,64],f32>, %c: !torch.bool) -> !torch.vtensor<[1,4,?,64],f32> {
  %none = torch.constant.none
  // expected-error @+1 {{torch.mlir_sym.attention: is_causal is not a constant}}
  %0 = torch.operator "torch.mlir_sym.attention"(%q, %q, %q, %none, %c, %none) : (!torch.vtensor<[1,4,?,64],f32>, !torch.vtensor<[1,4,?,64],f32>, !torch.vtensor<[1,4,?,64],f32>, !torch.none, !torch.bool, !torch.none) -> !torch.vtensor<[1,4,?,64],f32>
  return %0 : !torch.vtensor<[1,4,?,64],f32>
}

// -----

// Training attention: the forward becomes a call of a private declaration tagged
// sym.library_call = "sdpa_forward" on builtin tensors (two results: out and the log-sum-exp
// rows), is_causal and the scale on the call.
// CHECK-LABEL: func.func @training_forward
// CHECK-DAG:   %[[Q:.+]] = torch_c.to_builtin_tensor %arg0
// CHECK-DAG:   %[[K:.+]] = torch_c.to_builtin_tensor %arg1
// CHECK-DAG:   %[[V:.+]] = torch_c.to_builtin_tensor %arg2
// sym.result_dims: out [B, L, H, Ev] has q's dims 0-2 and v's dim 3, lse [B, H, L] q's dims 0, 2, 1.
// CHECK:       %[[R:.+]]:2 = call @__sym_sdpa_forward_0(%[[Q]], %[[K]], %[[V]]) {sym.causal = true, sym.result_dims = [array<i64: 0, 0, 0, 1, 0, 2, 2, 3>, array<i64: 0, 0, 0, 2, 0, 1>], sym.scale = 2.500000e-01 : f64}
// CHECK-DAG:   %[[O:.+]] = torch_c.from_builtin_tensor %[[R]]#0 : tensor<?x?x4x16xf32> -> !torch.vtensor<[?,?,4,16],f32>
// CHECK-DAG:   %[[L:.+]] = torch_c.from_builtin_tensor %[[R]]#1 : tensor<?x4x?xf32> -> !torch.vtensor<[?,4,?],f32>
// CHECK-NOT:   torch.operator
// CHECK:       return %[[O]], %[[L]]
// CHECK:       func.func private @__sym_sdpa_forward_0(tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?xf32>) attributes {sym.library_call = "sdpa_forward"}
func.func @training_forward(%q: !torch.vtensor<[?,?,4,16],f32>, %k: !torch.vtensor<[?,?,4,16],f32>, %v: !torch.vtensor<[?,?,4,16],f32>) -> (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>) {
  %true = torch.constant.bool true
  %scale = torch.constant.float 2.500000e-01
  %0:2 = torch.operator "torch.mlir_sym.attention_forward"(%q, %k, %v, %true, %scale) : (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.bool, !torch.float) -> (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>)
  return %0#0, %0#1 : !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>
}

// -----

// Two backward calls of one signature share a declaration; the packed backward (dq, dk, dv as one
// [B, L, 3 * H * E] tensor) has its own kind.
// CHECK-LABEL: func.func @training_backward
// CHECK:       call @__sym_sdpa_backward_0({{.*}}) {sym.causal = false, sym.result_dims = [array<i64: 1, 0, 1, 1, 1, 2, 1, 3>, array<i64: 2, 0, 2, 1, 2, 2, 2, 3>, array<i64: 3, 0, 3, 1, 3, 2, 3, 3>], sym.scale = 1.250000e-01 : f64}
// CHECK:       call @__sym_sdpa_backward_0({{.*}}) {sym.causal = false, {{.*}}}
// CHECK:       call @__sym_sdpa_backward_packed_1({{.*}}) {sym.causal = true, sym.result_dims = [array<i64: 1, 0, 1, 1, -1, -1>], sym.scale = 1.250000e-01 : f64}
// CHECK-NOT:   torch.operator
// CHECK:       func.func private @__sym_sdpa_backward_0({{.*}}) -> (tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>) attributes {sym.library_call = "sdpa_backward"}
// CHECK-NEXT:  func.func private @__sym_sdpa_backward_packed_1({{.*}}) -> tensor<?x?x192xf32> attributes {sym.library_call = "sdpa_backward_packed"}
func.func @training_backward(%g: !torch.vtensor<[?,?,4,16],f32>, %lse: !torch.vtensor<[?,4,?],f32>) -> (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,192],f32>) {
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %scale = torch.constant.float 1.250000e-01
  %0:3 = torch.operator "torch.mlir_sym.attention_backward"(%g, %g, %g, %g, %g, %lse, %false, %scale) : (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>, !torch.bool, !torch.float) -> (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>)
  %1:3 = torch.operator "torch.mlir_sym.attention_backward"(%0#0, %g, %g, %g, %g, %lse, %false, %scale) : (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>, !torch.bool, !torch.float) -> (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>)
  %2 = torch.operator "torch.mlir_sym.attention_backward_packed"(%g, %g, %g, %g, %g, %lse, %true, %scale) : (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>, !torch.bool, !torch.float) -> !torch.vtensor<[?,?,192],f32>
  return %1#0, %1#2, %2 : !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,192],f32>
}

// -----

func.func @training_scale_not_constant(%q: !torch.vtensor<[?,?,4,16],f32>, %s: !torch.float) -> !torch.vtensor<[?,?,4,16],f32> {
  %true = torch.constant.bool true
  // expected-error @+1 {{torch.mlir_sym.attention_forward: scale is not a constant}}
  %0:2 = torch.operator "torch.mlir_sym.attention_forward"(%q, %q, %q, %true, %s) : (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,?,4,16],f32>, !torch.bool, !torch.float) -> (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>)
  return %0#0 : !torch.vtensor<[?,?,4,16],f32>
}

// -----

// The packed forward takes the projection q, k, v are the heads of, and the number of heads
// (`sym.heads`); its results' static dims have no operand dim (-1).
// CHECK-LABEL: func.func @training_forward_packed
// CHECK:       %[[X:.+]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,?,192],f32> -> tensor<?x?x192xf32>
// CHECK:       call @__sym_sdpa_forward_packed_0(%[[X]]) {sym.causal = true, sym.heads = 4 : i64, sym.result_dims = [array<i64: 0, 0, 0, 1, -1, -1, -1, -1>, array<i64: 0, 0, -1, -1, 0, 1>], sym.scale = 2.500000e-01 : f64} : (tensor<?x?x192xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?xf32>)
// CHECK:       func.func private @__sym_sdpa_forward_packed_0(tensor<?x?x192xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?xf32>) attributes {sym.library_call = "sdpa_forward_packed"}
func.func @training_forward_packed(%x: !torch.vtensor<[?,?,192],f32>) -> (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>) {
  %int4 = torch.constant.int 4
  %true = torch.constant.bool true
  %scale = torch.constant.float 2.500000e-01
  %0:2 = torch.operator "torch.mlir_sym.attention_forward_packed"(%x, %int4, %true, %scale) : (!torch.vtensor<[?,?,192],f32>, !torch.int, !torch.bool, !torch.float) -> (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>)
  return %0#0, %0#1 : !torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>
}

// -----

func.func @training_heads_not_constant(%x: !torch.vtensor<[?,?,192],f32>, %h: !torch.int) -> !torch.vtensor<[?,?,4,16],f32> {
  %true = torch.constant.bool true
  %scale = torch.constant.float 2.500000e-01
  // expected-error @+1 {{torch.mlir_sym.attention_forward_packed: heads is not a constant}}
  %0:2 = torch.operator "torch.mlir_sym.attention_forward_packed"(%x, %h, %true, %scale) : (!torch.vtensor<[?,?,192],f32>, !torch.int, !torch.bool, !torch.float) -> (!torch.vtensor<[?,?,4,16],f32>, !torch.vtensor<[?,4,?],f32>)
  return %0#0 : !torch.vtensor<[?,?,4,16],f32>
}
