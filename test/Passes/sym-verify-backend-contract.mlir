// RUN: symopt %s --split-input-file --verify-diagnostics --sym-verify-backend-contract | filecheck %s

// A call of our runtime library (training attention) on tensors is admitted, and left as it is;
// torch-mlir's own check (torch-verify-linalg-on-tensors-backend-contract) rejects it.
// CHECK-LABEL: func.func @library_call
// CHECK:       %[[R:.+]]:2 = call @__sym_sdpa_forward_0(%arg0, %arg0, %arg0)
// CHECK:       return %[[R]]#0, %[[R]]#1
func.func @library_call(%q: tensor<?x?x4x16xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?xf32>) {
  %r:2 = call @__sym_sdpa_forward_0(%q, %q, %q) {sym.causal = true, sym.scale = 2.500000e-01 : f64} : (tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?xf32>)
  return %r#0, %r#1 : tensor<?x?x4x16xf32>, tensor<?x4x?xf32>
}
func.func private @__sym_sdpa_forward_0(tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?xf32>) attributes {sym.library_call = "sdpa_forward"}

// -----

// Any other call on tensors is not in the contract: the upstream diagnostic, at the call.
func.func @other_call(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{failed to legalize operation 'func.call'}}
  %0 = call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @helper(tensor<4xf32>) -> tensor<4xf32>

// -----

// Torch-dialect ops torch-mlir did not lower (an opaque operator of an op it does not know) fail
// at the first one's location, as upstream.
func.func @not_lowered(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{failed to legalize operation 'torch_c.from_builtin_tensor'}}
  %t = torch_c.from_builtin_tensor %x : tensor<4xf32> -> !torch.vtensor<[4],f32>
  %0 = torch.operator "torch.aten.something"(%t) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  %1 = torch_c.to_builtin_tensor %0 : !torch.vtensor<[4],f32> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
